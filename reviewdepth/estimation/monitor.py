"""An anytime-valid stop signal: a confidence sequence for the relevant documents the review has not reached,
from an audit stream, valid however often the team looks.

Setting. A population of N documents is reviewed along a ranking; S_t is the reviewed set at time t (it only
grows), F_t its relevant documents (known: every document of S_t is judged). Beside the review runs an **audit
stream**: the documents of a uniformly random permutation of the population, judged in permutation order. After m
audit documents, x_t of them are relevant and outside S_t. The unknown is

    b_t = |R \\ S_t|   (relevant documents outside the reviewed set),   recall_t = F_t / (F_t + b_t).

Confidence sequence (Waudby-Smith & Ramdas 2020, "Confidence sequences for sampling without replacement",
NeurIPS; the prior–posterior martingale). For a *fixed* set S with b relevant documents outside it, the count x of
audit documents that are relevant and outside S after m draws is Hypergeometric(N, b, m). With a prior π₀ on
b ∈ {0, …, N} fixed before the first draw and the likelihood L_m(r) = C(r, x)·C(N − r, m − x)/C(N, m),

    M_m(r) = Σ_s π₀(s) L_m(s) / L_m(r) = π₀(r) / π_m(r)

is a nonnegative martingale with M_0 = 1 under b = r, so by Ville's inequality P(∃m: M_m(b) ≥ 1/α) ≤ α, and

    C_m = {r : L_m(r) > α · Σ_s π₀(s) L_m(s)},   U(m, x) = max C_m

is an upper confidence sequence for b, valid at every m simultaneously (continuous monitoring, optional
stopping). The prior is π₀(r) = 1/((r + 1)(r + 2)) for r < N and π₀(N) = 1/(N + 1): it sums to one, needs no
guess of the prevalence, and puts half its mass on b = 0 so that an audit finding nothing outside the reviewed set
certifies quickly. `upper_missed` returns the monotone envelope U*(m, x) = max_{x' ≤ x} U(m, x'), which is
still a confidence sequence (U* ≥ U) and is nondecreasing in x by construction — the property the argument below
needs.

Why a moving reviewed set is covered (for a target τ fixed before the review starts). The monitor certifies at
time t when

    F_t / (F_t + U_t) ≥ τ   or   U_t ≤ (1 − τ) · R_known,      U_t = U*(m_t, x_t),

where R_known ≤ R counts the distinct relevant documents judged so far, and U_t is first capped at N − |S_t| (b_t
can never exceed the documents outside the reviewed set, so a review that reaches every document certifies). Let S*
be the largest set of the review's chain of reviewed sets whose recall is below τ (fixed when the chain does not
depend on the audit); any false stop happens at a time with S_t ⊆ S*, so F_t ≤ F*, x_t ≥ x*_t (the same audit
documents counted against S*) and U_t ≥ U*(m_t, x*_t). Either condition then gives U*(m_t, x*_t) ≤ F*(1 − τ)/τ < b*
or ≤ (1 − τ)R < b*: the sequence for the fixed set S* missed its b* at draw m_t, which has probability ≤ α over all
m at once. Hence P(the monitor ever certifies while recall < τ) ≤ α. The guarantee is per target (fixed in advance),
not a band for every level at once; the reported recall lower bound is the figure compared with that target.

An audit rate that changes with the evidence. When the reviewed sets are prefixes of one ranking that does not
depend on the audit, S* and b* are functions of the ranking and the labels alone, and the event E = {∃m: U*(m, x*_m)
< b*} (x*_m: the relevant documents outside S* among the first m of the permutation) is a function of the
permutation alone, with P(E) ≤ α. Every false stop implies E at the m of its look, whatever chose that m and the
depth: a policy that decides from the past (audit outcomes included) how many ranked documents to review and how
many audit documents to draw before each look changes which m are looked at, not E, so P(false stop) ≤ α still.
As E covers every m at once this holds even for a rule that is not a stopping time, one that uses labels the team
has not judged: the ranking's (the worst play — the rule is monotone in the prefix — is to review exactly to S* and
then audit, which needs them) or the permutation's future. What breaks it is an S* that depends on the permutation:
an order that depends on the audit (a ranker trained on audit labels or on which documents were drawn, a queue
that puts the audit's finds first), or evidence that is not a prefix of the one permutation (audit documents
skipped or redrawn, a restarted stream). tests/estimation/test_adaptive_rate_dp.py computes P(false stop) exactly
over every audit path of populations of 12–24 documents: the best of all rates, adaptive or not, stays ≤ α at
α = 0.05 and 0.10; a queue that reviews the audit's finds at once exceeds α.

The same argument bounds the depth to τ on a fixed queue: `depth_bound` is the first rank k at which the
condition holds for S(k) = S_t ∪ {ranks ≤ k} (with the relevant documents already known inside S(k) added to
F_t); P(depth to τ > bound at some look) ≤ α.

Assumptions (printed with every answer): the audit documents are the first m of a seeded uniformly random
permutation of the population, judged in that order (a gap stops the evidence); the ranking and the reviewed
sets do not depend on the audit, neither its labels nor which documents it drew (do not train the ranker on audit
judgments); judgments are correct (a label changed later changes the evidence, not the guarantee's form).

The fixed-look variant (`fixed_look_upper`) is the exact one-sided hypergeometric bound on b for one look at
one fixed m: valid for a single look only — repeated after every batch its error rate can exceed α.
"""

from __future__ import annotations

import bisect
import enum
import math
import threading
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache

import numpy as np
import numpy.typing as npt

from reviewdepth.estimation.distributions import _log_comb, _special
from reviewdepth.estimation.intervals import hypergeometric_interval

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]

