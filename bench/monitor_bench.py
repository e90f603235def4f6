"""Monitor bench (issue 12, item 5): teams that look after every batch of B ranked documents and stop at the first
"stop", on real CLEF TAR 2017/2018/2019 topics and real runs — the anytime-valid monitor against the fixed-look
rules applied repeatedly (the naive practice). Every replicate is scored against the truth from the qrels.

A configuration is a topic's queue in one run's order (labels from the qrels; documents missing from the qrels count
as not relevant; population = queue; lines marked NS and repeats skipped, as in ``bench/live_review_bench.py``).
Rules (``reviewdepth.estimation.monitor_simulation``, whose docstring has the details): the monitor on an audit
stream with one audit document after every K ranked (K = 5, 10, 20; stream elements already judged are passed free,
as the service serves them); the same audit evidence with the one-look hypergeometric bound repeated at every look
(``fixed``); QBCB and the target method repeated with the audit positives as their sample; the elusion test
repeated with a fresh simple random sample of n = 400 or 100 from the unreviewed rest at every look. Target 0.95,
confidence 0.95 (``--target``, ``--confidence`` change them). Failure: the stop's recall is below the target.
Cost: documents judged (reviewed ∪ audited or sampled, once each), over the oracle depth d* (the smallest depth with
recall ≥ the target). A rule that never stops reviews the whole queue (recall 1, cost N).

    python bench/monitor_bench.py [--replicates 1000] [--quick] [--seed 12] [--workers 2] [--only TEXT]
                                 [--target 0.95] [--confidence 0.95]

The replicates come from the replay engine (``reviewdepth.estimation.replay``, issue 17), the one that
``reviewdepth simulate`` runs: per configuration i the plans "audit K, rules monitor/fixed/qbcb/target, look every
B" and "rest n, rule elusion, look every B", chunk c of each drawn from SeedSequence(seed, spawn_key=(i, c)) (the
plans of one chunk share its audit permutations, as the bench's earlier loop shared them across B and K).

Not run in CI (``tests/estimation/test_monitor_simulation.py`` and ``tests/estimation/test_replay.py`` are the short
versions). Needs ../shared/data.
"""

from __future__ import annotations

import argparse
import multiprocessing
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import numpy.typing as npt
from live_review_bench import (
    AMC,
    DATA,
    ECNU,
    Q17A,
    Q17C,
    Q18C,
    Q19D,
    Q19I,
    SHEF_D,
    SHEF_I,
    WATERLOO,
    Config,
    queue_labels,
)
from scipy import stats

from reviewdepth.estimation.monitor_simulation import AUDIT_RULES, Queue
from reviewdepth.estimation.replay import (
    Design,
    ReplayPlan,
    RuleRuns,
    chunk_count,
    concat_runs,
    replay_chunk,
)

ALPHA = 0.05
CONFIDENCE = 0.95
BATCHES = (25, 100, 500)
EVERY = (5, 10, 20)
SAMPLE_SIZES = (400, 100)


@dataclass(frozen=True)
class Topic:
    label: str
    qrels: str
    run: str
    topic: str

    def config(self) -> Config:
        return Config(self.label, self.qrels, self.run, self.topic, 0)


