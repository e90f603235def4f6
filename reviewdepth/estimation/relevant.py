"""Estimators of R (relevant documents in the population) and of recall, each with an interval (reference §4).

Every estimator returns an :class:`Estimate`: point, lower, upper (None = no upper bound), confidence, the interval
method, the assumptions a reader must accept, details, and recall point/lower/upper when the method gives them.

Notation: N population size, F relevant found by the ranked review, n sample size, y sample positives,
α = 1 − confidence.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from reviewdepth.estimation.distributions import beta_ppf
from reviewdepth.estimation.intervals import INTERVAL_METHODS, hypergeometric_interval, proportion_interval

Detail = float | int | str
FloatArray = npt.NDArray[np.float64]

SAMPLE_ASSUMPTIONS: tuple[str, ...] = (
    "the sample is a simple random sample, drawn independently of the ranking and the review",
    "every sampled document is judged, and judgments are correct",
)


@dataclass(frozen=True)
class Estimate:
    """An estimate of R with its interval; recall fields are None when the method does not give recall."""

    method: str
    point: float
    lower: float
    upper: float | None
    confidence: float
    interval: str
    assumptions: tuple[str, ...]
    details: dict[str, Detail] = field(default_factory=dict)
    recall_point: float | None = None
    recall_lower: float | None = None
    recall_upper: float | None = None


def _check_confidence(confidence: float) -> None:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be strictly between 0 and 1, got {confidence!r}")


def _recall_bounds(found: int, r_point: float, r_lower: float, r_upper: float) -> tuple[float, float, float]:
    """recall = F/R is decreasing in R: point F/R̂, lower F/R_U, upper F/R_L (1.0 when R_L = 0, i.e. F = 0)."""
    point = found / r_point if r_point > 0 else 1.0
    lower = found / r_upper if r_upper > 0 else 1.0
    upper = found / r_lower if r_lower > 0 else 1.0
    return min(point, 1.0), min(lower, 1.0), min(upper, 1.0)


def estimate_judged(found: int) -> Estimate:
    """R ≥ F: the relevant documents judged so far are a lower bound (certain), with no upper bound."""
    if found < 0:
        raise ValueError(f"found must be non-negative, got {found}")
    return Estimate(
        method="judged", point=float(found), lower=float(found), upper=None, confidence=1.0, interval="none",
        assumptions=("lower bound only: relevant documents not yet judged are not counted, R may be much larger",
                     "judgments are correct"),
        details={"found": found},
    )


def estimate_known(relevant: int) -> Estimate:
    """R stated by the user or counted on a fully judged topic: point = lower = upper = R (exact)."""
    if relevant < 0:
        raise ValueError(f"relevant must be non-negative, got {relevant}")
    return Estimate(
        method="known", point=float(relevant), lower=float(relevant), upper=float(relevant), confidence=1.0,
        interval="exact",
        assumptions=("R is known: stated by the user or every document of the topic is judged",),
        details={"relevant": relevant},
    )


def estimate_srs(sample_relevant: int, sample_size: int, population: int, *, found: int = 0,
                 confidence: float = 0.95, method: str = "clopper-pearson", finite_population: bool = True,
                 sided: str = "two") -> Estimate:
    """SRS prevalence estimate of R from a simple random sample of n from the whole population of N.

    p̂ = y/n, R̂ = N·p̂. Interval: with ``finite_population`` (default) the exact hypergeometric interval on R
    (sampling without replacement, :func:`hypergeometric_interval`; ``method`` is then not used); otherwise N·[L, U]
    with [L, U] the binomial interval of ``method`` on p. The lower bound (and the point, and if needed the upper
    bound) are raised to F = ``found``, because R ≥ F is certain. Recall (when F > 0): F/R̂ with [F/R_U, F/R_L].

    ``sided``: ``"two"`` spends α/2 on each bound; ``"upper"`` makes R_U a one-sided 1 − α upper bound and leaves
    the lower bound at its certain floor (y for the hypergeometric form, 0 for a binomial one, then raised to F);
    ``"lower"`` makes R_L a one-sided 1 − α lower bound with the upper at its certain ceiling (N − (n − y), or N).
    Only the exact forms (hypergeometric, ``clopper-pearson``) guarantee coverage ≥ 1 − α; certified quantities
    use only those.
    """
    _check_confidence(confidence)
    if found < 0:
        raise ValueError(f"found must be non-negative, got {found}")
    if sample_size > population:
        raise ValueError(f"sample_size {sample_size} exceeds population {population}")
    p_hat = sample_relevant / sample_size if sample_size > 0 else math.nan
    if finite_population:
        k_lower, k_upper = hypergeometric_interval(sample_relevant, sample_size, population, confidence, sided)
        lower, upper, interval = float(k_lower), float(k_upper), "hypergeometric"
    else:
        p_lower, p_upper = proportion_interval(sample_relevant, sample_size, confidence, method, sided)
        lower, upper, interval = population * p_lower, population * p_upper, method
    point = population * p_hat
    details: dict[str, Detail] = {"sample_relevant": sample_relevant, "sample_size": sample_size,
                                  "population": population, "found": found, "prevalence": p_hat, "sided": sided}
    truncated = []
    if lower < found:
        lower = float(found)
        truncated.append("lower")
    if point < found:
        point = float(found)
        truncated.append("point")
    if upper < found:
        upper = float(found)
        truncated.append("upper")
    if truncated:
        details["raised_to_found"] = ",".join(truncated)
    assumptions = (*SAMPLE_ASSUMPTIONS, "the sample is drawn from the whole population of N documents")
    if not finite_population:
        assumptions = (*assumptions, "binomial approximation: sampling treated as with replacement")
    recall: tuple[float | None, float | None, float | None] = (None, None, None)
    if found > 0:
        recall = _recall_bounds(found, point, lower, upper)
    return Estimate("srs", point, lower, upper, confidence, interval, assumptions, details, *recall)


def estimate_elusion(found: int, unreviewed: int, sample_size: int, sample_relevant: int, *,
                     confidence: float = 0.95, method: str = "hypergeometric", sided: str = "two") -> Estimate:
    """One-phase elusion estimate: the reviewed part is fully judged (F relevant); a simple random sample of n_u of
    the N_u unreviewed documents has y_u relevant.

    e = y_u/n_u; D̂ = N_u·e; R̂ = F + D̂; recall̂ = F/R̂. D ∈ [D_L, D_U] by the exact hypergeometric interval
    (``method="hypergeometric"``) or N_u·[L, U] with a binomial ``method`` of :data:`INTERVAL_METHODS`;
    R ∈ [F + D_L, F + D_U]; recall ∈ [F/(F + D_U), F/(F + D_L)] (exact: recall is monotone in D).

    Sample positives are part of D (found by sampling, not by the ranked review): do not add them to F.

    ``sided``: ``"two"`` spends α/2 on each bound; ``"upper"`` makes D_U (so R_U, and the recall lower bound
    F/(F + D_U)) a one-sided 1 − α bound, the other side at its certain value (D ≥ y_u hypergeometric, D ≥ 0
    binomial); ``"lower"`` the reverse (D_L one-sided; D ≤ N_u − (n_u − y_u), or N_u). The elusion rule uses
    ``sided="upper"``. Only ``hypergeometric`` (exact finite-population, default) and ``clopper-pearson`` (exact
    binomial) guarantee coverage ≥ 1 − α.
    """
    _check_confidence(confidence)
    if found < 0 or unreviewed < 0:
        raise ValueError("found and unreviewed must be non-negative")
    if method != "hypergeometric" and method not in INTERVAL_METHODS:
        raise ValueError(f"method must be 'hypergeometric' or one of {INTERVAL_METHODS}, got {method!r}")
    if unreviewed == 0:
        est = estimate_known(found)
        return Estimate("elusion", est.point, est.lower, est.upper, confidence, "exact",
                        ("nothing is left unreviewed: R = F",), {"found": found, "unreviewed": 0}, 1.0, 1.0, 1.0)
    if not 0 < sample_size <= unreviewed:
        raise ValueError(f"sample_size must be in [1, unreviewed], got {sample_size} of {unreviewed}")
    elusion = sample_relevant / sample_size
    d_point = unreviewed * elusion
    if method == "hypergeometric":
        d_lower_i, d_upper_i = hypergeometric_interval(sample_relevant, sample_size, unreviewed, confidence, sided)
        d_lower, d_upper = float(d_lower_i), float(d_upper_i)
    else:
        e_lower, e_upper = proportion_interval(sample_relevant, sample_size, confidence, method, sided)
        d_lower, d_upper = unreviewed * e_lower, unreviewed * e_upper
    point, lower, upper = found + d_point, found + d_lower, found + d_upper
    recall = _recall_bounds(found, point, lower, upper)
    details: dict[str, Detail] = {
        "found": found, "unreviewed": unreviewed, "sample_size": sample_size, "sample_relevant": sample_relevant,
        "elusion": elusion, "missed_point": d_point, "missed_lower": d_lower, "missed_upper": d_upper, "sided": sided,
    }
    assumptions = (
        "the reviewed part is fully judged: F counts every relevant document in it",
        "the sample is a simple random sample of the unreviewed documents, drawn after the cutoff was fixed",
        "every sampled document is judged, and judgments are correct",
        "relevant documents found by the sample count as missed (D), not as found",
    )
    return Estimate("elusion", point, lower, upper, confidence, method, assumptions, details, *recall)


@dataclass(frozen=True)
class Stratum:
    """One stratum of N_h = ``size`` documents with a simple random sample of n_h = ``sample_size`` holding
    y_h = ``sample_relevant`` positives. ``reviewed``: fully reviewed (n_h = N_h, y_h is the exact count).
    ``found``: the stratum's relevant documents count as found (the numerator of recall)."""

    name: str
    size: int
    sample_size: int
    sample_relevant: int
    reviewed: bool
    found: bool