ASSUMPTIONS: tuple[str, ...] = (
    "the audit documents are the first m of a seeded uniformly random permutation of the population, judged in "
    "that order (the evidence stops at the first audit document without a label)",
    "the ranking and the reviewed set do not depend on the audit: neither its labels nor which documents it drew "
    "(do not train the ranker on audit judgments, nor re-rank by what the audit served); the reviewed set may grow "
    "in any order (rank order, random, another tool's, batches by custodian) fixed without looking at the audit; "
    "the audit's pace may change",
    "the target is fixed before the review starts; the guarantee is P(stop certified while recall < target) ≤ α",
)


def _check(population: int, audited: int, missed: int, confidence: float) -> float:
    if population < 1:
        raise ValueError(f"population must be positive, got {population}")
    if not 0 <= audited <= population:
        raise ValueError(f"audited must be in [0, population], got {audited} of {population}")
    if not 0 <= missed <= audited:
        raise ValueError(f"missed must be in [0, audited], got {missed} of {audited}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be strictly between 0 and 1, got {confidence!r}")
    return 1.0 - confidence


@lru_cache(maxsize=8)
def _log_prior(population: int) -> FloatArray:
    r = np.arange(population + 1, dtype=np.float64)
    prior = -np.log(r + 1.0) - np.log(r + 2.0)
    prior[population] = -math.log(population + 1.0)
    return prior


def _log_like(population: int, audited: int, missed: int, r: int) -> float:
    """ln C(r, x) + ln C(N − r, m − x), the r-dependent part of ln L_m(r)."""
    def log_comb(a: int, b: int) -> float:
        return math.lgamma(a + 1) - math.lgamma(b + 1) - math.lgamma(a - b + 1)

    return log_comb(r, missed) + log_comb(population - r, audited - missed)


# L_m is log-concave in r, so outside the window where ln L_m ≥ its maximum − WINDOW it is below e^−WINDOW·L_max:
# that mass changes Σ π₀ L_m by a relative N·(N + 2)²·e^−WINDOW (< 1e−18 for N ≤ 10⁶), and no such r can satisfy
# L_m(r) > α Σ π₀ L_m ≥ α L_max/(N + 2)², so the window holds the whole set.
WINDOW = 80.0


def _cs_upper(population: int, audited: int, missed: int, alpha: float) -> int:
    """max{r : L_m(r) > α Σ_s π₀(s) L_m(s)} (the raw prior–posterior upper end, before the envelope)."""
    return _cs_bound(population, audited, missed, alpha)[0]


