"""Confidence intervals for a binomial proportion and for the number of successes in a finite population.

Notation: y successes in n trials, p̂ = y/n, confidence 1 − α. A two-sided interval spends α/2 on each side; a
one-sided bound spends all of α on its side (``sided="lower"`` gives [L, 1], ``sided="upper"`` gives [0, U]), with
z = Φ⁻¹(1 − α/2) (two-sided) or Φ⁻¹(1 − α) (one-sided).

Boundary conventions (reference §5): Clopper–Pearson and Jeffreys have L = 0 at y = 0 and U = 1 at y = n; Wilson's
formula gives L = 0 at y = 0 and U = 1 at y = n exactly (enforced against rounding); Agresti–Coull is clipped to
[0, 1]. Wald is deliberately not offered (zero width at y = 0).
"""

from __future__ import annotations

import math

from reviewdepth.estimation.distributions import beta_ppf, hypergeom_cdf, hypergeom_sf, norm_ppf

INTERVAL_METHODS: tuple[str, ...] = ("clopper-pearson", "wilson", "jeffreys", "agresti-coull")
SIDES: tuple[str, ...] = ("two", "lower", "upper")


def _check_confidence(confidence: float) -> float:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be strictly between 0 and 1, got {confidence!r}")
    return 1.0 - confidence


def _check_sided(sided: str) -> None:
    if sided not in SIDES:
        raise ValueError(f"sided must be one of {SIDES}, got {sided!r}")


def _tail(alpha: float, sided: str) -> float:
    """Probability spent on each bound that is computed: α/2 two-sided, α one-sided."""
    return alpha / 2.0 if sided == "two" else alpha


def _beta_bounds(successes: int, trials: int, tail: float, a_lower: float, b_lower: float, a_upper: float,
                 b_upper: float) -> tuple[float, float]:
    lower = 0.0 if successes == 0 else float(beta_ppf(tail, a_lower, b_lower))
    upper = 1.0 if successes == trials else float(beta_ppf(1.0 - tail, a_upper, b_upper))
    return lower, upper


def proportion_interval(successes: int, trials: int, confidence: float = 0.95, method: str = "clopper-pearson",
                        sided: str = "two") -> tuple[float, float]:
    """Confidence interval (L, U) for a binomial proportion p from y = ``successes`` in n = ``trials``.

    With t = α/2 (two-sided) or α (one-sided) and z = Φ⁻¹(1 − t):

    - ``clopper-pearson`` (exact, coverage ≥ 1 − α): L = Beta⁻¹(t; y, n − y + 1), U = Beta⁻¹(1 − t; y + 1, n − y);
      L = 0 at y = 0, U = 1 at y = n. One-sided at y = 0: U = 1 − α^(1/n) ≈ 3/n for 95 %.
    - ``wilson``: [p̂ + z²/(2n) ± z·√(p̂(1 − p̂)/n + z²/(4n²))] / (1 + z²/n).
    - ``jeffreys``: the t and 1 − t quantiles of Beta(y + ½, n − y + ½); L = 0 at y = 0, U = 1 at y = n.
    - ``agresti-coull``: ñ = n + z², p̃ = (y + z²/2)/ñ, p̃ ± z·√(p̃(1 − p̃)/ñ), clipped to [0, 1].

    ``sided="lower"`` returns (L, 1.0), ``sided="upper"`` returns (0.0, U), each bound at level 1 − α.
    """
    if trials <= 0:
        raise ValueError(f"trials must be positive, got {trials}")
    if not 0 <= successes <= trials:
        raise ValueError(f"successes must be in [0, trials], got {successes} of {trials}")
    if method not in INTERVAL_METHODS:
        raise ValueError(f"method must be one of {INTERVAL_METHODS}, got {method!r}")
    alpha = _check_confidence(confidence)
    _check_sided(sided)
    y, n = successes, trials
    t = _tail(alpha, sided)
    if method == "clopper-pearson":
        lower, upper = _beta_bounds(y, n, t, y, n - y + 1, y + 1, n - y)
    elif method == "jeffreys":
        lower, upper = _beta_bounds(y, n, t, y + 0.5, n - y + 0.5, y + 0.5, n - y + 0.5)
    else:
        z = norm_ppf(1.0 - t)
        z2 = z * z
        if method == "wilson":
            p = y / n
            centre = p + z2 / (2 * n)
            half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
            denom = 1 + z2 / n
            lower = 0.0 if y == 0 else max(0.0, (centre - half) / denom)
            upper = 1.0 if y == n else min(1.0, (centre + half) / denom)
        else:  # agresti-coull
            n_tilde = n + z2
            p_tilde = (y + z2 / 2) / n_tilde
            half = z * math.sqrt(p_tilde * (1 - p_tilde) / n_tilde)
            lower = max(0.0, p_tilde - half)
            upper = min(1.0, p_tilde + half)
    if sided == "lower":
        return lower, 1.0
    if sided == "upper":
        return 0.0, upper
    return lower, upper


def _prob_at_least(successes: int, draws: int, population: int, k: int) -> float:
    """P(Y ≥ y) for Y ~ Hypergeometric(population M, K = k successes, n draws)."""
    return hypergeom_sf(successes - 1, population, k, draws)


def _prob_at_most(successes: int, draws: int, population: int, k: int) -> float:
    """P(Y ≤ y) for Y ~ Hypergeometric(population M, K = k successes, n draws)."""
    return hypergeom_cdf(successes, population, k, draws)


def hypergeometric_interval(successes: int, draws: int, population: int, confidence: float = 0.95,
                            sided: str = "two") -> tuple[int, int]:
    """Exact interval [K_L, K_U] for K, the number of successes (relevant documents) in a population of M, from
    y = ``successes`` found in a simple random sample of n = ``draws`` without replacement.

    With t = α/2 (two-sided) or α (one-sided), over K ∈ [y, M − (n − y)]:

        K_L = min{K : P(Y ≥ y | K) > t},   K_U = max{K : P(Y ≤ y | K) > t},   Y ~ Hypergeometric(M, K, n).

    P(Y ≥ y | K) increases and P(Y ≤ y | K) decreases in K, so both are found by bisection. ``sided="lower"``
    returns (K_L, M − (n − y)), ``sided="upper"`` returns (y, K_U). Coverage is ≥ 1 − α for every K.
    """
    if population <= 0:
        raise ValueError(f"population must be positive, got {population}")
    if not 0 < draws <= population:
        raise ValueError(f"draws must be in [1, population], got {draws} of {population}")
    if not 0 <= successes <= draws:
        raise ValueError(f"successes must be in [0, draws], got {successes} of {draws}")
    alpha = _check_confidence(confidence)
    _check_sided(sided)
    t = _tail(alpha, sided)
    y, n, m = successes, draws, population
    k_min, k_max = y, m - (n - y)

    # K_L: smallest K in [k_min, k_max] with P(Y >= y | K) > t (true at k_max, where P = 1 - ... >= P at any K).
    lo, hi = k_min, k_max
    while lo < hi:
        mid = (lo + hi) // 2
        if _prob_at_least(y, n, m, mid) > t:
            hi = mid
        else:
            lo = mid + 1
    k_lower = lo
    # K_U: largest K in [k_min, k_max] with P(Y <= y | K) > t.
    lo, hi = k_min, k_max
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if _prob_at_most(y, n, m, mid) > t:
            lo = mid
        else:
            hi = mid - 1
    k_upper = lo
    if sided == "lower":
        return k_lower, k_max
    if sided == "upper":
        return k_min, k_upper
    return k_lower, k_upper
