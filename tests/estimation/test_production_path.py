"""The production-cutoff (two-phase, TAR 1.0) path of the stop plan (issue 29, item 3): its chance and expected
cost against a direct enumeration through the two-phase validation's own recall bound, its certifying outcomes
against that bound (one-sided, at the stated confidence, strata at its square root), and the recommendation moving
to it when producing is cheap and away from it when producing is dear or not on the table."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import numpy.typing as npt
import pytest
from scipy import stats

from reviewdepth.estimation.stop_plan import (
    ProductionPlan,
    ReviewEvidence,
    plan_production,
    plan_stop,
    production_cost,
    project_yield,
)
from reviewdepth.estimation.two_phase import StratumSample, TwoPhaseCounts, two_phase_recall

TAU, CONFIDENCE = Fraction("0.8"), 0.95
SIZE = 3000


def queue() -> npt.NDArray[np.int8]:
    rng = np.random.default_rng(11)
    return (rng.random(SIZE) < 0.4 * np.exp(-np.arange(SIZE) / 150) + 0.001).astype(np.int8)


def recall_bound(plan: ProductionPlan, reviewed: int, y_a: int, y_b: int, sided: str = "one",
                 confidence: float = CONFIDENCE) -> float:
    """The two-phase validation's recall bound (what `report --produce-to K` compares with the target) for the
    plan's strata when the produced sample holds y_a relevant and the discard sample y_b."""
    coded = reviewed + plan.review_more
    counts = TwoPhaseCounts(cutoff=coded + plan.produced, coded=coded, coded_relevant=plan.found,
                            coded_relevant_above=plan.found, uncoded_above=plan.produced,
                            uncoded_below=plan.discard,
                            produced_sample=StratumSample(plan.produced_sample, y_a),
                            discard_sample=StratumSample(plan.discard_sample, y_b))
    figure = two_phase_recall(counts, confidence)
    assert figure is not None
    return figure.lower_one_sided if sided == "one" else figure.lower


def most_certifying(plan: ProductionPlan, reviewed: int, y_a: int) -> int:
    """The most discard-sample relevant that still certify (−1: none), walking up y_b (the bound falls in y_b)."""
    y_b = -1
    while y_b < plan.discard_sample and recall_bound(plan, reviewed, y_a, y_b + 1) >= float(TAU):
        y_b += 1
    return y_b


@pytest.fixture(scope="module")
def production() -> tuple[ProductionPlan, int, float]:
    labels = queue()
    reviewed = 150
    projection = project_yield(labels[:reviewed], SIZE - reviewed)
    plan = plan_production(int(labels[:reviewed].sum()), SIZE - reviewed, projection, 0, TAU, CONFIDENCE,
                           power=0.8, review_cost=1.0, sample_cost=3.0, produce_cost=0.05)
    assert plan is not None
    return plan, reviewed, float(projection.cumulative[-1])


def test_chance_and_expected_cost_against_a_direct_enumeration(production: tuple[ProductionPlan, int, float]
                                                               ) -> None:
    plan, reviewed, _ = production
    labels = queue()
    cum = np.concatenate([[0.0], np.cumsum(project_yield(labels[:reviewed], SIZE - reviewed).rate)])
    # the projection's relevant in each stratum, as the plan's inputs (not its outputs)
    x_a = round(float(cum[plan.produced]))
    x_b = round(float(cum[-1] - cum[plan.produced]))
    assert (plan.assumed_produced_relevant, plan.assumed_discard_relevant) == (x_a, x_b)
    assert 0 < plan.chance < 1  # a discriminating case: some outcomes fail
    n_a, n_b = plan.produced_sample, plan.discard_sample
    chance = 0.0
    for y_a in range(n_a + 1):
        p_a = stats.hypergeom.pmf(y_a, plan.produced, x_a, n_a)
        if p_a < 1e-15:
            continue
        most = most_certifying(plan, reviewed, y_a)
        if most >= 0:
            chance += p_a * stats.hypergeom.cdf(most, plan.discard, x_b, n_b)
    assert plan.chance == pytest.approx(chance, abs=1e-9)
    assert plan.chance >= 0.8
    rest = SIZE - reviewed
    success = 3.0 * (n_a + n_b) + 0.05 * plan.produced
    failure = 3.0 * (n_a + n_b) + 1.0 * (rest - n_a - n_b)
    expected = chance * success + (1 - chance) * failure
    assert production_cost(plan, rest, 1.0, 3.0, 0.05) == pytest.approx((expected, success, failure), rel=1e-9)
    # the plan is the least discard sample reaching the power at its produced sample: one fewer falls short
    assert n_b >= 1