TOPICS: tuple[Topic, ...] = (
    # |R| < 30
    Topic("2017 waterloo abs CD010775", Q17A, WATERLOO, "CD010775"),
    Topic("2019 sheffield intervention abs CD010239", Q19I, SHEF_I, "CD010239"),
    Topic("2018 ecnu-bm25 content CD011912", Q18C, ECNU, "CD011912"),
    Topic("2017 waterloo abs CD007431", Q17A, WATERLOO, "CD007431"),
    Topic("2017 amc content CD009185", Q17C, AMC, "CD009185"),
    Topic("2019 sheffield dta abs CD009044", Q19D, SHEF_D, "CD009044"),
    # 30 ≤ |R| < 100
    Topic("2018 ecnu-bm25 content CD012179", Q18C, ECNU, "CD012179"),
    Topic("2017 waterloo abs CD009647", Q17A, WATERLOO, "CD009647"),
    Topic("2019 sheffield intervention abs CD006468", Q19I, SHEF_I, "CD006468"),
    Topic("2017 waterloo abs CD008803", Q17A, WATERLOO, "CD008803"),
    Topic("2019 sheffield dta abs CD011686", Q19D, SHEF_D, "CD011686"),
    Topic("2019 sheffield dta abs CD012080", Q19D, SHEF_D, "CD012080"),
    Topic("2019 sheffield intervention abs CD009069", Q19I, SHEF_I, "CD009069"),
    # |R| ≥ 100
    Topic("2017 waterloo abs CD009519", Q17A, WATERLOO, "CD009519"),
    Topic("2017 waterloo abs CD010339", Q17A, WATERLOO, "CD010339"),
    Topic("2019 sheffield dta abs CD008874", Q19D, SHEF_D, "CD008874"),
    Topic("2017 waterloo abs CD009579", Q17A, WATERLOO, "CD009579"),
    Topic("2017 waterloo abs CD011145", Q17A, WATERLOO, "CD011145"),
    Topic("2019 sheffield intervention abs CD012069", Q19I, SHEF_I, "CD012069"),
    Topic("2017 waterloo abs CD009925", Q17A, WATERLOO, "CD009925"),
)
QUICK = (1, 3, 7, 12, 19)


def rule_names() -> list[str]:
    names = [f"{rule} K={k}" for rule in ("monitor", "fixed", "qbcb", "target") for k in EVERY]
    return names + [f"elusion n={n}" for n in SAMPLE_SIZES]


Task = tuple[int, npt.NDArray[np.int8], int, int, Fraction, float]


def plans(replicates: int, seed: int, target: Fraction, confidence: float) -> dict[tuple[int, str], ReplayPlan]:
    """(B, "audit K=k") and (B, "rest n=n") → the engine's plan; the audit plans first, K outer, B inner (the
    order in which a chunk's cached audit stream serves every B)."""
    out: dict[tuple[int, str], ReplayPlan] = {}
    for k in EVERY:
        for batch in BATCHES:
            out[(batch, f"audit K={k}")] = ReplayPlan(Design("audit", every=k), AUDIT_RULES, target, confidence,
                                                      batch, replicates, seed)
    for n in SAMPLE_SIZES:
        for batch in BATCHES:
            out[(batch, f"rest n={n}")] = ReplayPlan(Design("rest", sample_size=n), ("elusion",), target,
                                                     confidence, batch, replicates, seed)
    return out


def run_task(task: Task) -> tuple[int, dict[tuple[int, str], RuleRuns], float]:
    index, labels, replicates, seed, target, confidence = task
    start = time.process_time()
    chosen = plans(replicates, seed, target, confidence)
    parts: dict[tuple[int, str], list[dict[str, RuleRuns]]] = {name: [] for name in chosen}
    for chunk in range(chunk_count(next(iter(chosen.values())))):
        for plan_key, plan in chosen.items():
            parts[plan_key].append(replay_chunk(labels, plan, chunk, key=(index,)))
    out: dict[tuple[int, str], RuleRuns] = {}
    for (batch, design), pieces in parts.items():
        suffix = design.split(" ", 1)[1]
        for rule, runs in concat_runs(pieces).items():
            out[(batch, f"{rule} {suffix}")] = runs
    return index, out, time.process_time() - start


def clopper_pearson(hits: int, trials: int) -> tuple[float, float]:
    lower = 0.0 if hits == 0 else float(stats.beta.ppf(ALPHA / 2, hits, trials - hits + 1))
    upper = 1.0 if hits == trials else float(stats.beta.ppf(1 - ALPHA / 2, hits + 1, trials - hits))
    return lower, upper


