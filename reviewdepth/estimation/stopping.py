"""Stopping rules (reference §7): each returns :class:`StoppingEvidence`, saying whether to stop now, at which depth
the rule stops (when it can tell), what it guarantees and what it assumes.

``kind="certified"``: a probabilistic guarantee on recall under stated sampling assumptions (target method, QBCB,
direct-recall rule, hypergeometric test in random mode, elusion rule). ``kind="heuristic"``: no guarantee (knee,
budget, Quant/QuantCI, hypergeometric test on ranked urns). ``certifies`` names the set whose recall the
guarantee is about: the reviewed prefix for every rule except the random-urn hypergeometric test, which certifies
the prefix plus the urn (its ``stop_depth`` is therefore None), and SAFE, whose claim covers the prefix plus its
random training set.

Notation: τ target recall, α = 1 − confidence, ``labels`` = 0/1 judgments of the reviewed prefix in queue order,
CG(s) = relevant among the first s, N population size, u_(1) ≤ … ≤ u_(r) queue ranks of the r positives of an
independent simple random sample (a positive outside the queue gets a rank beyond the queue's end).
"""

from __future__ import annotations

import hashlib
import math
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from fractions import Fraction

import numpy as np
import numpy.typing as npt

from reviewdepth.estimation.distributions import (
    beta_ppf,
    binom_sf,
    hypergeom_cdf,
    hypergeom_cdf_many,
    poisson_quantile,
)
from reviewdepth.estimation.percent import percent
from reviewdepth.estimation.relevant import estimate_elusion
from reviewdepth.measures.depth import exact_fraction

Detail = float | int | str
Tau = float | str | Fraction
IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
KNEE_BASE = 156
KNEE_CAP = 150


class RuleKind(StrEnum):
    """What a stopping rule's "stop" means (module docstring): a guarantee on recall, none, or none as used."""

    CERTIFIED = "certified"
    HEURISTIC = "heuristic"
    INVALID = "invalid"


@dataclass(frozen=True)
class StoppingEvidence:
    """Outcome of one stopping rule. ``stop_now`` None = not applicable or not enough evidence; ``stop_depth`` =
    the queue depth at which the rule stops (None when it has not fired / cannot tell, or when what it certifies is
    not a queue prefix). ``certifies`` names the set of documents whose recall the guarantee (or, for a heuristic,
    the claim) is about: :data:`PREFIX` for every rule except the hypergeometric test in random mode, which certifies
    the reviewed prefix *plus* the urn (:data:`PREFIX_AND_URN`)."""

    rule: str
    kind: str
    stop_now: bool | None
    stop_depth: int | None
    guarantee: str
    assumptions: tuple[str, ...]
    details: dict[str, Detail] = field(default_factory=dict)
    reason: str = ""
    certifies: str = "reviewed prefix"


PREFIX = "reviewed prefix"
PREFIX_AND_URN = "the reviewed prefix plus the urn's documents"
PREFIX_AND_TRAINING = "the reviewed prefix plus the random training set"

SAMPLE_ASSUMPTIONS: tuple[str, ...] = (
    "the sample is a simple random sample of the population, drawn independently of the ranking",
    "the sample is not used to train the ranking model, and the ranking is fixed before the sample is revealed",
    "every sampled document is judged, and judgments are correct",
)


def floor_text(value: float, places: int = 3) -> str:
    """A lower bound as printed: rounded down, never up (0.8165 is 0.816), so that the words never claim more
    than the bound; the 1e-9 keeps a bound that is exactly 0.816 in binary floating point from printing 0.815."""
    scale = 10**places
    return f"{math.floor(value * scale + 1e-9) / scale:.{places}f}"


def _alpha(alpha: float) -> float:
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be strictly between 0 and 1, got {alpha!r}")
    return alpha


def _tau(tau: Tau) -> Fraction:
    frac = exact_fraction(tau)
    if not 0 < frac < 1:
        raise ValueError(f"target recall must be strictly between 0 and 1, got {tau!r}")
    return frac


def _sorted_ranks(ranks: npt.ArrayLike) -> IntArray:
    out: IntArray = np.sort(np.asarray(ranks, dtype=np.int64).reshape(-1))
    if len(out) and out[0] < 1:
        raise ValueError("queue ranks are 1-based")
    return out


def _labels(labels: npt.ArrayLike) -> IntArray:
    out: IntArray = (np.asarray(labels).reshape(-1) != 0).astype(np.int64)
    return out


def min_positives(tau: Tau, alpha: float) -> int:
    """Smallest r with τ^r ≤ α: the fewest sample positives for which QBCB (or the target method) can certify
    recall ≥ τ at confidence 1 − α (59 for τ = 0.95, α = 0.05)."""
    t = float(_tau(tau))
    a = _alpha(alpha)
    r = max(1, math.ceil(math.log(a) / math.log(t)))
    while t**r > a:
        r += 1
    while r > 1 and t ** (r - 1) <= a:
        r -= 1
    return r


def target_sample_size(tau: Tau, alpha: float, form: str = "exact") -> int:
    """Target-method sample size K (Cormack & Grossman 2016).

    ``exact`` (default): the order-statistic minimum, smallest K with τ^K ≤ α, i.e. K = ⌈ln α / ln τ⌉ (τ = 0.95,
    α = 0.05 → 59; τ = 0.7 → 9). ``published``: K = ⌈−ln α/(1 − τ)⌉ (τ = 0.95 → 60; τ = 0.7 → 10).
    """
    if form == "exact":
        return min_positives(tau, alpha)
    if form == "published":
        return math.ceil(-math.log(_alpha(alpha)) / float(1 - _tau(tau)))
    raise ValueError(f"form must be 'exact' or 'published', got {form!r}")


def qbcb_threshold(r: int, tau: Tau, alpha: float) -> int | None:
    """QBCB (Lewis, Yang & Frieder 2021): the smallest j ∈ [1, r] with P(Binomial(r, τ) ≥ j) ≤ α; None when none
    exists (τ^r > α). Stopping once the j-th sample positive (in queue order) is reviewed gives P(recall ≥ τ) ≥ 1 − α.
    Vectors (α = 0.05): r = 100, τ = 0.9 → 96; r = 100, τ = 0.95 → 99; r = 59 → 59; r = 58 → None."""
    t = float(_tau(tau))
    a = _alpha(alpha)
    if r <= 0:
        return None
    j = np.arange(1, r + 1)
    tail = binom_sf(j - 1, r, t)  # P(X >= j)
    ok = np.flatnonzero(tail <= a)
    return int(j[ok[0]]) if len(ok) else None