def test_certifying_outcomes_are_the_one_sided_two_phase_bound_at_the_stated_confidence(
        production: tuple[ProductionPlan, int, float]) -> None:
    plan, reviewed, _ = production
    assert plan.certifying and plan.certifying[0][0] == 0
    steps = dict(plan.certifying)
    last = -2
    for y_a in range(plan.certifying[-1][0] + 1):
        expected = most_certifying(plan, reviewed, y_a)
        stated = steps.get(y_a, last)
        assert stated == expected, y_a
        last = stated
    # sidedness and level matter here: at the last certifying outcome, the two-sided bound at the same confidence
    # and the one-sided bound at a higher confidence both fall below the target, so a plan computed with either
    # would list other outcomes (and this test would fail)
    y_a, y_b = next((y, most) for y, most in plan.certifying if most >= 0)
    assert recall_bound(plan, reviewed, y_a, y_b) >= float(TAU)
    assert recall_bound(plan, reviewed, y_a, y_b + 1) < float(TAU)
    assert recall_bound(plan, reviewed, y_a, y_b, sided="two") < float(TAU)
    assert recall_bound(plan, reviewed, y_a, y_b, confidence=1 - (1 - CONFIDENCE) / 2) < float(TAU)


def test_the_recommendation_follows_the_produce_cost() -> None:
    labels = queue()
    evidence = ReviewEvidence(labels[:300], SIZE)

    def plan(produce: float | None) -> tuple[str | None, dict[str, float]]:
        # the service's 40 replays: at 4, production at the review price and the planned path (1,847 against
        # 1,826 at 40) tie within the replays' noise
        p = plan_stop(evidence, TAU, CONFIDENCE, replicates=40, table=False, review_cost=1.0, sample_cost=3.0,
                      produce_cost=produce)
        return p.recommended, {q.kind: q.expected_cost for q in p.paths if q.feasible}

    cheap, cheap_costs = plan(0.05)
    dear, dear_costs = plan(5.0)
    equal, _ = plan(1.0)
    absent, absent_costs = plan(None)
    assert cheap == "produce_cutoff"
    assert cheap_costs["produce_cutoff"] < min(c for k, c in cheap_costs.items() if k != "produce_cutoff")
    assert dear != "produce_cutoff" and dear_costs["produce_cutoff"] > dear_costs[str(dear)]
    # producing at the price of reviewing is never recommended here; without a produce cost the path is not offered
    assert equal != "produce_cutoff"
    assert "produce_cutoff" not in absent_costs and absent == dear
    # the other paths do not depend on the produce cost (the monitor paths are replayed from the same seed)
    assert {k: c for k, c in cheap_costs.items() if k != "produce_cutoff"} == absent_costs


def test_a_dearer_production_never_lowers_the_paths_cost() -> None:
    labels = queue()
    projection = project_yield(labels[:300], SIZE - 300)
    found = int(labels[:300].sum())
    costs = []
    for produce in (0.0, 0.1, 0.5):
        plan = plan_production(found, SIZE - 300, projection, 0, TAU, CONFIDENCE, power=0.8, review_cost=1.0,
                               sample_cost=3.0, produce_cost=produce)
        assert plan is not None
        costs.append(production_cost(plan, SIZE - 300, 1.0, 3.0, produce)[0])
    assert costs == sorted(costs) and math.isfinite(costs[-1])