def fmt_rate(hits: int, trials: int) -> str:
    lo, hi = clopper_pearson(hits, trials)
    return f"{hits / trials:.4f} [{lo:.4f},{hi:.4f}]"


def pooled_table(batch: int, chosen: Sequence[int], queues: dict[int, Queue],
                 results: dict[int, dict[tuple[int, str], RuleRuns]]) -> list[str]:
    lines = [f"{'rule':14s} {'failure rate [95% CP]':26s} {'worst configuration failure [95% CP]':58s} "
             f"{'cost/d* med':>11s} {'p90':>6s} {'mean cfg med':>12s} {'cost/S mean':>11s} {'never':>6s}"]
    for name in rule_names():
        fails = trials = never = 0
        ratios: list[npt.NDArray[np.float64]] = []
        config_medians: list[float] = []
        whole: list[npt.NDArray[np.float64]] = []
        worst: tuple[float, int, int, int] = (-1.0, 0, 0, 0)
        for i in chosen:
            q, o = queues[i], results[i][(batch, name)]
            f = int(np.count_nonzero(o.failed))
            fails += f
            trials += o.replicates
            never += int(np.count_nonzero(~o.stopped))
            ratios.append(o.reviewed_total / q.oracle_depth)
            config_medians.append(float(np.median(o.reviewed_total / q.oracle_depth)))
            whole.append(o.reviewed_total / q.size)
            if f / o.replicates > worst[0]:
                worst = (f / o.replicates, f, o.replicates, i)
        cost = np.concatenate(ratios)
        _, wf, wn, wi = worst
        where = TOPICS[wi].label if wf else "(none fails)"
        lines.append(f"{name:14s} {fmt_rate(fails, trials):26s} {fmt_rate(wf, wn):26s} {where:31s} "
                     f"{np.median(cost):11.2f} {np.quantile(cost, 0.9):6.2f} {np.mean(config_medians):12.2f} "
                     f"{np.mean(np.concatenate(whole)):11.3f} {never / trials:6.3f}")
    return lines