def qbcb(sample_positive_ranks: npt.ArrayLike, reviewed: int, tau: Tau = 0.95,
         alpha: float = 0.05) -> StoppingEvidence:
    """QBCB stopping rule: with r sample positives at queue ranks u_(1) ≤ … ≤ u_(r) and j = :func:`qbcb_threshold`,
    stop depth = u_(j); stop now iff reviewed ≥ u_(j). Guarantee P(recall ≥ τ) ≥ 1 − α. Not applicable when τ^r > α
    (too few positives; 59 are needed for 95 %/95 %)."""
    ranks = _sorted_ranks(sample_positive_ranks)
    r = len(ranks)
    t = float(_tau(tau))
    j = qbcb_threshold(r, tau, alpha)
    guarantee = f"P(recall ≥ {t:g}) ≥ {1 - alpha:g}"
    if j is None:
        need = min_positives(tau, alpha)
        return StoppingEvidence(
            "qbcb", "certified", None, None, guarantee, SAMPLE_ASSUMPTIONS,
            {"sample_positives": r, "min_positives": need, "tau": t, "alpha": alpha},
            f"{r} sample positives cannot certify {percent(t)} recall at {percent(1 - alpha)} confidence; at least "
            f"{need} are needed: keep sampling.", certifies=PREFIX,
        )
    depth = int(ranks[j - 1])
    stop = reviewed >= depth
    reached = int(np.count_nonzero(ranks <= reviewed))
    reason = (f"{reached} of {r} sample positives are reviewed; QBCB needs the {j}th (at rank {depth}): "
              + ("stop." if stop else f"review to rank {depth}."))
    return StoppingEvidence("qbcb", "certified", stop, depth, guarantee, SAMPLE_ASSUMPTIONS,
                            {"sample_positives": r, "j": j, "tau": t, "alpha": alpha, "reached": reached}, reason,
                            certifies=PREFIX)


def target_method(target_positive_ranks: npt.ArrayLike, reviewed: int, tau: Tau = 0.95,
                  alpha: float = 0.05, form: str = "exact", *, in_draw_order: bool = False) -> StoppingEvidence:
    """Target method (Cormack & Grossman 2016): draw documents at random until K = :func:`target_sample_size`
    relevant ones are found; the target set is those **first K positives in draw order**. Review in rank order
    until every target document is reached: stop depth = max{u_i : i among the first K drawn positives}.
    Guarantee P(recall ≥ τ) ≥ 1 − α when the exact K is used (the K target documents are a uniform random subset
    of the relevant documents, so the deepest of them lies below the τ-quantile of R with probability ≤ τ^K ≤ α).
    With fewer than K positives the rule is not yet applicable (stop_now None).

    ``in_draw_order=True``: ``target_positive_ranks`` are the queue ranks of the sample positives in the order they
    were drawn; positives drawn after the K-th are not part of the target set and are ignored (a sample that went
    on past K costs nothing extra). ``in_draw_order=False`` (default, kept for callers that only have the ranks
    sorted or unordered): which K came first is unknown, so every given positive is treated as a target and the
    stop depth is the deepest of all of them. That is still valid (a superset of the target set can only stop
    deeper) but overshoots when more than K positives are given; pass the draw order whenever it is known.
    """
    if in_draw_order:
        drawn = np.asarray(target_positive_ranks, dtype=np.int64).reshape(-1)
        if len(drawn) and drawn.min() < 1:
            raise ValueError("queue ranks are 1-based")
    else:
        drawn = _sorted_ranks(target_positive_ranks)
    t = float(_tau(tau))
    k = target_sample_size(tau, alpha, form)
    guarantee = f"P(recall ≥ {t:g}) ≥ {1 - alpha:g}"
    details: dict[str, Detail] = {"K": k, "form": form, "targets": len(drawn), "tau": t, "alpha": alpha,
                                  "in_draw_order": "yes" if in_draw_order else "no"}
    if len(drawn) < k:
        return StoppingEvidence("target", "certified", None, None, guarantee, SAMPLE_ASSUMPTIONS, details,
                                f"only {len(drawn)} of the K = {k} target documents are found: keep sampling.",
                                certifies=PREFIX)
    targets = drawn[:k] if in_draw_order else drawn
    details["targets"] = len(targets)
    if in_draw_order:
        details["ignored_after_K"] = len(drawn) - k
    depth = int(targets.max())
    stop = reviewed >= depth
    reached = int(np.count_nonzero(targets <= reviewed))
    details["reached"] = reached
    which = f"the first {k} sample positives in draw order" if in_draw_order else f"{len(targets)} target documents"
    reason = (f"{reached} of {which} are reviewed; the deepest is at rank {depth}: "
              + ("stop." if stop else f"review to rank {depth}."))
    return StoppingEvidence("target", "certified", stop, depth, guarantee, SAMPLE_ASSUMPTIONS, details, reason,
                            certifies=PREFIX)


def direct_recall_rule(sample_positive_ranks: npt.ArrayLike, reviewed: int, tau: Tau = 0.95,
                       alpha: float = 0.05) -> StoppingEvidence:
    """Direct-method rule: f = sample positives with rank ≤ reviewed out of n₊; stop when the one-sided
    Clopper–Pearson lower bound on recall, Beta⁻¹(α; f, n₊ − f + 1), is ≥ τ. Because that bound is ≥ τ iff
    P(Binomial(n₊, τ) ≥ f) ≤ α, the stop depth is u_(j) with j = :func:`qbcb_threshold` (same rule as QBCB)."""
    ranks = _sorted_ranks(sample_positive_ranks)
    n_pos = len(ranks)
    t = float(_tau(tau))
    guarantee = f"P(recall ≥ {t:g}) ≥ {1 - alpha:g} (conditional on {n_pos} sample positives)"
    if n_pos == 0:
        return StoppingEvidence("direct", "certified", None, None, guarantee, SAMPLE_ASSUMPTIONS,
                                {"sample_positives": 0}, "the sample holds no positive: keep sampling.",
                                certifies=PREFIX)
    f = int(np.count_nonzero(ranks <= reviewed))
    lower = 0.0 if f == 0 else float(beta_ppf(_alpha(alpha), f, n_pos - f + 1))
    j = qbcb_threshold(n_pos, tau, alpha)
    depth = None if j is None else int(ranks[j - 1])
    stop = lower >= t
    details: dict[str, Detail] = {"found_positives": f, "sample_positives": n_pos, "recall_lower": lower,
                                  "recall_point": f / n_pos, "tau": t, "alpha": alpha}
    reason = (f"{f} of {n_pos} sample positives are reviewed: recall ≥ {floor_text(lower)} at {percent(1 - alpha)} "
              "confidence, "
              + ("at or above" if stop else "below") + f" the {percent(t)} target.")
    return StoppingEvidence("direct", "certified", stop, depth, guarantee, SAMPLE_ASSUMPTIONS, details, reason,
                            certifies=PREFIX)


