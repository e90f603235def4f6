"""Reviewer agreement and reviewer error for binary relevance labels (1 = relevant, 0 = not relevant).

- :func:`cohen_kappa`: Cohen's κ for two reviewers on the documents both judged, with the large-sample standard error
  of Fleiss, Cohen & Everitt (1969) and a Wald interval.
- :func:`percent_agreement`: raw agreement as a binomial proportion with an interval from
  :func:`~reviewdepth.estimation.intervals.proportion_interval`.
- :func:`krippendorff_alpha_binary`: nominal Krippendorff's α from per-document vote counts (any number of reviewers,
  missing judgments allowed), with a seeded percentile bootstrap over documents.
- :func:`reviewer_error_rates` and :func:`corrected_relevant_count`: a blind QC re-review of a random sample of judged
  documents, the error rates it shows and the relevant count corrected for them.

Pure numpy + scipy.special (through ``distributions``); no I/O.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from reviewdepth.estimation.distributions import norm_ppf
from reviewdepth.estimation.intervals import INTERVAL_METHODS, proportion_interval

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]

KAPPA_INTERVAL = "Wald κ ± z·SE, large-sample SE of Fleiss, Cohen & Everitt (1969), clipped to [-1, 1]"


@dataclass(frozen=True)
class ProportionResult:
    """A proportion ``successes``/``trials`` with its interval; all NaN when ``trials`` is 0."""

    point: float
    lower: float
    upper: float
    method: str
    successes: int
    trials: int
    confidence: float


@dataclass(frozen=True)
class KappaResult:
    """Cohen's κ for two reviewers A and B, its interval and the 2×2 table it came from."""

    n: int
    observed_agreement: float
    expected_agreement: float
    kappa: float
    lower: float
    upper: float
    method: str
    standard_error: float
    confidence: float
    both_relevant: int
    only_a_relevant: int
    only_b_relevant: int
    both_not_relevant: int


@dataclass(frozen=True)
class AlphaResult:
    """Nominal Krippendorff's α for binary labels with a percentile-bootstrap interval.

    ``units_used`` documents had at least two votes (pairable); ``units_ignored`` had fewer and do not enter α.
    ``pairable_values`` = n, the votes in pairable documents (``relevant_values`` n₁ + ``not_relevant_values`` n₀).
    ``replicates_undefined`` counts bootstrap replicates where α was undefined (D_e = 0); they are left out of the
    percentiles.
    """

    alpha: float
    lower: float
    upper: float
    method: str
    confidence: float
    units_used: int
    units_ignored: int
    pairable_values: int
    relevant_values: int
    not_relevant_values: int
    observed_disagreement: float
    expected_disagreement: float
    replicates: int
    replicates_undefined: int
    seed: int


@dataclass(frozen=True)
class ErrorRates:
    """Error rates of the original review measured by a blind QC re-review (the QC label taken as correct).

    ``false_negative_rate``: QC relevant among documents originally judged not relevant;
    ``false_positive_rate``: QC not relevant among documents originally judged relevant;
    ``error_rate``: disagreements among all n QC documents.
    """

    n: int
    disagreements: int
    false_negative_rate: ProportionResult
    false_positive_rate: ProportionResult
    error_rate: ProportionResult
    confidence: float


def _check_confidence(confidence: float) -> None:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be strictly between 0 and 1, got {confidence!r}")


def _binary_labels(values: npt.ArrayLike, name: str) -> IntArray:
    """A 1-D array of 0/1 labels (bools accepted) as int64; anything else raises ValueError."""
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
    if arr.size and not np.isin(arr, (0, 1)).all():
        raise ValueError(f"{name} must contain only 0 (not relevant) and 1 (relevant)")
    return arr.astype(np.int64)


def _paired_labels(a: npt.ArrayLike, b: npt.ArrayLike, name_a: str, name_b: str) -> tuple[IntArray, IntArray]:
    x = _binary_labels(a, name_a)
    y = _binary_labels(b, name_b)
    if x.shape != y.shape:
        raise ValueError(f"{name_a} and {name_b} must have the same length, got {x.size} and {y.size}")
    return x, y


def _counts(values: npt.ArrayLike, name: str) -> IntArray:
    """A 1-D array of non-negative whole numbers as int64; anything else raises ValueError."""
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
    if arr.size:
        if arr.dtype == np.bool_ or not np.issubdtype(arr.dtype, np.number):
            raise ValueError(f"{name} must hold vote counts (non-negative whole numbers)")
        if not (np.isfinite(arr).all() and (arr >= 0).all() and (arr == np.floor(arr)).all()):
            raise ValueError(f"{name} must hold vote counts (non-negative whole numbers)")
    return arr.astype(np.int64)