def _check_stratum(s: Stratum) -> None:
    if s.size < 0 or s.sample_size < 0 or s.sample_relevant < 0:
        raise ValueError(f"stratum {s.name!r}: counts must be non-negative")
    if s.sample_size > s.size or s.sample_relevant > s.sample_size:
        raise ValueError(f"stratum {s.name!r}: need sample_relevant ≤ sample_size ≤ size")
    if s.reviewed and s.sample_size != s.size:
        raise ValueError(f"stratum {s.name!r} is marked reviewed but sample_size {s.sample_size} ≠ size {s.size}")
    if s.size > 0 and s.sample_size == 0:
        raise ValueError(f"stratum {s.name!r} has {s.size} documents and no sample: its R cannot be estimated")


def estimate_stratified(strata: Sequence[Stratum], *, confidence: float = 0.95, draws: int = 20000, seed: int = 0,
                        prior: tuple[float, float] | str = "conservative") -> Estimate:
    """Stratified estimate of R and recall (e.g. strata = rank bands; reviewed bands are exact).

    Point: Ŷ_h = N_h·y_h/n_h (= y_h for a fully reviewed stratum); R̂ = Σ_h Ŷ_h; recall̂ = Σ_{h found} Ŷ_h / R̂.

    Interval: Beta-posterior Monte Carlo (deterministic given ``seed``): for every sampled stratum
    p_h ~ Beta(y_h + a, n_h − y_h + b), reviewed strata fixed at y_h; R = Σ_h N_h·p_h and
    recall = Σ_{found} N_h·p_h / R per draw; bounds are the α/2 and 1 − α/2 quantiles. ``prior`` = (a, b) uses one
    prior for both bounds (e.g. Jeffreys (½, ½)). ``"conservative"`` (default) uses Clopper–Pearson's limiting
    posteriors, so that with one sampled stratum the bounds are the Clopper–Pearson bounds: the bound that needs a
    stratum's p small draws p_h ~ Beta(y_h, n_h − y_h + 1) (p_h = 0 when y_h = 0), the bound that needs it large
    draws Beta(y_h + 1, n_h − y_h) (p_h = 1 when y_h = n_h): R's lower bound uses the first for every stratum and
    R's upper the second; recall's lower bound uses the first for found strata and the second for the others, and
    recall's upper bound the reverse.
    ``details["se_normal"]`` gives the delta-method standard error √Σ Var(Ŷ_h), Var(Ŷ_h) = N_h²(1 − n_h/N_h)·s_h²/n_h,
    s_h² = n_h·p̂_h(1 − p̂_h)/(n_h − 1) (normal intervals under-cover: Webber 2013; for reference only).
    """
    _check_confidence(confidence)
    if not strata:
        raise ValueError("at least one stratum is needed")
    if draws < 100:
        raise ValueError(f"draws must be at least 100, got {draws}")
    for s in strata:
        _check_stratum(s)
    alpha = 1.0 - confidence
    sizes = np.array([s.size for s in strata], dtype=np.float64)
    n_h = np.array([s.sample_size for s in strata], dtype=np.float64)
    y_h = np.array([s.sample_relevant for s in strata], dtype=np.float64)
    reviewed = np.array([s.reviewed for s in strata], dtype=bool)
    found_mask = np.array([s.found for s in strata], dtype=bool)
    sampled = (~reviewed) & (sizes > 0)

    with np.errstate(invalid="ignore", divide="ignore"):
        y_hat = np.where(sizes > 0, sizes * y_h / np.where(n_h > 0, n_h, 1.0), 0.0)
    y_hat[reviewed] = y_h[reviewed]
    r_point = float(y_hat.sum())
    found_point = float(y_hat[found_mask].sum())

    variance = 0.0
    for i in np.flatnonzero(sampled):
        if n_h[i] > 1:
            p = y_h[i] / n_h[i]
            s2 = n_h[i] * p * (1 - p) / (n_h[i] - 1)
            variance += float(sizes[i] ** 2 * (1 - n_h[i] / sizes[i]) * s2 / n_h[i])

    rng = np.random.default_rng(seed)
    idx = np.flatnonzero(sampled)
    fixed = np.where(reviewed, y_h, 0.0)
    # One set of uniform draws per stratum, pushed through each posterior (common random numbers).
    uniforms = rng.random((draws, len(idx)))

    def totals_for(a: FloatArray, b: FloatArray) -> FloatArray:
        """draws × strata matrix of N_h·p_h, p_h ~ Beta(a_h, b_h) (point mass 0 when a_h = 0, 1 when b_h = 0)."""
        totals = np.tile(fixed, (draws, 1))
        if len(idx):
            a_i, b_i = a[idx], b[idx]
            p = beta_ppf(uniforms, np.where(a_i > 0, a_i, 1.0), np.where(b_i > 0, b_i, 1.0))
            p = np.where(a_i > 0, p, 0.0)
            p = np.where(b_i > 0, p, 1.0)
            totals[:, idx] = sizes[idx] * p
        return totals

    q_lo, q_hi = alpha / 2, 1 - alpha / 2
    if isinstance(prior, str):
        if prior != "conservative":
            raise ValueError(f"prior must be 'conservative' or a pair (a, b), got {prior!r}")
        low_t = totals_for(y_h, n_h - y_h + 1)
        high_t = totals_for(y_h + 1, n_h - y_h)
        prior_text = "conservative (Clopper-Pearson limiting posteriors)"
    else:
        a, b = prior
        low_t = high_t = totals_for(y_h + a, n_h - y_h + b)
        prior_text = f"Beta({a}, {b}) prior"
    r_lower = float(np.quantile(low_t.sum(axis=1), q_lo))
    r_upper = float(np.quantile(high_t.sum(axis=1), q_hi))
    exact_found = float(y_h[reviewed & found_mask].sum())
    details: dict[str, Detail] = {
        "strata": len(strata), "draws": draws, "seed": seed, "prior": prior_text,
        "se_normal": math.sqrt(variance), "exact_relevant": float(y_h[reviewed].sum()),
    }
    r_lower = max(r_lower, float(y_h[reviewed].sum()))

    def recall_draws(found_part: FloatArray, other_part: FloatArray) -> FloatArray:
        f = found_part[:, found_mask].sum(axis=1)
        total = f + other_part[:, ~found_mask].sum(axis=1)
        return np.where(total > 0, f / np.where(total > 0, total, 1.0), 1.0)

    recall: tuple[float | None, float | None, float | None] = (None, None, None)
    if found_mask.any():
        rec_lower = float(np.quantile(recall_draws(low_t, high_t), q_lo))
        rec_upper = float(np.quantile(recall_draws(high_t, low_t), q_hi))
        rec_point = found_point / r_point if r_point > 0 else 1.0
        recall = (rec_point, rec_lower, rec_upper)
        details["found_point"] = found_point
        details["found_exact"] = exact_found
    assumptions = (
        "each unreviewed stratum's sample is a simple random sample of that stratum, independent of the review",
        "fully reviewed strata are judged completely (exact counts)",
        "every sampled document is judged, and judgments are correct",
        f"Monte Carlo interval: {draws} Beta-posterior draws ({prior_text}), seed {seed}",
    )
    return Estimate("stratified", r_point, r_lower, r_upper, confidence, "beta-posterior-monte-carlo", assumptions,
                    details, *recall)