def _cs_bound(population: int, audited: int, missed: int, alpha: float,
              hint: tuple[int, int] | None = None) -> tuple[int, float, float, tuple[int, int]]:
    """(`_cs_upper`, ln Σ_s π₀(s) L_m(s) in the r-dependent part of ln L_m, the posterior mean of r, the window
    summed): the raw upper end, the evidence it compares L_m with and where that evidence sits (a search over m
    reads these to place its next look, :class:`_Staircase`). ``hint``: the window of a nearby m, where the
    search for this one's ends starts (the same ends either way)."""
    if audited == 0:
        # no evidence: M_0 ≡ 1 < 1/α, every r is in the set (L ≡ 1, Σ π₀ = 1)
        return population, 0.0, population / 2, (0, population)
    low, high = missed, population - (audited - missed)
    mode = min(max((missed * (population + 1)) // audited, low), high)
    top = _log_like(population, audited, missed, mode)
    floor = top - WINDOW
    # the window: the first r ≤ mode and the last r ≥ mode with ln L ≥ floor (ln L is concave: it rises up to the
    # mode and falls after), each found by `_window_end`
    start = _window_end(population, audited, missed, top, floor, mode, low, None if hint is None else hint[0])
    end = _window_end(population, audited, missed, top, floor, mode, high, None if hint is None else hint[1])
    if end - start >= RATIO_SUM_FROM:
        by_ratios = _ratio_bound(population, audited, missed, alpha, start, end, mode)
        if by_ratios is not None:
            return by_ratios
    return _summed_bound(population, audited, missed, alpha, start, end)


def _summed_bound(population: int, audited: int, missed: int, alpha: float, start: int,
                  end: int) -> tuple[int, float, float, tuple[int, int]]:
    """`_cs_bound` over the window [``start``, ``end``]: every ln L_m(r) from the log-binomials, summed."""
    r = np.arange(start, end + 1, dtype=np.float64)
    log_like = np.add(_log_comb(r, missed), _log_comb(population - r, audited - missed))
    log_prior = _log_prior(population)[start:end + 1]
    joint = log_prior + log_like
    peak = float(joint.max())
    weights = np.exp(joint - peak)
    total = float(weights.sum())
    log_evidence = peak + math.log(total)
    inside = np.flatnonzero(log_like > math.log(alpha) + log_evidence)
    # the maximiser of L_m is always inside (L_max ≥ Σ π₀ L), so the set is never empty
    return int(r[inside[-1]]), log_evidence, float(weights @ r) / total, (start, end)


# windows of at least this many r are summed by `_ratio_bound` (below it the log-binomials cost little)
RATIO_SUM_FROM = 256


def _log_like_one(population: int, audited: int, missed: int, r: int) -> float:
    """ln L_m(r) by the log-beta expression `_summed_bound` evaluates over its window (in scalars: the same
    function, so within a unit or two of rounding of the window's value)."""
    betaln = _special().betaln
    rest, rest_missed = float(population - r), float(audited - missed)
    return (-math.log1p(r) - float(betaln(r - missed + 1.0, missed + 1.0))
            - math.log1p(rest) - float(betaln(rest - rest_missed + 1.0, rest_missed + 1.0)))


def _ratio_bound(population: int, audited: int, missed: int, alpha: float, start: int, end: int,
                 mode: int) -> tuple[int, float, float, tuple[int, int]] | None:
    """`_summed_bound`'s answer at a fraction of its cost, or None where it cannot be sure of the same upper end.

    The evidence Σ π₀ L_m over the window is summed relative to r̂ = ``mode``: L_m(r)/L_m(r̂) is a running product
    of the one-step ratios L(r + 1)/L(r) = (r + 1)/(r + 1 − x) · (N − r − m + x)/(N − r) (and their inverse on the
    left), a few multiplications per r where the log-binomials cost two log-beta functions. Each product of k
    ratios is within about 8k units of rounding of the true ratio (under 1e−8 relatively for any window of a
    population up to 10⁷), and `_summed_bound`'s own sum is within a few units of rounding of |ln L| of the truth,
    so the two evidences differ by far less than ``margin``. The upper end r* is read from the ratios, then
    checked with ln L_m itself: ln L(r*) above the threshold ln α + ln evidence and ln L(r* + 1) below it, both by
    more than ``margin``. ln L falls beyond r̂ (it is concave and r̂ is its maximiser), so no r past r* + 1 can be
    in the set either, and `_summed_bound` finds the same r*. Otherwise (a crossing within ``margin``: 2 of 3,000
    random bounds when this was written) None: the caller sums."""
    n, m, x = population, audited, missed
    r = np.arange(start, end + 1, dtype=np.float64)
    after = r + 1.0
    steps = after[:-1] / (after[:-1] - x) * ((n - m + x) - r[:-1]) / (n - r[:-1])  # L(r + 1)/L(r), r < end
    at = mode - start
    up = np.cumprod(steps[at:])  # L(r)/L(r̂), r = r̂ + 1 … end
    down = np.cumprod(steps[at - 1::-1]) if at else steps[:0]  # L(r̂)/L(r), r = r̂ − 1 … start
    relative = np.concatenate([1.0 / down[::-1], [1.0], up])
    prior = 1.0 / (after * (after + 1.0))
    if end == n:
        prior[-1] = 1.0 / (n + 1.0)
    weights = relative * prior
    total = float(weights.sum())  # Σ π₀ L_m / L_m(r̂)
    # r is in the set when L(r)/L(r̂) > α Σ π₀ L_m / L_m(r̂): past r̂, the ratios fall
    kept = int(np.count_nonzero(relative[at:] > alpha * total))
    if kept == 0:
        return None
    upper = mode + kept - 1
    log_at_mode = _log_like_one(n, m, x, mode)
    log_evidence = log_at_mode + math.log(total)
    threshold = math.log(alpha) + log_evidence
    margin = 1e-6 + 1e-12 * (abs(log_at_mode) + abs(log_evidence) + (end - start))
    if not _log_like_one(n, m, x, upper) > threshold + margin:
        return None
    if upper < end and not _log_like_one(n, m, x, upper + 1) < threshold - margin:
        return None
    return upper, log_evidence, float(weights @ r) / total, (start, end)


def _window_end(population: int, audited: int, missed: int, top: float, floor: float, mode: int, limit: int,
                hint: int | None = None) -> int:
    """The r between ``mode`` and ``limit`` (either side) farthest from the mode with ln L_m(r) ≥ ``floor``, ln L
    falling away from the mode (``top`` = ln L at it). The same integer as a bisection of that comparison finds,
    at fewer evaluations: from ``hint`` (the end a nearby m had: checked with its neighbour, then steps that
    double), else by looks placed where √(top − ln L), about linear in r (exactly, for a normal shape), reaches
    √(top − floor), with a plain halving whenever a look fails to halve the bracket."""
    if limit == mode:
        return mode
    sign, reach = (1 if limit > mode else -1), abs(limit - mode)
    target = math.sqrt(top - floor)

    def log_like_at(distance: int) -> float:
        return _log_like(population, audited, missed, mode + sign * distance)

    # distances from the mode: ``near`` within the window (ln L ≥ floor), ``out`` beyond it (reach + 1: past the
    # limit, not evaluated); depths √(top − ln L) where evaluated (nan: not)
    near, out, near_depth, out_depth = 0, reach + 1, 0.0, math.nan
    if hint is not None and 0 < abs(hint - mode) < reach and (hint - mode) * sign > 0:
        step, at = 1, abs(hint - mode)
        value = log_like_at(at)
        inside = value >= floor
        while True:
            if inside:
                near, near_depth = at, math.sqrt(max(0.0, top - value))
                at = near + step
                if at > reach:
                    break
            else:
                out, out_depth = at, math.sqrt(max(0.0, top - value))
                at = out - step
                if at <= near:
                    break
            value = log_like_at(at)
            if (value >= floor) != inside:
                if value >= floor:
                    near, near_depth = at, math.sqrt(max(0.0, top - value))
                else:
                    out, out_depth = at, math.sqrt(max(0.0, top - value))
                break
            step *= 2
    halving = True
    while out - near > 1:
        width = out - near
        look = (near + out) // 2
        if halving and out <= reach and out_depth > near_depth:
            look = near + int(width * (target - near_depth) / (out_depth - near_depth))
        look = min(max(look, near + 1), out - 1)
        value = log_like_at(look)
        if value >= floor:
            near, near_depth = look, math.sqrt(max(0.0, top - value))
        else:
            out, out_depth = look, math.sqrt(max(0.0, top - value))
        halving = 2 * (out - near) <= width
    return mode + sign * near


@lru_cache(maxsize=65536)
def upper_missed(population: int, audited: int, missed: int, confidence: float = 0.95) -> int:
    """U*(m, x): time-uniform upper confidence bound on b, the relevant documents outside the reviewed set.

    U*(m, x) = max_{x' ≤ x} max{r : L_m(r; x') > α Σ_s π₀(s) L_m(s; x')}, with L_m(r; x) = C(r, x) C(N − r,
    m − x) / C(N, m) and π₀(r) = 1/((r + 1)(r + 2)) (π₀(N) = 1/(N + 1)). Valid simultaneously for every m (see
    the module docstring); N = ``population``, m = ``audited``, x = ``missed``, α = 1 − ``confidence``.
    """
    alpha = _check(population, audited, missed, confidence)
    return max(_raw_upper(population, audited, x, alpha) for x in range(missed + 1))


@lru_cache(maxsize=65536)
def _raw_upper(population: int, audited: int, missed: int, alpha: float) -> int:
    return _cs_upper(population, audited, missed, alpha)


def upper_missed_at_most(population: int, audited: int, missed: int, confidence: float, bound: int) -> bool:
    """Whether U*(m, x) ≤ ``bound`` (K), exactly as comparing `upper_missed` with it, at a fraction of the cost.

    U*(m, x) ≤ K holds iff every U(m, x'), x' ≤ x, is ≤ K, and most x' are settled by the likelihood alone. With
    r̂ the maximiser of L_m(·; x') (⌊x'(N + 1)/m⌋, L_m rising before it and falling after) and the evidence
    Σ_s π₀(s) L_m(s) between π₀(r̂')L_m(r̂') (r̂' the window's own centre, which `_cs_upper` always sums) and L_m(r̂)
    (π₀ sums to one): U(m, x') > K when r = max(K + 1, r̂) has L_m(r) > α L_m(r̂); U(m, x') ≤ K when K ≥ r̂' and
    L_m(K + 1) < α π₀(r̂') L_m(r̂') (no r > K can be in the set). Both are taken with a margin far above the
    rounding of either computation (lgamma of numbers up to N); an x' that neither settles is computed."""
    alpha = _check(population, audited, missed, confidence)
    if audited == 0:
        return population <= bound
    known = _known_bounds(population, audited, missed, alpha)
    if bound >= known[1]:
        return True
    if bound <= known[0]:
        return False
    answer = _upper_at_most(population, audited, missed, alpha, bound)
    if answer:
        known[1] = bound
    else:
        known[0] = bound
    return answer


@lru_cache(maxsize=65536)
def _known_bounds(population: int, audited: int, missed: int, alpha: float) -> list[int]:
    """What `upper_missed_at_most` has learnt of U*(m, x): [the largest K it is above, the least K it is within]
    (it falls in K, so each answer settles every K beyond it on its side)."""
    return [-1, population]


def _upper_at_most(population: int, audited: int, missed: int, alpha: float, bound: int) -> bool:
    margin = 1e-6 + 1e-11 * (population + 1) * math.log(population + 2)
    log_alpha = math.log(alpha)
    x = np.arange(missed + 1, dtype=np.int64)
    high = population - (audited - x)
    open_above = bound < high  # else no r above K has any likelihood: U(m, x) ≤ high ≤ K
    centre = np.minimum(np.maximum((x * (population + 1)) // audited, x), high)

    def log_like(r: IntArray) -> FloatArray:
        valid = (r >= x) & (r <= high)
        safe = np.where(valid, r, x)
        values = np.add(_log_comb(safe, x), _log_comb(population - safe, audited - x))
        return np.where(valid, values, -np.inf)

    # the centre is L's maximiser (the last r with L(r) ≥ L(r − 1)): L rises up to it and falls after, so beyond
    # K the likeliest r is K + 1 when the centre is at most K; a centre above K is itself in the set
    peak = log_like(centre)
    past_bound = log_like(np.full(missed + 1, bound + 1, dtype=np.int64))
    # (the maximiser is always in the set, as L_max ≥ Σ π₀ L > α Σ π₀ L)
    above = (centre > bound) | (open_above & (past_bound > log_alpha + peak + margin))
    if bool(above.any()):
        return False
    log_prior = -np.log(centre + 1.0) - np.log(centre + 2.0)
    floor = log_alpha + log_prior + peak - margin
    below = (bound >= centre) & (past_bound < floor)
    unsettled = np.flatnonzero(open_above & ~below)
    if len(unsettled) == 0:
        return True
    # the evidence summed on a grid may already put every r above K out of the set
    at_or_past = unsettled[bound >= centre[unsettled]]
    grid_settled = np.zeros(missed + 1, dtype=np.bool_)
    grid_settled[at_or_past] = _evidence_floors(population, audited, at_or_past, centre[at_or_past]) - margin > (
        past_bound[at_or_past] - log_alpha)
    for u in unsettled[~grid_settled[unsettled]][::-1].tolist():
        if _raw_upper(population, audited, u, alpha) > bound:
            return False
    return True


class _Staircase:
    """U(m, x) of one population, α and x at the stream lengths computed so far, and the search for the least m with
    U(m, x) ≤ K (`least_audited_within`).

    U(m, x) falls in m: each draw without a further find moves L_m to smaller r, as
    L_(m+1)/L_m = (N − r − m + x)/(m + 1 − x) falls in r. This was checked for every m, x < 40 and four α at
    N ≤ 2,500 once, and tests/estimation/test_plan_bound_search.py checks it at N ≤ 600; it is watched here too: a
    computed value out of order marks the staircase, and the search is then left to the caller's bisection. So the
    lengths computed for one K bracket every other K. A look is placed where the continuous margin
    g_K(m) = ln L_m(K + 1) − ln α − ln Σ π₀ L_m (its sign is the answer's, up to rounding) reaches 0: by Newton's
    step from the bracket's end nearer to it (one more draw changes g by about
    ln((N − K − 1 − m + x)/(N − r̄ − m + x)), r̄ the posterior mean), with a plain halving whenever looks fail to
    halve the bracket three times in a row. The answers are `_cs_bound`'s; g only chooses where to look."""

    def __init__(self, population: int, missed: int, alpha: float) -> None:
        self.population = population
        self.missed = missed
        self.alpha = alpha
        self.log_alpha = math.log(alpha)
        self.lengths: list[int] = []  # sorted
        self.negated: list[int] = []  # −U at those lengths: nondecreasing while U falls in m
        self.evidence: list[tuple[float, float]] = []  # (ln evidence, posterior mean of r) at those lengths
        self.windows: list[tuple[int, int]] = []  # the r summed at those lengths (`_cs_bound`'s window)
        self.in_order = True
        self.lock = threading.Lock()

    def at(self, audited: int) -> tuple[int, float, float]:
        """(U(m, x), its ln evidence, the posterior mean of r) at m = ``audited``, computed once."""
        with self.lock:
            i = bisect.bisect_left(self.lengths, audited)
            if i < len(self.lengths) and self.lengths[i] == audited:
                return -self.negated[i], *self.evidence[i]
            # the window of the nearest length computed: its ends move little from one m to the next
            nearest = min((j for j in (i - 1, i) if 0 <= j < len(self.lengths)),
                          key=lambda j: abs(self.lengths[j] - audited), default=None)
            hint = None if nearest is None else self.windows[nearest]
        upper, log_evidence, mean, window = _cs_bound(self.population, audited, self.missed, self.alpha, hint)
        with self.lock:
            i = bisect.bisect_left(self.lengths, audited)
            if i == len(self.lengths) or self.lengths[i] != audited:
                if (i > 0 and self.negated[i - 1] > -upper) or (i < len(self.negated) and self.negated[i] < -upper):
                    self.in_order = False
                self.lengths.insert(i, audited)
                self.negated.insert(i, -upper)
                self.evidence.insert(i, (log_evidence, mean))
                self.windows.insert(i, window)
        return upper, log_evidence, mean

    def margin(self, audited: int, bound: int) -> tuple[float, float]:
        """(g_K(m), g_K(m + 1) − g_K(m) estimated) at m = ``audited``: g is −inf when K + 1 lies beyond the
        likelihood's support, +inf at m = 0 (no evidence: every r is in the set)."""
        _, log_evidence, mean = self.at(audited)
        r, n, x = bound + 1, self.population, self.missed
        if audited == 0:
            return math.inf, math.nan
        if r > n - (audited - x):
            return -math.inf, math.nan
        margin = _log_like(n, audited, x, r) - self.log_alpha - log_evidence
        rest_at_r, rest_at_mean = n - r - audited + x, n - mean - audited + x
        step = math.log(rest_at_r / rest_at_mean) if rest_at_r > 0 and rest_at_mean > 0 else math.nan
        return margin, step

    def least_within(self, bound: int) -> tuple[bool, int | None]:
        """(settled, the least m in [x, N] with U(m, x) ≤ ``bound``; None when not even m = N). Not settled when
        a value came out of order (U did not fall in m)."""
        n, x = self.population, self.missed
        with self.lock:
            i = bisect.bisect_left(self.negated, -bound)  # the first length computed with U ≤ K
            high = self.lengths[i] if i < len(self.lengths) else None
            low = self.lengths[i - 1] if i > 0 else x - 1  # x − 1: below the range, never ok
        if high is None:
            if self.at(n)[0] > bound:
                return self.in_order, None
            high = n
        low_margin, low_step = self.margin(low, bound) if low >= x else (math.nan, math.nan)
        high_margin, high_step = self.margin(high, bound)
        stalls = 0  # looks in a row that did not halve the bracket
        while high - low > 1:
            width = high - low
            look = (low + high) // 2
            if stalls < 3:
                guess = _zero_between(low, low_margin, low_step, high, high_margin, high_step)
                if guess is not None:
                    look = math.ceil(guess)
            look = min(max(look, low + 1), high - 1)
            upper = self.at(look)[0]
            if upper <= bound:
                high = look
                high_margin, high_step = self.margin(look, bound)
            else:
                low = look
                low_margin, low_step = self.margin(look, bound)
            # a guess lands beside the answer, not halfway, so a few looks may go by without halving the
            # bracket; after three such, one plain bisection (the search stays within a few times a bisection's)
            stalls = 0 if 2 * (high - low) <= width else stalls + 1
        return self.in_order, high


def _zero_between(low: int, low_margin: float, low_step: float, high: int, high_margin: float,
                  high_step: float) -> float | None:
    """Where g reaches 0 between the bracket's ends (g > 0 at ``low``, ≤ 0 at ``high``): Newton's step from the end
    with the smaller |g|, else the secant; None when neither end's values say."""
    candidates: list[tuple[float, float]] = []
    if math.isfinite(low_margin) and math.isfinite(low_step) and low_step < 0:
        candidates.append((abs(low_margin), low - low_margin / low_step))
    if math.isfinite(high_margin) and math.isfinite(high_step) and high_step < 0:
        candidates.append((abs(high_margin), high - high_margin / high_step))
    if candidates:
        return min(candidates)[1]
    if math.isfinite(low_margin) and math.isfinite(high_margin) and low_margin > high_margin:
        return low + (high - low) * low_margin / (low_margin - high_margin)
    return None


@lru_cache(maxsize=4096)
def _staircase(population: int, missed: int, alpha: float) -> _Staircase:
    return _Staircase(population, missed, alpha)


# `least_audited_within`'s answers by (N, x, confidence, K): an answer for x − 1 settles x's at once. Cleared when
# full (a plan asks some thousands; the bound is the memory's)
_LEAST_KEPT: dict[tuple[int, int, float, int], tuple[bool, int | None]] = {}
_LEAST_KEPT_MAX = 1 << 17


def least_audited_within(population: int, missed: int, confidence: float, bound: int) -> tuple[bool, int | None]:
    """`_least_audited_within`, kept."""
    key = (population, missed, confidence, bound)
    answer = _LEAST_KEPT.get(key)
    if answer is None:
        answer = _least_audited_within(population, missed, confidence, bound)
        if len(_LEAST_KEPT) >= _LEAST_KEPT_MAX:
            _LEAST_KEPT.clear()
        _LEAST_KEPT[key] = answer
    return answer


def least_audited_floor(population: int, missed: int, confidence: float, bound: int) -> int:
    """A lower bound on `least_audited_within`'s m, from what is known without computing a bound: the answer when
    kept, else one past the longest stream length computed for x with U(m, x) > K (U* ≥ U, and U falls in m),
    else x. A plan compares it with the best move found so far to leave a candidate's audit uncomputed."""
    kept = _LEAST_KEPT.get((population, missed, confidence, bound))
    if kept is not None and kept[0] and kept[1] is not None:
        return kept[1]
    staircase = _staircase(population, missed, _check(population, missed, missed, confidence))
    with staircase.lock:
        if not staircase.in_order:
            return missed
        i = bisect.bisect_left(staircase.negated, -bound)
        return staircase.lengths[i - 1] + 1 if i > 0 else missed


def _least_audited_within(population: int, missed: int, confidence: float, bound: int) -> tuple[bool, int | None]:
    """The least stream length m ≥ x with U*(m, x) ≤ ``bound`` (K), as bisecting m over `upper_missed_at_most`
    finds it, at a few bound computations per K: (settled, m), m None when not even the whole population
    (m = N) is enough. Not settled (the caller then bisects) only if U(m, x') was seen to rise in m.

    U*(m, x) ≤ K iff U(m, x) ≤ K and U*(m, x − 1) ≤ K; both fall in m, so the least m is the larger of the least
    m_x with U(m_x, x) ≤ K (:class:`_Staircase`) and the least m for x − 1: read from the answers kept when x − 1
    was asked with this K, else m_x when U*(m_x, x − 1) ≤ K (the envelope rarely rises below x), else asked."""
    alpha = _check(population, missed, missed, confidence)
    settled, least = _staircase(population, missed, alpha).least_within(bound)
    if not settled or least is None or missed == 0:
        return settled, least
    below = _LEAST_KEPT.get((population, missed - 1, confidence, bound))
    if below is not None:
        settled_below, least_below = below
        if not settled_below:
            return below
        return True, None if least_below is None else max(least, least_below)
    if upper_missed_at_most(population, least, missed - 1, confidence, bound):
        return True, least
    return least_audited_within(population, missed - 1, confidence, bound)


def _evidence_floors(population: int, audited: int, missed: IntArray, centre: IntArray) -> FloatArray:
    """Lower bounds on ln Σ_r π₀(r) L_m(r; x) (the sum `_cs_upper` takes) for each x of ``missed`` (its mode
    ``centre``), all at once: π₀·L is log-concave in r (ln π₀ and ln L are), so on each step [r_j, r_(j+1)) of a
    grid around the mode it is at least the smaller of its two ends; the grid spans ±6 standard deviations of the
    likelihood (steps clipped at the support's ends count nothing), kept where ln L is within 40 of its largest
    value on the grid (inside `_cs_upper`'s window, which keeps 80). −inf where fewer than two points are kept."""
    if len(missed) == 0:
        return np.zeros(0, dtype=np.float64)
    x = missed[:, None]
    low, high = x, population - (audited - x)
    spread = np.sqrt((centre + 1.0) * (population - audited + 1.0) / audited)
    step = np.maximum(1, np.ceil(spread / 4)).astype(np.int64)[:, None]
    grid = np.clip(centre[:, None] + step * np.arange(-24, 25, dtype=np.int64), low, high)
    log_like = np.add(_log_comb(grid, x), _log_comb(population - grid, audited - x))
    kept = log_like >= log_like.max(axis=1, keepdims=True) - 40.0
    log_f = log_like - np.log(grid + 1.0) - np.log(grid + 2.0)
    with np.errstate(divide="ignore"):
        widths = np.log(np.diff(grid, axis=1).astype(np.float64))  # −inf for a step clipped to nothing
    lows = np.minimum(log_f[:, :-1], log_f[:, 1:]) + widths
    lows = np.where(kept[:, :-1] & kept[:, 1:], lows, -np.inf)
    peak = lows.max(axis=1)
    finite = np.isfinite(peak)
    floors = np.full(len(missed), -np.inf)
    floors[finite] = peak[finite] + np.log(np.exp(lows[finite] - peak[finite, None]).sum(axis=1))
    return floors


def fixed_look_upper(population: int, audited: int, missed: int, confidence: float = 0.95) -> int:
    """One-look exact bound: K_U = max{K : P(Y ≤ x | K) > α}, Y ~ Hypergeometric(N, K, m) — the elusion-style
    bound for one look at one fixed m. Not valid when repeated after every batch."""
    _check(population, audited, missed, confidence)
    if audited == 0:
        return population
    return hypergeometric_interval(missed, audited, population, confidence, sided="upper")[1]


def certifies(tau: Fraction, found: int, known_relevant: int, upper: int) -> bool:
    """The stop condition for one reviewed set: F/(F + U) ≥ τ or U ≤ (1 − τ)·R_known (exact rational arithmetic).
    With no relevant document known and U = 0 the review has found everything there is (recall 1)."""
    if upper == 0:
        return True
    first = found > 0 and Fraction(found, found + upper) >= tau
    return first or upper <= (1 - tau) * known_relevant


def recall_lower(found: int, known_relevant: int, upper: int) -> float:
    """The recall lower bound that `certifies` compares with τ: max(F/(F + U), 1 − U/R_known), in [0, 1]."""
    if upper == 0:
        return 1.0
    first = found / (found + upper)
    second = 1.0 - upper / known_relevant if known_relevant > 0 else 0.0
    return max(0.0, first, second)


@dataclass(frozen=True)
class MonitorInput:
    """What the monitor needs at one look.

    ``population`` N; ``reviewed`` |S_t|; ``found`` F_t; ``audited`` m (the judged audit prefix);
    ``known_relevant`` R_known, every distinct relevant document judged so far (inside S_t or not, any role);
    ``queue_reviewed`` the reviewed prefix of the current queue, ``queue_size`` its length;
    ``audit_outside_ranks`` / ``audit_outside_relevant``: the audit documents outside S_t, each with its rank on
    the current queue (0 when it is not in that queue) and label; ``known_outside_relevant_ranks``: the current
    queue ranks of every known relevant document outside S_t (audit or not; 0 when not in the queue)."""

    population: int
    reviewed: int
    found: int
    audited: int
    known_relevant: int
    queue_reviewed: int
    queue_size: int
    audit_outside_ranks: IntArray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    audit_outside_relevant: npt.NDArray[np.bool_] = field(default_factory=lambda: np.zeros(0, dtype=np.bool_))
    known_outside_relevant_ranks: IntArray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    # the current-queue ranks (0: not in it) of every population document outside S_t, when known: b(k) can never
    # exceed the documents still outside S(k), which lets a review that reaches the end certify
    outside_ranks: IntArray | None = None

    def outside_after(self, k: int) -> int:
        """Documents of the population outside S(k) = S_t ∪ {current-queue ranks ≤ k}: an upper limit on b(k)."""
        outside = self.population - self.reviewed
        if self.outside_ranks is None or k <= self.queue_reviewed:
            return outside
        ranks = self.outside_ranks
        return outside - int(np.count_nonzero((ranks > 0) & (ranks <= k)))

    @property
    def missed(self) -> int:
        return int(np.count_nonzero(self.audit_outside_relevant))


@dataclass(frozen=True)
class FixedLook:
    upper_missed: int
    recall_lower: float
    certified: bool
    label: str = "valid for one look only"


class MonitorNote(enum.Enum):
    """What a reader of the monitor should know beside its figures, as a code (`reviewdepth.report.wording.
    monitor_note` says it, with the counts the monitor's report carries)."""

    TARGET_ONE = "target one"  # a target of 1 certifies only with no relevant document left outside
    NO_AUDIT_JUDGED = "no audit judged"
    OUTSIDE_POPULATION = "outside population"  # relevant documents judged outside the audit's population
    COLLECTION_LARGER = "collection larger"  # the topic's collection is larger than the audited population
    PAST_AUDIT = "past audit"  # as of a past judgment: the stream's position is the present one
    JOINED_QUEUES = "joined queues"  # the reviewed set joins several queues' prefixes
    OUT_OF_ORDER = "out of order"  # documents of the current queue reviewed out of queue order


class MonitorStep(enum.Enum):
    """What the team should do next by the monitor (`reviewdepth.report.wording.monitor_step` says it)."""

    SAMPLES_ONE_LOOK = "samples one look"  # no stream; the random samples bound recall for one look
    START_STREAM = "start stream"
    JUDGE_PENDING = "judge pending"  # audit documents served and not yet judged: the evidence stops there
    STOP = "stop"
    QUEUE_DONE = "queue done"  # the queue is reviewed to its end and the audit still does not certify
    REVIEW_ON = "review on"


def monitor_step(certified: bool, has_audit: bool, pending: int, queue_done: bool, sampled: bool) -> MonitorStep:
    """The next step: with no audit stream, start one (or, when random samples bound recall for one look, plan
    from them); judge the audit documents waiting; stop once certified; else review on."""
    if not has_audit and not certified:
        return MonitorStep.SAMPLES_ONE_LOOK if sampled else MonitorStep.START_STREAM
    if has_audit and pending:
        return MonitorStep.JUDGE_PENDING
    if certified:
        return MonitorStep.STOP
    return MonitorStep.QUEUE_DONE if queue_done else MonitorStep.REVIEW_ON


@dataclass(frozen=True)
class MonitorResult:
    target: Fraction
    confidence: float
    status: str  # "stop certified" | "continue"
    certified: bool
    audited: int
    missed: int
    upper_missed: int
    recall_lower: float
    recall_point: float | None
    depth_bound: int | None  # rank on the current queue by which the stop is certified (None: not within it)
    to_go_bound: int | None
    depth_estimate: int | None
    to_go_estimate: int | None
    audit_needed: int | None  # more audit draws at the present yield (None: cannot certify at this depth)
    audit_needed_to_judge: int | None  # of those, the expected number outside the reviewed set
    fixed_look: FixedLook
    assumptions: tuple[str, ...] = ASSUMPTIONS
    notes: tuple[MonitorNote, ...] = ()


def _ratio_estimate(inp: MonitorInput, tau: Fraction) -> tuple[float | None, int | None]:
    """Point figures (not bounds): R̂ = F + x·(N − |S|)/m_out (the audit documents outside S are a random sample
    of the outside), and the first rank k where the estimated relevant outside S(k) is ≤ (1 − τ)·R̂."""
    outside = inp.population - inp.reviewed
    m_out = len(inp.audit_outside_ranks)
    if m_out == 0:
        return None, None
    scale = outside / m_out
    missed_hat = inp.missed * scale
    r_hat = inp.found + missed_hat
    recall = 1.0 if r_hat == 0 else inp.found / r_hat
    pos_ranks = np.sort(inp.audit_outside_ranks[inp.audit_outside_relevant])
    in_queue = pos_ranks[pos_ranks > 0]
    allowed = float((1 - tau) * Fraction(r_hat))
    never = len(pos_ranks) - len(in_queue)  # positives outside the queue are never reached by it
    for i in range(len(in_queue) + 1):
        left = (len(in_queue) - i + never) * scale
        if left <= allowed + 1e-12:
            depth = inp.queue_reviewed if i == 0 else int(in_queue[i - 1])
            return recall, max(depth, inp.queue_reviewed)
    return recall, None


def _depth_bound(inp: MonitorInput, tau: Fraction, confidence: float) -> int | None:
    """First rank k ≥ the queue's reviewed prefix where `certifies` holds for S(k): x(k) = audit positives outside
    S_t ranked after k or not in the queue, F(k) = F + known relevant outside S_t ranked ≤ k."""
    pos = np.sort(inp.audit_outside_ranks[inp.audit_outside_relevant])
    known = np.sort(inp.known_outside_relevant_ranks[inp.known_outside_relevant_ranks > 0])
    events = [np.array([inp.queue_reviewed]), pos[pos > inp.queue_reviewed], known[known > inp.queue_reviewed]]
    if inp.outside_ranks is not None:
        # the cap N − |S(k)| falls by one at each outside document of the queue; it can decide only once it is at
        # most the largest bound that could certify, so only the last few such ranks are candidates
        allowed = max((inp.found + len(known)) * (1 - tau) / tau, (1 - tau) * inp.known_relevant)
        limit = math.floor(allowed)
        in_queue = np.sort(inp.outside_ranks[inp.outside_ranks > inp.queue_reviewed])
        outside = inp.population - inp.reviewed
        first = max(0, outside - limit - 1)
        events.append(in_queue[first:])
    candidates = np.unique(np.concatenate(events))
    for k in candidates:
        k = int(k)
        if k > inp.queue_size:
            break
        missed_k = int(np.count_nonzero((pos == 0) | (pos > k)))
        found_k = inp.found + int(np.count_nonzero(known <= k))
        upper = min(upper_missed(inp.population, inp.audited, missed_k, confidence), inp.outside_after(k))
        if certifies(tau, found_k, inp.known_relevant, upper):
            return k
    return None


def _audit_needed(inp: MonitorInput, tau: Fraction, confidence: float) -> tuple[int | None, int | None]:
    """Smallest number Δ of further audit draws after which the present reviewed set would be certified if they
    bring relevant documents outside it at the present rate x/m (0 when already certified; None when even an audit
    of the whole population would not)."""
    m, x, n = inp.audited, inp.missed, inp.population

    def ok(delta: int) -> bool:
        extra = 0 if m == 0 else round(delta * x / m)
        total = m + delta
        missed = min(x + extra, total)
        upper = min(upper_missed(n, total, missed, confidence), inp.outside_after(inp.queue_reviewed))
        return certifies(tau, inp.found, inp.known_relevant, upper)

    if ok(0):
        return 0, 0
    if not ok(n - m):
        return None, None
    lo, hi = 0, n - m  # ok(hi) true, ok(lo) false; the condition is monotone up to rounding of the yield
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid
    outside_share = (n - inp.reviewed) / n
    return hi, math.ceil(hi * outside_share)


def monitor(inp: MonitorInput, target: float | Fraction | str, confidence: float = 0.95) -> MonitorResult:
    """Status of the review at one look: certified stop or continue, with the anytime-valid recall lower bound,
    documents to go (point estimate and bound), audit documents still needed, and the fixed-look figures for
    comparison. Formulas: module docstring."""
    tau = Fraction(str(target)) if not isinstance(target, Fraction) else target
    if not 0 < tau <= 1:
        raise ValueError(f"target must be in (0, 1], got {target!r}")
    if inp.found > inp.known_relevant:
        raise ValueError("known_relevant must count the relevant documents found")
    m, x = inp.audited, inp.missed
    # b ≤ the documents outside S (capping keeps the argument: the cap of S_t is ≥ the cap of any S* ⊇ S_t), and
    # U can never be below what is already known to lie outside (x of them are in the audit)
    outside = inp.outside_after(inp.queue_reviewed)
    upper = max(min(upper_missed(inp.population, m, x, confidence), outside), inp.known_relevant - inp.found)
    certified = certifies(tau, inp.found, inp.known_relevant, upper)
    notes: list[MonitorNote] = []
    if tau == 1 and not certified:
        notes.append(MonitorNote.TARGET_ONE)
    fixed = max(min(fixed_look_upper(inp.population, m, x, confidence), outside), inp.known_relevant - inp.found)
    fixed_look = FixedLook(fixed, recall_lower(inp.found, inp.known_relevant, fixed),
                           certifies(tau, inp.found, inp.known_relevant, fixed))
    recall_point, depth_estimate = _ratio_estimate(inp, tau)
    depth_bound = inp.queue_reviewed if certified else _depth_bound(inp, tau, confidence)
    needed, to_judge = _audit_needed(inp, tau, confidence)
    if m == 0:
        notes.append(MonitorNote.NO_AUDIT_JUDGED)
    return MonitorResult(
        target=tau, confidence=confidence, status="stop certified" if certified else "continue",
        certified=certified, audited=m, missed=x, upper_missed=upper,
        recall_lower=recall_lower(inp.found, inp.known_relevant, upper), recall_point=recall_point,
        depth_bound=depth_bound,
        to_go_bound=None if depth_bound is None else depth_bound - inp.queue_reviewed,
        depth_estimate=depth_estimate,
        to_go_estimate=None if depth_estimate is None else depth_estimate - inp.queue_reviewed,
        audit_needed=needed, audit_needed_to_judge=to_judge, fixed_look=fixed_look, notes=tuple(notes),
    )
