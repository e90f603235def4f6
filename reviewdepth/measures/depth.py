"""Depth to reach a target recall τ when R (the number of relevant documents) is known (reference §1), and
work saved over sampling (WSS): the one home of the depth and WSS helpers and of the rounding rule of k(τ).

Pure functions. A queue is described by the sorted 1-based ranks of its relevant documents, u_1 < u_2 < … (so
CG(k) = #{i : u_i ≤ k}); R is passed separately because relevant documents may lie outside the queue. The
helpers named after the TAR measures (`depth_at_recall`, `wss_at`, `wss_100`) take the 0/1 relevance array of a
ranking in review order instead, as `reviewdepth.measures.tar` does.

k(τ) = the number of relevant documents needed; depth(τ) = u_{k(τ)} = min{k : CG(k) ≥ k(τ)}, or *not reached* when
fewer than k(τ) relevant documents are in the queue. R = 0: nothing to find; every target is met at depth 0.
The rounding rule of k(τ) is one of `TARGET_RULES`: ``ceil`` (clean), ``tar_eval`` (the CLEF scripts) or
``asreview`` (asreview-insights); see `target_count`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal, get_args

import numpy as np
import numpy.typing as npt

IntArray = npt.NDArray[np.int64]
RelArray = npt.NDArray[np.integer] | npt.NDArray[np.bool_]

TargetRule = Literal["ceil", "tar_eval", "asreview"]
TARGET_RULES: tuple[str, ...] = get_args(TargetRule)
DEFAULT_TARGETS: tuple[float, ...] = (0.8, 0.9, 0.95, 0.99)


def exact_fraction(tau: str | Fraction | float) -> Fraction:
    """τ as an exact decimal fraction: ``Fraction(str(τ))`` (so the float 0.55 is 11/20, not 0.55000000000000004…)."""
    if isinstance(tau, Fraction):
        return tau
    if isinstance(tau, str):
        return Fraction(tau.strip())
    return Fraction(str(float(tau)))


def _check_tau(value: Fraction) -> None:
    if not 0 <= value <= 1:
        raise ValueError(f"target recall must be in [0, 1], got {value}")


def target_count(tau: str | Fraction | float, relevant: int, rule: TargetRule | str = "ceil") -> int:
    """k(τ): relevant documents needed for recall τ out of R = ``relevant``.

    - ``ceil`` (default, clean): k = ⌈τ·R⌉ in exact decimal arithmetic (τ = 0.55, R = 100 → 55, not 56).
    - ``tar_eval`` (CLEF 2017–2019 wss_95): k = round-half-even(τ·R), Python ``round`` on the float product
      (R = 14 → 13; R = 30 → 28 for τ = 0.95).
    - ``asreview`` (asreview-insights WSS@τ): the largest j with j/R ≤ τ, compared in floats (R = 4, τ = 0.95 → 3).

    R ≤ 0 gives 0.
    """
    if rule not in TARGET_RULES:
        raise ValueError(f"rule must be one of {TARGET_RULES}, got {rule!r}")
    frac = exact_fraction(tau)
    _check_tau(frac)
    if relevant <= 0:
        return 0
    if rule == "ceil":
        return math.ceil(frac * relevant)
    if rule == "tar_eval":
        return round(float(frac) * float(relevant))
    points = np.arange(1, relevant + 1, dtype=np.float64) / float(relevant)
    return int(np.searchsorted(points, float(frac), side="right"))


def target_count_estimated(tau: str | Fraction | float, relevant: float) -> int:
    """k(τ) for an estimated R (a real number): ⌈τ·R̂⌉ in exact decimal arithmetic (R̂ taken as its shortest
    decimal repr, so 17.0 × 0.95 is exactly 16.15 → 17), never below 0. On a whole R it is `target_count`'s
    ``ceil`` rule: the one definition the depth report's point and conservative depths use."""
    frac = exact_fraction(tau)
    _check_tau(frac)
    return max(0, math.ceil(frac * Fraction(repr(float(relevant)))))


@dataclass(frozen=True)
class DepthAtTarget:
    """Depth to reach one target: ``needed`` = k(τ); ``depth`` = rank of the k-th relevant document (None = not
    reached); ``precision`` = k/depth; ``wss`` = (N − depth)/N − (1 − τ) (None without N or when not reached)."""

    target: float
    needed: int
    depth: int | None
    precision: float | None
    wss: float | None
    rule: str


def _ranks(relevant_ranks: npt.ArrayLike) -> IntArray:
    ranks = np.asarray(relevant_ranks, dtype=np.int64).reshape(-1)
    if len(ranks) and (ranks[0] < 1 or np.any(np.diff(ranks) <= 0)):
        raise ValueError("relevant_ranks must be strictly increasing 1-based ranks")
    return ranks