def hypergeometric_p_value(population: int, seen: int, found_before_urn: int, urn_size: int, urn_relevant: int,
                           tau: Tau) -> tuple[float, int]:
    """p-value of H0: recall < τ (Callaghan & Müller-Hansen 2020) and K_tar.

    ρ_seen = ρ_AL + k; K_tar = ⌊ρ_seen/τ − ρ_AL + 1⌋ (exact arithmetic); p = P(X ≤ k),
    X ~ Hypergeometric(population N − N_seen + n, successes K_tar, draws n), with N_seen = documents seen including
    the urn. When K_tar exceeds that population, H0 is impossible and p = 0.
    """
    t = _tau(tau)
    k_tar = math.floor(Fraction(found_before_urn + urn_relevant) / t - found_before_urn + 1)
    pool = population - seen + urn_size
    if urn_size <= 0 or pool < urn_size:
        raise ValueError("need 0 < urn_size ≤ population − seen + urn_size")
    if k_tar > pool:
        return 0.0, k_tar
    return hypergeom_cdf(urn_relevant, pool, k_tar, urn_size), k_tar


def hypergeometric_test(labels: npt.ArrayLike, population: int, tau: Tau = 0.95, alpha: float = 0.05,
                        urn_start: int | None = None) -> StoppingEvidence:
    """Hypergeometric stopping test (Callaghan & Müller-Hansen 2020).

    ``labels``: 0/1 of every document seen, in order. Random mode (``urn_start`` = s): labels[:s] are the ranked
    screening (ρ_AL = CG(s)), labels[s:] a simple random sample (the urn) of the unseen documents; stop when
    p < α (see :func:`hypergeometric_p_value`): a valid test of H0 "recall < τ" for the **seen set**, the ranked
    prefix plus the urn (N_seen = s + n documents, ρ_seen = ρ_AL + k relevant). It does not certify the prefix
    alone: the urn's k positives must be counted as found (they are judged). So ``certifies`` is
    :data:`PREFIX_AND_URN`, ``stop_depth`` is None (the seen set is not a queue prefix) and
    ``details["documents_seen"]`` = s + n.
    Ranked mode (``urn_start`` None, buscarpy's default): urns are the last 1…N_seen screened documents, p = min
    over urns. Heuristic: valid only if the ranking finds relevant documents at least as often as random, and the
    minimum over nested urns is an uncorrected multiple test.
    """
    y = _labels(labels)
    a = _alpha(alpha)
    t = float(_tau(tau))
    seen = len(y)
    if seen > population:
        raise ValueError(f"{seen} labels but population {population}")
    if urn_start is not None:
        if not 0 <= urn_start < seen:
            raise ValueError("urn_start must leave a non-empty urn")
        rho_al = int(y[:urn_start].sum())
        k = int(y[urn_start:].sum())
        urn = seen - urn_start
        p, k_tar = hypergeometric_p_value(population, seen, rho_al, urn, k, tau)
        stop = p < a
        details: dict[str, Detail] = {"p_value": p, "K_tar": k_tar, "urn_size": urn, "urn_relevant": k,
                                      "found_before_urn": rho_al, "documents_seen": seen,
                                      "relevant_seen": rho_al + k, "tau": t, "alpha": a}
        reason = (f"random urn of {urn} with {k} relevant after {urn_start} ranked: p = {p:.4g} for 'recall < "
                  f"{percent(t)}' of the {seen} documents seen — "
                  + (f"reject, stop: recall ≥ {percent(t)} holds for the {urn_start} reviewed plus the {urn} urn "
                     f"documents, counting the urn's {k} positives as found (not for the reviewed prefix alone)."
                     if stop else "cannot reject, keep screening."))
        return StoppingEvidence(
            "hypergeometric", "certified", stop, None,
            f"P(stopping while recall of the seen set < {t:g}) ≤ {a:g}",
            ("the urn is a simple random sample of the documents unseen when it was drawn",
             "the urn's positives are counted as found", "judgments are correct"), details, reason,
            certifies=PREFIX_AND_URN)
    if seen == 0:
        return StoppingEvidence("hypergeometric-ranked", "heuristic", None, None, "none", (), {},
                                "nothing screened yet.", certifies=PREFIX)
    cg = np.concatenate(([0], np.cumsum(y))).astype(np.int64)
    n = np.arange(1, seen + 1, dtype=np.int64)
    rho_arr = cg[seen - n]
    k_arr = cg[seen] - rho_arr
    tf = _tau(tau)
    # K_tar = ⌊(ρ_AL + k)/τ⌋ − ρ_AL + 1 exactly, with τ = num/den: ⌊x·den/num⌋ in integers.
    k_tar = (cg[seen] * tf.denominator) // tf.numerator - rho_arr + 1
    pool = population - seen + n
    p_all = np.where(k_tar > pool, 0.0, hypergeom_cdf_many(k_arr, pool, np.minimum(k_tar, pool), n))
    best = int(np.argmin(p_all))
    p = float(p_all[best])
    stop = p < a
    details = {"p_value": p, "urn_size": int(n[best]), "K_tar": int(k_tar[best]), "tau": t, "alpha": a}
    reason = (f"smallest p over the last 1…{seen} screened documents as urns: {p:.4g} (urn of {int(n[best])}) — "
              + ("stop (heuristic: ranked urns)." if stop else "keep screening."))
    return StoppingEvidence(
        "hypergeometric-ranked", "heuristic", stop, seen if stop else None, "none (ranked urns are not random)",
        ("the ranking finds relevant documents at least as often as random sampling would",
         "minimum over nested urns: uncorrected multiple test"), details, reason, certifies=PREFIX)


def elusion_rule(found: int, unreviewed: int, sample_size: int, sample_relevant: int, tau: Tau = 0.95,
                 alpha: float = 0.05, reviewed: int | None = None) -> StoppingEvidence:
    """Elusion test: with the cutoff fixed, sample n_u of the N_u unreviewed; stop when the one-sided exact
    hypergeometric lower bound on recall, F/(F + D_U), is ≥ τ (reference §4)."""
    t = float(_tau(tau))
    est = estimate_elusion(found, unreviewed, sample_size, sample_relevant, confidence=1 - _alpha(alpha),
                           sided="upper")
    lower = est.recall_lower if est.recall_lower is not None else 0.0
    stop = lower >= t
    details: dict[str, Detail] = {"recall_lower": lower, "missed_upper": est.details.get("missed_upper", 0),
                                  "tau": t, "alpha": alpha}
    reason = (f"{sample_relevant} relevant in a sample of {sample_size} of {unreviewed} unreviewed: recall ≥ "
              f"{floor_text(lower)} at {percent(1 - alpha)} confidence, " + ("at or above" if stop else "below")
              + f" the {percent(t)} target.")
    return StoppingEvidence("elusion", "certified", stop, reviewed if stop else None,
                            f"P(recall ≥ {t:g} | stop) ≥ {1 - alpha:g} for one test at a fixed cutoff",
                            (*est.assumptions, "testing repeatedly at successive cutoffs voids the guarantee"),
                            details, reason, certifies=PREFIX)


