"""Two-phase (TAR 1.0) figures: the definitions on small cases worked by hand or by brute force."""

from __future__ import annotations

import math

import pytest

from reviewdepth.estimation.intervals import hypergeometric_interval
from reviewdepth.estimation.two_phase import (
    StratumSample,
    TwoPhaseAssumption,
    TwoPhaseCounts,
    TwoPhaseGap,
    control_set_recall,
    count_bounds,
    two_phase_estimate,
    two_phase_precision,
    two_phase_recall,
)


def counts(a: StratumSample | None, b: StratumSample | None, *, f: int = 40, na: int = 200,
           nb: int = 2000) -> TwoPhaseCounts:
    return TwoPhaseCounts(cutoff=300, coded=150, coded_relevant=f, coded_relevant_above=30, uncoded_above=na,
                          uncoded_below=nb, produced_sample=a, discard_sample=b)


def test_points_follow_the_definitions() -> None:
    c = counts(StratumSample(100, 25), StratumSample(400, 4))
    est = two_phase_estimate(c)
    xa, xb = 200 * 25 / 100, 2000 * 4 / 400
    assert est.recall is not None and est.precision is not None
    assert est.recall.point == pytest.approx((40 + xa) / (40 + xa + xb))
    assert est.precision.point == pytest.approx((40 + xa) / (40 + 200))
    assert c.produced == 240
    assert est.gaps == ()


def test_recall_bounds_combine_strata_at_the_sidak_level() -> None:
    c = counts(StratumSample(100, 25), StratumSample(400, 4))
    r = two_phase_recall(c, 0.95)
    assert r is not None
    g = math.sqrt(0.95)
    la, ua = hypergeometric_interval(25, 100, 200, g)
    lb, ub = hypergeometric_interval(4, 400, 2000, g)
    assert r.lower == pytest.approx((40 + la) / (40 + la + ub))
    assert r.upper == pytest.approx((40 + ua) / (40 + ua + lb))
    la1, _ = hypergeometric_interval(25, 100, 200, g, "lower")
    _, ub1 = hypergeometric_interval(4, 400, 2000, g, "upper")
    assert r.lower_one_sided == pytest.approx((40 + la1) / (40 + la1 + ub1))
    assert r.lower < r.lower_one_sided <= r.point <= r.upper
    assert TwoPhaseAssumption.JOINT_LEVEL in r.assumptions


def test_a_known_stratum_gives_the_other_the_full_level() -> None:
    c = counts(StratumSample(200, 50), StratumSample(400, 4))  # the produced side sampled whole: X_a = 50
    r = two_phase_recall(c, 0.95)
    assert r is not None and r.stratum_confidence == 0.95
    _, ub = hypergeometric_interval(4, 400, 2000, 0.95)
    assert r.lower == pytest.approx(90 / (90 + ub))
    p = two_phase_precision(c, 0.95)
    assert p is not None and p.lower == p.upper == p.point == pytest.approx(90 / 240)
    assert TwoPhaseAssumption.JOINT_LEVEL not in r.assumptions


def test_unjudged_sample_documents_count_against_each_bound() -> None:
    judged = count_bounds(StratumSample(100, 10), 1000, 0.95, "hypergeometric")
    low_side = count_bounds(StratumSample(100, 10, 5), 1000, 0.95, "hypergeometric")
    high_side = count_bounds(StratumSample(100, 15), 1000, 0.95, "hypergeometric")
    assert low_side == (judged[0], high_side[1])
    r = two_phase_recall(counts(StratumSample(100, 25, 3), StratumSample(400, 4, 2)))
    assert r is not None and TwoPhaseAssumption.UNJUDGED_AGAINST_BOUNDS in r.assumptions


def test_missing_samples_are_gaps_not_guesses() -> None:
    est = two_phase_estimate(counts(None, StratumSample(400, 4)))
    assert est.recall is None and est.precision is None and est.found_uncoded is None
    assert est.gaps == (TwoPhaseGap.NO_PRODUCED_SAMPLE,)
    est = two_phase_estimate(counts(StratumSample(100, 25), None))
    assert est.recall is None and est.precision is not None and est.eluded is None
    assert est.gaps == (TwoPhaseGap.NO_DISCARD_SAMPLE,)
    # nothing uncoded above the cutoff: the produced set is the coded relevant, known exactly
    est = two_phase_estimate(counts(None, StratumSample(400, 0), na=0))
    assert est.precision is not None and est.precision.point == 1.0 and est.recall is not None


def test_clopper_pearson_is_wider_and_labelled() -> None:
    c = counts(StratumSample(100, 25), StratumSample(400, 4))
    h = two_phase_recall(c, 0.95, "hypergeometric")
    b = two_phase_recall(c, 0.95, "clopper-pearson")
    assert h is not None and b is not None
    assert b.lower_one_sided <= h.lower_one_sided
    assert TwoPhaseAssumption.BINOMIAL_CONSERVATIVE in b.assumptions
    with pytest.raises(ValueError):
        two_phase_recall(c, 0.95, "wilson")


def test_control_set_recall() -> None:
    r = control_set_recall(20, 17, 0.95)
    assert r is not None and r.point == pytest.approx(0.85)
    assert r.lower < r.lower_one_sided < 0.85 < r.upper
    assert control_set_recall(0, 0) is None


def test_bad_counts_are_refused() -> None:
    with pytest.raises(ValueError):
        StratumSample(10, 8, 5)
    with pytest.raises(ValueError):
        counts(StratumSample(300, 1), None)  # more drawn than the stratum holds