def direct_recall(found_positives: int, sample_positives: int, *, confidence: float = 0.95,
                  found: int | None = None, sided: str = "two") -> Estimate:
    """Direct recall estimate (Lewis et al. 2021): a simple random sample of the whole population, independent of
    training, has n₊ = ``sample_positives`` positives, f = ``found_positives`` of them in the reviewed/found part.

    recall̂ = f/n₊ with the Clopper–Pearson interval on (f, n₊), conditional on n₊. When ``found`` (F, relevant
    found by the review) is given, R̂ = F/recall̂ with R ∈ [F/recall_U, F/recall_L] (upper None when recall_L = 0;
    R̂ = ∞ when f = 0); otherwise R is not estimated (point and lower are NaN, upper None). One-sided lower bound
    at f = n₊ is α^(1/n₊): ≥ 0.95 needs n₊ ≥ 59 (two-sided: 72).
    """
    _check_confidence(confidence)
    if sample_positives <= 0:
        raise ValueError("direct recall needs at least one sample positive")
    if not 0 <= found_positives <= sample_positives:
        raise ValueError(f"found_positives must be in [0, sample_positives], got {found_positives}")
    rec_point = found_positives / sample_positives
    rec_lower, rec_upper = proportion_interval(found_positives, sample_positives, confidence, "clopper-pearson",
                                               sided)
    details: dict[str, Detail] = {"found_positives": found_positives, "sample_positives": sample_positives,
                                  "sided": sided}
    point, lower, upper = math.nan, math.nan, None
    if found is not None:
        details["found"] = found
        point = found / rec_point if rec_point > 0 else math.inf
        lower = found / rec_upper if rec_upper > 0 else math.inf
        upper = found / rec_lower if rec_lower > 0 else None
        lower = max(lower, float(found))
        point = max(point, float(found))
    assumptions = (
        *SAMPLE_ASSUMPTIONS,
        "the sample is not used to train the ranking model",
        "interval is conditional on the number of sample positives",
    )
    return Estimate("direct", point, lower, upper, confidence, "clopper-pearson", assumptions, details,
                    rec_point, rec_lower, rec_upper)
