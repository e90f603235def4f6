"""The distribution functions of `estimation.distributions` against ``scipy.stats`` (which the status path no longer
imports): ``hypergeom_cdf_many`` must equal ``scipy.stats.hypergeom.cdf`` bit for bit (the stopping rules print its
p-values in full), on random arguments spanning small and large populations and on every end of the support; the
scalar tails, summed from log-pmfs (their own code path, kept as it was), within a relative 1e-9 or an absolute
1e-10: a tail far below 1e-12 taken as 1 minus the other side keeps that side's rounding (about 1e-12 at
M = 20,000), harmless where the intervals and rules compare tails with α."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pytest
from scipy import stats

from reviewdepth.estimation.distributions import hypergeom_cdf, hypergeom_cdf_many, hypergeom_sf
from reviewdepth.estimation.stopping import _tau, hypergeometric_test

IntArray = npt.NDArray[np.int64]


def random_arguments(rng: np.random.Generator, size: int, largest: int) -> tuple[IntArray, ...]:
    """(k, M, K, n) with 0 < M ≤ ``largest``, 0 ≤ K, n ≤ M and k anywhere from below to above the support."""
    population = rng.integers(1, largest + 1, size=size)
    successes = rng.integers(0, population + 1)
    draws = rng.integers(0, population + 1)
    low = np.maximum(0, draws - (population - successes))
    high = np.minimum(successes, draws)
    k = rng.integers(low - 2, high + 3)
    return k, population, successes, draws


@pytest.mark.parametrize("largest", [5, 60, 3_000, 2_000_000])
def test_cdf_many_equals_scipy_stats_bit_for_bit(largest: int) -> None:
    rng = np.random.default_rng(largest)
    k, population, successes, draws = random_arguments(rng, 4_000, largest)
    mine = hypergeom_cdf_many(k, population, successes, draws)
    theirs = stats.hypergeom.cdf(k, population, successes, draws)
    assert mine.dtype == np.float64 and mine.shape == theirs.shape
    assert np.array_equal(mine, theirs), np.flatnonzero(mine != theirs)[:5]


def test_cdf_many_at_the_ends_of_the_support() -> None:
    cases = [  # (k, M, K, n)
        (0, 1, 0, 0), (0, 1, 1, 1), (0, 1, 0, 1), (0, 1, 1, 0), (-1, 10, 3, 4), (0, 10, 0, 4), (0, 10, 10, 4),
        (3, 10, 3, 4), (2, 10, 3, 4), (4, 10, 10, 4), (3, 10, 10, 4), (0, 10, 9, 2), (1, 10, 9, 2),
        (5, 10, 5, 10), (4, 10, 5, 10), (0, 2_000_000, 1, 1), (0, 2_000_000, 1_999_999, 1_999_999),
        (12, 2_000_000, 40, 245_000), (150, 2_000_000, 30_000, 10_000), (10**6, 2_000_000, 10**6, 10**6),
        (499_000, 2_000_000, 10**6, 10**6), (501_000, 2_000_000, 10**6, 10**6),
    ]
    k, population, successes, draws = (np.array(column, dtype=np.int64) for column in zip(*cases, strict=True))
    assert np.array_equal(hypergeom_cdf_many(k, population, successes, draws),
                          stats.hypergeom.cdf(k, population, successes, draws))
    for case in cases:  # scalars broadcast like arrays
        assert hypergeom_cdf_many(*case)[()] == stats.hypergeom.cdf(*case)


def test_cdf_many_refuses_arguments_outside_the_family() -> None:
    for bad in [(0, 0, 0, 0), (0, 5, 6, 1), (0, 5, 1, 6), (0, 5, -1, 1), (0, 5, 1, -1)]:
        with pytest.raises(ValueError, match="population"):
            hypergeom_cdf_many(*bad)


def test_ranked_urn_test_keeps_scipy_stats_p_values() -> None:
    """The ranked-urn hypergeometric test (minimum p over the last 1…N_seen documents as urns) against the same
    formula on ``scipy.stats.hypergeom.cdf``, as the rule computed it before."""
    rng = np.random.default_rng(30)
    for seen, population, tau in [(1, 10, 0.95), (40, 40, 0.8), (300, 2_000, 0.95), (1_500, 10_000, "0.99")]:
        labels = (rng.random(seen) < 0.3 * np.exp(-np.arange(seen) / (seen / 4))).astype(np.int64)
        tf = _tau(tau)
        cg = np.concatenate(([0], np.cumsum(labels))).astype(np.int64)
        n = np.arange(1, seen + 1, dtype=np.int64)
        rho = cg[seen - n]
        k_tar = (cg[seen] * tf.denominator) // tf.numerator - rho + 1
        pool = population - seen + n
        expected = np.where(k_tar > pool, 0.0, stats.hypergeom.cdf(cg[seen] - rho, pool, np.minimum(k_tar, pool), n))
        evidence = hypergeometric_test(labels, population, tau=tau)
        assert evidence.details["p_value"] == float(expected.min())
        assert evidence.details["urn_size"] == int(n[int(np.argmin(expected))])


def test_scalar_tails_agree_with_scipy_stats() -> None:
    rng = np.random.default_rng(7)
    k, population, successes, draws = random_arguments(rng, 300, 20_000)
    for args in zip(k.tolist(), population.tolist(), successes.tolist(), draws.tolist(), strict=True):
        assert hypergeom_cdf(*args) == pytest.approx(stats.hypergeom.cdf(*args), rel=1e-9, abs=1e-10)
        assert hypergeom_sf(*args) == pytest.approx(stats.hypergeom.sf(*args), rel=1e-9, abs=1e-10)


def test_poisson_quantile_equals_scipy_stats() -> None:
    from scipy.stats import poisson

    from reviewdepth.estimation.distributions import poisson_quantile

    rng = np.random.default_rng(41)
    cases = [(0.95, mu) for mu in (1e-9, 1e-3, 0.5, 1.0, 2.8102961352421145, 37.0, 1e4, 3.3e6)]
    cases += [(float(q), float(mu)) for q, mu in zip(rng.random(3000), 10 ** rng.uniform(-6, 6, 3000), strict=True)]
    for q, mu in cases:
        assert poisson_quantile(q, mu) == float(poisson.ppf(q, mu)), (q, mu)
    for q, mu in ((0.0, 1.0), (1.0, 1.0), (0.5, 0.0)):
        with pytest.raises(ValueError):
            poisson_quantile(q, mu)