def elusion_threshold(found: int, unreviewed: int, sample_size: int, tau: Tau = 0.95, alpha: float = 0.05) -> int:
    """The largest sample positive count y at which :func:`elusion_rule` stops with F = ``found``, N_u =
    ``unreviewed`` and n = ``sample_size`` (−1: it stops at no y), so that the rule at one cutoff is "stop iff
    y ≤ y_max" — what a replay of many samples at the same cutoff reads instead of one interval per sample.

    The rule stops iff F/(F + D_U(y)) ≥ τ (1 when F + D_U = 0), with D_U(y) = max{D ∈ [y, N_u − n + y] :
    P(Y ≤ y | D) > α}, Y ~ Hypergeometric(N_u, D, n) (`intervals.hypergeometric_interval`, one-sided). The left
    side only falls as D grows, so it holds iff D_U(y) ≤ D_max, the largest D with F/(F + D) ≥ τ (evaluated with
    the rule's own floating-point expression; D_max ≥ 0). P(Y ≤ y | D) falls in D, hence

        stop(y) ⟺ y ≤ D_max and (N_u − n + y ≤ D_max or P(Y ≤ y | D_max + 1) ≤ α),

    and every clause is harder as y grows (P(Y ≤ y | ·) rises in y), so the y that stop are 0 … y_max, found by
    bisection with one hypergeometric cdf (`distributions.hypergeom_cdf`, the rule's) per step."""
    t = float(_tau(tau))
    # the tail the rule's interval spends: elusion_rule passes confidence 1 − α, the interval takes 1 − confidence
    tail = 1.0 - (1 - _alpha(alpha))
    if unreviewed < 1 or not 0 < sample_size <= unreviewed:
        raise ValueError(f"sample_size must be in [1, unreviewed], got {sample_size} of {unreviewed}")

    def recall_lower(missed_upper: int) -> float:
        # relevant._recall_bounds' lower bound on the rule's float R_U = F + D_U
        r_upper = found + float(missed_upper)
        return min(found / r_upper, 1.0) if r_upper > 0 else 1.0

    if found == 0:
        most_missed = 0  # F/(F + D) = 0 < τ for every D > 0
    else:
        # F/(F + D) ≥ τ near D = F(1 − τ)/τ; step to the float expression's own edge
        most_missed = max(0, min(unreviewed, math.floor(found * (1 - _tau(tau)) / _tau(tau))))
        while most_missed < unreviewed and recall_lower(most_missed + 1) >= t:
            most_missed += 1
        while most_missed > 0 and recall_lower(most_missed) < t:
            most_missed -= 1

    def stops(y: int) -> bool:
        if y > most_missed:
            return False
        if unreviewed - sample_size + y <= most_missed:
            return True
        return hypergeom_cdf(y, unreviewed, most_missed + 1, sample_size) <= tail

    if not stops(0):
        return -1
    low, high = 0, min(sample_size, most_missed)  # stops(low) holds; the answer lies in [low, high]
    while low < high:
        mid = (low + high + 1) // 2
        if stops(mid):
            low = mid
        else:
            high = mid - 1
    return low


def autotar_checkpoints(limit: int, first_batch: int = 1) -> IntArray:
    """Review counts after each AutoTAR batch: b₁ = ``first_batch``, b ← b + ⌈b/10⌉; s = cumulative sum ≤ limit."""
    out: list[int] = []
    s, b = 0, first_batch
    while s + b <= limit:
        s += b
        out.append(s)
        b += math.ceil(b / 10)
    return np.array(out, dtype=np.int64)


def knee_rho(cg: IntArray, s: int, mode: str = "knee") -> tuple[int, float]:
    """Knee i of the gain curve on [1, s] (max distance above the line from (0, 0) to (s, CG(s)); i < s) and the
    slope ratio ρ = [CG(i)/i] / [(CG(s) − CG(i) + 1)/(s − i)]. ``mode="max"``: the maximum ρ over every i < s.
    ``cg`` is CG(0…n). Returns (i, ρ); (0, 0.0) when s < 2."""
    if s < 2:
        return 0, 0.0
    i = np.arange(1, s)
    gi = cg[1:s].astype(np.float64)
    rho = (gi / i) / ((cg[s] - gi + 1) / (s - i))
    if mode == "max":
        best = int(np.argmax(rho))
    elif mode == "knee":
        best = int(np.argmax(gi * s - cg[s] * i))
    else:
        raise ValueError(f"mode must be 'knee' or 'max', got {mode!r}")
    return int(i[best]), float(rho[best])


def knee_method(labels: npt.ArrayLike, *, min_reviewed: int = 150, rho_mode: str = "knee",
                checkpoints: Sequence[int] | None = None) -> StoppingEvidence:
    """Knee method (Cormack & Grossman 2016), checked after each AutoTAR batch (:func:`autotar_checkpoints`) or at
    ``checkpoints``: stop at the first checkpoint s ≥ ``min_reviewed`` where ρ ≥ 156 − min(CG(s), 150) (ρ from
    :func:`knee_rho`). Heuristic: no guarantee; implicit recall level (~70–90 %)."""
    y = _labels(labels)
    cg = np.concatenate(([0], np.cumsum(y))).astype(np.int64)
    points = autotar_checkpoints(len(y)) if checkpoints is None else np.asarray(checkpoints, dtype=np.int64)
    fired: int | None = None
    last: tuple[int, float, int] = (0, 0.0, 0)
    for s in points:
        s_int = int(s)
        if s_int < min_reviewed or s_int > len(y):
            continue
        i, rho = knee_rho(cg, s_int, rho_mode)
        last = (i, rho, s_int)
        if rho >= KNEE_BASE - min(int(cg[s_int]), KNEE_CAP):
            fired = s_int
            break
    details: dict[str, Detail] = {"knee": last[0], "rho": last[1], "checked_at": last[2],
                                  "relret": int(cg[last[2]]), "min_reviewed": min_reviewed, "rho_mode": rho_mode}
    # the rule is evaluated at AutoTAR's batch ends only: name the batch end it was read at beside the documents
    # reviewed (1,000 reviewed are read at the batch end 990), so neither is mistaken for the other
    if last[2] == 0:
        reason = (f"{len(y):,} reviewed: no AutoTAR batch end of at least {min_reviewed:,} reviewed yet (the rule is "
                  "checked at batch ends only): not yet.")
    else:
        reason = (f"{len(y):,} reviewed; at the AutoTAR batch end {last[2]:,} (the rule is checked at batch ends "
                  f"only) the knee is at {last[0]:,} with slope ratio {last[1]:.1f}: "
                  + ("stop (heuristic, no recall guarantee)." if fired is not None else "not yet."))
    return StoppingEvidence("knee", "heuristic", fired is not None, fired, "none",
                            ("gain curve flattens once most relevant documents are found",), details, reason,
                            certifies=PREFIX)


