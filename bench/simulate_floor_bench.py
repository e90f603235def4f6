"""``simulate`` against its floor (issue 44, item 2): the engine's elusion, monitor and planned designs on the 30
CLEF 2017 topics (the waterloo A run with the abstract qrels, the order of the run file, as ``reviewdepth simulate
--qrels --run`` reads them) beside a plain numpy replay of the elusion rule written here, interleaved, each
measurement in a fresh process (cold caches), CPU (process time of the replay alone, data loaded and scipy.special
imported before) and wall.

Designs (target 0.95, confidence 0.95, a look after every 100 ranked documents): ``elusion`` = the rest design with
the elusion rule, a fresh sample of 100 at every look; ``monitor`` = the audit design with the monitor rule, one
audit document per 10 ranked; ``planned`` = the planned design (rule planned). Each runs through the service's
``run_simulation`` (chunk by chunk across the topics, as the command line does), and its report's figures are
summed up in a digest (every rule row, chart point and topic line): the same digest means the same figures.

The floor replays the elusion rule with numpy and scipy only: per topic the threshold y_max of every look (the
largest sample count at which F/(F + D_U) >= 0.95, D_U the exact one-sided 95 % hypergeometric upper bound on the
relevant documents left, from scipy.stats.hypergeom over every count at once), the sample counts of every look and
replicate in one draw, the first look whose count is at most its threshold, and the documents judged at the stop
(the union of the samples, drawn look by look from its conditional law, as the engine's module docstring states
it). ``floor`` draws each topic's 1,000 replicates from one stream: its stops and failures agree with the engine's
within Monte Carlo error. ``floor (engine streams)`` draws each chunk of 50 from the engine's own chunk streams
(SeedSequence(seed, spawn_key=(*topic key, chunk))), so its runs equal the engine's exactly (checked).

``--engine NAME=PATH`` (repeatable) times the engine imported from another source tree too (e.g. a checkout of the
code before a change, ``git archive <commit> reviewdepth | tar -x -C /tmp/before``): the digests show whether the
figures are identical, the CPU the speed-up.

    python bench/simulate_floor_bench.py [--replicates 1000] [--rounds 2] [--seed 44]
        [--designs elusion,monitor,planned] [--engine before=/tmp/before]

Not run in CI. Needs ../shared/data.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import json
import math
import os
import subprocess
import sys
import time
from dataclasses import asdict
from datetime import UTC, datetime
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
QRELS = DATA / "clef-tar-2017" / "qrels" / "qrel_abs_test.txt.gz"
RUN = DATA / "clef-tar-2017" / "runs" / "waterloo.A-rank-normal.gz"
TARGET = "0.95"
TAU = 0.95
CONFIDENCE = 0.95
LOOK_EVERY = 100
SAMPLE_SIZE = 100
EVERY = 10
CHUNK = 50  # the engine's replicates per chunk (reviewdepth.estimation.replay.CHUNK)
IntArray = npt.NDArray[np.int64]


def topics() -> list[tuple[str, npt.NDArray[np.int8]]]:
    """(name, 0/1 labels in run order) of every topic with a relevant document, as `simulate --qrels --run`."""
    from reviewdepth.services.simulation.simulate import file_source

    source = file_source(str(QRELS), str(RUN))
    return [(q.name, np.asarray(q.labels, dtype=np.int8)) for q in source.queues if q.relevant > 0]


# ---- the floor: a plain numpy replay of the elusion rule -----------------------------------------------------------


def floor_thresholds(found: IntArray, left: IntArray, sizes: IntArray) -> IntArray:
    """y_max per look: the largest y with y <= D_max and (N_u - n + y <= D_max or P(Y <= y | D_max + 1) <= alpha),
    D_max the largest D with F/(F + D) >= tau (-1: no y)."""
    from scipy.stats import hypergeom

    alpha = 1 - CONFIDENCE
    d_max = np.where(found > 0, np.floor(found * (1 - TAU) / TAU), 0).astype(np.int64)
    d_max = np.minimum(d_max, left)
    for _ in range(2):  # the float edge of F/(F + D) >= tau, one step either way
        up = (found > 0) & (d_max < left) & (found / (found + d_max + 1.0) >= TAU)
        d_max = d_max + up
        down = (d_max > 0) & ((found == 0) | (found / np.maximum(found + d_max, 1.0) < TAU))
        d_max = d_max - down
    # no y above min(n, D_max) stops: the counts up to one past that are enough to find the edge
    y = np.arange(int(np.minimum(sizes, d_max).max()) + 2)[None, :]
    cdf = hypergeom.cdf(y, left[:, None], np.minimum(d_max + 1, left)[:, None], sizes[:, None])
    stops = (y <= d_max[:, None]) & (y <= sizes[:, None]) & (
        (left[:, None] - sizes[:, None] + y <= d_max[:, None]) | (cdf <= alpha))
    out: IntArray = np.where(stops[:, 0], np.argmin(np.concatenate(
        [stops, np.zeros((len(stops), 1), dtype=bool)], axis=1), axis=1) - 1, -1).astype(np.int64)
    return out


def floor_union(size: int, relevant: int, found_at: IntArray, looks: IntArray, sizes: IntArray, ys: IntArray,
                stop_look: IntArray, rng: np.random.Generator) -> IntArray:
    """Documents judged at the stop: k + the distinct sample documents of the looks so far ranked after k."""
    left = size - looks
    missed = relevant - found_at[looks]
    cost = np.full(len(stop_look), size, dtype=np.int64)
    rows = np.flatnonzero(stop_look >= 0)
    if not len(rows):
        return cost
    k = looks[stop_look[rows]]
    rel_after = relevant - found_at[k]
    non_after = (size - k) - rel_after
    union_rel = np.zeros(len(rows), dtype=np.int64)
    union_non = np.zeros(len(rows), dtype=np.int64)
    last = stop_look[rows]
    for t in range(int(last.max()) + 1):
        sub = np.flatnonzero(last >= t)
        y = ys[rows[sub], t]
        c_rel = rng.hypergeometric(rel_after[sub], missed[t] - rel_after[sub], y)
        c_non = rng.hypergeometric(non_after[sub], left[t] - missed[t] - non_after[sub], sizes[t] - y)
        union_rel[sub] += rng.hypergeometric(rel_after[sub] - union_rel[sub], union_rel[sub], c_rel)
        union_non[sub] += rng.hypergeometric(non_after[sub] - union_non[sub], union_non[sub], c_non)
    cost[rows] = k + union_rel + union_non
    return cost


def floor_replay(labels: npt.NDArray[np.int8], replicates: int, streams: list[np.random.Generator],
                 sizes_per_stream: list[int]) -> dict[str, npt.NDArray[Any]]:
    """One topic: the elusion rule at every look, the replicates cut into the given streams."""
    size = len(labels)
    found_at = np.concatenate([[0], np.cumsum(labels, dtype=np.int64)])
    relevant = int(found_at[-1])
    needed = math.ceil(Fraction(TARGET) * relevant)
    looks = np.arange(LOOK_EVERY, size, LOOK_EVERY, dtype=np.int64)
    sizes = np.minimum(SAMPLE_SIZE, size - looks)
    left = size - looks
    missed = relevant - found_at[looks]
    y_max = floor_thresholds(found_at[looks], left, sizes) if len(looks) else np.zeros(0, dtype=np.int64)
    parts: list[dict[str, npt.NDArray[Any]]] = []
    for rng, reps in zip(streams, sizes_per_stream, strict=True):
        ys = rng.hypergeometric(missed[:, None], (left - missed)[:, None], sizes[:, None], size=(len(looks), reps)).T
        says = ys <= y_max[None, :]
        stop_look = np.where(says.any(axis=1), np.argmax(says, axis=1), -1) if len(looks) else np.full(reps, -1)
        stopped = stop_look >= 0
        depth = np.where(stopped, looks[np.maximum(stop_look, 0)] if len(looks) else size, size)
        cost = floor_union(size, relevant, found_at, looks, sizes, ys, stop_look, rng)
        parts.append({"stopped": stopped, "depth": depth, "found": found_at[depth],
                      "sampled": np.where(stopped, cost - depth, 0), "failed": stopped & (found_at[depth] < needed),
                      "y_max": y_max})
    out = {key: np.concatenate([p[key] for p in parts]) for key in ("stopped", "depth", "found", "sampled", "failed")}
    out["y_max"] = y_max
    return out


# ---- one measurement (a child process) ------------------------------------------------------------------------------


def measure(kind: str, replicates: int, seed: int) -> dict[str, Any]:
    """Run one design of the engine, or the floor, on every topic; CPU and wall of the replay alone."""
    importlib.import_module("scipy.special")  # imported before the clock starts, by the engine and the floor alike

    chosen = topics()
    if kind in ("floor", "floor-engine-streams"):
        importlib.import_module("scipy.stats")  # the floor's thresholds read it: imported before the clock too

        from reviewdepth.services.simulation.simulate import topic_key

        keys = [topic_key(name) for name, _ in chosen]
        cpu, wall = time.process_time(), time.perf_counter()
        runs = []
        for index, (_name, labels) in enumerate(chosen):
            if kind == "floor":
                streams = [np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(index,)))]
                counts = [replicates]
            else:
                chunks = -(-replicates // CHUNK)
                streams = [np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(*keys[index], c)))
                           for c in range(chunks)]
                counts = [min((c + 1) * CHUNK, replicates) - c * CHUNK for c in range(chunks)]
            runs.append(floor_replay(labels, replicates, streams, counts))
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        arrays = hashlib.sha256()
        for run in runs:
            for key in ("stopped", "depth", "found", "sampled"):
                arrays.update(np.ascontiguousarray(run[key], dtype=np.int64).tobytes())
        return {"cpu": cpu, "wall": wall, "stops": int(sum(r["stopped"].sum() for r in runs)),
                "failures": int(sum(r["failed"].sum() for r in runs)),
                "runs": int(sum(len(r["stopped"]) for r in runs)), "arrays": arrays.hexdigest()[:16],
                "y_max": [r["y_max"].tolist() for r in runs]}
    from reviewdepth.services.simulation.simulate import build_plan, run_simulation, topic_key

    designs: dict[str, dict[str, Any]] = {
        "elusion": {"design": "rest", "rules": ("elusion",), "sample_size": SAMPLE_SIZE},
        "monitor": {"design": "audit", "rules": ("monitor",), "every": EVERY},
        "planned": {"design": "planned", "rules": ("planned",)}}
    design = designs[kind]
    plan = build_plan(target=TARGET, confidence=CONFIDENCE, look_every=LOOK_EVERY, replicates=replicates, seed=seed,
                      **design)
    from reviewdepth.services.simulation.simulate import file_source

    source = file_source(str(QRELS), str(RUN))
    cpu, wall = time.process_time(), time.perf_counter()
    report = run_simulation(source, plan)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    figures = json.dumps({"rules": [asdict(r) for r in report.rules], "charts": [asdict(c) for c in report.charts],
                          "topics": [asdict(t) for t in report.topics]}, sort_keys=True, default=repr)
    rule = report.rules[0]
    out: dict[str, Any] = {"cpu": cpu, "wall": wall, "stops": rule.stops, "failures": rule.failures, "runs": rule.runs,
                           "digest": hashlib.sha256(figures.encode()).hexdigest()[:16]}
    if kind == "elusion":  # the engine's own runs and thresholds, outside the clock, to compare with the floor's
        from reviewdepth.estimation.monitor_simulation import Queue, elusion_thresholds, look_ranks
        from reviewdepth.estimation.replay import chunk_count, concat_runs, replay_chunk

        arrays = hashlib.sha256()
        y_max = []
        for name, labels in chosen:
            joined = concat_runs([replay_chunk(labels, plan, c, topic_key(name)) for c in range(chunk_count(plan))])
            r = joined["elusion"]
            for key in ("stopped", "depth", "found", "sampled"):
                arrays.update(np.ascontiguousarray(getattr(r, key), dtype=np.int64).tobytes())
            queue = Queue.of(labels, plan.target)
            looks = look_ranks(queue.size, LOOK_EVERY)
            _sizes, thresholds = elusion_thresholds(queue, looks, SAMPLE_SIZE, plan.target, CONFIDENCE)
            most = np.minimum(_sizes, queue.relevant - queue.found[looks])
            y_max.append(thresholds.tolist())
            out.setdefault("most", []).append(most.tolist())
        out["arrays"] = arrays.hexdigest()[:16]
        out["y_max"] = y_max
    return out


def child(kind: str, replicates: int, seed: int, engine_path: str | None) -> dict[str, Any]:
    env = dict(os.environ)
    if engine_path:
        env["PYTHONPATH"] = engine_path + os.pathsep + env.get("PYTHONPATH", "")
    env.setdefault("OMP_NUM_THREADS", "1")
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    done = subprocess.run([sys.executable, __file__, "--child", kind, "--replicates", str(replicates), "--seed",
                           str(seed)], env=env, capture_output=True, text=True, cwd="/tmp", check=False)
    if done.returncode != 0:
        sys.exit(f"simulate_floor_bench: the {kind} child failed:\n{done.stderr}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def monte_carlo(a: dict[str, Any], b: dict[str, Any], field: str) -> str:
    """The difference of two proportions over its standard error."""
    p1, p2 = a[field] / a["runs"], b[field] / b["runs"]
    pooled = (a[field] + b[field]) / (a["runs"] + b["runs"])
    se = math.sqrt(max(pooled * (1 - pooled), 1e-300) * (1 / a["runs"] + 1 / b["runs"]))
    return f"{(p1 - p2) / se:+.2f} SE" if pooled not in (0.0, 1.0) else "identical (none or all)"


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--replicates", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--seed", type=int, default=44)
    parser.add_argument("--designs", default="elusion,monitor,planned")
    parser.add_argument("--engine", action="append", default=[], metavar="NAME=PATH",
                        help="also time the engine imported from this source tree")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.child, args.replicates, args.seed)))
        return
    if not RUN.exists():
        sys.exit(f"simulate_floor_bench: CLEF 2017 data not found at {DATA}")
    engines: list[tuple[str, str | None]] = [("engine", None)]
    for item in args.engine:
        name, _, path = item.partition("=")
        engines.append((name, path))
    designs = [d for d in args.designs.split(",") if d]
    kinds = ["floor", "floor-engine-streams"] + [f"{d}@{name}" for d in designs for name, _ in engines]
    chosen = topics()
    print(f"# python bench/simulate_floor_bench.py {' '.join(sys.argv[1:])}")
    print(f"# {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {os.cpu_count()} CPUs, numpy {np.__version__}")
    print(f"CLEF 2017, waterloo A with the abstract qrels: {len(chosen)} topics, "
          f"{sum(len(v) for _, v in chosen):,} documents, {args.replicates:,} replicates each, seed {args.seed}; "
          f"target {TARGET}, confidence {CONFIDENCE}, a look every {LOOK_EVERY}, rest sample {SAMPLE_SIZE}, "
          f"audit 1 per {EVERY}")
    results: dict[str, list[dict[str, Any]]] = {k: [] for k in kinds}
    paths = dict(engines)
    for round_ in range(args.rounds):
        order = kinds if round_ % 2 == 0 else list(reversed(kinds))
        for kind in order:
            design, _, name = kind.partition("@")
            result = child(design, args.replicates, args.seed, paths.get(name))
            results[kind].append(result)
            print(f"  round {round_ + 1}: {kind:28s} {result['cpu']:8.2f} s CPU {result['wall']:8.2f} s wall",
                  file=sys.stderr, flush=True)
    total = len(chosen) * args.replicates
    print()
    print(f"{'what':28s} {'CPU s (min)':>11s} {'wall s':>8s} {'reps/s CPU':>11s} {'stops':>7s} {'fail':>5s} "
          f"{'figures':>17s}")
    best = {k: min(results[k], key=lambda r: r["cpu"]) for k in kinds}
    for kind in kinds:
        r = best[kind]
        same = {json.dumps({k: v for k, v in x.items() if k not in ("cpu", "wall")}, sort_keys=True)
                for x in results[kind]}
        figures = r.get("digest", r.get("arrays", ""))
        print(f"{kind:28s} {r['cpu']:11.2f} {min(x['wall'] for x in results[kind]):8.2f} "
              f"{total / r['cpu']:11,.0f} {r['stops']:7,d} {r['failures']:5,d} {figures:>17s}"
              + ("" if len(same) == 1 else "  (rounds differ!)"))
    floor, streams = best["floor"], best["floor-engine-streams"]
    print()
    for name, _ in engines:
        if "elusion" not in designs:
            break
        engine = best[f"elusion@{name}"]
        print(f"elusion@{name}: CPU {engine['cpu'] / floor['cpu']:.2f}x the floor's "
              f"({engine['cpu'] / streams['cpu']:.2f}x the floor on the engine's chunk streams)")
        print(f"  runs equal to the floor on the engine's streams (stopped, depth, found, sampled): "
              f"{'yes' if engine['arrays'] == streams['arrays'] else 'NO'}")
        print(f"  stops {engine['stops']:,} vs the floor's own streams {floor['stops']:,} "
              f"({monte_carlo(engine, floor, 'stops')}), failures {engine['failures']} vs {floor['failures']}")
        capped = [[min(y, m) for y, m in zip(ys, most, strict=True)] for ys, most in zip(floor["y_max"], engine["most"],
                                                                                       strict=True)]
        looks = sum(len(ys) for ys in engine["y_max"])
        print(f"  thresholds y_max equal to the floor's on all {looks:,} looks (counts a sample can hold): "
              f"{'yes' if capped == engine['y_max'] else 'NO'}")
    for design in designs:
        digests = {name: best[f"{design}@{name}"].get("digest") for name, _ in engines}
        if len(engines) > 1:
            base = best[f"{design}@engine"]
            for name, _ in engines[1:]:
                other = best[f"{design}@{name}"]
                verdict = "identical" if digests[name] == digests["engine"] else "DIFFER"
                print(f"{design}: engine vs {name}: figures {verdict}, CPU {other['cpu']:.2f} s -> {base['cpu']:.2f} s "
                      f"({other['cpu'] / base['cpu']:.1f}x faster)")


if __name__ == "__main__":
    main()
