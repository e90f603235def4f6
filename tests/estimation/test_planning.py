"""Sample-size planning (issue 11, item 5): each plan checked against a direct computation with scipy, a seeded
Monte Carlo run through the stopping rule that will judge the sample, and hand-derived vectors."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from reviewdepth.estimation.planning import _qbcb_thresholds, missed_allowed, plan_elusion, plan_population
from reviewdepth.estimation.stopping import elusion_rule, qbcb, qbcb_threshold

MC_REPS = 3000


def mc_tolerance(p: float, reps: int = MC_REPS) -> float:
    return 4 * math.sqrt(max(p * (1 - p), 0.01) / reps)


def test_missed_allowed_hand_vectors() -> None:
    assert missed_allowed(380, 10_000, 0.95) == 20  # 380/400 = 0.95 exactly: the tie certifies
    assert missed_allowed(379, 10_000, 0.95) == 19
    assert missed_allowed(19, 10_000, "0.95") == 1
    assert missed_allowed(0, 100, 0.9) == 0
    assert missed_allowed(1000, 30, 0.5) == 30  # capped at the unreviewed


def test_elusion_plan_without_elusion_matches_the_hand_formula() -> None:
    """e = 0: the sample never holds a positive, so the plan is the smallest n at which 0 positives certify:
    P(Y = 0 | K = D_max + 1 = 21) = Π_{i<n} (N_u − 21 − i)/(N_u − i) ≤ α. With replacement that would be
    n ≈ ln α / ln(1 − 21/N_u) = 1,425.6; without replacement it is a little smaller."""
    found, rest, alpha = 380, 10_000, 0.05
    p0, n = 1.0, 0
    while p0 > alpha:
        p0 *= (rest - 21 - n) / (rest - n)
        n += 1
    plan = plan_elusion(found, rest, 0.95, 0.95, 0.0)
    assert plan.feasible and plan.size == n == plan.min_size
    assert plan.max_positives == 0 and plan.chance == pytest.approx(1.0) and plan.expected_positives == 0
    assert n < math.log(alpha) / math.log(1 - 21 / rest) < n + 120
    assert elusion_rule(found, rest, n, 0, 0.95, alpha).stop_now is True
    assert elusion_rule(found, rest, n - 1, 0, 0.95, alpha).stop_now is False


def elusion_chance_by_scipy(found: int, rest: int, tau: str, alpha: float, d_e: int, sizes: np.ndarray) -> np.ndarray:
    """Independent of the plan's code: D_max from exact fractions, k(n) = the largest y whose one-sided bound
    D_U ≤ D_max (D_U ≤ D_max iff P(Y ≤ y | D_max + 1) ≤ α), chance = P(Y ≤ k | D_e), all with scipy.stats."""
    frac = Fraction(tau)
    d_max = min(rest, math.floor(found * (1 - frac) / frac))
    y = np.arange(0, 200)
    cdf = stats.hypergeom.cdf(y[None, :], rest, d_max + 1, sizes[:, None])
    k = (cdf <= alpha).sum(axis=1) - 1
    return np.where(k >= 0, stats.hypergeom.cdf(np.maximum(k, 0), rest, d_e, sizes), 0.0)


@pytest.mark.parametrize(("rate", "found"), [(0.005, 200), (0.02, 500), (0.1, 2500)])
def test_elusion_plan_against_direct_computation(rate: float, found: int) -> None:
    rest, tau, confidence, power = 2000, "0.9", 0.95, 0.8
    alpha = 1 - confidence
    plan = plan_elusion(found, rest, tau, confidence, rate, power=power)
    d_e = round(rate * rest)
    assert plan.feasible and plan.size is not None and plan.max_positives is not None and plan.chance is not None
    n, k = plan.size, plan.max_positives
    # The outcome agrees with the rule that will judge the sample.
    assert elusion_rule(found, rest, n, k, tau, alpha).stop_now is True
    assert elusion_rule(found, rest, n, k + 1, tau, alpha).stop_now is False
    # The chance and the literal "smallest n": every smaller n falls short.
    sizes = np.arange(1, n + 1)
    chances = elusion_chance_by_scipy(found, rest, tau, alpha, d_e, sizes)
    assert plan.chance == pytest.approx(chances[-1], abs=1e-9) and plan.chance >= power
    assert np.all(chances[:-1] < power)
    assert plan.expected_positives == pytest.approx(n * rate)
    # Monte Carlo through the rule itself.
    rng = np.random.default_rng(int(rate * 1000))
    y = rng.hypergeometric(d_e, rest - d_e, n, size=MC_REPS)
    stops = {int(v): elusion_rule(found, rest, n, int(v), tau, alpha).stop_now for v in np.unique(y)}
    share = float(np.mean([stops[int(v)] for v in y]))
    assert share == pytest.approx(plan.chance, abs=mc_tolerance(plan.chance))
    # The plan for a given size says the same for that size.
    given = plan_elusion(found, rest, tau, confidence, rate, power=power, size=n)
    assert (given.size, given.max_positives, given.size_given) == (n, k, True)
    assert given.chance == pytest.approx(plan.chance)
    assert plan.min_size is not None
    small = plan_elusion(found, rest, tau, confidence, rate, size=plan.min_size - 1)
    assert not small.feasible and small.max_positives is None and f"{plan.min_size:,}" in small.reason
    assert elusion_rule(found, rest, plan.min_size - 1, 0, tau, alpha).stop_now is False


def test_elusion_plan_infeasible_and_edges() -> None:
    low = plan_elusion(100, 10_000, 0.95, 0.95, 0.01)  # 100/(100 + 100) = 0.5 < 0.95
    assert not low.feasible and low.size is None and "review deeper first" in low.reason
    assert "below the 95% target" in low.reason
    nothing = plan_elusion(50, 0, 0.95, 0.95, 0.0)
    assert nothing.feasible and nothing.size == 0 and "nothing is left unreviewed" in nothing.reason
    anything = plan_elusion(1000, 20, 0.95, 0.95, 0.5)  # 1000/1020 ≥ 0.95 even if all 20 are relevant
    assert anything.feasible and anything.size == 1 and anything.chance == 1.0
    assert elusion_rule(1000, 20, 1, 1, 0.95, 0.05).stop_now is True
    with pytest.raises(ValueError):
        plan_elusion(10, 100, 1.0, 0.95, 0.0)
    with pytest.raises(ValueError):
        plan_elusion(10, 100, 0.9, 0.95, 1.5)


def test_qbcb_thresholds_incremental_matches_qbcb_threshold() -> None:
    for tau in ("0.8", "0.9", "0.95"):
        frac = Fraction(tau)
        got = _qbcb_thresholds(400, frac, 0.05)
        expected = [qbcb_threshold(r, frac, 0.05) or 0 for r in range(401)]
        assert got.tolist() == expected


def population_chance_by_scipy(size: int, reviewed: int, prevalence: float, recall: float, tau: str,
                               alpha: float, sizes: np.ndarray) -> np.ndarray:
    r_e = round(prevalence * size)
    f_e = min(reviewed, round(recall * r_e))
    r = np.arange(r_e + 1)
    j = np.array([qbcb_threshold(int(v), tau, alpha) or 0 for v in r])
    certify = np.where(j > 0, stats.hypergeom.sf(j - 1, r_e, f_e, r), 0.0)
    return np.asarray(hypergeom_pmf_by_ratios(r_e, size, sizes) @ certify)


def hypergeom_pmf_by_ratios(successes: int, population: int, sizes: np.ndarray) -> np.ndarray:
    """P(r | n), r = 0…K, for r ~ Hypergeometric(M, K, n), rows n ∈ ``sizes``: built from P(0 | n) =
    Π_{i<n} (M − K − i)/(M − i) by the ratio P(r + 1)/P(r) = (K − r)(n − r)/((r + 1)(M − K − n + r + 1)), in logs
    (scipy.stats' exact pmf is far too slow for thousands of rows over a large population)."""
    k, m = successes, population
    assert int(sizes.max()) <= m - k  # the support starts at r = 0 in every row
    steps = np.log1p(-k / (m - np.arange(int(sizes.max()), dtype=np.float64)))
    log_p0 = np.concatenate(([0.0], np.cumsum(steps)))[sizes]
    n = sizes[:, None].astype(np.float64)
    r = np.arange(k, dtype=np.float64)[None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.log((k - r) * np.maximum(n - r, 0)) - np.log((r + 1) * (m - k - n + r + 1))
    logs = np.concatenate((log_p0[:, None], log_p0[:, None] + np.cumsum(ratio, axis=1)), axis=1)
    return np.where(np.arange(k + 1)[None, :] <= n, np.exp(logs), 0.0)


@pytest.mark.parametrize(("prevalence", "size", "reviewed"), [(0.005, 20_000, 8000), (0.02, 10_000, 3000),
                                                              (0.1, 4000, 1000)])
def test_population_plan_against_direct_computation(prevalence: float, size: int, reviewed: int) -> None:
    tau, confidence, power, recall = "0.9", 0.95, 0.8, 0.97
    alpha = 1 - confidence
    plan = plan_population(size, reviewed, prevalence, recall, tau, confidence, power=power)
    assert plan.feasible and plan.size is not None and plan.chance is not None
    n = plan.size
    sizes = np.arange(1, n + 1)
    chances = population_chance_by_scipy(size, reviewed, prevalence, recall, tau, alpha, sizes)
    assert plan.chance == pytest.approx(chances[-1], abs=1e-9) and plan.chance >= power
    assert np.all(chances[:-1] < power)
    # The last row once more with scipy's exact pmf.
    r = np.arange(plan.assumed_relevant + 1)
    assert np.allclose(hypergeom_pmf_by_ratios(plan.assumed_relevant, size, np.array([n]))[0],
                       stats.hypergeom.pmf(r, size, plan.assumed_relevant, n), atol=1e-12)
    assert plan.typical_positives == round(n * prevalence)
    assert plan.needed_in_reviewed == qbcb_threshold(round(n * prevalence), tau, alpha)
    assert f"at least {plan.needed_in_reviewed} of its about {plan.typical_positives} positives" in plan.reason
    # Monte Carlo through QBCB: place the sample's positives in the queue and ask the rule.
    r_e, f_e = plan.assumed_relevant, plan.assumed_found
    rng = np.random.default_rng(int(prevalence * 1000))
    r = rng.hypergeometric(r_e, size - r_e, n, size=MC_REPS)
    stops = 0
    for r_i in r:
        x = int(rng.hypergeometric(f_e, r_e - f_e, r_i)) if r_i else 0
        ranks = np.r_[np.arange(1, x + 1), np.arange(reviewed + 1, reviewed + 1 + int(r_i) - x)]
        stops += bool(qbcb(ranks, reviewed, tau, alpha).stop_now)
    assert stops / MC_REPS == pytest.approx(plan.chance, abs=mc_tolerance(plan.chance))
    given = plan_population(size, reviewed, prevalence, recall, tau, confidence, size=n)
    assert given.size_given and given.chance == pytest.approx(plan.chance)


def test_population_plan_infeasible() -> None:
    low = plan_population(10_000, 3000, 0.02, 0.85, "0.9", 0.95)
    assert not low.feasible and "below the 90% target" in low.reason and "review deeper first" in low.reason
    few = plan_population(1000, 500, 0.02, 1.0, "0.95", 0.95)  # R_e = 20 < 59 positives needed
    assert not few.feasible and few.assumed_relevant == 20 and few.min_positives == 59
    assert "at least 59 sample positives" in few.reason
