"""Sample-size planning: how large a random sample must be to certify a target recall at the current cutoff, which
sample outcome would certify it, and the chance of that outcome if the current estimate is right (issue 11, §8).

Two designs, each planned against the rule that will judge the sample, so plan and rule agree:

- :func:`plan_elusion`: a simple random sample of the unreviewed rest, judged by the elusion test
  (:func:`reviewdepth.estimation.stopping.elusion_rule`, one-sided exact hypergeometric bound).
- :func:`plan_population`: a simple random sample of the whole queue, judged by QBCB / the direct rule
  (:func:`reviewdepth.estimation.stopping.qbcb_threshold`) at the current reviewed depth.

"Smallest n such that chance(n) ≥ power" is meant literally: chance is not monotone in n (the certifying outcomes
change in integer steps), so every n below the answer falls short: the population plan checks each one; the elusion
plan checks the first n of each step, where chance is highest within the step (`_first_size_reaching`). Notation:
F relevant found in the reviewed prefix, N_u unreviewed documents, τ target, α = 1 − confidence.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
import numpy.typing as npt

from reviewdepth.estimation.distributions import binom_sf, hypergeom_sf
from reviewdepth.estimation.percent import percent
from reviewdepth.estimation.stopping import min_positives, qbcb_threshold
from reviewdepth.measures.depth import exact_fraction

Tau = float | str | Fraction
IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
FIRST_CHUNK = 64
MAX_CHUNK = 4096
MATRIX_CELLS = 1 << 21


def _check(tau: Tau, confidence: float, power: float) -> tuple[Fraction, float]:
    frac = exact_fraction(tau)
    if not 0 < frac < 1:
        raise ValueError(f"target recall must be strictly between 0 and 1 for a sample to certify it, got {tau!r}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be strictly between 0 and 1, got {confidence!r}")
    if not 0.0 < power < 1.0:
        raise ValueError(f"power must be strictly between 0 and 1, got {power!r}")
    return frac, 1.0 - confidence


def _log_factorials(x: npt.NDArray[np.int64]) -> FloatArray:
    """ln Γ(x + 1) of each non-negative integer of ``x``, from a table over x's range when that range is short
    (then each distinct argument is evaluated once), else element by element: the same values either way."""
    from scipy.special import gammaln

    if x.size == 0:
        return np.zeros(x.shape, dtype=np.float64)
    lo, hi = int(x.min()), int(x.max())
    if hi - lo + 1 <= 2 * x.size:
        table = gammaln(np.arange(lo, hi + 1, dtype=np.float64) + 1)
        return np.asarray(table[x - lo], dtype=np.float64)
    return np.asarray(gammaln(x.astype(np.float64) + 1), dtype=np.float64)


def _hypergeom_pmf(values: IntArray, population: int, successes: int, sizes: IntArray) -> FloatArray:
    """P(r = v | n) for r ~ Hypergeometric(M, K, n), a len(sizes) × len(values) matrix, from log-gamma
    (lnC(K, v) + lnC(M − K, n − v) − lnC(M, n)); 0 outside the support.

    Every argument of ln Γ is an integer, and across the matrix they span short ranges (a value, a size, a size
    minus a value), so each distinct one is evaluated once (`_log_factorials`) and gathered: a plan over
    thousands of sizes costs thousands of log-gammas, not one per cell. Cells outside the support are given an
    argument inside it (their result is 0 whatever it is); inside it the operations are those of the cell-by-cell
    form in the same order, so each probability is the same to the bit (tests/estimation/test_planning_fast.py)."""
    from scipy.special import gammaln

    rest = population - successes
    v = values.astype(np.int64)[None, :]
    n = sizes.astype(np.int64)[:, None]
    inside = (v <= successes) & (n - v >= 0) & (n - v <= rest)
    vv = np.clip(v, 0, successes) if values.size else v
    nv = np.clip(n - v, 0, rest)

    def log_comb(a: int, b: npt.NDArray[np.int64]) -> FloatArray:
        return np.asarray(gammaln(float(a) + 1) - _log_factorials(b) - _log_factorials(a - b), dtype=np.float64)

    log = log_comb(successes, np.broadcast_to(vv, inside.shape)) + log_comb(rest, nv) - log_comb(population, n)
    return np.where(inside, np.exp(log), 0.0)


def _chunks(start: int, stop: int) -> list[tuple[int, int]]:
    """[start, stop] cut into growing blocks (64, 128, … 4096), so a small answer costs little."""
    out: list[tuple[int, int]] = []
    size, a = FIRST_CHUNK, start
    while a <= stop:
        b = min(stop, a + size - 1)
        out.append((a, b))
        a, size = b + 1, min(MAX_CHUNK, size * 2)
    return out


# --- elusion test ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ElusionPlan:
    """A plan for the elusion test at the current cutoff (see :func:`plan_elusion`).

    ``missed_allowed`` D_max: the most relevant documents the rest may hold with recall still ≥ τ;
    ``assumed_missed`` D_e = round(e·N_u); ``min_size``: the smallest sample in which 0 positives certify;
    ``size``: the planned (or given) n; ``max_positives`` k(n): the most sample positives that still certify (None
    when even 0 does not); ``chance`` P(Y ≤ k(n)) with Y ~ Hypergeometric(N_u, D_e, n); ``expected_positives`` n·e.
    """

    found: int
    unreviewed: int
    target: float
    confidence: float
    elusion_rate: float
    power: float
    missed_allowed: int
    assumed_missed: int
    min_size: int | None
    size: int | None
    max_positives: int | None
    chance: float | None
    expected_positives: float | None
    feasible: bool
    size_given: bool
    reason: str


def _recall_ok(found: int, missed: int, t: float) -> bool:
    """The elusion rule's own comparison: F/(F + D) ≥ τ in floats, 1 when F + D = 0 (``_recall_bounds``)."""
    lower = found / (found + missed) if found + missed > 0 else 1.0
    return min(lower, 1.0) >= t