def budget_method(labels: npt.ArrayLike, population: int, *, rho_mode: str = "knee",
                  checkpoints: Sequence[int] | None = None) -> StoppingEvidence:
    """Budget method (Cormack & Grossman 2016): at the first checkpoint s where
    (ρ ≥ 6 and s ≥ 10·N/CG(s)) or s ≥ 0.75·N. Heuristic: no guarantee."""
    y = _labels(labels)
    cg = np.concatenate(([0], np.cumsum(y))).astype(np.int64)
    points = autotar_checkpoints(len(y)) if checkpoints is None else np.asarray(checkpoints, dtype=np.int64)
    fired: int | None = None
    rho = 0.0
    for s in points:
        s_int = int(s)
        if s_int > len(y):
            continue
        _, rho = knee_rho(cg, s_int, rho_mode)
        relret = int(cg[s_int])
        if (rho >= 6 and relret > 0 and s_int * relret >= 10 * population) or 4 * s_int >= 3 * population:
            fired = s_int
            break
    details: dict[str, Detail] = {"rho": rho, "population": population, "relret": int(cg[-1])}
    reason = ("budget reached: stop (heuristic, no recall guarantee)." if fired is not None
              else "budget not reached: keep reviewing.")
    return StoppingEvidence("budget", "heuristic", fired is not None, fired, "none",
                            ("gain curve flattens once most relevant documents are found",), details, reason,
                            certifies=PREFIX)


def quant_estimate(probabilities: npt.ArrayLike, reviewed: int) -> tuple[float, float]:
    """Quant recall estimate (Yang, Lewis & Frieder 2021) for the first ``reviewed`` documents of the queue:
    Recall̂ = S_rev/S_all, S = Σ p_d; Var = S_rev²·V_all/S_all⁴ + (V_all − V_unrev)/S_all², V = Σ p(1 − p).
    Returns (Recall̂, Var)."""
    p = np.asarray(probabilities, dtype=np.float64).reshape(-1)
    if np.any((p < 0) | (p > 1)):
        raise ValueError("probabilities must be in [0, 1]")
    s_all = float(p.sum())
    if s_all <= 0:
        return 1.0, 0.0
    s_rev = float(p[:reviewed].sum())
    v = p * (1 - p)
    v_all = float(v.sum())
    v_unrev = float(v[reviewed:].sum())
    var = s_rev**2 * v_all / s_all**4 + (v_all - v_unrev) / s_all**2
    return s_rev / s_all, var


#: QuantCI's m (Yang, Lewis & Frieder 2021): two standard deviations
QUANT_CI_M = 2.0


def quant_rule(probabilities: npt.ArrayLike, reviewed: int, tau: Tau = 0.95, m: float = 0.0) -> StoppingEvidence:
    """Quant (m = 0) / QuantCI (m = 2): stop when Recall̂ − m·√Var ≥ τ (see :func:`quant_estimate`) with
    ``probabilities`` = the current model's p_d for every document in queue order. Stop depth = the first prefix
    length where the rule holds under these probabilities. Heuristic (model-based): no guarantee."""
    t = float(_tau(tau))
    p = np.asarray(probabilities, dtype=np.float64).reshape(-1)
    est, var = quant_estimate(p, reviewed)
    bound = est - m * math.sqrt(max(var, 0.0))
    stop = bound >= t
    s_all = float(p.sum())
    depth: int | None = None
    if s_all > 0:
        s_rev = np.cumsum(p)
        v = p * (1 - p)
        v_all = float(v.sum())
        v_rev = np.cumsum(v)
        var_k = s_rev**2 * v_all / s_all**4 + v_rev / s_all**2
        ok = np.flatnonzero(s_rev / s_all - m * np.sqrt(var_k) >= t)
        depth = int(ok[0]) + 1 if len(ok) else None
    name = "quant" if m == 0 else "quant-ci"
    details: dict[str, Detail] = {"recall_estimate": est, "variance": var, "bound": bound, "m": m, "tau": t}
    reason = (f"model-estimated recall {est:.3f} (bound {bound:.3f}) "
              + ("reaches" if stop else "is below") + f" the {percent(t)} target.")
    return StoppingEvidence(name, "heuristic", stop, depth, "none (model-based)",
                            ("the model's probabilities are calibrated for every document",
                             "the estimate moves after each retraining"), details, reason, certifies=PREFIX)


CONSECUTIVE_IRRELEVANT = 100


def consecutive_irrelevant(labels: npt.ArrayLike, n: int = CONSECUTIVE_IRRELEVANT) -> StoppingEvidence:
    """N consecutive irrelevant (ASReview's ``NConsecutiveIrrelevant``): stop at the first depth d ≥ n whose last n
    reviewed documents, d − n + 1 … d, are all irrelevant (labels in review order). Stop depth = that d.
    Heuristic: no guarantee. The default n = 100: ASReview leaves n to the user; at a local prevalence still at
    5 % a run of 100 irrelevant documents has probability 0.95¹⁰⁰ ≈ 0.6 %, so the rule seldom fires while relevant
    documents still come at that rate."""
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n!r}")
    y = _labels(labels)
    depth = np.arange(1, len(y) + 1, dtype=np.int64)
    last_relevant = np.maximum.accumulate(np.where(y == 1, depth, 0))
    run = depth - last_relevant  # irrelevant documents in a row ending at each depth
    fired = np.flatnonzero(run >= n)
    stop_depth = int(fired[0]) + 1 if len(fired) else None
    trailing = int(run[-1]) if len(y) else 0
    details: dict[str, Detail] = {"n": n, "run_at_end": trailing}
    if stop_depth is not None:
        reason = (f"{n:,} irrelevant documents in a row at ranks {stop_depth - n + 1:,}–{stop_depth:,}: stop "
                  "(heuristic, no recall guarantee).")
    else:
        reason = f"the last {trailing:,} reviewed are irrelevant; the rule stops after {n:,} in a row: not yet."
    return StoppingEvidence("consecutive-irrelevant", "heuristic", stop_depth is not None, stop_depth, "none",
                            ("the ranking puts relevant documents first, so a long run of irrelevant ones means "
                             "few are left",), details, reason, certifies=PREFIX)


#: ASReview's maintainers' examples of the N-consecutive-irrelevant threshold ("50, 100, 250, 500, etc., dependent on
#: the size of the dataset", asreview discussion #557); ASReview itself sets no default
CONSECUTIVE_IRRELEVANT_THRESHOLDS: tuple[int, ...] = (50, 100, 250, 500)
RULE_2399_SLOPE = Fraction(6, 5)
RULE_2399_OFFSET = 2399


