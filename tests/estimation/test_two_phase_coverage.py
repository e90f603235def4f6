"""CI-sized two-phase coverage (issue 29, item 2; the short version of bench/two_phase_coverage.py).

One real CLEF TAR 2017 topic (CD009579, Waterloo's A ranking, abstract qrels; from ../shared/data, skipped when it
is absent), the bench's set-up (the first 50 ranks and 100 random documents coded; cutoff at 85 % recall; 150
sampled from ranks:1-K, 400 from below-rank:K), 400 replicates. Three kinds of check:

- simulated coverage of every figure ≥ 0.95 − 3σ, σ = √(0.05·0.95/N);
- every bound equals an independent computation (scipy.stats.hypergeom / beta, written here) at the level and
  side it is documented to use: √0.95 per stratum for recall (Šidák), 0.95 for precision; two-sided spends α/2 on
  each side, one-sided α on its side. A quietly changed confidence or sidedness changes some bound here;
- the exact non-coverage of each side of the production-precision interval, summed over the sample's law (not
  simulated), is at most α/2 (two-sided) or α (one-sided), and the one-sided bound is strictly above the two-sided
  one for some outcome (a one-sided bound computed two-sided fails this).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats
from two_phase_coverage import FIGURES, Scenario, Truth, load_topics, scenario_for, simulate, truth_of

from reviewdepth.estimation.two_phase import (
    TWO_PHASE_METHODS,
    StratumSample,
    TwoPhaseCounts,
    two_phase_precision,
    two_phase_recall,
)

from ..conftest import SHARED_DATA, shared_data

TOPIC = "CD009579"
CONFIDENCE = 0.95
ALPHA = 1 - CONFIDENCE
REPS = 400


@pytest.fixture(scope="module")
def scenario() -> Scenario:
    shared_data("clef-tar-2017", "runs", "waterloo.A-rank-normal.gz")
    labels = load_topics([TOPIC], SHARED_DATA)[TOPIC]
    return scenario_for(TOPIC, labels)


def oracle_count(y: int, n: int, population: int, level: float, side: str) -> float:
    """The exact hypergeometric bound by a plain scan (level: the confidence; side: lower / upper; two-sided
    callers pass the per-side level)."""
    tail = 1 - level
    candidates = np.arange(y, population - (n - y) + 1)
    if side == "lower":
        return float(candidates[stats.hypergeom.sf(y - 1, population, candidates, n) > tail].min())
    return float(candidates[stats.hypergeom.cdf(y, population, candidates, n) > tail].max())


def oracle_cp(y: int, n: int, population: int, level: float, side: str) -> float:
    tail = 1 - level
    if side == "lower":
        return 0.0 if y == 0 else population * float(stats.beta.ppf(tail, y, n - y + 1))
    return float(population) if y == n else population * float(stats.beta.ppf(1 - tail, y + 1, n - y))


def oracle(method: str, y: int, n: int, population: int, level: float, side: str) -> float:
    if n == 0:
        return 0.0 if side == "lower" else float(population)
    bound = (oracle_count if method == "hypergeometric" else oracle_cp)(y, n, population, level, side)
    return max(bound, y) if side == "lower" else min(bound, population - (n - y))


def test_simulated_coverage_at_least_nominal(scenario: Scenario) -> None:
    truth, tallies = simulate(scenario, REPS, np.random.default_rng(2917), CONFIDENCE)
    c = truth.counts
    # the scenario is a two-phase one: uncoded documents on both sides of the cutoff, relevant ones on both
    assert c.uncoded_above > 150 and c.uncoded_below > 1000 and truth.found_uncoded > 0 and truth.eluded > 0
    slack = 3 * math.sqrt(ALPHA * CONFIDENCE / REPS)
    for method in TWO_PHASE_METHODS:
        for figure in FIGURES:
            tally = tallies[method][figure]
            assert tally.trials == REPS
            assert tally.rate >= CONFIDENCE - slack, f"{method} {figure}: {tally.hits}/{tally.trials}"


def _counts(truth: Truth, m_in: int, ya: int, n_b: int, yb: int) -> TwoPhaseCounts:
    c = truth.counts
    return TwoPhaseCounts(c.cutoff, c.coded, c.coded_relevant, c.coded_relevant_above, c.uncoded_above,
                          c.uncoded_below, StratumSample(m_in, ya), StratumSample(n_b, yb))


@pytest.mark.parametrize("method", TWO_PHASE_METHODS)
def test_bounds_are_the_documented_levels_and_sides(scenario: Scenario, method: str) -> None:
    truth = truth_of(scenario)
    c = truth.counts
    f, na, nb = c.coded_relevant, c.uncoded_above, c.uncoded_below
    gamma = math.sqrt(CONFIDENCE)
    for m_in, ya, yb in ((120, 30, 1), (131, 40, 0), (110, 25, 3)):
        counts = _counts(truth, m_in, ya, 400, yb)
        recall = two_phase_recall(counts, CONFIDENCE, method)
        precision = two_phase_precision(counts, CONFIDENCE, method)
        assert recall is not None and precision is not None
        two = 1 - (1 - gamma) / 2  # per-side level of a two-sided γ interval
        la, ua = oracle(method, ya, m_in, na, two, "lower"), oracle(method, ya, m_in, na, two, "upper")
        lb, ub = oracle(method, yb, 400, nb, two, "lower"), oracle(method, yb, 400, nb, two, "upper")
        assert recall.lower == pytest.approx((f + la) / (f + la + ub), rel=1e-9)
        assert recall.upper == pytest.approx((f + ua) / (f + ua + lb), rel=1e-9)
        la1, ub1 = oracle(method, ya, m_in, na, gamma, "lower"), oracle(method, yb, 400, nb, gamma, "upper")
        assert recall.lower_one_sided == pytest.approx((f + la1) / (f + la1 + ub1), rel=1e-9)
        assert recall.stratum_confidence == pytest.approx(gamma)
        p_two = 1 - ALPHA / 2
        assert precision.lower == pytest.approx((f + oracle(method, ya, m_in, na, p_two, "lower")) / (f + na))
        assert precision.upper == pytest.approx((f + oracle(method, ya, m_in, na, p_two, "upper")) / (f + na))
        assert precision.lower_one_sided == pytest.approx(
            (f + oracle(method, ya, m_in, na, CONFIDENCE, "lower")) / (f + na))


@pytest.mark.parametrize("method", TWO_PHASE_METHODS)
def test_exact_precision_coverage_by_side(scenario: Scenario, method: str) -> None:
    """Sum over the law of (documents landing among the uncoded, relevant among them) of each miss."""
    truth = truth_of(scenario)
    c = truth.counts
    k, na, xa = truth.produced_frame, c.uncoded_above, truth.found_uncoded
    n = min(scenario.n_produced, k)
    miss_low = miss_high = miss_one = 0.0
    one_sided_tighter = False
    for m_in in range(max(0, n - (k - na)), min(n, na) + 1):
        p_m = float(stats.hypergeom.pmf(m_in, k, na, n))
        if p_m < 1e-12:
            continue
        for ya in range(max(0, m_in - (na - xa)), min(m_in, xa) + 1):
            p = p_m * float(stats.hypergeom.pmf(ya, na, xa, m_in))
            if p < 1e-13:
                continue
            fig = two_phase_precision(_counts(truth, m_in, ya, 400, 0), CONFIDENCE, method)
            assert fig is not None
            miss_low += p * (fig.lower > truth.precision + 1e-12)
            miss_high += p * (fig.upper < truth.precision - 1e-12)
            miss_one += p * (fig.lower_one_sided > truth.precision + 1e-12)
            one_sided_tighter |= fig.lower_one_sided > fig.lower + 1e-12
    assert miss_low <= ALPHA / 2 and miss_high <= ALPHA / 2, (miss_low, miss_high)
    assert miss_one <= ALPHA, miss_one
    assert one_sided_tighter
    # and the bounds are not idle: each side misses sometimes (a level quietly raised to 0.99 would show here)
    assert miss_one > ALPHA / 5, miss_one