def matrix(batch: int, chosen: Sequence[int], queues: dict[int, Queue],
           results: dict[int, dict[tuple[int, str], RuleRuns]], names: Sequence[str]) -> list[str]:
    """Per configuration: median cost/d* and, in brackets, the share never stopping (%) and failures (if any)."""
    lines = [f"{'configuration':42s} " + " ".join(f"{n:>15s}" for n in names)]
    for i in chosen:
        q = queues[i]
        cells = []
        for n in names:
            o = results[i][(batch, n)]
            f = int(np.count_nonzero(o.failed))
            never = round(100 * float(np.mean(~o.stopped)))
            cell = f"{float(np.median(o.reviewed_total / q.oracle_depth)):.2f}({never}%)" + (f"f{f}" if f else "")
            cells.append(f"{cell:>15s}")
        lines.append(f"{TOPICS[i].label:42s} " + " ".join(cells))
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--replicates", type=int, default=1000)
    parser.add_argument("--quick", action="store_true", help="5 configurations, 200 replicates unless given")
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--only", default="", help="only configurations whose label contains this text")
    parser.add_argument("--target", default="0.95", help="target recall (default 0.95)")
    parser.add_argument("--confidence", type=float, default=CONFIDENCE, help="confidence (default 0.95)")
    args = parser.parse_args()
    target = Fraction(args.target)
    if not 0 < target < 1 or not 0 < args.confidence < 1:
        sys.exit("--target and --confidence must lie strictly between 0 and 1")
    if not DATA.exists():
        sys.exit(f"CLEF TAR data not found at {DATA}")
    replicates = args.replicates
    chosen = list(range(len(TOPICS)))
    if args.quick:
        chosen = list(QUICK)
        if replicates == parser.get_default("replicates"):
            replicates = 200
    chosen = [i for i in chosen if args.only in TOPICS[i].label]
    started = time.perf_counter()
    cache: dict[str, dict[bytes, set[bytes]]] = {}
    labels = {i: queue_labels(TOPICS[i].config(), cache) for i in chosen}
    queues = {i: Queue.of(labels[i], target) for i in chosen}
    # the largest queues first, so two workers finish together
    tasks: list[Task] = sorted(((i, labels[i], replicates, args.seed, target, args.confidence) for i in chosen),
                               key=lambda t: -len(t[1]))
    results: dict[int, dict[tuple[int, str], RuleRuns]] = {}
    seconds: dict[int, float] = {}
    if args.workers > 1:
        with multiprocessing.get_context("fork").Pool(args.workers) as pool:
            for index, out, cpu in pool.imap_unordered(run_task, tasks):
                results[index], seconds[index] = out, cpu
                print(f"  done {TOPICS[index].label} in {cpu:.0f} s CPU", file=sys.stderr, flush=True)
    else:
        for task in tasks:
            index, out, cpu = run_task(task)
            results[index], seconds[index] = out, cpu
            print(f"  done {TOPICS[index].label} in {cpu:.0f} s CPU", file=sys.stderr, flush=True)
    elapsed = time.perf_counter() - started

    print(f"Monitor bench: {replicates} replicates per configuration and look frequency, seed {args.seed}, "
          f"target {float(target):g}, confidence {args.confidence:g} (replay engine, configuration i's chunk c "
          f"from SeedSequence(seed, spawn_key=(i, c)))")
    print("Rules: monitor K=k (anytime-valid, audit stream with one audit document after every k ranked); fixed K=k "
          "(same audit evidence, one-look hypergeometric bound repeated); qbcb/target K=k (QBCB / target method "
          "repeated with the audit positives as the sample); elusion n=n (elusion test repeated with a fresh random "
          "sample of n from the unreviewed rest at every look).")
    print(f"failure: share of replicates whose stop has recall < {float(target):g} (two-sided 95 % "
          "Clopper–Pearson interval; pooled over configurations, and the worst configuration). cost: documents "
          "judged (reviewed ∪ audited or sampled) over d*, median and 90th percentile over all replicates of all "
          "configurations, and the mean over configurations of each one's median; cost/S mean: the share of the "
          "queue judged, averaged over all replicates; never: "
          "share of replicates that never stop (whole queue reviewed, recall 1, cost N).")
    print("S/d* is the cost of reviewing the whole queue, the most any rule can cost.")
    print(f"Configurations (S = queue size, R = relevant, d* = oracle depth for {float(target):g}):")
    for i in chosen:
        q = queues[i]
        print(f"  {TOPICS[i].label:42s} S = {q.size:6,d}  R = {q.relevant:4d}  d* = {q.oracle_depth:6,d}  "
              f"S/d* = {q.size / q.oracle_depth:5.2f}")
    for batch in BATCHES:
        print()
        print(f"LOOK AFTER EVERY {batch} RANKED DOCUMENTS — pooled over {len(chosen)} configurations "
              f"({len(chosen) * replicates:,} replicates per rule)")
        for line in pooled_table(batch, chosen, queues, results):
            print(line)
        print()
        print(f"  by configuration (B = {batch}): median cost/d* (share never stopping %), fN: N failures")
        names = rule_names()
        half = 2 * len(EVERY)
        for part in (names[:half], names[half:]):
            for line in matrix(batch, chosen, queues, results, part):
                print("  " + line)
    cpu_total = sum(seconds.values())
    print(f"\n{len(chosen)} configurations × {len(BATCHES)} look frequencies × {len(rule_names())} rules × "
          f"{replicates} replicates; {elapsed:.0f} s wall with {args.workers} workers ({cpu_total:.0f} s CPU in the "
          f"simulations; slowest configuration {max(seconds.values()):.0f} s)")


if __name__ == "__main__":
    main()
