"""The count bound: "at most m relevant documents remain unreviewed, at confidence c" as a claim of its own.

When a topic has few relevant documents a recall target is hard to certify: recall F/(F + b) ≥ τ needs the b
relevant documents left to number at most k = ⌊F(1 − τ)/τ⌋ (`reviewdepth.estimation.planning.missed_allowed`),
and with F < 20 at τ = 0.95 that is k = 0, which only a near-census of the N_u unreviewed documents proves. What
the evidence supports at any cost is a bound on b itself.

- **Now.** From a simple random sample of n of the N_u unreviewed documents holding x relevant, the exact
  one-sided upper bound m = K_U (`reviewdepth.estimation.intervals.hypergeometric_interval`, ``sided="upper"``):
  P(b ≤ m) ≥ c. From an audit stream, the monitor's time-uniform bound on the documents missed (valid at every
  look). With no random evidence, m = N_u (nothing is known about the rest).
- **Lowering it.** A fresh simple random sample of n of the N_u that finds no relevant document certifies
  b ≤ M exactly when P(X = 0 | N_u, M + 1, n) ≤ α (a rest holding M + 1 relevant would be missed by the whole
  sample with probability at most α); the least such n (:func:`sample_for_at_most`) is what lowering the bound to
  M costs, and no design that assumes nothing about where the relevant documents sit costs less (the argument of
  :func:`certification_floor`, whose floor is this with M = k). A sample that finds a relevant document needs
  more.

Pure: integers in, integers out."""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from reviewdepth.estimation.intervals import hypergeometric_interval
from reviewdepth.estimation.planning import missed_allowed

LOWER_TO = (0, 1, 2, 3, 5, 10, 20)


def _log_zero_hit(unreviewed: int, missed: int, size: int) -> float:
    """ln P(X = 0) for X ~ Hypergeometric(N_u, K = ``missed``, n = ``size``)."""
    if size > unreviewed - missed:
        return -math.inf
    return (math.lgamma(unreviewed - missed + 1) - math.lgamma(unreviewed - missed - size + 1)
            - math.lgamma(unreviewed + 1) + math.lgamma(unreviewed - size + 1))


def sample_for_at_most(unreviewed: int, at_most: int, confidence: float) -> int:
    """The least n such that a simple random sample of n of the ``unreviewed`` documents finding none relevant
    certifies "at most ``at_most`` relevant remain" at ``confidence``: P(X = 0 | N_u, M + 1, n) ≤ 1 − c. 0 when
    M ≥ N_u (nothing to prove); N_u − M at most (then the M + 1 cannot all be missed)."""
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be strictly between 0 and 1, got {confidence!r}")
    if at_most < 0:
        raise ValueError(f"at_most must be 0 or more, got {at_most}")
    if at_most >= unreviewed:
        return 0
    log_alpha = math.log(1.0 - confidence)
    lo, hi = 1, unreviewed - at_most
    while lo < hi:
        mid = (lo + hi) // 2
        if _log_zero_hit(unreviewed, at_most + 1, mid) <= log_alpha:
            hi = mid
        else:
            lo = mid + 1
    return lo


def at_most_from_sample(relevant: int, size: int, unreviewed: int, confidence: float) -> int:
    """m: the exact one-sided upper bound on the relevant documents of the ``unreviewed`` from a simple random
    sample of ``size`` of them holding ``relevant``."""
    if unreviewed == 0:
        return 0
    return int(hypergeometric_interval(relevant, size, unreviewed, confidence, "upper")[1])


@dataclass(frozen=True)
class Lowering:
    """Lowering the bound to ``at_most``: a fresh random sample of ``sample`` unreviewed documents finding none."""

    at_most: int
    sample: int
    share: float  # sample / unreviewed


@dataclass(frozen=True)
class CountBound:
    """The count bound of one topic now: ``at_most`` m at ``confidence`` (None: no random evidence bounds it
    below N_u), from ``basis``; ``found`` F and ``unreviewed`` N_u; ``target`` τ with ``target_allows`` k, the
    count at which τ is certified (m ≤ k), and ``target_floor`` what certifying τ costs with a fresh sample
    (``target_above_half``: more than half the unreviewed: not at a sane cost); ``lowering``: what lowering the
    bound to each smaller M costs."""

    confidence: float
    basis: str
    found: int
    unreviewed: int
    at_most: int
    target: float
    target_allows: int
    target_certified: bool
    target_floor: int
    target_above_half: bool
    lowering: tuple[Lowering, ...]


def count_bound(found: int, unreviewed: int, confidence: float, tau: Fraction, *, basis: str,
                at_most: int | None, lower_to: tuple[int, ...] = LOWER_TO) -> CountBound:
    """The count bound now (``at_most`` from the deciding evidence; None: none, so N_u) and its price list."""
    bound = unreviewed if at_most is None else min(at_most, unreviewed)
    allows = missed_allowed(found, unreviewed, tau) if unreviewed else 0
    floor = sample_for_at_most(unreviewed, allows, confidence)
    wanted = sorted({m for m in (*lower_to, allows) if 0 <= m < bound})
    lowering = tuple(Lowering(m, n, n / unreviewed) for m in wanted
                     for n in [sample_for_at_most(unreviewed, m, confidence)])
    return CountBound(confidence, basis if at_most is not None else "none", found, unreviewed, bound, float(tau),
                      allows, bound <= allows, floor, floor > unreviewed / 2, lowering)


# the floor a plan starts from (`stop_plan`), here with the bound it reads so that a status view that shows the
# floor need not load the planner
def certification_floor(found: int, unreviewed: int, tau: Fraction, confidence: float) -> int:
    """n_min(F, N_u): the least simple-random-sample size of the unreviewed rest with P(X = 0 | N_u, k + 1, n) ≤ α,
    k = :func:`~reviewdepth.estimation.planning.missed_allowed` (F, N_u, τ). 0 when nothing is unreviewed or when
    even an all-relevant rest keeps recall ≥ τ. P(X = 0) falls in n, so the least n is found by bisection."""
    if unreviewed <= 0:
        return 0
    # the count bound's least sample (:func:`sample_for_at_most`) at the k missed documents τ allows
    return sample_for_at_most(unreviewed, missed_allowed(found, unreviewed, tau), confidence)


@dataclass(frozen=True)
class FloorFigure:
    """The floor at one state, for a report's first screen: ``documents`` n_min(F, N_u) (one-look, exact), the
    ``unreviewed`` N_u and ``missed_allowed`` k it is for, and the least projected total over further review depths
    (``review_more`` D, ``least_total`` D + n_min(F + Ŷ(D), N_u − D)), with the projection's ``source``."""

    target: float
    confidence: float
    documents: int
    unreviewed: int
    missed_allowed: int
    review_more: int
    least_total: float
    above_half: bool
    source: str
    # when the floor is above half the unreviewed: (target, confidence, floor) for the lower targets and confidences
    alternatives: tuple[tuple[float, float, int], ...] = ()