def rule_2399(labels: npt.ArrayLike) -> StoppingEvidence:
    """The 2399 rule (Cormack & Grossman 2016's baseline; Yang, Lewis & Frieder 2021, as TARexp's
    ``Rule2399StoppingRule``): stop at the first depth d where d ≥ 1.2·F(d) + 2,399, F(d) = relevant among the first
    d reviewed (labels in review order). Checked after every document (TARexp checks at its batch ends; simulate acts
    at the next look either way); exact arithmetic, 5·d ≥ 6·F(d) + 11,995. It never fires before 2,399 documents, so
    on a smaller queue it reviews everything. Heuristic: no guarantee, and it ignores the target."""
    y = _labels(labels)
    depth = np.arange(1, len(y) + 1, dtype=np.int64)
    found = np.cumsum(y)
    slope, offset = RULE_2399_SLOPE, RULE_2399_OFFSET
    # d ≥ (num/den)·F + offset  ⇔  den·d ≥ num·F + den·offset
    holds = slope.denominator * depth >= slope.numerator * found + slope.denominator * offset
    fired = np.flatnonzero(holds)
    stop_depth = int(fired[0]) + 1 if len(fired) else None
    reviewed, relevant = len(y), int(found[-1]) if len(y) else 0
    needed = math.ceil(slope * relevant + offset)
    details: dict[str, Detail] = {"reviewed": reviewed, "found": relevant, "needed_now": needed}
    if stop_depth is not None:
        at = int(found[stop_depth - 1])
        reason = (f"{stop_depth:,} reviewed ≥ 1.2 × {at:,} relevant + 2,399 = {float(slope * at + offset):,.1f}: "
                  "stop (heuristic, no recall guarantee).")
    else:
        reason = (f"{reviewed:,} reviewed, {relevant:,} relevant: the rule stops at 1.2 × relevant + 2,399 = "
                  f"{float(slope * relevant + offset):,.1f} reviewed: not yet.")
    return StoppingEvidence("2399-rule", "heuristic", stop_depth is not None, stop_depth, "none",
                            ("a review that has found F relevant documents has found nearly all of them once it "
                             "has screened 1.2·F + 2,399",), details, reason, certifies=PREFIX)


BATCH_PRECISION_BATCH = 200
BATCH_PRECISION_CUTOFF = Fraction(5, 200)
BATCH_PRECISION_SLACK = 1


def batch_precision(labels: npt.ArrayLike, batch: int = BATCH_PRECISION_BATCH,
                    cutoff: Fraction = BATCH_PRECISION_CUTOFF, slack: int = BATCH_PRECISION_SLACK) -> StoppingEvidence:
    """Batch precision (Yang, Lewis & Frieder 2021, TARexp's ``BatchPrecStoppingRule`` with its defaults): the
    reviewed documents in review order are cut into batches of ``batch`` (batch j = ranks (j − 1)·b + 1 … j·b; an
    unfinished last batch is not read); stop at the end of the first batch that closes ``slack`` batches in a row
    each with precision (relevant / b) ≤ ``cutoff``. Defaults b = 200, cutoff 5/200 = 2.5 %, slack 1: TARexp's
    (its batch is the active learner's round, 200 in the paper). Heuristic: no guarantee, and it ignores the
    target."""
    if batch < 1:
        raise ValueError(f"batch must be at least 1, got {batch!r}")
    if slack < 1:
        raise ValueError(f"slack must be at least 1, got {slack!r}")
    if not 0 <= cutoff < 1:
        raise ValueError(f"cutoff must be a precision in [0, 1), got {cutoff!r}")
    y = _labels(labels)
    full = len(y) // batch
    per_batch = y[:full * batch].reshape(full, batch).sum(axis=1)
    # precision ≤ num/den  ⇔  den·relevant ≤ num·b (exact)
    low = cutoff.denominator * per_batch <= cutoff.numerator * batch
    run = 0
    fired: int | None = None
    for j, is_low in enumerate(low.tolist()):
        run = run + 1 if is_low else 0
        if run >= slack:
            fired = (j + 1) * batch
            break
    details: dict[str, Detail] = {"batch": batch, "cutoff": float(cutoff), "slack": slack, "batches": full,
                                  "last_batch_relevant": int(per_batch[-1]) if full else 0}
    if fired is not None:
        reason = (f"{slack} batch{'es' if slack > 1 else ''} of {batch} in a row with precision ≤ {float(cutoff):.1%}"
                  f", the last ending at rank {fired:,}: stop (heuristic, no recall guarantee).")
    elif not full:
        reason = f"{len(y):,} reviewed: no full batch of {batch} yet: not yet."
    else:
        reason = (f"the last full batch (ranks {(full - 1) * batch + 1:,}–{full * batch:,}) holds "
                  f"{int(per_batch[-1])} relevant; the rule stops after {slack} batch{'es' if slack > 1 else ''} in "
                  f"a row with precision ≤ {float(cutoff):.1%}: not yet.")
    return StoppingEvidence("batch-precision", "heuristic", fired is not None, fired, "none",
                            ("a batch with few relevant documents means few are left",), details, reason,
                            certifies=PREFIX)


POINT_PROCESS_STEP = Fraction(1, 40)
POINT_PROCESS_WINDOWS = 10
POINT_PROCESS_MIN_RELEVANT = 20
POINT_PROCESS_MAX_FIT_ERROR = 0.1


def point_process_checkpoints(size: int, step: Fraction = POINT_PROCESS_STEP) -> IntArray:
    """Where the point-process rule looks: n_j = round(j·step·N), j = 1, 2, … (every 2.5 % of the queue by default),
    at least :data:`POINT_PROCESS_WINDOWS` documents, distinct, below N (at N nothing is left to predict)."""
    j = np.arange(1, math.floor(1 / step) + 1)
    points = np.unique(np.array([round(float(step) * int(x) * size) for x in j], dtype=np.int64))
    out: IntArray = points[(points >= POINT_PROCESS_WINDOWS) & (points < size)]
    return out


def hyperbolic_rate(x: FloatArray, a: float, b: float, k: float) -> FloatArray:
    """The hyperbolic rate λ(x) = a/(1 + b·k·x)^(1/b) (0 < b ≤ 1; b = 1 is the harmonic rate a/(1 + k·x))."""
    out: FloatArray = a / np.power(1.0 + b * k * x, 1.0 / b)
    return out


def hyperbolic_mass(a: float, b: float, k: float, start: float, end: float) -> float:
    """μ = ∫_start^end λ(x) dx for :func:`hyperbolic_rate`, in closed form: a/(k·(b − 1))·[(1 + bkx)^(1 − 1/b)]
    between the ends for b ≠ 1, (a/k)·[ln(1 + kx)] for b = 1."""
    if abs(b - 1.0) < 1e-12:
        return float(a / k * (math.log1p(k * end) - math.log1p(k * start)))
    e = 1.0 - 1.0 / b
    return float(a / (k * (b - 1.0)) * ((1.0 + b * k * end) ** e - (1.0 + b * k * start) ** e))