def depth_at_count(relevant_ranks: IntArray, needed: int) -> int | None:
    """depth(k) = u_k, the rank of the k-th relevant document (0 for k ≤ 0; None when fewer than k are ranked)."""
    if needed <= 0:
        return 0
    ranks = _ranks(relevant_ranks)
    return int(ranks[needed - 1]) if len(ranks) >= needed else None


def wss(depth: int, population: int, tau: str | Fraction | float) -> float:
    """WSS@τ (Cohen et al. 2006) = (N − depth)/N − (1 − τ), N = ``population``, 1 − τ in exact decimal
    arithmetic (CLEF's wss_95 subtracts 0.05 even when k/R ≠ 0.95)."""
    return (population - depth) / population - float(1 - exact_fraction(tau))


def depth_to_recall(relevant_ranks: IntArray, relevant_total: int,
                    targets: Sequence[float | str] = DEFAULT_TARGETS, population: int | None = None,
                    rule: TargetRule | str = "ceil") -> list[DepthAtTarget]:
    """Depth to each target recall τ with R = ``relevant_total`` known.

    k = k(τ) (see :func:`target_count`); depth = u_k, the rank of the k-th relevant document, None when fewer than
    k relevant documents are in the queue; precision = k/depth; WSS@τ = (N − depth)/N − (1 − τ) with N =
    ``population`` (1 − τ in exact decimal arithmetic). Recall at depth is k/R ≥ τ under the ``ceil`` rule.

    R = 0: nothing to find; every target is met at depth 0 (needed 0, depth 0, precision None, wss None: neither
    is defined without a relevant document). Raises ValueError when R < 0 or when the queue holds more relevant
    documents than R.
    """
    ranks = _ranks(relevant_ranks)
    if relevant_total < 0:
        raise ValueError(f"R must be non-negative, got {relevant_total}")
    if len(ranks) > relevant_total:
        raise ValueError(f"{len(ranks)} relevant ranks given but R = {relevant_total}")
    if population is not None and population <= 0:
        raise ValueError(f"population must be positive, got {population}")
    out: list[DepthAtTarget] = []
    for tau in targets:
        frac = exact_fraction(tau)
        needed = target_count(frac, relevant_total, rule)
        depth = depth_at_count(ranks, needed)
        precision = None if depth is None or depth == 0 else needed / depth
        wss_value = None
        if depth is not None and population is not None and relevant_total > 0:
            wss_value = wss(depth, population, frac)
        out.append(DepthAtTarget(float(frac), needed, depth, precision, wss_value, rule))
    return out


def last_relevant_rank(relevant_ranks: IntArray) -> int | None:
    """max u_i: rank of the deepest relevant document in the queue (the depth of 100 % of the ranked relevant);
    None when the queue holds no relevant document."""
    ranks = _ranks(relevant_ranks)
    return int(ranks[-1]) if len(ranks) else None


def relevant_ranks_from_labels(labels: npt.ArrayLike) -> IntArray:
    """Sorted 1-based ranks u_i of the relevant documents of a 0/1 label array in queue order."""
    return (np.flatnonzero(np.asarray(labels)) + 1).astype(np.int64)


def depth_at_recall(rel: RelArray, num_rels: int, tau: str | float | Fraction,
                    rule: TargetRule | str = "ceil") -> int | None:
    """depth(τ) of a ranking given as its 0/1 relevance array: documents to review to reach recall τ; None when
    not reached or R = 0."""
    if num_rels <= 0:
        return None
    return depth_at_count(relevant_ranks_from_labels(rel), target_count(tau, num_rels, rule))


def wss_at(rel: RelArray, num_docs: int, num_rels: int, tau: str | float | Fraction,
           rule: TargetRule | str = "ceil") -> float:
    """WSS@τ of a ranking (`wss` at depth(τ)); 0.0 when the target is not reached. With ``rule="tar_eval"`` and
    τ = 0.95 this is CLEF's wss_95."""
    depth = depth_at_recall(rel, num_rels, tau, rule)
    if depth is None:
        return 0.0
    return wss(depth, num_docs, tau)


def wss_100(rel: RelArray, num_docs: int, num_rels: int) -> float:
    """wss_100 = (N − last relevant rank)/N when every relevant document is found (CG(n) = R), else 0.0."""
    ranks = relevant_ranks_from_labels(rel)
    if num_rels <= 0 or len(ranks) < num_rels:
        return 0.0
    return (num_docs - int(ranks[-1])) / num_docs
