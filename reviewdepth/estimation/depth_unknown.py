"""Depth to reach a target recall when R is only estimated (reference §6).

For each target τ:

- point: k = ⌈τ·R̂⌉ (exact decimal τ); depth = rank of the k-th relevant document found so far, "reached" when the
  reviewed prefix already holds k relevant documents (CG(reviewed) ≥ k), else not yet.
- conservative: the same with R_U, the estimate's upper bound (none when the estimate has no upper bound).
- projected, from an independent simple random sample whose r positives sit at queue ranks u_(1) ≤ … ≤ u_(r):
  point u_(⌈τ·r⌉); certified u_(j), j from QBCB, which gives P(recall ≥ τ) ≥ 1 − α. A target of 1 is never
  certified (recall 1 can only be known by judging every document); a target of 0 is met at depth 0.
- extra documents = max(0, certified depth − reviewed), or the projected depth when no certified depth exists.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import numpy.typing as npt

from reviewdepth.estimation.percent import percent
from reviewdepth.estimation.relevant import Estimate
from reviewdepth.estimation.stopping import qbcb_threshold
from reviewdepth.measures.depth import exact_fraction

IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True)
class UnknownDepth:
    """Depth to one target under an estimated R. ``*_needed`` = relevant documents needed; ``*_depth`` = rank of
    that many-th relevant document among those found (None when not yet found); ``projected_depth`` /
    ``certified_depth`` from sample positives (None without a sample, or when too few positives); ``point_needed``
    is None when R̂ is not finite (e.g. the direct method with no sample positive in the found part: R̂ = F/0);
    ``basis`` says which estimate, interval and sample produced the numbers."""

    target: float
    point_needed: int | None
    point_depth: int | None
    point_reached: bool
    conservative_needed: int | None
    conservative_depth: int | None
    conservative_reached: bool
    projected_depth: int | None
    certified_depth: int | None
    extra_documents: int | None
    basis: str


def _ceil_product(tau: Fraction, value: float) -> int:
    """⌈τ·v⌉ with τ exact and v read as its shortest decimal repr (so 40.0 stays 40, not 40.000000000000007)."""
    if not math.isfinite(value):
        raise ValueError(f"cannot take a target of a non-finite R estimate ({value})")
    return max(0, math.ceil(tau * Fraction(repr(float(value)))))


def _depth(ranks: IntArray, needed: int) -> int | None:
    if needed <= 0:
        return 0
    return int(ranks[needed - 1]) if len(ranks) >= needed else None


def depth_under_unknown_r(relevant_ranks_reviewed: IntArray, reviewed: int, estimate: Estimate,
                          targets: Sequence[float | str], sample_positive_ranks: IntArray | None = None,
                          confidence: float = 0.95) -> list[UnknownDepth]:
    """Point, conservative, projected and certified depth for each target τ (see the module docstring).

    ``relevant_ranks_reviewed``: sorted 1-based ranks of the relevant documents found in the reviewed prefix of
    ``reviewed`` documents. ``estimate``: the R estimate (point R̂, upper R_U). ``sample_positive_ranks``: queue
    ranks of the positives of an independent simple random sample of the population (a positive outside the queue
    gets a rank past its end). ``confidence`` = 1 − α for QBCB.
    """
    ranks = np.sort(np.asarray(relevant_ranks_reviewed, dtype=np.int64).reshape(-1))
    if len(ranks) and (ranks[0] < 1 or ranks[-1] > reviewed):
        raise ValueError("relevant_ranks_reviewed must be 1-based ranks within the reviewed prefix")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be strictly between 0 and 1, got {confidence!r}")
    alpha = 1.0 - confidence
    found = len(ranks)
    sample = None if sample_positive_ranks is None else np.sort(
        np.asarray(sample_positive_ranks, dtype=np.int64).reshape(-1))
    upper_text = "no upper bound" if estimate.upper is None else f"upper {estimate.upper:g}"
    estimate_text = (f"R estimate {estimate.method} = {estimate.point:g} ({estimate.interval} "
                     f"{percent(estimate.confidence)}, {upper_text})")
    out: list[UnknownDepth] = []
    for tau in targets:
        frac = exact_fraction(tau)
        if not 0 <= frac <= 1:
            raise ValueError(f"target recall must be in [0, 1], got {tau!r}")
        finite_point = math.isfinite(estimate.point)
        point_needed = _ceil_product(frac, estimate.point) if finite_point else None
        point_depth = None if point_needed is None else _depth(ranks, point_needed)
        cons_needed = None if estimate.upper is None else _ceil_product(frac, estimate.upper)
        cons_depth = None if cons_needed is None else _depth(ranks, cons_needed)
        projected = certified = None
        parts = [estimate_text, f"{found} relevant found in {reviewed} reviewed"]
        if not finite_point:
            parts.append("the R estimate is not finite: no point depth")
        if frac == 0:
            projected = certified = 0
            parts.append("a target of 0 is met at depth 0")
        elif sample is not None and len(sample):
            r = len(sample)
            projected = int(sample[max(1, math.ceil(frac * r)) - 1])
            # QBCB needs τ^r ≤ α, never true at τ = 1: recall 1 is never certified by a sample.
            j = qbcb_threshold(r, frac, alpha) if frac < 1 else None
            if frac == 1:
                parts.append(f"projected from {r} sample positives: u({r}) = {projected}; not certified: recall 1 "
                             "can only be known by judging every document")
            elif j is not None:
                certified = int(sample[j - 1])
                parts.append(f"projected from {r} sample positives: u({math.ceil(frac * r)}) = {projected}; "
                             f"certified by QBCB j = {j} at {percent(confidence)}")
            else:
                parts.append(f"projected from {r} sample positives: u({math.ceil(frac * r)}) = {projected}; "
                             f"too few positives to certify at {percent(confidence)}")
        elif sample is not None:
            parts.append("the sample holds no positive: no projected depth")
        ref = certified if certified is not None else projected
        extra = None if ref is None else max(0, ref - reviewed)
        out.append(UnknownDepth(
            target=float(frac), point_needed=point_needed, point_depth=point_depth,
            point_reached=point_needed is not None and found >= point_needed, conservative_needed=cons_needed,
            conservative_depth=cons_depth,
            conservative_reached=cons_needed is not None and found >= cons_needed, projected_depth=projected,
            certified_depth=certified, extra_documents=extra, basis="; ".join(parts)))
    return out


@dataclass(frozen=True)
class ForwardDepth:
    """Where the review must go to reach a target, projected from a random sample of the unreviewed rest (see
    :func:`forward_depth`). ``depth`` is a queue rank (c when already reached, c + N_u when the sample cannot
    locate it); ``more_documents`` = depth − c; ``needed`` = k, relevant documents still needed; ``j`` = sample
    positives that stand for them (0 when reached); ``beyond_sample``: the sample holds fewer than j positives."""

    depth: int
    more_documents: int
    needed: int
    j: int
    beyond_sample: bool
    reached: bool


def forward_depth(found: int, reviewed: int, rest_size: int, rest_sample_size: int,
                  rest_positive_ranks: npt.ArrayLike, relevant: float, tau: float | str | Fraction) -> ForwardDepth:
    """Projected depth to reach target τ when R = ``relevant``, from a simple random sample of the unreviewed rest.

    The reviewed prefix of c = ``reviewed`` documents holds F = ``found`` relevant; the rest is the N_u =
    ``rest_size`` documents at queue ranks c + 1 … c + N_u; a simple random sample of m = ``rest_sample_size`` of
    them holds y positives at sorted ranks v_(1) < … < v_(y). Call it with R̂, R_L and R_U for a point and a range
    (the depth is non-decreasing in R and in τ).

        k = ⌈τ·R⌉ − F                      (τ exact decimal, R read as its shortest decimal)
        k ≤ 0:  depth = c                   (reached)
        X̂_d = N_u·y_d/m,  y_d = #{i : v_(i) ≤ d}   (unbiased estimate of the relevant documents in ranks c+1 … d)
        depth = min{d : X̂_d ≥ k} = v_(j),  j = ⌈k·m/N_u⌉   (exact integer arithmetic)
        j > y:  depth = c + N_u, ``beyond_sample`` (the sample cannot locate the k-th; the end of the rest)

    more_documents = depth − c. With N_u = 0 and k > 0 nothing is left to review: depth c, ``beyond_sample``.
    """
    if found < 0 or reviewed < 0 or rest_size < 0:
        raise ValueError("found, reviewed and rest_size must be non-negative")
    if rest_size and not 0 < rest_sample_size <= rest_size:
        raise ValueError(f"rest_sample_size must be in [1, rest_size], got {rest_sample_size} of {rest_size}")
    frac = exact_fraction(tau)
    if not 0 <= frac <= 1:
        raise ValueError(f"target recall must be in [0, 1], got {tau!r}")
    v = np.sort(np.asarray(rest_positive_ranks, dtype=np.int64).reshape(-1))
    if len(v) and (v[0] <= reviewed or v[-1] > reviewed + rest_size):
        raise ValueError(f"rest sample positives must lie at ranks {reviewed + 1}…{reviewed + rest_size}")
    if len(v) > rest_sample_size:
        raise ValueError(f"{len(v)} positives in a sample of {rest_sample_size}")
    k = _ceil_product(frac, relevant) - found
    if k <= 0:
        return ForwardDepth(reviewed, 0, max(k, 0), 0, False, True)
    if rest_size == 0:
        return ForwardDepth(reviewed, 0, k, 0, True, False)
    j = -((-k * rest_sample_size) // rest_size)  # ⌈k·m/N_u⌉
    if j > len(v):
        return ForwardDepth(reviewed + rest_size, rest_size, k, j, True, False)
    depth = int(v[j - 1])
    return ForwardDepth(depth, depth - reviewed, k, j, False, False)


@dataclass(frozen=True)
class YieldProjection:
    """Heuristic forward answer from the review's recent yield (see :func:`recent_yield_projection`).
    ``more_documents`` is None when the recent yield is 0 (``basis`` says why)."""

    window: int
    window_relevant: int
    yield_rate: float
    relevant_estimate: float | None
    needed: int | None
    more_documents: int | None
    basis: str


def default_window(reviewed: int) -> int:
    """W = min(c, max(100, ⌈c/10⌉)): the last 10 % of the reviewed prefix, at least 100 documents (fewer only when
    fewer are reviewed), so the rate is neither one lucky batch nor the rich top of the ranking."""
    return min(reviewed, max(100, -(-reviewed // 10)))


def recent_yield_projection(prefix_labels: npt.ArrayLike, rest_size: int, relevant_found: int,
                            tau: float | str | Fraction, window: int | None = None) -> YieldProjection:
    """HEURISTIC forward answer without a sample: project the rest's yield from the most recently reviewed documents,
    decaying as it decayed over the window before. No guarantee; a projection, never evidence.

        W = ``window`` or :func:`default_window` (min(c, max(100, ⌈c/10⌉))),  a = relevant (label 1) in the last W,
        b = relevant in the W' = min(W, c − W) before them;  w = a/W;  q = min(1, (a/W)/(b/W')) when b > 0, else 1
        yield of the next D:  Ŷ(D) = w·(1 − q^(D/W))/(1 − q^(1/W))   (w·D when q = 1)
        R_h = F + Ŷ(N_u);   k = ⌈τ·R_h⌉ − F;   more documents = the least D with Ŷ(D) ≥ k, at most N_u (0 when k ≤ 0)
        None when w = 0

    Why decaying: a ranking puts relevant documents first, so a constant recent rate over the whole rest overstates
    R (on CLEF 2017 CD009579 after 500 reviewed, true recall 0.964, the constant rate said 0.258 and 5,550 more
    documents; the decay fitted to the two windows says about 0.95). When the two windows show no decay (q = 1) the
    projection cannot tell how far the yield falls and says so: draw a sample.

    ``prefix_labels``: the reviewed prefix's labels in queue order (1 = relevant); F = ``relevant_found``; N_u =
    ``rest_size``.
    """
    labels = np.asarray(prefix_labels).reshape(-1)
    c = len(labels)
    if rest_size < 0 or relevant_found < 0:
        raise ValueError("rest_size and relevant_found must be non-negative")
    frac = exact_fraction(tau)
    if not 0 <= frac <= 1:
        raise ValueError(f"target recall must be in [0, 1], got {tau!r}")
    w_size = default_window(c) if window is None else min(window, c)
    if window is not None and window <= 0:
        raise ValueError(f"window must be positive, got {window}")
    if w_size == 0:
        return YieldProjection(0, 0, 0.0, None, None, None,
                               "heuristic: nothing is reviewed yet, so there is no recent yield to project from")
    a = int(np.count_nonzero(labels[c - w_size:] == 1))
    if a == 0:
        return YieldProjection(w_size, 0, 0.0, float(relevant_found), None, None,
                               f"heuristic: no relevant document in the last {w_size:,} reviewed, so the recent "
                               "yield projects none in the rest and cannot say how deep a target lies; draw a sample")
    rate = a / w_size
    before = labels[max(0, c - 2 * w_size):c - w_size]
    b = int(np.count_nonzero(before == 1))
    decay = min(1.0, rate / (b / len(before))) if b else 1.0
    step = decay ** (1 / w_size)

    def projected(more: float) -> float:
        return rate * more if decay >= 1.0 else rate * (1 - step ** more) / (1 - step)

    r_h = relevant_found + projected(rest_size)
    k = _ceil_product(frac, r_h) - relevant_found
    if k <= 0:
        more = 0
    elif decay >= 1.0:
        more = min(rest_size, math.ceil(k / rate - 1e-9))
    else:
        share = 1 - k * (1 - step) / rate
        more = rest_size if share <= 0 else min(rest_size, math.ceil(math.log(share) / math.log(step) - 1e-9))
    shape = (f"decaying ×{decay:.2f} per {w_size:,} as over the {len(before):,} before" if decay < 1.0 else
             "no decay seen over the window before, so it assumes the rate goes on (this overstates R when the "
             "ranking is good: draw a sample to know)")
    basis = (f"heuristic: {a} relevant in the last {w_size:,} reviewed (yield {rate:.3g}), {shape}; projected over "
             f"the {rest_size:,} unreviewed, R ≈ {r_h:.1f} and "
             + (f"{k} more relevant are needed, about {more:,} more documents" if k > 0
                else "the target is already met"))
    return YieldProjection(w_size, a, rate, r_h, max(k, 0), more, basis)
