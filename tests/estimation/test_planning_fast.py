"""The elusion plan's hypergeometric probabilities, gathered from one log-gamma per distinct argument, equal the
cell-by-cell form to the bit (the form they replaced, kept here as the oracle), and so does every plan."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import gammaln

from reviewdepth.estimation.planning import _hypergeom_pmf, plan_elusion


def cell_by_cell(values: np.ndarray, population: int, successes: int, sizes: np.ndarray) -> np.ndarray:
    def log_comb(a: float | np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.asarray(gammaln(np.add(a, 1)) - gammaln(b + 1) - gammaln(np.subtract(a, b) + 1))

    v = values[None, :].astype(np.float64)
    n = sizes[:, None].astype(np.float64)
    inside = (v <= successes) & (n - v >= 0) & (n - v <= population - successes)
    vv = np.where(inside, v, 0.0)
    nv = np.where(inside, n - v, 0.0)
    log = log_comb(float(successes), vv) + log_comb(float(population - successes), nv) - log_comb(
        float(population), n)
    return np.where(inside, np.exp(log), 0.0)


@pytest.mark.parametrize("seed", range(40))
def test_same_probabilities_to_the_bit(seed: int) -> None:
    rng = np.random.default_rng(seed)
    population = int(rng.choice([5, 60, 1_000, 50_000, 1_750_000]))
    successes = int(rng.integers(0, population + 1))
    start = int(rng.integers(1, population + 1))
    sizes = np.arange(start, min(population, start + int(rng.integers(1, 4096))) + 1, dtype=np.int64)
    values = np.arange(0, int(rng.integers(1, 40)), dtype=np.int64)
    fast = _hypergeom_pmf(values, population, successes, sizes)
    slow = cell_by_cell(values, population, successes, sizes)
    assert fast.shape == slow.shape
    assert np.array_equal(fast.view(np.int64), slow.view(np.int64))  # bit for bit, zeros included


def test_single_size_and_edges() -> None:
    for population, successes, size in ((1, 1, 1), (10, 0, 5), (10, 10, 10), (2_000_000, 1_000, 1)):
        values = np.arange(0, 3, dtype=np.int64)
        sizes = np.array([size], dtype=np.int64)
        fast = _hypergeom_pmf(values, population, successes, sizes)
        assert np.array_equal(fast.view(np.int64), cell_by_cell(values, population, successes, sizes).view(np.int64))


def test_plans_are_unchanged_on_a_large_rest() -> None:
    plan = plan_elusion(24_000, 1_755_000, "0.95", 0.95, 0.0002)
    assert plan.feasible and plan.size is not None and plan.max_positives is not None
    assert plan.chance is not None and plan.chance >= 0.8