def missed_allowed(found: int, unreviewed: int, tau: Tau) -> int:
    """D_max = max{D ∈ [0, N_u] : F/(F + D) ≥ τ} = ⌊F(1 − τ)/τ⌋ (exact τ), capped at N_u; checked against the
    rule's floating-point comparison so that plan and rule agree at ties (F = 380, τ = 0.95 → 20)."""
    frac = exact_fraction(tau)
    t = float(frac)
    d = min(unreviewed, math.floor(found * (1 - frac) / frac))
    while d < unreviewed and _recall_ok(found, d + 1, t):
        d += 1
    while d > 0 and not _recall_ok(found, d, t):
        d -= 1
    return d


def _elusion_outcomes(sizes: IntArray, unreviewed: int, d_max: int, d_e: int,
                      alpha: float) -> tuple[IntArray, FloatArray]:
    """k(n) (−1 when no outcome certifies) and chance(n) = P(Y ≤ k(n) | D_e) for each n in ``sizes``.

    y certifies at n iff the one-sided upper bound D_U(y, n) ≤ D_max, i.e. iff P(Y ≤ y | K = D_max + 1, n) ≤ α
    (P(Y ≤ y | K) decreases in K, and D_U is the largest K with P > α). That cdf increases in y and is > α from
    y ≥ n·K/N_u + 1 on for α < ½ (the median lies within one of the mean), so only y ≤ ⌈n·K/N_u⌉ + 2 are
    tried: the cdfs are cumulative sums of the pmf over that short lower range."""
    k_star = d_max + 1
    top = int(sizes.max())
    if alpha < 0.5:
        top = min(top, math.ceil(float(sizes.max()) * k_star / unreviewed) + 2)
    y = np.arange(top + 1, dtype=np.int64)
    cdf_star = np.cumsum(_hypergeom_pmf(y, unreviewed, k_star, sizes), axis=1)
    k = np.count_nonzero(cdf_star <= alpha, axis=1).astype(np.int64) - 1
    cdf_e = np.cumsum(_hypergeom_pmf(y, unreviewed, d_e, sizes), axis=1)
    chance = np.where(k >= 0, np.minimum(cdf_e[np.arange(len(sizes)), np.maximum(k, 0)], 1.0), 0.0)
    return k, chance


