"""The count bound (issue 41, item 4): the sample that certifies "at most M relevant remain" is the least n with
P(X = 0 | N_u, M + 1, n) ≤ α, checked against scipy's hypergeometric distribution and against the certification
floor of the recall target (the same question at M = k); the bound now from a sample is the exact one-sided upper
bound, checked the same way."""

from __future__ import annotations

from fractions import Fraction

import pytest
from scipy.stats import hypergeom

from reviewdepth.estimation.count_bound import at_most_from_sample, certification_floor, count_bound, sample_for_at_most
from reviewdepth.estimation.planning import missed_allowed


@pytest.mark.parametrize(("unreviewed", "at_most", "confidence"), [
    (1556, 0, 0.95), (1556, 1, 0.95), (1556, 5, 0.9), (200, 3, 0.99), (7881, 2, 0.95), (10, 0, 0.95), (5, 4, 0.95)])
def test_the_sample_for_at_most_m_is_the_least_that_misses_m_plus_1_rarely(unreviewed: int, at_most: int,
                                                                           confidence: float) -> None:
    n = sample_for_at_most(unreviewed, at_most, confidence)
    alpha = 1 - confidence
    assert hypergeom.pmf(0, unreviewed, at_most + 1, n) <= alpha
    assert n == 1 or hypergeom.pmf(0, unreviewed, at_most + 1, n - 1) > alpha


@pytest.mark.parametrize(("found", "unreviewed", "tau", "confidence"), [
    (15, 1556, "0.95", 0.95), (43, 7881, "0.95", 0.95), (54, 1146, "0.9", 0.9), (200, 3000, "0.8", 0.95)])
def test_lowering_to_the_targets_allowance_costs_the_certification_floor(found: int, unreviewed: int, tau: str,
                                                                         confidence: float) -> None:
    k = missed_allowed(found, unreviewed, Fraction(tau))
    floor = certification_floor(found, unreviewed, Fraction(tau), confidence)
    assert sample_for_at_most(unreviewed, k, confidence) == floor
    cb = count_bound(found, unreviewed, confidence, Fraction(tau), basis="elusion", at_most=unreviewed)
    assert (cb.target_allows, cb.target_floor, cb.target_above_half) == (k, floor, floor > unreviewed / 2)
    assert [step.at_most for step in cb.lowering] == sorted(step.at_most for step in cb.lowering)
    assert all(step.sample == sample_for_at_most(unreviewed, step.at_most, confidence) for step in cb.lowering)


@pytest.mark.parametrize(("relevant", "size", "unreviewed"), [(0, 300, 1556), (2, 300, 1556), (1, 50, 400)])
def test_the_bound_now_is_the_exact_one_sided_upper_bound(relevant: int, size: int, unreviewed: int) -> None:
    m = at_most_from_sample(relevant, size, unreviewed, 0.95)
    assert hypergeom.cdf(relevant, unreviewed, m, size) > 0.05  # m itself is not excluded
    assert hypergeom.cdf(relevant, unreviewed, m + 1, size) <= 0.05  # m + 1 is
