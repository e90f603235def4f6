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
                     f"{estimate.confidence:.0%}, {upper_text})")
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
                             f"certified by QBCB j = {j} at {confidence:.0%}")
            else:
                parts.append(f"projected from {r} sample positives: u({math.ceil(frac * r)}) = {projected}; "
                             f"too few positives to certify at {confidence:.0%}")
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
