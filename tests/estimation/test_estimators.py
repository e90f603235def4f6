"""Estimators of R and recall (reference §4) and depth under unknown R (§6)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from reviewdepth.estimation.depth_unknown import depth_under_unknown_r
from reviewdepth.estimation.relevant import (
    Stratum,
    direct_recall,
    estimate_elusion,
    estimate_judged,
    estimate_known,
    estimate_srs,
    estimate_stratified,
)


def test_judged_and_known() -> None:
    j = estimate_judged(17)
    assert (j.point, j.lower, j.upper, j.interval) == (17.0, 17.0, None, "none")
    assert any("lower bound only" in a for a in j.assumptions)
    k = estimate_known(40)
    assert (k.point, k.lower, k.upper, k.interval, k.confidence) == (40.0, 40.0, 40.0, "exact", 1.0)
    with pytest.raises(ValueError):
        estimate_judged(-1)


def test_elusion_vector() -> None:
    e = estimate_elusion(380, 10000, 500, 2)
    assert e.details["elusion"] == 0.004 and e.details["missed_point"] == 40.0
    assert (e.point, e.lower, e.upper) == (420.0, 386.0, 521.0)
    assert (e.details["missed_lower"], e.details["missed_upper"]) == (6.0, 141.0)
    assert round(e.recall_point or 0, 4) == 0.9048
    assert round(e.recall_lower or 0, 4) == 0.7294 and round(e.recall_upper or 0, 4) == 0.9845
    one = estimate_elusion(380, 10000, 500, 2, sided="upper")
    assert one.upper == 380 + 123 and one.lower == 380 + 2
    lower_only = estimate_elusion(380, 10000, 500, 2, sided="lower")
    assert lower_only.lower == 380 + 8
    cp = estimate_elusion(380, 10000, 500, 2, method="clopper-pearson")
    assert cp.details["missed_lower"] == pytest.approx(4.85, abs=0.01)
    assert cp.details["missed_upper"] == pytest.approx(143.7, abs=0.05)
    assert cp.interval == "clopper-pearson"


def test_elusion_edges() -> None:
    e = estimate_elusion(50, 0, 0, 0)
    assert (e.point, e.upper, e.recall_point) == (50.0, 50.0, 1.0)
    z = estimate_elusion(0, 1000, 100, 0)
    assert z.lower == 0.0 and z.recall_upper == 1.0 and z.upper is not None and z.upper > 0
    with pytest.raises(ValueError):
        estimate_elusion(10, 100, 200, 1)
    with pytest.raises(ValueError):
        estimate_elusion(10, 100, 20, 1, method="wald")


def test_srs_hypergeometric_and_binomial() -> None:
    e = estimate_srs(2, 500, 10000)
    assert (e.point, e.lower, e.upper, e.interval) == (40.0, 6.0, 141.0, "hypergeometric")
    assert e.recall_point is None
    b = estimate_srs(2, 500, 10000, finite_population=False)
    assert b.lower == pytest.approx(10000 * 0.000485, abs=0.01)
    assert b.upper == pytest.approx(10000 * 0.014374, abs=0.01)
    w = estimate_srs(2, 500, 10000, finite_population=False, method="wilson")
    assert w.interval == "wilson" and w.upper == pytest.approx(144.66, abs=0.01)


def test_srs_truncated_at_found() -> None:
    e = estimate_srs(2, 500, 10000, found=30)
    assert e.lower == 30.0 and e.point == 40.0 and e.upper == 141.0
    assert e.details["raised_to_found"] == "lower"
    assert e.recall_point == pytest.approx(0.75) and e.recall_lower == pytest.approx(30 / 141)
    assert e.recall_upper == 1.0
    f = estimate_srs(2, 500, 10000, found=200)
    assert f.lower == f.point == f.upper == 200.0
    assert f.details["raised_to_found"] == "lower,point,upper"


def test_stratified_point_and_interval() -> None:
    strata = [
        Stratum("top", 1000, 1000, 90, reviewed=True, found=True),
        Stratum("mid", 4000, 400, 4, reviewed=False, found=False),
        Stratum("tail", 5000, 500, 1, reviewed=False, found=False),
    ]
    e = estimate_stratified(strata, seed=1)
    assert e.point == pytest.approx(90 + 40 + 10)
    assert e.recall_point == pytest.approx(90 / 140)
    assert e.lower >= 90 and e.lower < e.point < (e.upper or 0)
    assert e.recall_lower is not None and e.recall_upper is not None
    assert e.recall_lower < 90 / 140 < e.recall_upper <= 1.0
    # Deterministic given the seed, different for another seed.
    assert estimate_stratified(strata, seed=1) == e
    assert estimate_stratified(strata, seed=2).upper != e.upper
    # Delta-method SE: √(4000²(1 − 0.1)·s²/400 + 5000²(1 − 0.1)·s²/500).
    s2_mid = 400 * 0.01 * 0.99 / 399
    s2_tail = 500 * 0.002 * 0.998 / 499
    se = math.sqrt(4000**2 * 0.9 * s2_mid / 400 + 5000**2 * 0.9 * s2_tail / 500)
    assert e.details["se_normal"] == pytest.approx(se)


def test_stratified_all_reviewed_is_exact() -> None:
    strata = [Stratum("a", 10, 10, 3, True, True), Stratum("b", 5, 5, 2, True, False)]
    e = estimate_stratified(strata)
    assert e.point == e.lower == e.upper == 5.0
    assert e.recall_point == e.recall_lower == e.recall_upper == pytest.approx(0.6)


def test_stratified_rejects_bad_strata() -> None:
    with pytest.raises(ValueError):
        estimate_stratified([Stratum("x", 10, 5, 1, reviewed=True, found=True)])
    with pytest.raises(ValueError):
        estimate_stratified([Stratum("x", 10, 0, 0, reviewed=False, found=False)])
    with pytest.raises(ValueError):
        estimate_stratified([])


def test_direct_recall() -> None:
    d = direct_recall(55, 60)
    assert d.recall_point == pytest.approx(55 / 60)
    assert d.recall_lower == pytest.approx(float(stats.beta.ppf(0.025, 55, 6))) and d.interval == "clopper-pearson"
    assert round(d.recall_lower or 0, 4) == 0.8161
    assert math.isnan(d.point) and d.upper is None
    with_found = direct_recall(55, 60, found=550)
    assert with_found.point == pytest.approx(600.0)
    assert with_found.upper == pytest.approx(550 / (d.recall_lower or 1))
    assert with_found.lower == pytest.approx(550 / (d.recall_upper or 1))
    # §8: 59 positives all found give a one-sided 95 % lower bound ≥ 0.95; 58 do not.
    assert (direct_recall(59, 59, sided="lower").recall_lower or 0) >= 0.95
    assert (direct_recall(58, 58, sided="lower").recall_lower or 1) < 0.95
    with pytest.raises(ValueError):
        direct_recall(0, 0)


def test_depth_under_unknown_r_elusion() -> None:
    # 380 relevant found in 3,000 reviewed: relevant at ranks 1…380 spread over the prefix.
    ranks = np.linspace(1, 3000, 380).round().astype(np.int64)
    est = estimate_elusion(380, 10000, 500, 2)
    sample = np.array([*range(10, 3000, 50), 3500, 4200], dtype=np.int64)  # 62 positives
    [d80, d95] = depth_under_unknown_r(ranks, 3000, est, [0.8, 0.95], sample_positive_ranks=sample)
    assert d80.point_needed == 336 and d80.point_reached and d80.point_depth == int(ranks[335])
    # R_U = 521 → 417 needed, more than the 380 found: the conservative 80 % depth is not reached yet.
    assert d80.conservative_needed == 417 and not d80.conservative_reached and d80.conservative_depth is None
    assert d95.point_needed == 399 and not d95.point_reached and d95.point_depth is None
    assert d95.conservative_needed == math.ceil(0.95 * 521) and d95.conservative_depth is None
    assert not d95.conservative_reached
    # Projected: u(⌈0.95·62⌉ = 59); certified: QBCB j = 62 for r = 62 (0.95^62 = 0.0415 ≤ 0.05, but
    # P(Bin(62, 0.95) ≥ 61) = 0.177 > 0.05), so every sample positive must be reached.
    assert d95.projected_depth == int(sample[58])
    assert stats.binom.sf(60, 62, 0.95) > 0.05 >= stats.binom.sf(61, 62, 0.95)
    assert d95.certified_depth == 4200
    assert d95.extra_documents == 1200
    assert d80.certified_depth is not None and d80.certified_depth < 3000 and d80.extra_documents == 0
    assert "elusion" in d95.basis and "QBCB" in d95.basis


def test_depth_under_unknown_r_without_upper_or_sample() -> None:
    ranks = np.array([1, 3, 4], dtype=np.int64)
    [d] = depth_under_unknown_r(ranks, 5, estimate_judged(3), ["0.9"])
    assert d.point_needed == 3 and d.point_depth == 4 and d.point_reached
    assert d.conservative_needed is None and not d.conservative_reached
    assert d.projected_depth is None and d.certified_depth is None and d.extra_documents is None
    few = depth_under_unknown_r(ranks, 5, estimate_known(3), [0.95], sample_positive_ranks=np.array([2, 9]))
    assert few[0].certified_depth is None and few[0].projected_depth == 9 and few[0].extra_documents == 4
    assert "too few positives" in few[0].basis
    with pytest.raises(ValueError):
        depth_under_unknown_r(np.array([7]), 5, estimate_known(3), [0.9])


def test_target_one_is_never_certified_by_a_sample() -> None:
    """QBCB needs τ^r ≤ α, impossible at τ = 1 (the old code took j = r and called u_(r) certified)."""
    ranks = np.arange(1, 41, dtype=np.int64)
    sample = np.arange(5, 505, 5, dtype=np.int64)  # 100 positives
    [d1, d95] = depth_under_unknown_r(ranks, 40, estimate_known(50), [1.0, 0.95], sample_positive_ranks=sample)
    assert d1.certified_depth is None and d1.projected_depth == 500
    assert "recall 1 can only be known by judging every document" in d1.basis
    assert d95.certified_depth == int(sample[98])  # j = 99 for r = 100 (reference §7.4)
    [d0] = depth_under_unknown_r(ranks, 40, estimate_known(50), [0], sample_positive_ranks=sample)
    assert d0.certified_depth == d0.projected_depth == d0.point_depth == 0 and d0.point_reached


def test_depth_under_unknown_r_with_nothing_found() -> None:
    """found = 0, R = 0, an empty queue, and the direct method with no sample positive found (R̂ = F/0 = ∞)."""
    empty = np.array([], dtype=np.int64)
    [d] = depth_under_unknown_r(empty, 0, estimate_known(0), [0.95], sample_positive_ranks=empty)
    assert d.point_needed == 0 and d.point_depth == 0 and d.point_reached and d.conservative_reached
    assert d.projected_depth is None and "no positive" in d.basis
    inf = direct_recall(0, 5, found=3)
    assert inf.point == math.inf
    [d] = depth_under_unknown_r(np.array([1, 2, 3]), 10, inf, [0.9])
    assert d.point_needed is None and d.point_depth is None and not d.point_reached
    assert "not finite" in d.basis and d.conservative_needed is None


def test_one_sided_elusion_and_srs_with_both_exact_methods() -> None:
    """``sided="upper"``: only the upper bound on R is a (1 − α) confidence bound, the lower one is the certain
    floor (F + y_u for the hypergeometric form, whose D ≥ y_u is certain; F for Clopper–Pearson); ``"lower"`` the
    reverse, with the largest possible R as the upper. Reference §4: one-sided 95 % D ≤ 123 and D ≥ 8."""
    est = estimate_elusion(380, 10000, 500, 2, sided="upper")
    assert (est.lower, est.upper) == (382, 503) and est.recall_lower == pytest.approx(380 / 503)
    est = estimate_elusion(380, 10000, 500, 2, sided="lower")
    assert (est.lower, est.upper) == (388, 380 + 10000 - 498)
    u = stats.beta.ppf(0.95, 3, 498)
    lo = stats.beta.ppf(0.05, 2, 499)
    est = estimate_elusion(380, 10000, 500, 2, method="clopper-pearson", sided="upper")
    assert est.interval == "clopper-pearson" and est.lower == 380
    assert est.upper == pytest.approx(380 + 10000 * u) and est.recall_lower == pytest.approx(380 / (380 + 10000 * u))
    est = estimate_elusion(380, 10000, 500, 2, method="clopper-pearson", sided="lower")
    assert est.lower == pytest.approx(380 + 10000 * lo) and est.upper == 380 + 10000
    srs = estimate_srs(2, 500, 10000, finite_population=False, method="clopper-pearson", sided="upper")
    assert srs.interval == "clopper-pearson" and srs.lower == 0 and srs.upper == pytest.approx(10000 * u)
    srs = estimate_srs(2, 500, 10000, found=30, finite_population=False, method="clopper-pearson", sided="lower")
    assert srs.lower == pytest.approx(max(30, 10000 * lo)) and srs.upper == 10000
    assert srs.details["sided"] == "lower"
