"""A one-look path is recommended only if its sample keeps the power at the rest sample's own rate (issue 38).

Among ~50 cutoffs the cheapest one-look path is the one the projection flatters most. On a held-out CLEF 2017
ranking (ECNU run 2, CD007431: 350 of 1,000 reviewed, 20 relevant found, a 300-document rest sample holding one
relevant document, two relevant truly left) the plan recommended "sample 505 of the rest now" with a stated chance
of 0.846; the true chance of that sample certifying 95 % recall was 0.049. The projection had put about 0.2
relevant documents in the rest, where the sample's own rate (1.5/301) puts 3.2."""

from __future__ import annotations

import gzip
from fractions import Fraction

import numpy as np

from reviewdepth.estimation.planning import plan_elusion
from reviewdepth.estimation.stop_plan import ReviewEvidence, outcome_chance, plan_stop, rate_multipliers

from ..conftest import shared_data

ONE_LOOK = ("sample_now", "review_then_sample")


def _labels(topic: str) -> np.ndarray:
    relevant = set()
    with gzip.open(shared_data("clef-tar-2017", "qrels", "qrel_abs_test.txt.gz"), "rt") as qrels:
        for line in qrels:
            f = line.split()
            if len(f) == 4 and f[0] == topic and f[3] != "0":
                relevant.add(f[2])
    order: list[str] = []
    with gzip.open(shared_data("clef-tar-2017", "runs", "ecnu.run2.gz"), "rt") as run:
        for line in run:
            f = line.split()
            if f[0] == topic and f[2] not in order:
                order.append(f[2])
    return np.array([d in relevant for d in order], dtype=np.int8)


def test_a_flattered_one_look_path_is_listed_but_not_recommended() -> None:
    labels = _labels("CD007431")
    n, d, tau = len(labels), 350, Fraction("0.95")
    sample = np.random.default_rng([0, d, n, 95]).choice(np.arange(d, n), size=300, replace=False)
    assert (n, int(labels[:d].sum()), int(labels[sample].sum()), int(labels[d:].sum())) == (1000, 20, 1, 2)
    positive = sample[labels[sample] == 1]
    evidence = ReviewEvidence(labels[:d].astype(np.int8), n, rest_sample_size=300, rest_sample_relevant=1,
                              rest_sample_offsets=tuple(int(i) - d for i in sample),
                              rest_sample_positive_offsets=tuple(int(i) - d for i in positive))
    plan = plan_stop(evidence, tau, 0.95, table=False, seed=0)
    assert plan.recommended not in ONE_LOOK
    # the recommendation's check, recomputed here: at the rest sample's Jeffreys rate spread evenly, no listed
    # one-look path that clears the power by its stated chance keeps it
    rate = 1.5 / 301
    multipliers = rate_multipliers((1.5, 299.5), 0.0)
    flattered = []
    for path in plan.paths:
        if path.kind in ONE_LOOK and path.feasible and path.chance >= plan.power:
            left = n - d - path.review_more
            sized = plan_elusion(20 + int(rate * path.review_more), left, tau, 0.95, rate, power=plan.power,
                                 size=path.sample_size)
            assert sized.max_positives is not None
            at_sample_rate = outcome_chance(path.sample_size, sized.max_positives, rate, multipliers)
            assert at_sample_rate < plan.power
            flattered.append(path.kind)
    assert flattered, "the state no longer has a one-look path its projection flatters: pick another"
