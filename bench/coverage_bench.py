"""Coverage of reviewdepth's R/recall intervals and certified stopping rules on synthetic collections.

Larger version of tests/estimation/test_coverage_simulation.py. Prints one table: for every scenario (population N,
prevalence, ranking quality) and method, the share of replicates whose interval covers the true R (two-sided), whose
upper bound is ≥ R, and for stopping rules the share of runs reaching recall ≥ τ. Nominal level 95 %.

    PYTHONPATH=. python bench/coverage_bench.py [--reps 20000] [--seed 0]
"""

from __future__ import annotations

import argparse
import math
import time

import coverage_simulation as sim
import numpy as np

SCENARIOS = [(20000, 0.005), (10000, 0.01), (10000, 0.02), (5000, 0.05), (5000, 0.2)]
QUALITIES = {"good": 3.0, "poor": 0.7}


def row(scenario: str, method: str, two: float | None, upper: float | None, note: str = "") -> None:
    def fmt(v: float | None) -> str:
        return "    -   " if v is None else f"{v:8.4f}"

    print(f"| {scenario:34s} | {method:28s} | {fmt(two)} | {fmt(upper)} | {note}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=20000)
    parser.add_argument("--strat-reps", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    reps = args.reps
    se = math.sqrt(0.95 * 0.05 / reps)
    start = time.perf_counter()
    print(f"replicates {reps} (stratified {args.strat_reps}); Monte Carlo SE at 0.95 ≈ {se:.4f}")
    print(f"| {'scenario':34s} | {'method':28s} | two-side | upper/≥τ | note")
    print(f"|{'-' * 36}|{'-' * 30}|{'-' * 10}|{'-' * 10}|------")
    for population, prevalence in SCENARIOS:
        relevant = round(population * prevalence)
        base = f"N={population} p={prevalence} R={relevant}"
        for method, (two, upper) in sim.srs_coverage(population, relevant, 1000, reps, rng).items():
            row(base, f"SRS n=1000 {method}", two, upper)
        for quality, q in QUALITIES.items():
            ranks = sim.synthetic_queue(population, prevalence, q, rng)
            cutoff = int(ranks[math.ceil(0.8 * relevant) - 1])
            label = f"{base} {quality} cut={cutoff}"
            for method, (two, upper) in sim.elusion_coverage(ranks, population, cutoff, 500, reps, rng).items():
                row(label, f"elusion n=500 {method}", two, upper)
            two, upper, rec = sim.stratified_coverage(ranks, population, cutoff, (300, 300), args.strat_reps, rng)
            row(label, "stratified conservative MC", two, upper, f"recall two-sided {rec:.4f}")
            cut94 = int(ranks[math.ceil(0.94 * relevant) - 1])
            urn = min(2000, population - cut94)
            recall, wrong = sim.hypergeometric_false_stop_rate(ranks, population, cut94, urn, 0.95, reps, rng)
            row(f"{base} {quality} recall={recall:.3f}", f"hypergeom test urn={urn}", None, 1 - wrong,
                "1 − P(stop while recall < 0.95)")
        for positives in (59, 100, 200):
            if positives <= relevant:
                reached = sim.qbcb_recall(relevant, positives, 0.95, 0.05, reps, rng)
                row(base, f"QBCB r={positives} τ=0.95", None, float(np.mean(reached >= 0.95)), "share recall ≥ τ")
        if relevant >= 59:
            for form in ("exact", "published"):
                reached = sim.target_recall(relevant, 0.95, 0.05, reps, rng, form)
                row(base, f"target K {form}", None, float(np.mean(reached >= 0.95)), "share recall ≥ τ")
    print(f"elapsed {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