def _point_process_at(y: IntArray, n: int, size: int, tau: float, confidence: float,
                      min_relevant: int, max_fit_error: float) -> tuple[bool, dict[str, Detail]]:
    """The hyperbolic point process read at one checkpoint n (the first n labels): (stop, details). A checkpoint
    depends on nothing but the first n labels and the settings, and a review that goes on keeps them, so each is
    fitted once a process, not again at every look (a fit costs several ms; the monitor looks after every judgment):
    kept by a 128-bit digest of those labels with the settings, the most recent `_FITS_KEPT`."""
    prefix = np.ascontiguousarray(y[:n], dtype=np.int8)
    key = (hashlib.blake2b(prefix.tobytes(), digest_size=16).digest(), n, size, tau, confidence, min_relevant,
           max_fit_error)
    with _FITS_LOCK:
        found = _FITS.get(key)
        if found is not None:
            _FITS.move_to_end(key)
    if found is None:
        found = _point_process_compute(y, n, size, tau, confidence, min_relevant, max_fit_error)
        with _FITS_LOCK:
            _FITS[key] = found
            while len(_FITS) > _FITS_KEPT:
                _FITS.popitem(last=False)
    return found[0], dict(found[1])


_FITS_KEPT = 4096
_FITS: OrderedDict[tuple[object, ...], tuple[bool, dict[str, Detail]]] = OrderedDict()
_FITS_LOCK = threading.Lock()