def _certifying_from(ks: IntArray, lo: int, unreviewed: int, k_star: int, alpha: float) -> IntArray:
    """n_k = min{n ∈ [lo, N_u] : P(Y ≤ k | N_u, K*, n) ≤ α} for each k of ``ks`` (all below K*, so n = N_u, where
    Y = K* surely, qualifies): the smallest sample in which k positives certify. That cdf falls as n grows, so each
    n_k is found by bisection, all k at once; the cdf is the prefix sum of the pmf row, as `_elusion_outcomes`
    computes it."""
    lo_n = np.full(len(ks), lo, dtype=np.int64)
    hi_n = np.full(len(ks), unreviewed, dtype=np.int64)
    y = np.arange(int(ks.max()) + 1, dtype=np.int64)
    while bool(np.any(lo_n < hi_n)):
        open_rows = np.flatnonzero(lo_n < hi_n)
        mid = (lo_n[open_rows] + hi_n[open_rows]) // 2
        # a cell outside the pmf's support may overflow in exp before it is masked to 0 (a probability inside the
        # support is at most 1): the warning says nothing about the result
        with np.errstate(over="ignore"):
            pmf = _hypergeom_pmf(y, unreviewed, k_star, mid)
        cdf = np.cumsum(pmf, axis=1)[np.arange(len(open_rows)), ks[open_rows]]
        certifies = cdf <= alpha
        hi_n[open_rows[certifies]] = mid[certifies]
        lo_n[open_rows[~certifies]] = mid[~certifies] + 1
    return lo_n


