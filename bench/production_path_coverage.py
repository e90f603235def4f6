"""Coverage of the stop plan's production-cutoff path on a real CLEF TAR 2017 ranking (issue 29, item 3; not
shipped, not run in CI: tests/estimation/test_production_path.py checks the path's figures exactly).

For a topic (waterloo.A-rank-normal, abstract qrels) and a reviewed prefix d, the plan (`stop_plan.plan_stop`, at
the given costs) gives its production path: cutoff K, a sample of n_a of the produced-unreviewed ranks d+1..K
and one of n_b of the discard pile below K. Each replicate draws the two samples from the true labels and applies
the certification the path names — the two-phase recall's one-sided lower bound at the confidence
(`two_phase.two_phase_recall`, as `report --produce-to K`) against τ. Reported: how often it certifies, how often it
certifies while the true recall is below τ (a false stop; at most α by the guarantee), and how often the one-sided
bound holds the true recall (at least the confidence).

The same sample sizes are then tried at every cutoff of a grid (the one-sided bound's coverage at the worst of
them), and at the hardest cutoff for a false stop: the K whose true two-phase recall is
the largest value below τ (the plan's own cutoff usually has a true recall above τ, where a false stop cannot
happen); there the certification rate is the false-stop rate.

    python bench/production_path_coverage.py [--reps 4000] [--topic CD009579] [--reviewed 500,200] [--target 0.95]
"""

from __future__ import annotations

import argparse
import time
from fractions import Fraction

import numpy as np
import numpy.typing as npt
from two_phase_coverage import load_topics  # bench/ is the script's directory, first on its path

from reviewdepth.estimation.stop_plan import ReviewEvidence, plan_stop
from reviewdepth.estimation.two_phase import StratumSample, TwoPhaseCounts, two_phase_recall


def replay(labels: npt.NDArray[np.int8], reviewed: int, cutoff: int, n_a: int, n_b: int, tau: Fraction,
           confidence: float, reps: int, rng: np.random.Generator) -> tuple[float, float, float, float]:
    """(true recall, certification rate, false-stop rate, one-sided bound coverage) over ``reps`` replicates."""
    relevant = int(labels.sum())
    found = int(labels[:reviewed].sum())
    x_a = int(labels[reviewed:cutoff].sum())
    x_b = int(labels[cutoff:].sum())
    n_above, n_below = cutoff - reviewed, len(labels) - cutoff
    truth = (found + x_a) / relevant
    y_a = rng.hypergeometric(x_a, n_above - x_a, n_a, size=reps)
    y_b = rng.hypergeometric(x_b, n_below - x_b, n_b, size=reps)
    cache: dict[tuple[int, int], float] = {}
    certified = false = covered = 0
    for a, b in zip(y_a.tolist(), y_b.tolist(), strict=True):
        if (a, b) not in cache:
            counts = TwoPhaseCounts(cutoff, reviewed, found, found, n_above, n_below, StratumSample(n_a, a),
                                    StratumSample(n_b, b))
            figure = two_phase_recall(counts, confidence)
            assert figure is not None
            cache[(a, b)] = figure.lower_one_sided
        bound = cache[(a, b)]
        stop = bound >= float(tau)
        certified += stop
        false += stop and truth < float(tau)
        covered += bound <= truth
    return truth, certified / reps, false / reps, covered / reps


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=4000)
    parser.add_argument("--topic", default="CD009579")
    parser.add_argument("--reviewed", default="500,200")
    parser.add_argument("--target", default="0.95")
    parser.add_argument("--confidence", type=float, default=0.95)
    parser.add_argument("--cost", default="1,3,0.2", help="review,sample,produce")
    parser.add_argument("--seed", type=int, default=2029)
    parser.add_argument("--cutoffs", type=int, default=25, help="cutoffs of the sweep")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    labels = load_topics([args.topic])[args.topic]
    tau = Fraction(args.target)
    review, sample, produce = (float(c) for c in args.cost.split(","))
    rng = np.random.default_rng(args.seed)
    relevant = int(labels.sum())
    print(f"{args.topic}: N={len(labels)} R={relevant}; τ={args.target}, confidence {args.confidence}, costs "
          f"review {review:g}, sample {sample:g}, produce {produce:g}; {args.reps} replicates per line")
    for reviewed in (int(d) for d in args.reviewed.split(",")):
        plan = plan_stop(ReviewEvidence(labels[:reviewed], len(labels)), tau, args.confidence, review_cost=review,
                         sample_cost=sample, produce_cost=produce, replicates=10, table=False)
        path = next(p for p in plan.paths if p.kind == "produce_cutoff")
        if not path.feasible or path.produce_to is None or path.produced_sample is None or path.sample_size is None:
            print(f"d={reviewed}: no production path ({path.assumes})")
            continue
        start = reviewed + path.review_more
        n_a, n_b = path.produced_sample, path.sample_size
        truth, rate, false, cover = replay(labels, start, path.produce_to, n_a, n_b, tau, args.confidence,
                                           args.reps, rng)
        print(f"d={reviewed} (+{path.review_more} reviewed), recommended {plan.recommended}: planned K="
              f"{path.produce_to} n_a={n_a} n_b={n_b} planned chance {path.chance:.3f}, expected cost "
              f"{path.expected_cost:,.0f}; true recall {truth:.4f}: certified {rate:.4f}, false stops {false:.4f}, "
              f"one-sided bound holds {cover:.4f}")
        # every cutoff on a grid, the same sizes: the one-sided bound's coverage at its worst cutoff
        grid = np.unique(np.linspace(start + n_a + 1, len(labels) - n_b - 1, args.cutoffs).round().astype(int))
        worst = (2.0, 0, 0.0)
        for k in grid.tolist():
            truth_k, _, _, cover_k = replay(labels, start, k, n_a, n_b, tau, args.confidence, args.reps, rng)
            worst = min(worst, (cover_k, k, truth_k))
        print(f"  over {len(grid)} cutoffs from {int(grid[0])} to {int(grid[-1])}, same sizes: the one-sided bound "
              f"holds the true recall in at least {worst[0]:.4f} of replicates (at K={worst[1]}, true recall "
              f"{worst[2]:.4f})")
        # the hardest cutoff: the largest true recall below the target
        found = int(labels[:start].sum())
        gained = np.cumsum(labels[start:])  # relevant among ranks start+1..K for K = start+1..N
        recall = (found + gained) / relevant
        below = np.flatnonzero(recall < float(tau))
        cutoffs = [start + int(i) + 1 for i in below if start + int(i) + 1 < len(labels) - n_b
                   and int(i) + 1 > n_a]
        if not cutoffs:
            print("  no cutoff with true recall below the target leaves room for the samples")
            continue
        hardest = max(cutoffs, key=lambda k: (recall[k - start - 1], k))
        truth, rate, false, cover = replay(labels, start, hardest, n_a, n_b, tau, args.confidence, args.reps, rng)
        print(f"  hardest cutoff K={hardest} (true recall {truth:.4f} < τ), same sizes: certified (false stops) "
              f"{false:.4f} (α = {1 - args.confidence:.2f}), one-sided bound holds {cover:.4f}")
    print(f"elapsed {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
