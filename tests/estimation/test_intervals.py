"""Proportion and hypergeometric intervals against the scipy-checked vectors of reference §5 and §8."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from reviewdepth.estimation.intervals import INTERVAL_METHODS, hypergeometric_interval, proportion_interval

VECTORS = {
    (7, 50): {"clopper-pearson": (0.058192, 0.267396), "wilson": (0.069508, 0.261862),
              "jeffreys": (0.064872, 0.255325), "agresti-coull": (0.066374, 0.264996)},
    (0, 1500): {"clopper-pearson": (0.0, 0.002456), "wilson": (0.0, 0.002554),
                "jeffreys": (0.0, 0.001673), "agresti-coull": (0.0, 0.003082)},
    (37, 40): {"clopper-pearson": (0.796135, 0.984258), "wilson": (0.801358, 0.974164),
               "jeffreys": (0.813186, 0.978423), "agresti-coull": (0.794322, 0.981199)},
    (2, 500): {"clopper-pearson": (0.000485, 0.014374), "wilson": (0.001098, 0.014466),
               "jeffreys": (0.000832, 0.012770), "agresti-coull": (0.000109, 0.015454)},
}


@pytest.mark.parametrize("yn", list(VECTORS))
@pytest.mark.parametrize("method", INTERVAL_METHODS)
def test_reference_vectors(yn: tuple[int, int], method: str) -> None:
    lower, upper = proportion_interval(*yn, confidence=0.95, method=method)
    exp_lower, exp_upper = VECTORS[yn][method]
    assert round(lower, 6) == exp_lower and round(upper, 6) == exp_upper


def test_scipy_binomtest_agrees() -> None:
    for y, n in VECTORS:
        ci = stats.binomtest(y, n).proportion_ci(0.95, method="exact")
        assert proportion_interval(y, n) == pytest.approx((ci.low, ci.high), abs=1e-12)
        ci = stats.binomtest(y, n).proportion_ci(0.95, method="wilson")
        assert proportion_interval(y, n, method="wilson") == pytest.approx((ci.low, ci.high), abs=1e-12)


def test_boundaries_and_one_sided() -> None:
    assert proportion_interval(0, 1500, sided="upper") == pytest.approx((0.0, 0.001995), abs=5e-7)
    assert proportion_interval(0, 1500, sided="upper")[1] == pytest.approx(1 - 0.05 ** (1 / 1500))
    # §8: zero positives in n, one-sided 95 % upper bound ≈ 3/n.
    for n in (300, 1500, 10000):
        assert proportion_interval(0, n, sided="upper")[1] == pytest.approx(3 / n, rel=0.01)
    assert proportion_interval(10, 10, method="clopper-pearson")[1] == 1.0
    assert proportion_interval(10, 10, method="jeffreys")[1] == 1.0
    assert proportion_interval(10, 10, method="wilson")[1] == 1.0
    assert proportion_interval(0, 10, method="wilson")[0] == 0.0
    low, up = proportion_interval(7, 50, sided="lower")
    assert up == 1.0 and low == pytest.approx(float(stats.beta.ppf(0.05, 7, 44)))
    # One-sided bounds are tighter than the matching two-sided bound.
    for method in INTERVAL_METHODS:
        two_lower, two_upper = proportion_interval(7, 50, method=method)
        assert proportion_interval(7, 50, method=method, sided="lower")[0] > two_lower
        assert proportion_interval(7, 50, method=method, sided="upper")[1] < two_upper


def test_sample_size_facts() -> None:
    # §8: direct method at f = n₊: one-sided CP lower α^(1/n) ≥ 0.95 needs n₊ ≥ 59; two-sided needs 72.
    assert proportion_interval(59, 59, sided="lower")[0] >= 0.95 > proportion_interval(58, 58, sided="lower")[0]
    assert proportion_interval(72, 72)[0] >= 0.95 > proportion_interval(71, 71)[0]
    assert 0.95**59 <= 0.05 < 0.95**58
    # Margin of error E at 95 %, p = 0.5: n₀ = z²/(4E²).
    z = float(stats.norm.ppf(0.975))
    assert math.ceil(z * z * 0.25 / 0.05**2) == 385 and math.ceil(z * z * 0.25 / 0.02**2) == 2401


def test_invalid_arguments() -> None:
    with pytest.raises(ValueError):
        proportion_interval(3, 2)
    with pytest.raises(ValueError):
        proportion_interval(1, 2, method="wald")
    with pytest.raises(ValueError):
        proportion_interval(1, 2, confidence=1.0)
    with pytest.raises(ValueError):
        proportion_interval(1, 2, sided="both")
    with pytest.raises(ValueError):
        hypergeometric_interval(1, 20, 10)


def test_hypergeometric_vector() -> None:
    assert hypergeometric_interval(2, 500, 10000) == (6, 141)
    assert hypergeometric_interval(2, 500, 10000, sided="lower") == (8, 9502)
    assert hypergeometric_interval(2, 500, 10000, sided="upper") == (2, 123)


def test_hypergeometric_definition_by_brute_force() -> None:
    m, n = 60, 12
    for y in range(n + 1):
        k_lo, k_hi = hypergeometric_interval(y, n, m)
        ks = range(y, m - (n - y) + 1)
        exp_lo = min(k for k in ks if stats.hypergeom.sf(y - 1, m, k, n) > 0.025)
        exp_hi = max(k for k in ks if stats.hypergeom.cdf(y, m, k, n) > 0.025)
        assert (k_lo, k_hi) == (exp_lo, exp_hi)
    assert hypergeometric_interval(0, n, m)[0] == 0 and hypergeometric_interval(n, n, m)[1] == m
    # A census is exact.
    assert hypergeometric_interval(7, 30, 30) == (7, 7)


@given(st.integers(1, 400), st.data(), st.sampled_from(INTERVAL_METHODS), st.sampled_from([0.8, 0.9, 0.95, 0.99]))
def test_interval_contains_estimate(n: int, data: st.DataObject, method: str, confidence: float) -> None:
    y = data.draw(st.integers(0, n))
    lower, upper = proportion_interval(y, n, confidence, method)
    assert 0.0 <= lower <= y / n <= upper <= 1.0
    lo1, _ = proportion_interval(y, n, confidence, method, sided="lower")
    _, up1 = proportion_interval(y, n, confidence, method, sided="upper")
    assert lower <= lo1 + 1e-12 and up1 <= upper + 1e-12


@given(st.integers(1, 300), st.data(), st.sampled_from([0.8, 0.95]))
def test_hypergeometric_contains_estimate(m: int, data: st.DataObject, confidence: float) -> None:
    n = data.draw(st.integers(1, m))
    y = data.draw(st.integers(0, n))
    k_lo, k_hi = hypergeometric_interval(y, n, m, confidence)
    assert y <= k_lo <= m * y / n + 1e-9 and m * y / n - 1e-9 <= k_hi <= m - (n - y)
