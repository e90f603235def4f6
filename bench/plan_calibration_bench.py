"""Calibration of the stop plan (issue 38, item 3): does a stated chance come true as often as it says, does the
realised cost fall in the stated range, and is the recommended path the cheapest in hindsight?

Decision states are drawn from CLEF TAR rankings (each topic's queue in the run's order, labels from the abstract
qrels, the queue as the population): for each topic, target τ and reviewed share, the team has reviewed the top d
documents and judged a simple random sample of the rest (seeded); `stop_plan.plan_stop` then recommends a path
with a stated chance and cost. The path is followed on the true labels:

- a one-look path (sample now / review D more, then sample n): the TRUE chance is exact, not simulated: after the
  D more (their true relevant counted), the sample of n from the rest certifies when the elusion rule holds at the
  sample's count, so P(certify) = P(Y ≤ k*) with Y ~ Hypergeometric(rest, B, n), B the true relevant left and k*
  the most that certify at the true F (`stopping.elusion_rule`); one realised outcome per state is drawn as well;
  its realised cost is D + n + (rest − n if it fails, the team then reviewing on);
- a monitor path (the plan followed look by look; an audit stream at rate K): certain to end certified; its
  realised cost is replayed on the true labels with ``--replays`` stream permutations (`run_planned`,
  `run_fixed_rate`): the mean, and whether it lies in the stated 5–95 % range.

Printed per ranking and pooled: stated chance against realised frequency per decile of stated chance (states,
mean stated, mean true chance, realised frequency with its 95 % Clopper–Pearson interval), the share of stated
chances ≥ 0.95 that came true, the realised mean inside the stated range, and how often the recommended path's
realised cost was the cheapest of the feasible paths' or within 10 % of it. Goals (issue 38): stated ≥ 0.95
realised ≥ 0.90; calibration error ≤ 0.05 per decile with ≥ 30 states; mean inside the range in ≥ 80 %;
cheapest-or-within-10 % in ≥ 90 %. Pure core, no database; needs ../shared/data.

    python bench/plan_calibration_bench.py [--quick] [--held-out] [--topics 8] [--replays 4] [--workers 2] [--seed 0]
"""

from __future__ import annotations

import argparse
import gzip
import statistics
import sys
from collections import defaultdict
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import numpy as np

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
# (label, year, run file under runs/, qrels file under qrels/)
RANKINGS = (
    ("2017 waterloo A", "clef-tar-2017", "waterloo.A-rank-normal.gz", "qrel_abs_test.txt.gz"),
    ("2017 amc", "clef-tar-2017", "amc.run.gz", "qrel_abs_test.txt.gz"),
    ("2018 ecnu bm25", "clef-tar-2018", "ECNU_TASK1_RUN1_BM25.task1.gz", "task1.test.abs.2018.qrels"),
    ("2019 sheffield dta", "clef-tar-2019", "sheffield/DTA_sheffield-baseline.gz", "full.test.dta.abs.2019.qrels.gz"),
)
# rankings no part of the plan was tuned on (`--held-out`): other systems of the same years
HELD_OUT = (
    ("2017 ecnu run2", "clef-tar-2017", "ecnu.run2.gz", "qrel_abs_test.txt.gz"),
    ("2018 ecnu lr", "clef-tar-2018", "ECNU_TASK1_RUN2_LR.task1.gz", "task1.test.abs.2018.qrels"),
    ("2019 ilps dta", "clef-tar-2019", "ilps/abs-hh-ratio-ilps_at_uva.gz", "full.test.dta.abs.2019.qrels.gz"),
)
TARGETS = ("0.8", "0.9", "0.95")
SHARES = (0.1, 0.2, 0.35)
CONFIDENCE = 0.95
REST_SAMPLE = 300


@dataclass(frozen=True)
class Outcome:
    ranking: str
    topic: str
    target: str
    share: float
    kind: str
    stated_chance: float | None
    true_chance: float | None
    realised: bool | None
    stated_cost: float
    stated_low: float
    stated_high: float
    realised_cost: float
    cheapest_realised: float
    # every feasible one-look path of the plan, recommended or not: (stated chance, true chance, realised)
    one_looks: tuple[tuple[float, float, bool], ...] = ()
    # the recommended path's review-more and sample size, and the evidence it was planned from
    detail: str = ""


def _open(path: Path) -> Iterator[str]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as handle:  # type: ignore[operator]
        yield from handle


def queues(year: str, run: str, qrels: str, topics: int) -> list[tuple[str, np.ndarray]]:
    """The first ``topics`` topics (sorted) with at least 5 relevant documents and 500 in the queue, as label
    arrays in run order (repeats and NS lines skipped)."""
    relevant: dict[str, set[str]] = defaultdict(set)
    for line in _open(SHARED / year / "qrels" / qrels):
        f = line.split()
        if len(f) == 4 and f[3] != "0":
            relevant[f[0]].add(f[2])
    order: dict[str, list[str]] = defaultdict(list)
    seen: dict[str, set[str]] = defaultdict(set)
    for line in _open(SHARED / year / "runs" / run):
        f = line.split()
        if len(f) >= 3 and f[1] != "NS" and f[2] not in seen[f[0]]:
            seen[f[0]].add(f[2])
            order[f[0]].append(f[2])
    out = []
    for topic in sorted(order):
        labels = np.array([d in relevant[topic] for d in order[topic]], dtype=np.int8)
        if labels.sum() >= 5 and len(labels) >= 500:
            out.append((topic, labels))
    return out[:topics]


