"""Paired significance tests of one run against a baseline over the same queries (or topics), the
multiple-comparison corrections and the effect size ``reviewdepth compare`` reports. Pure: numpy arrays in,
numbers out (``scipy.special.stdtr`` for the t distribution and ``scipy.stats`` for Wilcoxon's, imported inside the
functions: ``scipy.stats`` costs about half a second of CPU to import, so the t test does not use it).

For queries ``i = 1..n`` with baseline score ``a_i`` and run score ``b_i``, ``d_i = b_i − a_i``:

- ``t``: Student's paired t test, two-sided: ``t = mean(d) / (sd(d) / √n)`` with ``sd`` the sample standard
  deviation (ddof 1), ``p = 2·P(T_{n−1} ≥ |t|)`` (``scipy.stats.ttest_rel``; ranx's ``student``).
- ``wilcoxon``: the Wilcoxon signed-rank test, two-sided, zero differences dropped (Wilcoxon's rule), the exact
  distribution when scipy uses it (n ≤ 50, no ties or zeros) and the normal approximation otherwise
  (``scipy.stats.wilcoxon`` defaults).
- ``randomization``: Fisher's paired randomization (permutation) test, two-sided, statistic ``|mean(d)|``: under
  the null each ``d_i`` keeps or flips its sign with probability ½. With ``2ⁿ ≤ permutations`` every sign
  vector is enumerated and ``p = #{s : |mean(s·d)| ≥ |mean(d)|} / 2ⁿ`` exactly; otherwise ``permutations``
  sign vectors are drawn from ``numpy.random.default_rng(seed)`` and ``p = (1 + #{…}) / (1 + permutations)``
  (the count includes the observed assignment, so p is never 0; Phipson & Smyth 2010).

Effect size: the mean difference ``mean(d)`` and the paired standardized effect ``d_z = mean(d) / sd(d)``
(Cohen's d for paired samples; ``t = d_z·√n``). ranx's ``compare`` reports no effect size.

Corrections over a family of ``m`` p-values (``compare``: one measure's comparisons against the baseline):
``bonferroni`` ``p'_i = min(1, m·p_i)``; ``holm`` (step-down) with ``p_(1) ≤ … ≤ p_(m)``,
``p'_(j) = max_{k ≤ j} min(1, (m − k + 1)·p_(k))``; ``none`` leaves them.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Literal, get_args

import numpy as np
import numpy.typing as npt

Test = Literal["t", "wilcoxon", "randomization"]
TESTS: tuple[str, ...] = get_args(Test)
Correction = Literal["holm", "bonferroni", "none"]
CORRECTIONS: tuple[str, ...] = get_args(Correction)
DEFAULT_PERMUTATIONS = 10_000
DEFAULT_SEED = 42
# sign vectors drawn per block in the Monte Carlo randomization test (bounds memory at block × n)
_BLOCK = 4096

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class PairedResult:
    """One run against the baseline on one measure: ``n`` paired queries, the mean difference (run − baseline),
    ``d_z``, the test statistic (t, Wilcoxon's smaller rank sum W, or |mean(d)|) and the two-sided p-value.
    ``p_value`` is NaN when the test is undefined (n < 2 for t; no non-zero difference is p = 1)."""

    n: int
    mean_difference: float
    effect_size: float
    statistic: float
    p_value: float


def _differences(baseline: npt.ArrayLike, run: npt.ArrayLike) -> FloatArray:
    a = np.asarray(baseline, dtype=np.float64)
    b = np.asarray(run, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError("paired scores must be two 1-d arrays of the same length")
    return b - a


def effect_size(differences: FloatArray) -> float:
    """``d_z = mean(d) / sd(d)`` (ddof 1); 0 when every difference is 0, ±inf when they are equal and non-zero,
    NaN for fewer than two pairs."""
    if len(differences) < 2:
        return math.nan
    mean = float(np.mean(differences))
    sd = float(np.std(differences, ddof=1))
    if sd == 0.0:
        return 0.0 if mean == 0.0 else math.copysign(math.inf, mean)
    return mean / sd


def paired_t(differences: FloatArray) -> tuple[float, float]:
    """Student's paired t statistic and two-sided p, computed in the same float operations as
    ``scipy.stats.ttest_1samp(d, 0)`` (= ``ttest_rel``), so the same numbers to the last bit: the variance as the
    mean of squared deviations times n/(n − 1), ``t = mean / √(var/n)``, ``p = 2·stdtr(n − 1, −|t|)``; with
    scipy's warning when the differences are nearly identical."""
    n = len(differences)
    if n < 2:
        return math.nan, math.nan
    if not np.any(differences):
        return 0.0, 1.0
    from scipy.special import stdtr

    d = np.asarray(differences, dtype=np.float64)
    mean = np.mean(d)
    centred = d - mean
    with np.errstate(divide="ignore", invalid="ignore"):
        if bool(np.max(np.abs(centred)) / np.abs(mean) < np.finfo(np.float64).eps * 10):
            warnings.warn("Precision loss occurred in moment calculation due to catastrophic cancellation. This "
                          "occurs when the data are nearly identical. Results may be unreliable.", RuntimeWarning,
                          stacklevel=3)
        variance = np.mean(centred**2) * (np.float64(n) / np.float64(n - 1))
        t = np.divide(mean, np.sqrt(variance / n))
    p = 2 * stdtr(np.float64(n - 1), -np.abs(t))
    return float(t), float(p)


def wilcoxon(differences: FloatArray) -> tuple[float, float]:
    """Wilcoxon's signed-rank W and two-sided p (``scipy.stats.wilcoxon`` defaults on ``d``)."""
    if len(differences) < 1:
        return math.nan, math.nan
    if not np.any(differences):
        return 0.0, 1.0
    from scipy import stats

    result = stats.wilcoxon(differences, alternative="two-sided")
    return float(result.statistic), float(result.pvalue)


def randomization(differences: FloatArray, permutations: int = DEFAULT_PERMUTATIONS,
                  seed: int = DEFAULT_SEED) -> tuple[float, float]:
    """|mean(d)| and the two-sided sign-flip randomization p (exact when ``2ⁿ ≤ permutations``)."""
    n = len(differences)
    if permutations < 1:
        raise ValueError("permutations must be >= 1")
    if n == 0:
        return math.nan, math.nan
    observed = abs(float(np.mean(differences)))
    if not np.any(differences):
        return 0.0, 1.0
    # sums of the same numbers in another order differ in the last bits: ties are counted as ties
    threshold = observed * n - 1e-9 * float(np.sum(np.abs(differences)))
    if n < 63 and 2**n <= permutations:
        count = 0
        total = 2**n
        for start in range(0, total, _BLOCK):
            codes = np.arange(start, min(start + _BLOCK, total), dtype=np.int64)
            signs = 1.0 - 2.0 * ((codes[:, None] >> np.arange(n, dtype=np.int64)) & 1)
            count += int(np.count_nonzero(np.abs(signs @ differences) >= threshold))
        return observed, count / total
    rng = np.random.default_rng(seed)
    count = 0
    done = 0
    while done < permutations:
        block = min(_BLOCK, permutations - done)
        signs = rng.integers(0, 2, size=(block, n), dtype=np.int8).astype(np.float64) * 2.0 - 1.0
        count += int(np.count_nonzero(np.abs(signs @ differences) >= threshold))
        done += block
    return observed, (1 + count) / (1 + permutations)


def paired_test(baseline: npt.ArrayLike, run: npt.ArrayLike, test: str = "t", *,
                permutations: int = DEFAULT_PERMUTATIONS, seed: int = DEFAULT_SEED) -> PairedResult:
    """``run`` against ``baseline`` (scores of the same queries, same order) with ``test``."""
    if test not in TESTS:
        raise ValueError(f"test must be one of {', '.join(TESTS)}, not {test!r}")
    d = _differences(baseline, run)
    if test == "t":
        statistic, p = paired_t(d)
    elif test == "wilcoxon":
        statistic, p = wilcoxon(d)
    else:
        statistic, p = randomization(d, permutations, seed)
    mean = float(np.mean(d)) if len(d) else math.nan
    return PairedResult(n=len(d), mean_difference=mean, effect_size=effect_size(d), statistic=statistic,
                        p_value=p)


def adjust(p_values: list[float], correction: str = "holm") -> list[float]:
    """The corrected p-values, in the given order; NaN entries stay NaN and are not counted in the family."""
    if correction not in CORRECTIONS:
        raise ValueError(f"correction must be one of {', '.join(CORRECTIONS)}, not {correction!r}")
    out = list(p_values)
    family = [i for i, p in enumerate(p_values) if not math.isnan(p)]
    m = len(family)
    if correction == "none" or m == 0:
        return out
    if correction == "bonferroni":
        for i in family:
            out[i] = min(1.0, m * p_values[i])
        return out
    running = 0.0
    for rank, i in enumerate(sorted(family, key=lambda j: p_values[j])):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        out[i] = running
    return out