def _first_size_reaching(min_size: int, unreviewed: int, d_max: int, d_e: int, alpha: float,
                         power: float) -> tuple[int, int, float] | None:
    """(n, k(n), chance(n)) for the smallest n ≥ ``min_size`` with chance(n) ≥ ``power``, or None.

    k(n) steps up with n (a larger sample tolerates more positives) and between two steps chance(n) = P(Y ≤ k | D_e,
    n) falls as n grows (a larger sample holds more positives), so chance reaches its highest at the first n of each
    step: only those n, n_k = the smallest n in which k positives certify, can be the answer. They are found by
    bisection (`_certifying_from`) for k = 0, 1, … in growing blocks, and k(n) and chance(n) at each are those of
    `_elusion_outcomes`, as a scan of every n computes them (tests/estimation/test_planning_fast.py compares the
    two). On a 1,755,000-document rest this checks about 60 sizes where a scan checked 100,000."""
    k_star = d_max + 1
    start, block, lo = 0, FIRST_CHUNK, min_size
    while start <= d_max:
        # a block's pmf matrix is its k's × (its largest k + 1) cells: at most MATRIX_CELLS of them
        width = max(1, min(block, MATRIX_CELLS // (start + block)))
        ks = np.arange(start, min(d_max, start + width - 1) + 1, dtype=np.int64)
        firsts = _certifying_from(ks, lo, unreviewed, k_star, alpha)
        sizes = np.unique(firsts)
        with np.errstate(over="ignore"):  # as above
            ks_at, chances = _elusion_outcomes(sizes, unreviewed, d_max, d_e, alpha)
        hit = np.flatnonzero(chances >= power)
        if len(hit):
            i = int(hit[0])
            return int(sizes[i]), int(ks_at[i]), float(chances[i])
        start, block, lo = int(ks[-1]) + 1, min(MAX_CHUNK, block * 2), int(firsts[-1])
    return None


def _zero_certifies_from(unreviewed: int, d_max: int, alpha: float) -> int:
    """Smallest n with P(Y = 0 | K = D_max + 1, n) ≤ α (0 positives certify); P decreases in n, and is 0 at
    n = N_u because K ≥ 1."""
    lo, hi = 1, unreviewed
    while lo < hi:
        mid = (lo + hi) // 2
        p0 = float(_hypergeom_pmf(np.array([0]), unreviewed, d_max + 1, np.array([mid]))[0, 0])
        if p0 <= alpha:
            hi = mid
        else:
            lo = mid + 1
    return lo


def plan_elusion(found: int, unreviewed: int, tau: Tau, confidence: float, elusion_rate: float,
                 power: float = 0.8, *, size: int | None = None) -> ElusionPlan:
    """Sample size for the elusion test (:func:`~reviewdepth.estimation.stopping.elusion_rule`) at the current
    cutoff, the outcome that certifies recall ≥ τ, and the chance of it if the elusion rate is e.

    The test certifies when the one-sided (confidence) exact hypergeometric upper bound D_U on the missed relevant
    documents (:func:`~reviewdepth.estimation.intervals.hypergeometric_interval`, ``sided="upper"``) satisfies
    F/(F + D_U) ≥ τ, i.e. D_U ≤ D_max (:func:`missed_allowed`). For a sample of n:

        k(n)      = max{y : D_U(y, n) ≤ D_max} = max{y : P(Y ≤ y | N_u, D_max + 1, n) ≤ α}   (None if no y)
        chance(n) = P(Y ≤ k(n)),  Y ~ Hypergeometric(N_u, D_e = round(e·N_u), n)   (0 when k(n) is None)

    The plan is the smallest n with chance(n) ≥ ``power``, checked at every n from ``min_size`` (below it no outcome
    certifies) up, because chance is not monotone in n. With ``size`` the plan
    is for that n instead. Infeasible when F/(F + D_e) < τ: the estimated recall at this cutoff is below the target,
    and then (QBCB-like) the chance is at most α for every n. With e = 0 every sample is certifying once
    0 positives certify, at n = min_size ≈ ln α / ln(1 − (D_max + 1)/N_u).
    """
    frac, alpha = _check(tau, confidence, power)
    t = float(frac)
    if found < 0 or unreviewed < 0:
        raise ValueError("found and unreviewed must be non-negative")
    if not 0.0 <= elusion_rate <= 1.0:
        raise ValueError(f"elusion rate must be in [0, 1], got {elusion_rate!r}")
    if size is not None and not 1 <= size <= max(unreviewed, 1):
        raise ValueError(f"size must be in [1, {unreviewed}], got {size}")
    common: dict[str, Any] = {"found": found, "unreviewed": unreviewed, "target": t, "confidence": confidence,
                              "elusion_rate": elusion_rate, "power": power, "size_given": size is not None}
    if unreviewed == 0:
        return ElusionPlan(**common, missed_allowed=0, assumed_missed=0, min_size=0, size=0, max_positives=0,
                           chance=1.0, expected_positives=0.0, feasible=True,
                           reason="nothing is left unreviewed: recall at this cutoff is exact; no sample is needed")
    d_max = missed_allowed(found, unreviewed, frac)
    d_e = min(unreviewed, round(elusion_rate * unreviewed))
    common.update(missed_allowed=d_max, assumed_missed=d_e)
    if d_max >= unreviewed:
        n = 1 if size is None else size
        return ElusionPlan(**common, min_size=1, size=n, max_positives=n, chance=1.0,
                           expected_positives=n * elusion_rate, feasible=True,
                           reason=f"even if all {unreviewed:,} unreviewed documents were relevant, recall would be "
                                  f"≥ {t:g}: any sample certifies")
    min_size = _zero_certifies_from(unreviewed, d_max, alpha)
    common["min_size"] = min_size
    if size is not None:
        ks, chances = _elusion_outcomes(np.array([size], dtype=np.int64), unreviewed, d_max, d_e, alpha)
        k, chance = int(ks[0]), float(chances[0])
        if k < 0:
            return ElusionPlan(**common, size=size, max_positives=None, chance=0.0,
                               expected_positives=size * elusion_rate, feasible=False,
                               reason=f"a sample of {size:,} cannot certify {percent(t)} recall even with no positive: "
                                      f"at least {min_size:,} documents are needed")
        return ElusionPlan(**common, size=size, max_positives=k, chance=chance,
                           expected_positives=size * elusion_rate, feasible=True,
                           reason=f"a sample of {size:,} certifies {percent(t)} recall if it holds at most {k} "
                                  f"relevant documents; chance {percent(chance)} if the elusion rate is "
                                  f"{elusion_rate:.3g}")
    if not _recall_ok(found, d_e, t) and power > alpha:
        return ElusionPlan(**common, size=None, max_positives=None, chance=None, expected_positives=None,
                           feasible=False,
                           reason=f"the estimated recall at this cutoff, {found:,}/({found:,} + {d_e:,}) = "
                                  f"{found / max(found + d_e, 1):.3f}, is below the {percent(t)} target: review deeper "
                                  "first")
    first = _first_size_reaching(min_size, unreviewed, d_max, d_e, alpha, power)
    if first is not None:
        n, k, p = first
        return ElusionPlan(**common, size=n, max_positives=k, chance=p, expected_positives=n * elusion_rate,
                           feasible=True,
                           reason=f"a sample of {n:,} of the {unreviewed:,} unreviewed certifies {percent(t)} recall "
                                  f"if it holds at most {k} relevant documents; chance {percent(p)} if the elusion "
                                  f"rate is {elusion_rate:.3g} (about {n * elusion_rate:.1f} expected)")
    return ElusionPlan(**common, size=None, max_positives=None, chance=None, expected_positives=None, feasible=False,
                       reason=f"no sample of the {unreviewed:,} unreviewed reaches a {percent(power)} chance of "
                              "certifying: review deeper first")


# --- whole-queue sample, QBCB / direct rule ----------------------------------------------------------------------


@dataclass(frozen=True)
class PopulationPlan:
    """A plan for a whole-queue sample judged by QBCB / the direct rule at the current depth (see
    :func:`plan_population`). ``assumed_relevant`` R_e = round(p·N); ``assumed_found`` F_e = round(ρ·R_e);
    ``min_positives``: the fewest sample positives that can certify (τ^r ≤ α); ``typical_positives`` r̄ =
    round(n·p) and ``needed_in_reviewed`` j(r̄): "at least j of r̄ positives in the reviewed part"."""

    queue_size: int
    reviewed: int
    target: float
    confidence: float
    prevalence: float
    recall_estimate: float
    power: float
    assumed_relevant: int
    assumed_found: int
    min_positives: int
    size: int | None
    expected_positives: float | None
    typical_positives: int | None
    needed_in_reviewed: int | None
    chance: float | None
    feasible: bool
    size_given: bool
    reason: str


def _qbcb_thresholds(top: int, frac: Fraction, alpha: float) -> IntArray:
    """j(r) = :func:`qbcb_threshold` for r = 0 … top (0 where no j exists). j is non-decreasing in r and grows by
    at most one per step (P(Bin(r + 1, τ) ≥ j) ≥ P(Bin(r, τ) ≥ j) ≥ P(Bin(r + 1, τ) ≥ j + 1)), so one binomial tail
    per r suffices."""
    out = np.zeros(top + 1, dtype=np.int64)
    r0 = min_positives(frac, alpha)
    if r0 > top:
        return out
    j0 = qbcb_threshold(r0, frac, alpha)
    assert j0 is not None
    j, t = j0, float(frac)
    out[r0] = j
    for r in range(r0 + 1, top + 1):
        if float(binom_sf(j - 1, r, t)) > alpha:
            j += 1
        out[r] = j
    return out


def plan_population(queue_size: int, reviewed: int, prevalence: float, recall_estimate: float, tau: Tau,
                    confidence: float, power: float = 0.8, *, size: int | None = None) -> PopulationPlan:
    """Sample size for a simple random sample of the whole queue (N = ``queue_size``) to certify recall ≥ τ at the
    current depth c = ``reviewed`` by QBCB / the direct rule, assuming prevalence p and recall-at-c ρ.

    Model (finite population, exact at the assumed values): the queue holds R_e = round(p·N) relevant documents,
    F_e = round(ρ·R_e) of them within the first c. A sample of n has r ~ Hypergeometric(N, R_e, n) positives, and
    given r, X ~ Hypergeometric(R_e, F_e, r) of them lie at ranks ≤ c. QBCB certifies depth c when X ≥ j(r) =
    :func:`~reviewdepth.estimation.stopping.qbcb_threshold` (r, τ, α) (never when τ^r > α):

        chance(n) = Σ_r P(r | n) · P(X ≥ j(r) | r)

    The plan is the smallest n with chance(n) ≥ ``power`` (checked at every n from the first n at which
    P(r ≥ r_min) ≥ power, below which chance < power), or the given ``size``. Infeasible when R_e < r_min (too few
    relevant documents for any sample to certify) or F_e/R_e < τ (then chance ≤ α for every n: review deeper first).
    The frame is the queue: relevant documents outside it are not counted.
    """
    frac, alpha = _check(tau, confidence, power)
    t = float(frac)
    if queue_size <= 0 or not 0 <= reviewed <= queue_size:
        raise ValueError(f"need queue_size > 0 and 0 ≤ reviewed ≤ queue_size, got {reviewed} of {queue_size}")
    if not 0.0 <= prevalence <= 1.0 or not 0.0 <= recall_estimate <= 1.0:
        raise ValueError("prevalence and recall_estimate must be in [0, 1]")
    if size is not None and not 1 <= size <= queue_size:
        raise ValueError(f"size must be in [1, {queue_size}], got {size}")
    r_e = min(queue_size, round(prevalence * queue_size))
    f_e = min(reviewed, r_e, round(recall_estimate * r_e))
    r_min = min_positives(frac, alpha)
    common: dict[str, Any] = {
        "queue_size": queue_size, "reviewed": reviewed, "target": t, "confidence": confidence,
        "prevalence": prevalence, "recall_estimate": recall_estimate, "power": power, "assumed_relevant": r_e,
        "assumed_found": f_e, "min_positives": r_min, "size_given": size is not None}
    j_of = _qbcb_thresholds(r_e, frac, alpha)
    r_all = np.arange(r_e + 1, dtype=np.int64)
    # S(r) = P(X ≥ j(r) | r): the chance that r sample positives certify depth c.
    certify = np.zeros(r_e + 1, dtype=np.float64)
    for r in range(r_min, r_e + 1):
        certify[r] = hypergeom_sf(int(j_of[r]) - 1, r_e, f_e, r)

    def chance_of(sizes: IntArray) -> FloatArray:
        # Only r_min ≤ r ≤ min(R_e, n) can certify, and P(r | n) is negligible (< 1e-20) beyond 10 standard
        # deviations of its mean: the pmf matrix is built over that window only.
        spread = 10 * math.sqrt(float(sizes.max()) * prevalence * (1 - prevalence)) + 2
        low = max(r_min, math.floor(float(sizes.min()) * r_e / queue_size - spread))
        high = min(r_e, int(sizes.max()), math.ceil(float(sizes.max()) * r_e / queue_size + spread))
        out = np.zeros(len(sizes), dtype=np.float64)
        if high < low:
            return out
        r = r_all[low:high + 1]
        rows = max(1, MATRIX_CELLS // len(r))
        for i in range(0, len(sizes), rows):
            out[i:i + rows] = _hypergeom_pmf(r, queue_size, r_e, sizes[i:i + rows]) @ certify[r]
        return out

    def outcome(n: int, chance: float, feasible: bool, reason: str) -> PopulationPlan:
        typical = round(n * prevalence)
        j = qbcb_threshold(typical, frac, alpha) if typical > 0 else None
        return PopulationPlan(**common, size=n, expected_positives=n * prevalence, typical_positives=typical,
                              needed_in_reviewed=j, chance=chance, feasible=feasible, reason=reason)

    def wording(n: int, chance: float) -> str:
        typical = round(n * prevalence)
        j = qbcb_threshold(typical, frac, alpha) if typical > 0 else None
        what = (f"at least {j} of its about {typical} positives lie in the first {reviewed:,}" if j is not None
                else f"it holds at least {r_min} positives (about {typical} expected) and enough of them lie in the "
                     f"first {reviewed:,}")
        return (f"a sample of {n:,} of the {queue_size:,} queue documents certifies {percent(t)} recall at depth "
                f"{reviewed:,} if {what}; chance {percent(chance)} if prevalence is {prevalence:.3g} and recall "
                f"{recall_estimate:.3g}")

    if size is not None:
        chance = float(chance_of(np.array([size], dtype=np.int64))[0])
        return outcome(size, chance, r_e >= r_min and chance > 0, wording(size, chance))
    if r_e < r_min:
        return PopulationPlan(**common, size=None, expected_positives=None, typical_positives=None,
                              needed_in_reviewed=None, chance=None, feasible=False,
                              reason=f"the queue is estimated to hold {r_e} relevant documents; certifying "
                                     f"{percent(t)} at {percent(confidence)} needs at least {r_min} sample positives: "
                                     "no sample can")
    if f_e * frac.denominator < frac.numerator * r_e and power > alpha:
        return PopulationPlan(**common, size=None, expected_positives=None, typical_positives=None,
                              needed_in_reviewed=None, chance=None, feasible=False,
                              reason=f"the estimated recall at this cutoff ({recall_estimate:.3f}) is below the "
                                     f"{percent(t)} target: review deeper first")
    if float(certify.max()) < power:
        # chance(n) is an average of S(r) over r, so it never exceeds max S.
        return PopulationPlan(**common, size=None, expected_positives=None, typical_positives=None,
                              needed_in_reviewed=None, chance=None, feasible=False,
                              reason=f"the estimated recall at this cutoff ({recall_estimate:.3f}) is too close to the "
                                     f"{percent(t)} target for any sample to certify it with a {percent(power)} "
                                     "chance: review deeper first")
    # Skip the n that cannot reach the power: with M(r₀) = max_{r ≤ r₀} S(r), chance(n) ≤ M(r₀) + P(r > r₀ | n),
    # and P(r > r₀ | n) increases in n, so every n below the first with P(r > r₀ | n) ≥ power − M(r₀) falls short.
    best_so_far = np.maximum.accumulate(certify)
    start = 1
    for r0 in sorted({r_min - 1, *np.linspace(r_min, r_e, 40).astype(int).tolist()}):
        if best_so_far[r0] >= power:
            break
        need = power - float(best_so_far[r0])
        lo, hi = max(start, r0 + 1), queue_size
        while lo < hi:
            mid = (lo + hi) // 2
            if hypergeom_sf(r0, queue_size, r_e, mid) >= need:
                hi = mid
            else:
                lo = mid + 1
        start = max(start, lo)
    lo = start
    for a, b in _chunks(lo, queue_size):
        sizes = np.arange(a, b + 1, dtype=np.int64)
        chances = chance_of(sizes)
        hit = np.flatnonzero(chances >= power)
        if len(hit):
            n, p = int(sizes[hit[0]]), float(chances[hit[0]])
            return outcome(n, p, True, wording(n, p))
    return PopulationPlan(**common, size=None, expected_positives=None, typical_positives=None,
                          needed_in_reviewed=None, chance=None, feasible=False,
                          reason=f"no sample of the {queue_size:,} queue documents reaches a {percent(power)} "
                                 "chance of certifying: review deeper first")
