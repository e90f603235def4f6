"""Coverage simulation on synthetic collections with known R (small version; bench/coverage_bench.py is the large
one). Run with ``pytest -s`` to see the measured coverage. Each assertion allows 3 Monte Carlo standard errors:
coverage ≥ 0.95 − 3·√(0.95·0.05/reps)."""

from __future__ import annotations

import math

import coverage_simulation as sim  # bench/coverage_simulation.py, not shipped (tests/estimation/conftest.py)
import numpy as np
import pytest

from reviewdepth.estimation.intervals import proportion_interval

REPS = 2000
SCENARIOS = [(20000, 0.005), (10000, 0.02), (5000, 0.2)]  # (N, prevalence): R = 100, 200, 1000
QUALITIES = {"good": 3.0, "poor": 0.7}


def floor_for(reps: int, nominal: float = 0.95) -> float:
    return nominal - 3 * math.sqrt(nominal * (1 - nominal) / reps)


def cutoff_at_recall(ranks: np.ndarray, share: float) -> int:
    return int(ranks[math.ceil(share * len(ranks)) - 1])


@pytest.mark.parametrize(("population", "prevalence"), SCENARIOS)
def test_srs_interval_coverage(population: int, prevalence: float) -> None:
    rng = np.random.default_rng(11)
    relevant = round(population * prevalence)
    cov = sim.srs_coverage(population, relevant, 1000, REPS, rng)
    for method, (two, upper) in cov.items():
        print(f"SRS N={population} p={prevalence}: {method:15s} two-sided {two:.4f} upper {upper:.4f}")
        assert upper >= floor_for(REPS), method
    for exact in ("hypergeometric", "clopper-pearson"):
        assert cov[exact][0] >= floor_for(REPS), exact


@pytest.mark.parametrize(("population", "prevalence"), SCENARIOS)
@pytest.mark.parametrize("quality", list(QUALITIES))
def test_elusion_interval_coverage(population: int, prevalence: float, quality: str) -> None:
    rng = np.random.default_rng(12)
    ranks = sim.synthetic_queue(population, prevalence, QUALITIES[quality], rng)
    cutoff = cutoff_at_recall(ranks, 0.8)
    cov = sim.elusion_coverage(ranks, population, cutoff, 500, REPS, rng)
    for method, (two, upper) in cov.items():
        print(f"elusion N={population} p={prevalence} {quality} cut={cutoff}: {method:15s} "
              f"two-sided {two:.4f} upper {upper:.4f}")
        assert upper >= floor_for(REPS), method
    for exact in ("hypergeometric", "clopper-pearson"):
        assert cov[exact][0] >= floor_for(REPS), exact


@pytest.mark.parametrize(("population", "prevalence", "quality"), [(20000, 0.005, "good"), (5000, 0.2, "poor")])
def test_stratified_coverage(population: int, prevalence: float, quality: str) -> None:
    reps = 150
    rng = np.random.default_rng(13)
    ranks = sim.synthetic_queue(population, prevalence, QUALITIES[quality], rng)
    cutoff = cutoff_at_recall(ranks, 0.8)
    two, upper, recall = sim.stratified_coverage(ranks, population, cutoff, (300, 300), reps, rng, draws=1000)
    print(f"stratified N={population} p={prevalence} {quality}: R two-sided {two:.4f} upper {upper:.4f} "
          f"recall two-sided {recall:.4f}")
    assert upper >= floor_for(reps) and two >= floor_for(reps) and recall >= floor_for(reps)


@pytest.mark.parametrize("relevant", [100, 200, 1000])
def test_qbcb_and_target_reach_tau(relevant: int) -> None:
    rng = np.random.default_rng(14)
    for positives in (59, 100):
        if positives > relevant:
            continue
        reached = sim.qbcb_recall(relevant, positives, 0.95, 0.05, REPS, rng)
        share = float(np.mean(reached >= 0.95))
        print(f"QBCB R={relevant} r={positives}: recall ≥ 0.95 in {share:.4f} of runs")
        assert not np.isnan(reached).any() and share >= floor_for(REPS)
    reached = sim.qbcb_recall(relevant, 30, 0.8, 0.05, REPS, rng)
    share = float(np.mean(reached >= 0.8))
    print(f"QBCB R={relevant} r=30 τ=0.8: recall ≥ 0.8 in {share:.4f} of runs")
    assert share >= floor_for(REPS)
    # With fewer than 59 positives QBCB cannot certify 95 %: every run is NaN (no stop).
    assert np.isnan(sim.qbcb_recall(relevant, 58, 0.95, 0.05, 50, rng)).all()
    target = sim.target_recall(relevant, 0.95, 0.05, REPS, rng)
    share = float(np.mean(target >= 0.95))
    print(f"target method R={relevant} K=59: recall ≥ 0.95 in {share:.4f} of runs")
    assert share >= floor_for(REPS)


def test_qbcb_with_random_sample_sizes() -> None:
    """Positives from an SRS of 5,000 of N = 10,000 with R = 200: r varies per run (≈ 100)."""
    rng = np.random.default_rng(15)
    positives = rng.hypergeometric(200, 9800, 5000, size=REPS).astype(np.int64)
    reached = sim.qbcb_recall(200, positives, 0.95, 0.05, REPS, rng)
    share = float(np.mean(reached[~np.isnan(reached)] >= 0.95))
    print(f"QBCB SRS n=5000 of N=10000, R=200: recall ≥ 0.95 in {share:.4f} of runs")
    assert share >= floor_for(REPS)


@pytest.mark.parametrize("quality", list(QUALITIES))
def test_hypergeometric_test_rarely_stops_below_target(quality: str) -> None:
    rng = np.random.default_rng(16)
    population, prevalence = 10000, 0.02
    ranks = sim.synthetic_queue(population, prevalence, QUALITIES[quality], rng)
    cutoff = cutoff_at_recall(ranks, 0.94)  # recall 0.94 < τ = 0.95: H0 is true, close to the boundary
    urn = min(2000, population - cutoff)
    recall, wrong = sim.hypergeometric_false_stop_rate(ranks, population, cutoff, urn, 0.95, REPS, rng)
    print(f"hypergeometric test {quality}: screened recall {recall:.3f}, stopped below τ in {wrong:.4f} of runs")
    assert recall < 0.95
    assert wrong <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / REPS)


def test_direct_recall_interval_coverage() -> None:
    rng = np.random.default_rng(17)
    relevant, found, positives = 200, 170, 80
    f = rng.hypergeometric(found, relevant - found, positives, size=REPS)
    bounds = {int(v): proportion_interval(int(v), positives) for v in np.unique(f)}
    covered = np.mean([bounds[int(v)][0] <= found / relevant <= bounds[int(v)][1] for v in f])
    print(f"direct recall CP, R=200, recall 0.85, 80 positives: two-sided coverage {covered:.4f}")
    assert covered >= floor_for(REPS)
