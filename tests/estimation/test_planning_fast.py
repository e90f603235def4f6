"""The elusion plan's hypergeometric probabilities, gathered from one log-gamma per distinct argument, equal the
cell-by-cell form to the bit (the form they replaced, kept here as the oracle), and so does every plan."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import gammaln

from reviewdepth.estimation.planning import (
    _elusion_outcomes,
    _hypergeom_pmf,
    _zero_certifies_from,
    missed_allowed,
    plan_elusion,
)


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


def scanned_plan(found: int, unreviewed: int, tau: str, confidence: float, rate: float,
                 power: float) -> tuple[int, int, float] | None:
    """The elusion plan as a scan of every n from the smallest certifying one (the form the step search replaced,
    kept here as the oracle): (n, k(n), chance(n)) at the first n reaching the power, or None."""
    d_max = missed_allowed(found, unreviewed, tau)
    if d_max >= unreviewed:
        return None
    alpha = 1.0 - confidence
    d_e = min(unreviewed, round(rate * unreviewed))
    start = _zero_certifies_from(unreviewed, d_max, alpha)
    for a in range(start, unreviewed + 1, 4096):
        sizes = np.arange(a, min(unreviewed, a + 4095) + 1, dtype=np.int64)
        with np.errstate(over="ignore"):  # a cell outside the support may overflow before it is masked to 0
            ks, chances = _elusion_outcomes(sizes, unreviewed, d_max, d_e, alpha)
        hit = np.flatnonzero(chances >= power)
        if len(hit):
            return int(sizes[hit[0]]), int(ks[hit[0]]), float(chances[hit[0]])
    return None


@pytest.mark.parametrize("seed", range(60))
def test_the_step_search_finds_the_plan_a_scan_of_every_size_finds(seed: int) -> None:
    rng = np.random.default_rng(1000 + seed)
    unreviewed = int(rng.choice([40, 300, 2_000, 20_000, 150_000]))
    found = int(rng.integers(1, 3_000))
    tau = str(rng.choice(["0.8", "0.9", "0.95"]))
    confidence = float(rng.choice([0.9, 0.95, 0.99]))
    power = float(rng.choice([0.5, 0.8, 0.9]))
    d_max = missed_allowed(found, unreviewed, tau)
    # an elusion rate near what the plan can certify, where the steps matter most
    rate = min(1.0, float(rng.uniform(0.0, 1.2)) * d_max / unreviewed)
    plan = plan_elusion(found, unreviewed, tau, confidence, rate, power)
    expected = scanned_plan(found, unreviewed, tau, confidence, rate, power)
    if plan.feasible and plan.size is not None and d_max < unreviewed:
        assert expected == (plan.size, plan.max_positives, plan.chance)
    elif d_max < unreviewed and plan.reason.startswith("no sample"):
        assert expected is None


def test_the_step_search_on_the_report_bench_rest() -> None:
    """The 2,000,000-document bench queue's plan (22,652 found, 1,755,000 unreviewed): about 100,000 sizes to scan."""
    plan = plan_elusion(22_652, 1_755_000, "0.95", 0.95, 0.0004995004995004995, 0.8)
    assert (plan.size, plan.max_positives, plan.chance) == scanned_plan(22_652, 1_755_000, "0.95", 0.95,
                                                                        0.0004995004995004995, 0.8)
