"""Replay engine throughput (issue 17): replicates per second of ``reviewdepth.estimation.replay`` on the monitor
bench's CLEF TAR configurations, with 1 and with 2 worker processes, and a check that the runs are identical
whatever the number of workers (the chunks are the unit of work; each is seeded by (configuration, chunk)).

Per design (every rule the design replays), target 0.95, confidence 0.95, a look after every 100 ranked documents:
``none``; ``rest`` n = 100; ``population`` n = 1,000 (capped at the queue); ``audit`` K = 10. Prints, per design
and worker count, the wall time and replicates per second (a replicate = one queue replayed under every rule of
the design), then the engine's summary per rule pooled over the configurations.

    python bench/simulate_bench.py [--replicates 200] [--quick] [--seed 17] [--workers 1,2] [--affinity]

Not run in CI. Needs ../shared/data.
"""

from __future__ import annotations

import argparse
import multiprocessing
import sys
import time
from fractions import Fraction

import numpy as np
import numpy.typing as npt
from live_review_bench import DATA, queue_labels
from monitor_bench import QUICK, TOPICS

from reviewdepth.estimation.replay import (
    Design,
    ReplayPlan,
    RuleRuns,
    chunk_count,
    concat_runs,
    replay_chunk,
    rules_for,
    summarise,
)

TARGET = Fraction(19, 20)
CONFIDENCE = 0.95
LOOK_EVERY = 100
Labels = npt.NDArray[np.int8]
Job = tuple[int, Labels, ReplayPlan, int]


def design_plans(replicates: int, seed: int, size: int) -> dict[str, ReplayPlan]:
    designs = {"none": Design("none"), "rest": Design("rest", sample_size=100),
               "population": Design("population", sample_size=min(1000, size)), "audit": Design("audit", every=10)}
    return {name: ReplayPlan(d, rules_for(d.kind), TARGET, CONFIDENCE, LOOK_EVERY, replicates, seed)
            for name, d in designs.items()}


def run_job(job: Job) -> tuple[int, int, dict[str, RuleRuns], float]:
    index, labels, plan, chunk = job
    start = time.process_time()
    part = replay_chunk(labels, plan, chunk, key=(index,))
    return index, chunk, part, time.process_time() - start


def run(jobs: list[Job], workers: int, batch: int) -> tuple[dict[int, dict[str, RuleRuns]], float, float]:
    # a fresh pool even for one worker: the parent never replays, so every timing starts with the engine's caches
    # (replayers, audit streams, the monitor's bounds) cold
    started = time.perf_counter()
    done: dict[tuple[int, int], dict[str, RuleRuns]] = {}
    cpu = 0.0
    with multiprocessing.get_context("fork").Pool(workers) as pool:
        for index, chunk, part, seconds in pool.imap_unordered(run_job, jobs, chunksize=batch):
            done[(index, chunk)] = part
            cpu += seconds
    wall = time.perf_counter() - started
    topics = sorted({index for index, _ in done})
    joined = {i: concat_runs([done[key] for key in sorted(k for k in done if k[0] == i)]) for i in topics}
    return joined, wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--replicates", type=int, default=200)
    parser.add_argument("--quick", action="store_true", help="5 configurations")
    parser.add_argument("--seed", type=int, default=17)
    parser.add_argument("--workers", default="1,2", help="worker counts to time, comma-separated")
    parser.add_argument("--affinity", action="store_true",
                        help="send a configuration's chunks to one worker (pool chunksize = chunks per "
                             "configuration), so its cached bounds are computed once")
    args = parser.parse_args()
    if not DATA.exists():
        sys.exit(f"CLEF TAR data not found at {DATA}")
    chosen = list(QUICK) if args.quick else list(range(len(TOPICS)))
    cache: dict[str, dict[bytes, set[bytes]]] = {}
    labels = {i: queue_labels(TOPICS[i].config(), cache) for i in chosen}
    worker_counts = [int(w) for w in args.workers.split(",")]
    print(f"Replay engine throughput: {len(chosen)} CLEF TAR configurations of the monitor bench "
          f"({sum(len(v) for v in labels.values()):,} documents), {args.replicates} replicates each, seed "
          f"{args.seed}, target {float(TARGET):g}, confidence {CONFIDENCE:g}, a look after every {LOOK_EVERY}")
    for name in ("none", "rest", "population", "audit"):
        jobs: list[Job] = []
        for i in chosen:
            plan = design_plans(args.replicates, args.seed, len(labels[i]))[name]
            jobs.extend((i, labels[i], plan, c) for c in range(chunk_count(plan)))
        # the largest queues first, so workers finish together (stable: a configuration's chunks stay together)
        jobs.sort(key=lambda job: -len(job[1]))
        batch = chunk_count(design_plans(args.replicates, args.seed, 1)[name]) if args.affinity else 1
        results: list[dict[int, dict[str, RuleRuns]]] = []
        print()
        plan = design_plans(args.replicates, args.seed, 10**9)[name]
        print(f"design {name} ({plan.design}), rules {', '.join(plan.rules)}: {len(jobs)} chunks")
        for workers in worker_counts:
            joined, wall, cpu = run(jobs, workers, batch)
            results.append(joined)
            total = len(chosen) * args.replicates
            print(f"  {workers} worker{'s' if workers > 1 else ' '}: {wall:7.1f} s wall, {total / wall:8.1f} "
                  f"replicates/s ({cpu:.1f} s CPU in the workers)")
        same = all(r.keys() == results[0].keys() and all(r[i] == results[0][i] for i in r) for r in results)
        print(f"  runs identical across worker counts: {'yes' if same else 'NO'}")
        print(f"  {'rule':15s} {'kind':10s} {'stops':>7s} {'fail':>6s} {'rate [95% CP]':>24s} {'recall p05':>10s} "
              f"{'p50':>6s} {'rev/d*':>7s} {'tot/d*':>7s} {'never':>6s}")
        for s in summarise(list(results[0].values()), CONFIDENCE):
            rate = "—" if s.stops == 0 else f"{s.failure_rate:.4f} [{s.failure_low:.4f},{s.failure_high:.4f}]"
            print(f"  {s.rule:15s} {s.kind:10s} {s.stops:7d} {s.failures:6d} {rate:>24s} "
                  f"{s.recall_quantiles['p05']:10.3f} {s.recall_quantiles['p50']:6.3f} "
                  f"{s.reviewed_ratio_median:7.2f} {s.total_ratio_median:7.2f} {s.never_stopped:6d}")


if __name__ == "__main__":
    main()
