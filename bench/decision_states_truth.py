"""The plan at the two decision states of issue 38, each path's stated chance and cost beside the truth.

CD009579 (CLEF 2017, Waterloo's ranking A): 500 reviewed and a 400-document rest sample holding one relevant
document (the first seed that draws exactly one, as tests/services/test_one_decision.py does); CD010276 (AMC's
ranking): 1,500 reviewed and a 400-document rest sample (seed 0). The queue is the population; labels from the
abstract qrels. For each feasible path of `plan_stop`: the stated chance and expected cost with its 5–95 % range,
and the truth: a one-look path's exact chance (hypergeometric at the true relevant left) and expected cost, a
monitor path's mean realised cost over 20 replays of the audit order on the true labels.

    python bench/decision_states_truth.py
"""

from __future__ import annotations

import sys
from fractions import Fraction
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from plan_calibration_bench import CONFIDENCE, _true_chance, queues

REPLAYS = 20


def state(topic: str, run: str, reviewed: int, sample_size: int, one_relevant: bool) -> None:
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

    labels = dict(queues("clef-tar-2017", run, "qrel_abs_test.txt.gz", 100))[topic]
    n, d, tau = len(labels), reviewed, Fraction("0.95")
    rest = np.arange(d, n)
    seed = next(s for s in range(1000) if not one_relevant or int(labels[rest[np.random.default_rng(s).choice(
        len(rest), sample_size, replace=False)]].sum()) == 1)
    sample = rest[np.random.default_rng(seed).choice(len(rest), sample_size, replace=False)]
    positive = sample[labels[sample] == 1]
    evidence = ReviewEvidence(labels[:d].astype(np.int8), n, rest_sample_size=len(sample),
                              rest_sample_relevant=int(labels[sample].sum()),
                              rest_sample_offsets=tuple(int(i) - d for i in sample),
                              rest_sample_positive_offsets=tuple(int(i) - d for i in positive))
    plan = plan_stop(evidence, tau, CONFIDENCE, table=False)
    found = int(labels[:d].sum())
    print(f"\n{topic} ({run}): {d:,} of {n:,} reviewed, {found} relevant found, rest sample {len(sample)} with "
          f"{int(labels[sample].sum())} relevant; {int(labels[d:].sum())} relevant truly left; recommended: "
          f"{plan.recommended}")
    print(f"{'path':<20} {'stated cost':>11} {'stated range':>15} {'stated chance':>13} {'true chance':>11} "
          f"{'true cost':>9}")
    rng = np.random.default_rng(1)
    for path in plan.paths:
        if not path.feasible or path.kind == "produce_cutoff":
            continue
        if path.kind in ("sample_now", "review_then_sample"):
            more = path.review_more
            left = labels[d + more:]
            chance = _true_chance(found + int(labels[d:d + more].sum()), left, path.sample_size, tau)
            cost = more + path.sample_size + (1 - chance) * (len(left) - path.sample_size)
            stated_chance, true_chance = f"{path.chance:.3f}" if path.chance is not None else "—", f"{chance:.3f}"
        else:
            certifier = Certifier(n, tau, CONFIDENCE)
            batch = max(10, n // 200)
            policy = PlannedPolicy(n, certifier, batch, 1.0, 1.0)
            start = _start_state(evidence)
            costs = []
            for _ in range(REPLAYS):
                perm = _stream_for(evidence, rng)
                costs.append(run_planned(labels, perm, policy, start=start).cost_at(1.0, 1.0) - d
                             if path.kind == "planned" else
                             run_fixed_rate(labels, perm, path.every, batch, certifier, start) - d)
            cost = float(np.mean(costs))
            stated_chance, true_chance = "certain*", "1 (exact)"
        low, high = path.cost_range
        print(f"{path.kind:<20} {path.expected_cost:>11,.0f} {f'{low:,.0f}–{high:,.0f}':>15} {stated_chance:>13} "
              f"{true_chance:>11} {cost:>9,.0f}")


if __name__ == "__main__":
    state("CD009579", "waterloo.A-rank-normal.gz", 500, 400, one_relevant=True)
    state("CD010276", "amc.run.gz", 1500, 400, one_relevant=False)