def percent_agreement(agree: int, n: int, confidence: float = 0.95,
                      method: str = "clopper-pearson") -> ProportionResult:
    """Raw agreement p_o = ``agree``/n with the binomial interval of ``method``.

    The interval is :func:`~reviewdepth.estimation.intervals.proportion_interval` (Clopper–Pearson by default; also
    Wilson, Jeffreys, Agresti–Coull), treating the n documents as independent trials. With n = 0 the point and
    bounds are NaN.
    """
    _check_confidence(confidence)
    if method not in INTERVAL_METHODS:
        raise ValueError(f"method must be one of {INTERVAL_METHODS}, got {method!r}")
    if n < 0:
        raise ValueError(f"n must be non-negative, got {n}")
    if not 0 <= agree <= n:
        raise ValueError(f"agree must be in [0, n], got {agree} of {n}")
    if n == 0:
        return ProportionResult(math.nan, math.nan, math.nan, method, 0, 0, confidence)
    lower, upper = proportion_interval(agree, n, confidence, method)
    return ProportionResult(agree / n, lower, upper, method, int(agree), int(n), confidence)


def cohen_kappa(a: npt.ArrayLike, b: npt.ArrayLike, confidence: float = 0.95) -> KappaResult:
    """Cohen's κ between reviewers A (``a``) and B (``b``) on the n documents both judged (``a[k]``, ``b[k]`` are
    the two labels of document k).

    With p_ij the share of documents A labelled i and B labelled j, p_i. = Σ_j p_ij (A's marginal) and
    p_.j = Σ_i p_ij (B's marginal):

        p_o = p_00 + p_11,   p_e = p_0. p_.0 + p_1. p_.1,   κ = (p_o − p_e) / (1 − p_e).

    Large-sample variance (Fleiss, Cohen & Everitt 1969, their eq. 13, which is the delta-method variance of κ̂):

        var = [Σ_i p_ii (1 − (p_i. + p_.i)(1 − κ))² + (1 − κ)² Σ_{i≠j} p_ij (p_.i + p_j.)² − (κ − p_e(1 − κ))²]
              / (n (1 − p_e)²),

    SE = √var and the interval is κ ± z·SE with z = Φ⁻¹(1 − α/2), clipped to [−1, 1]. The Wald interval has zero
    width at κ = 1 (SE = 0) and under-covers for small n or extreme prevalence.

    Edge cases: n = 0 gives NaN agreements, κ and bounds. p_e = 1 (both reviewers gave every document the same
    single label) leaves κ undefined (0/0): κ, SE and bounds are NaN while p_o = 1 (as
    ``sklearn.metrics.cohen_kappa_score``, which also returns NaN there).
    """
    _check_confidence(confidence)
    x, y = _paired_labels(a, b, "a", "b")
    n = int(x.size)
    n11 = int(np.count_nonzero((x == 1) & (y == 1)))
    n10 = int(np.count_nonzero((x == 1) & (y == 0)))
    n01 = int(np.count_nonzero((x == 0) & (y == 1)))
    n00 = n - n11 - n10 - n01
    table = {"both_relevant": n11, "only_a_relevant": n10, "only_b_relevant": n01, "both_not_relevant": n00}
    nan = math.nan
    if n == 0:
        return KappaResult(0, nan, nan, nan, nan, nan, KAPPA_INTERVAL, nan, confidence, **table)
    # p[i][j]: A said i, B said j.
    p = np.array([[n00, n01], [n10, n11]], dtype=np.float64) / n
    row = p.sum(axis=1)  # p_i.  (A)
    col = p.sum(axis=0)  # p_.j  (B)
    # In whole numbers: n²·p_e = Σ_i (n p_i.)(n p_.i), so p_e = 1 is detected exactly.
    chance = (n00 + n01) * (n00 + n10) + (n11 + n10) * (n11 + n01)
    p_o = (n00 + n11) / n
    p_e = chance / (n * n)
    if chance == n * n:
        return KappaResult(n, p_o, p_e, nan, nan, nan, KAPPA_INTERVAL, nan, confidence, **table)
    kappa = (n * (n00 + n11) - chance) / (n * n - chance)
    one_minus = 1.0 - kappa
    diagonal = sum(float(p[i, i]) * (1.0 - (row[i] + col[i]) * one_minus) ** 2 for i in (0, 1))
    off = sum(float(p[i, j]) * (col[i] + row[j]) ** 2 for i in (0, 1) for j in (0, 1) if i != j)
    numerator = diagonal + one_minus**2 * off - (kappa - p_e * one_minus) ** 2
    variance = max(0.0, float(numerator)) / (n * (1.0 - p_e) ** 2)
    se = math.sqrt(variance)
    z = norm_ppf(1.0 - (1.0 - confidence) / 2.0)
    lower = max(-1.0, kappa - z * se)
    upper = min(1.0, kappa + z * se)
    return KappaResult(n, p_o, p_e, kappa, lower, upper, KAPPA_INTERVAL, se, confidence, **table)