def _true_chance(found: int, rest_labels: np.ndarray, size: int, tau: Fraction) -> float:
    """P(a sample of ``size`` of the rest certifies at the true F): the hypergeometric probability of at most the
    largest certifying count."""
    from scipy import stats

    from reviewdepth.estimation.stopping import elusion_rule

    left, missed = len(rest_labels), int(rest_labels.sum())
    best = -1
    for y in range(0, size + 1):
        if elusion_rule(found, left, size, y, tau, 1 - CONFIDENCE).stop_now:
            best = y
        else:
            break
    return 0.0 if best < 0 else float(stats.hypergeom.cdf(best, left, missed, size))


def one_state(args: tuple[str, str, np.ndarray, str, float, int, int]) -> Outcome | None:
    from reviewdepth.estimation.stop_plan import (
        Certifier,
        PlannedPolicy,
        ReviewEvidence,
        _start_state,
        _stream_for,
        plan_stop,
        run_fixed_rate,
        run_planned,
    )

    ranking, topic, labels, target, share, replays, seed = args
    tau = Fraction(target)
    n = len(labels)
    d = int(share * n)
    rng = np.random.default_rng([seed, d, n, int(float(tau) * 100)])
    sample = rng.choice(np.arange(d, n), size=min(REST_SAMPLE, n - d), replace=False)
    # where the sample sits among the unreviewed: before review (share 0, a richness sample of the collection)
    # it shapes the projection
    positive = sample[labels[sample] == 1]
    evidence = ReviewEvidence(labels[:d].astype(np.int8), n, rest_sample_size=len(sample),
                              rest_sample_relevant=int(labels[sample].sum()),
                              rest_sample_offsets=tuple(int(i) - d for i in sample),
                              rest_sample_positive_offsets=tuple(int(i) - d for i in positive))
    plan = plan_stop(evidence, tau, CONFIDENCE, table=False, seed=seed)  # the service's replicates
    if plan.recommended is None:
        return None
    found = int(labels[:d].sum())

    def realised(path) -> tuple[float, float | None, bool | None]:  # type: ignore[no-untyped-def]
        if path.kind in ("sample_now", "review_then_sample"):
            more = path.review_more
            rest = labels[d + more:]
            f = found + int(labels[d:d + more].sum())
            chance = _true_chance(f, rest, path.sample_size, tau)
            hit = bool(rng.random() < chance)
            expected = more + path.sample_size + (1 - chance) * (len(rest) - path.sample_size)
            return expected, chance, hit
        certifier = Certifier(n, tau, CONFIDENCE)
        batch = max(10, n // 200)
        policy = PlannedPolicy(n, certifier, batch, 1.0, 1.0)
        start = _start_state(evidence)
        costs = []
        for _ in range(replays):
            perm = _stream_for(evidence, rng)
            if path.kind == "planned":
                costs.append(run_planned(labels, perm, policy, start=start).cost_at(1.0, 1.0) - d)
            else:
                costs.append(run_fixed_rate(labels, perm, path.every, batch, certifier, start) - d)
        return float(np.mean(costs)), None, None

    feasible = [p for p in plan.paths if p.feasible and p.kind != "produce_cutoff"]
    results = {p.kind: realised(p) for p in feasible}
    best = next(p for p in plan.paths if p.kind == plan.recommended)
    cost, chance, hit = results[best.kind]
    one_look = best.kind in ("sample_now", "review_then_sample")
    one_looks = tuple((p.chance, float(results[p.kind][1] or 0.0), bool(results[p.kind][2])) for p in feasible
                      if p.kind in ("sample_now", "review_then_sample"))
    return Outcome(ranking, topic, target, share, best.kind, best.chance if one_look else None, chance, hit,
                   best.expected_cost, best.cost_range[0], best.cost_range[1], cost,
                   min(r[0] for r in results.values()), one_looks,
                   f"D {best.review_more:,}, n {best.sample_size or 0:,}; {d:,} of {n:,} reviewed, {found} relevant "
                   f"found, rest sample {len(sample)} with {int(labels[sample].sum())} relevant, "
                   f"{int(labels[d:].sum())} truly left")


def _cp(hits: int, total: int) -> tuple[float, float]:
    from scipy import stats

    low = 0.0 if hits == 0 else float(stats.beta.ppf(0.025, hits, total - hits + 1))
    high = 1.0 if hits == total else float(stats.beta.ppf(0.975, hits + 1, total - hits))
    return low, high


def report(name: str, outcomes: list[Outcome]) -> None:
    print(f"\n== {name}: {len(outcomes)} states")
    kinds = defaultdict(int)
    for o in outcomes:
        kinds[o.kind] += 1
    print("recommended paths: " + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())))
    chances = [o for o in outcomes if o.stated_chance is not None]
    if chances:
        print(f"{'stated decile':>14} {'states':>7} {'stated':>7} {'true':>7} {'realised [95% CP]':>24}")
        for low in np.arange(0.0, 1.0, 0.1):
            group = [o for o in chances if low <= o.stated_chance < low + 0.1 or (low >= 0.9 and o.stated_chance == 1)]
            if not group:
                continue
            hits = sum(bool(o.realised) for o in group)
            lo, hi = _cp(hits, len(group))
            stated = statistics.fmean(o.stated_chance for o in group)
            print(f"{low:>6.1f}–{low + 0.1:<6.1f} {len(group):7d} {stated:7.3f} "
                  f"{statistics.fmean(o.true_chance for o in group):7.3f} "
                  f"{hits / len(group):7.3f} [{lo:.3f}, {hi:.3f}]")
        high = [o for o in chances if o.stated_chance >= 0.95]
        if high:
            print(f"stated ≥ 0.95: {len(high)} states, mean true chance "
                  f"{statistics.fmean(o.true_chance for o in high):.3f} (goal ≥ 0.90)")
    every = [look for o in outcomes for look in o.one_looks]
    if every:
        print(f"every feasible one-look path ({len(every)}, recommended or not): stated chance against truth")
        print(f"{'stated decile':>14} {'paths':>7} {'stated':>7} {'true':>7} {'realised [95% CP]':>24}")
        for low in np.arange(0.0, 1.0, 0.1):
            group = [g for g in every if low <= g[0] < low + 0.1 or (low >= 0.9 and g[0] == 1)]
            if not group:
                continue
            hits = sum(g[2] for g in group)
            lo, hi = _cp(hits, len(group))
            print(f"{low:>6.1f}–{low + 0.1:<6.1f} {len(group):7d} {statistics.fmean(g[0] for g in group):7.3f} "
                  f"{statistics.fmean(g[1] for g in group):7.3f} {hits / len(group):7.3f} [{lo:.3f}, {hi:.3f}]")
    for o in chances:
        print(f"  recommended {o.kind}: {o.topic} τ {o.target} share {o.share}: stated {o.stated_chance:.3f}, "
              f"true {o.true_chance:.3f}; {o.detail}")
    inside = [o.stated_low <= o.realised_cost <= o.stated_high for o in outcomes]
    ratio = [o.realised_cost / o.stated_cost for o in outcomes if o.stated_cost > 0]
    cheapest = [o.realised_cost <= 1.1 * o.cheapest_realised + 1e-9 for o in outcomes]
    print(f"realised mean cost inside the stated range: {np.mean(inside):.3f} (goal ≥ 0.80)")
    print(f"realised / stated expected cost: median {statistics.median(ratio):.3f}, "
          f"p10 {np.quantile(ratio, 0.1):.3f}, p90 {np.quantile(ratio, 0.9):.3f}")
    print(f"recommended path cheapest in hindsight or within 10 %: {np.mean(cheapest):.3f} (goal ≥ 0.90)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="2 topics per ranking, 1 target, 2 replays")
    parser.add_argument("--topics", type=int, default=8)
    parser.add_argument("--replays", type=int, default=4)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--shares", default=",".join(map(str, SHARES)),
                        help="reviewed shares, comma-separated (0: before review, the sample a richness sample)")
    parser.add_argument("--held-out", action="store_true",
                        help="the rankings of HELD_OUT (no part of the plan tuned on them) instead of RANKINGS")
    args = parser.parse_args()
    rankings = HELD_OUT if args.held_out else RANKINGS
    shares = tuple(float(x) for x in args.shares.split(","))
    topics, targets, replays = (2, ("0.9",), 2) if args.quick else (args.topics, TARGETS, args.replays)
    jobs = []
    for label, year, run, qrels in rankings:
        for topic, labels in queues(year, run, qrels, topics):
            for target in targets:
                for share in shares:
                    jobs.append((label, topic, labels, target, share, replays, args.seed))
    print(f"plan calibration: {len(jobs)} decision states ({len(rankings)} rankings, up to {topics} topics each, "
          f"targets {', '.join(targets)}, reviewed shares {', '.join(map(str, shares))}, a rest sample of "
          f"{REST_SAMPLE}, confidence {CONFIDENCE}); monitor paths replayed {replays}× on the truth", flush=True)
    if args.workers > 1:
        with ProcessPoolExecutor(args.workers) as pool:
            outcomes = [o for o in pool.map(one_state, jobs, chunksize=2) if o is not None]
    else:
        outcomes = [o for o in map(one_state, jobs) if o is not None]
    for label, *_ in rankings:
        report(label, [o for o in outcomes if o.ranking == label])
    report("all rankings", outcomes)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