def _point_process_compute(y: IntArray, n: int, size: int, tau: float, confidence: float,
                           min_relevant: int, max_fit_error: float) -> tuple[bool, dict[str, Detail]]:
    found = int(y[:n].sum())
    details: dict[str, Detail] = {"checked_at": n, "found": found}
    if found < min_relevant:
        details["gate"] = f"fewer than {min_relevant} relevant"
        return False, details
    windows = np.array_split(np.arange(n), POINT_PROCESS_WINDOWS)
    x = np.array([(w[0] + w[-1]) / 2 for w in windows], dtype=np.float64)
    rate = np.array([y[w[0]:w[-1] + 1].sum() / len(w) for w in windows], dtype=np.float64)
    if not rate[POINT_PROCESS_WINDOWS // 2:].any():
        details["gate"] = "no relevant document in the last half of the windows"
        return True, details
    from scipy.optimize import curve_fit  # imported only for this heuristic, once its gate is passed

    try:
        (a, b, k), _ = curve_fit(hyperbolic_rate, x, rate, p0=(float(rate.max()), 0.5, 0.001),
                                 bounds=((0.0, 1e-6, 1e-12), (np.inf, 1.0, np.inf)), maxfev=5000)
    except (RuntimeError, ValueError):
        details["gate"] = "the rate curve could not be fitted"
        return False, details
    spread = float(rate.max() - rate.min())
    fit_error = float(np.sum((rate - hyperbolic_rate(x, a, b, k)) ** 2) / spread) if spread > 0 else 0.0
    details.update({"a": float(a), "b": float(b), "k": float(k), "fit_error": fit_error})
    if fit_error >= max_fit_error:
        details["gate"] = f"fit error {fit_error:.3f} ≥ {max_fit_error:g}"
        return False, details
    mu = max(hyperbolic_mass(float(a), float(b), float(k), n, size), 0.0)
    left = int(min(poisson_quantile(confidence, mu), size - n)) if mu > 0 else 0
    predicted = found + left
    details.update({"expected_left": mu, "predicted_relevant": predicted})
    return found >= tau * predicted, details


def hyperbolic_point_process(labels: npt.ArrayLike, population: int, tau: Tau = 0.95, confidence: float = 0.95, *,
                             min_relevant: int = POINT_PROCESS_MIN_RELEVANT,
                             max_fit_error: float = POINT_PROCESS_MAX_FIT_ERROR) -> StoppingEvidence:
    """Hyperbolic inhomogeneous Poisson point process (Sneyd & Stevenson 2021; Stevenson & Bin-Hezam, TOIS 2023,
    "IP-H"). Checked at every 2.5 % of the queue (:func:`point_process_checkpoints`): with n reviewed, cut them into 10
    windows, take each window's share of relevant documents at its midpoint, fit λ(x) = a/(1 + b·k·x)^(1/b)
    (0 < b ≤ 1) by least squares, and, when at least ``min_relevant`` are found and the fit error
    Σ residual²/(max rate − min rate) is below ``max_fit_error``, predict R̂ = found + the ``confidence`` quantile of
    Poisson(μ), μ = ∫_n^N λ (closed form, :func:`hyperbolic_mass`), at most N − n. Stop at the first checkpoint
    where found ≥ τ·R̂, or where the last five windows hold no relevant document (the authors' early stop).
    Parameters: 2.5 % steps, 10 windows and the 0.95 quantile are the authors'; the gate of 20 relevant is theirs
    without its per-step decrease, and the fit-error bound 0.1 is the middle of their grid. Heuristic
    (model-based): no guarantee."""
    y = _labels(labels)
    t = float(_tau(tau))
    fired: int | None = None
    last: dict[str, Detail] = {}
    for point in point_process_checkpoints(population):
        n = int(point)
        if n > len(y):
            break
        stop, last = _point_process_at(y, n, population, t, confidence, min_relevant, max_fit_error)
        if stop:
            fired = n
            break
    details: dict[str, Detail] = {"tau": t, "confidence": confidence, **last}
    if fired is not None:
        reason = (f"at checkpoint {fired:,} the hyperbolic rate predicts at most {last.get('predicted_relevant', '?')} "
                  f"relevant in all ({last['found']} found): stop (heuristic, model-based, no recall guarantee)."
                  if "predicted_relevant" in last else
                  f"at checkpoint {fired:,} the last five windows hold no relevant document: stop (heuristic, no "
                  "recall guarantee).")
    elif not last:
        reason = f"{len(y):,} reviewed: no checkpoint (every 2.5 % of {population:,}) reached yet: not yet."
    else:
        why = last.get("gate") or (f"predicts {last.get('predicted_relevant')} relevant in all, {last['found']} "
                                   f"found, below the {percent(t)} target")
        reason = f"at checkpoint {int(last['checked_at']):,}: {why}: not yet."
    return StoppingEvidence("point-process", "heuristic", fired is not None, fired, "none (model-based)",
                            ("relevant documents arrive as a Poisson process whose rate falls hyperbolically with "
                             "the rank",), details, reason, certifies=PREFIX)


#: SAFE (Boetje & van de Schoot, Systematic Reviews 2024) with its published defaults: phase 1 screens a random
#: training set of 1 % of the records; phase 2 (active learning) stops once all of: screened ≥ 2 × the relevant count
#: estimated from the random set, screened ≥ 10 % of the records, and 50 irrelevant in a row; phase 3 (a different
#: model) screens on until another 50 irrelevant in a row; phase 4 is a human quality check (not replayed)
SAFE_TRAINING_FRACTION = Fraction(1, 100)
SAFE_ESTIMATE_FACTOR = 2
SAFE_MIN_SCREENED = Fraction(1, 10)
SAFE_PHASE2_RUN = 50
SAFE_PHASE3_RUN = 50


def safe_training_size(size: int, fraction: Fraction = SAFE_TRAINING_FRACTION) -> int:
    """Records in SAFE's random training set for a queue of ``size``: ⌈fraction·size⌉, at least 1 (exact)."""
    if not 0 < fraction <= 1:
        raise ValueError(f"fraction must lie in (0, 1], got {fraction!r}")
    if size < 1:
        raise ValueError(f"size must be at least 1, got {size!r}")
    return max(1, -(-size * fraction.numerator // fraction.denominator))


def _first_run(y: IntArray, skipped: npt.NDArray[np.bool_], n: int) -> tuple[IntArray, int | None]:
    """Irrelevant documents in a row at each position of ``y``, counting only positions not ``skipped`` (a skipped
    one neither ends nor extends a run), and the first unskipped position (0-based) where the run reaches n."""
    screened = np.cumsum(~skipped)
    last_relevant = np.maximum.accumulate(np.where((y == 1) & ~skipped, screened, 0))
    run: IntArray = (screened - last_relevant).astype(np.int64)
    hits = np.flatnonzero(~skipped & (run >= n))
    return run, int(hits[0]) if len(hits) else None


def safe_procedure(labels: npt.ArrayLike, training: npt.ArrayLike, *,
                   estimate_factor: int = SAFE_ESTIMATE_FACTOR, min_screened: Fraction = SAFE_MIN_SCREENED,
                   phase2_run: int = SAFE_PHASE2_RUN, phase3_run: int = SAFE_PHASE3_RUN) -> StoppingEvidence:
    """The SAFE procedure (Boetje & van de Schoot, Systematic Reviews 2024), phases 1–3 replayed on one ranking.

    ``labels``: 0/1 of the whole queue (N documents) in rank order; ``training``: the 0-based ranks of phase 1's
    random training set (t documents, drawn by the caller; SAFE's default t = :func:`safe_training_size`), judged
    first. Its r_T relevant give the estimate R̂ = r_T·N / t. Phase 2 screens the ranking in order, skipping the
    training documents (already judged): after k ranked documents, screened(k) = t + (ranked documents among the
    first k not in the training set). It stops at the first depth k2 where all of
    (a) screened ≥ ``estimate_factor``·R̂ (exact: screened·t ≥ factor·r_T·N),
    (b) screened ≥ ``min_screened``·N (exact), and
    (c) the last ``phase2_run`` documents screened in phase 2 are irrelevant (training documents are not part of the
    run) hold. Phase 3 — in SAFE a different model re-ranks the rest; a replay has one ranking, so it continues down
    the same ranking — screens on until ``phase3_run`` irrelevant in a row counted from k2. Stop depth = that rank
    k3 (None when a phase runs out of documents: the team screens everything). Phase 4 (a human check of the
    excluded records) is not modelled. What the team has judged at the stop is the prefix plus the training
    documents ranked after it; ``details`` carry their count and relevant count. Heuristic: no guarantee. The
    "all key papers found" condition of phase 2 is not replayed (a completed run names no key papers)."""
    for name, value in (("phase2_run", phase2_run), ("phase3_run", phase3_run), ("estimate_factor",
                                                                                   estimate_factor)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a whole number >= 1, got {value!r}")
    if not 0 <= min_screened <= 1:
        raise ValueError(f"min_screened must be a share of the queue in [0, 1], got {min_screened!r}")
    y = _labels(labels)
    size = len(y)
    ranks = np.asarray(training, dtype=np.int64).reshape(-1)
    if size == 0 or len(ranks) == 0:
        raise ValueError("SAFE needs a non-empty queue and a non-empty training set")
    if ranks.min() < 0 or ranks.max() >= size or len(np.unique(ranks)) != len(ranks):
        raise ValueError(f"training: distinct ranks in 0 … {size - 1} are needed")
    t = len(ranks)
    in_training = np.zeros(size, dtype=bool)
    in_training[ranks] = True
    r_t = int(y[ranks].sum())
    screened = t + np.cumsum(~in_training)  # screened after each ranked position (0-based)
    run, _ = _first_run(y, in_training, phase2_run)
    enough_estimate = screened * t >= estimate_factor * r_t * size
    enough_share = screened * min_screened.denominator >= min_screened.numerator * size
    phase2_hits = np.flatnonzero(~in_training & enough_estimate & enough_share & (run >= phase2_run))
    phase2 = int(phase2_hits[0]) + 1 if len(phase2_hits) else None
    phase3: int | None = None
    if phase2 is not None:
        _, first = _first_run(y[phase2:], in_training[phase2:], phase3_run)
        phase3 = phase2 + first + 1 if first is not None else None
    estimate = Fraction(r_t * size, t)
    details: dict[str, Detail] = {
        "training": t, "training_relevant": r_t, "estimated_relevant": float(estimate),
        "estimate_factor": estimate_factor, "min_screened": float(min_screened), "phase2_run": phase2_run,
        "phase3_run": phase3_run, "phase2_stop": phase2 or 0, "phase3_stop": phase3 or 0}
    if phase3 is not None:
        after = ranks >= phase3
        details["training_after_stop"] = int(after.sum())
        details["training_relevant_after_stop"] = int(y[ranks[after]].sum())
        details["screened_at_stop"] = phase3 + int(after.sum())
        reason = (f"phase 2 stopped at rank {phase2:,} (random set {t:,} with {r_t} relevant: estimate "
                  f"{float(estimate):,.1f}); phase 3 found {phase3_run} irrelevant in a row at rank {phase3:,}: stop "
                  "(heuristic, no recall guarantee; phase 4's human check not replayed).")
    elif phase2 is not None:
        reason = (f"phase 2 stopped at rank {phase2:,}; phase 3 never saw {phase3_run} irrelevant in a row: the team "
                  "screens every document.")
    else:
        reason = (f"phase 2 never met all its conditions (≥ {estimate_factor} × {float(estimate):,.1f} estimated "
                  f"relevant, ≥ {percent(float(min_screened))} screened, {phase2_run} irrelevant in a row): the team "
                  "screens every document.")
    return StoppingEvidence("safe", "heuristic", phase3 is not None, phase3, "none",
                            ("the random training set's prevalence estimates the relevant count",
                             "the ranking puts relevant documents first, so a long run of irrelevant ones means "
                             "few are left"), details, reason, certifies=PREFIX_AND_TRAINING)