def _alpha_from_totals(n1: FloatArray, n0: FloatArray, o01: FloatArray) -> FloatArray:
    """α = 1 − (n − 1)·o_01 / (n₀·n₁) elementwise; NaN where n₀·n₁ = 0 (D_e = 0)."""
    n = n1 + n0
    denom = n0 * n1
    with np.errstate(invalid="ignore", divide="ignore"):
        alpha = 1.0 - (n - 1.0) * o01 / denom
    return np.where(denom > 0, alpha, np.nan)


def krippendorff_alpha_binary(unit_counts_relevant: npt.ArrayLike, unit_counts_not_relevant: npt.ArrayLike,
                              confidence: float = 0.95, replicates: int = 2000, seed: int = 0) -> AlphaResult:
    """Nominal Krippendorff's α for binary labels from per-document vote counts.

    Document u has r_u relevant and s_u not-relevant votes, m_u = r_u + s_u (any number of reviewers, each
    document judged by any subset). Only pairable documents (m_u ≥ 2) enter. General form with the coincidence
    matrix o_ck = Σ_u (number of ordered pairs of votes (c, k) from different reviewers in u) / (m_u − 1),
    n_c = Σ_k o_ck, n = Σ_c n_c and metric δ²_ck:

        α = 1 − D_o / D_e,   D_o = (1/n) Σ_c Σ_k o_ck δ²_ck,   D_e = (1/(n(n − 1))) Σ_c Σ_k n_c n_k δ²_ck.

    Nominal binary (δ²_01 = δ²_10 = 1, δ²_cc = 0): o_01 = o_10 = Σ_u r_u s_u / (m_u − 1), n₁ = Σ_u r_u,
    n₀ = Σ_u s_u (pairable u), D_o = 2·o_01/n, D_e = 2·n₀·n₁/(n(n − 1)), so

        α = 1 − (n − 1)·o_01·2 / (2·n₀·n₁) = 1 − (n − 1)·o_01 / (n₀·n₁).

    α is NaN when no document is pairable or D_e = 0 (every pairable vote the same label).

    Interval: percentile bootstrap over documents: each replicate resamples the U pairable documents with
    replacement and the bounds are the α/2 and 1 − α/2 quantiles of the replicate α's (replicates with D_e = 0 are
    left out and counted). Documents with the same (r_u, s_u) pattern contribute identically, so a replicate is a
    draw of pattern counts from Multinomial(U, pattern frequencies) (``numpy.random.default_rng(seed)``), which is
    the same distribution as resampling documents and costs O(replicates × patterns). Deterministic for the same
    inputs and ``seed`` (and independent of document order). ``replicates=0`` skips the bootstrap (NaN bounds).
    """
    _check_confidence(confidence)
    if replicates < 0:
        raise ValueError(f"replicates must be non-negative, got {replicates}")
    rel = _counts(unit_counts_relevant, "unit_counts_relevant")
    nrel = _counts(unit_counts_not_relevant, "unit_counts_not_relevant")
    if rel.shape != nrel.shape:
        raise ValueError(f"count arrays must have the same length, got {rel.size} and {nrel.size}")
    votes = rel + nrel
    pairable = votes >= 2
    units_used = int(np.count_nonzero(pairable))
    units_ignored = int(rel.size - units_used)
    method = f"percentile bootstrap over documents, {replicates} replicates, seed {seed} (deterministic)"

    r = rel[pairable]
    s = nrel[pairable]
    n1 = int(r.sum())
    n0 = int(s.sum())
    n = n1 + n0
    o01 = float(np.sum(r * s / (r + s - 1.0))) if units_used else 0.0
    if units_used == 0:
        d_o = d_e = math.nan
    else:
        d_o = 2.0 * o01 / n
        d_e = 2.0 * n0 * n1 / (n * (n - 1.0))
    point = float(_alpha_from_totals(np.array([n1], dtype=np.float64), np.array([n0], dtype=np.float64),
                                     np.array([o01]))[0])

    lower = upper = math.nan
    undefined = replicates
    if units_used > 0 and replicates > 0:
        base = int(s.max()) + 1
        keys, freq = np.unique(r * base + s, return_counts=True)  # one key per (r_u, s_u) pattern
        pr = (keys // base).astype(np.float64)
        ps = (keys % base).astype(np.float64)
        pw = pr * ps / (pr + ps - 1.0)
        rng = np.random.default_rng(seed)
        draws = rng.multinomial(units_used, freq / units_used, size=replicates).astype(np.float64)
        boot = _alpha_from_totals(draws @ pr, draws @ ps, draws @ pw)
        finite = boot[np.isfinite(boot)]
        undefined = int(replicates - finite.size)
        if finite.size:
            tail = (1.0 - confidence) / 2.0
            lower, upper = (float(v) for v in np.quantile(finite, [tail, 1.0 - tail]))
    return AlphaResult(
        alpha=point, lower=lower, upper=upper, method=method, confidence=confidence, units_used=units_used,
        units_ignored=units_ignored, pairable_values=n, relevant_values=n1, not_relevant_values=n0,
        observed_disagreement=d_o, expected_disagreement=d_e, replicates=replicates,
        replicates_undefined=undefined, seed=seed,
    )


def reviewer_error_rates(original: npt.ArrayLike, check: npt.ArrayLike, confidence: float = 0.95,
                         method: str = "clopper-pearson") -> ErrorRates:
    """Error rates of a review from a blind QC re-review of a random sample of its judged documents.

    ``original[k]`` is the label in force before QC, ``check[k]`` the QC reviewer's label, taken as correct:

        FNR = #{original 0, check 1} / #{original 0},   FPR = #{original 1, check 0} / #{original 1},
        error rate = #{original ≠ check} / n,

    each with the binomial interval of ``method`` (:func:`percent_agreement` / ``proportion_interval``); a rate
    whose denominator is 0 is NaN. The rates estimate the original review's errors only if the QC sample is a simple
    random sample of the judged documents and the QC reviewer is right.
    """
    _check_confidence(confidence)
    x, y = _paired_labels(original, check, "original", "check")
    n = int(x.size)
    original_relevant = int(np.count_nonzero(x == 1))
    false_negatives = int(np.count_nonzero((x == 0) & (y == 1)))
    false_positives = int(np.count_nonzero((x == 1) & (y == 0)))
    disagreements = false_negatives + false_positives
    return ErrorRates(
        n=n,
        disagreements=disagreements,
        false_negative_rate=percent_agreement(false_negatives, n - original_relevant, confidence, method),
        false_positive_rate=percent_agreement(false_positives, original_relevant, confidence, method),
        error_rate=percent_agreement(disagreements, n, confidence, method),
        confidence=confidence,
    )


def corrected_relevant_count(relevant_found: int, judged_not_relevant: int,
                             rates: ErrorRates) -> tuple[float, float, float]:
    """(point, lower, upper) of the number of truly relevant documents among the judged ones, correcting the
    review's labels with the QC error rates (F = ``relevant_found`` judged relevant, J = ``judged_not_relevant``):

        R̂ = F·(1 − FPR) + J·FNR,
        lower = F·(1 − FPR_upper) + J·FNR_lower,   upper = F·(1 − FPR_lower) + J·FNR_upper.

    Assumption: the QC sample is a simple random sample of the judged documents (so the rates apply to all of
    them) and the QC reviewer is right. The two rates come from disjoint parts of the sample, so given the split
    they are independent and both intervals hold together with probability ≥ confidence² (0.9025 at 95 %); compute
    ``rates`` at √confidence for a joint statement at ``confidence``. A term whose rate is NaN (no QC document with
    that original label) makes the result NaN, unless its count (F or J) is 0.
    """
    if relevant_found < 0 or judged_not_relevant < 0:
        raise ValueError(f"counts must be non-negative, got {relevant_found} and {judged_not_relevant}")
    fpr = rates.false_positive_rate
    fnr = rates.false_negative_rate

    def term(count: int, value: float) -> float:
        return 0.0 if count == 0 else count * value

    point = term(relevant_found, 1.0 - fpr.point) + term(judged_not_relevant, fnr.point)
    lower = term(relevant_found, 1.0 - fpr.upper) + term(judged_not_relevant, fnr.lower)
    upper = term(relevant_found, 1.0 - fpr.lower) + term(judged_not_relevant, fnr.upper)
    return point, lower, upper
