"""The cheapest defensible stop (issue 24): the floor of any random-sample certification, a projection of what
reviewing on would find, and the planned policy that reviews, audits and stops — certified by the anytime-valid
monitor (`reviewdepth.estimation.monitor`), so that re-planning at every look never weakens the guarantee.

Notation: N documents in the population, a reviewed prefix of d documents holding F relevant, N_u = N − d
unreviewed, target τ, confidence 1 − α (reference: shared certification-cost.md).

**The floor.** Recall F/(F + b) ≥ τ holds exactly when the b relevant documents left number at most
k = ⌊F(1 − τ)/τ⌋ (:func:`~reviewdepth.estimation.planning.missed_allowed`). A simple random sample of n of the
N_u unreviewed certifies b ≤ k only if it is unlikely to miss all of k + 1 placed relevant documents:
P(X = 0 | N_u, k + 1, n) = C(N_u − k − 1, n)/C(N_u, n) ≤ α. The least such n, :func:`certification_floor`, binds
every design that assumes nothing about where the missed documents sit (a design with a smaller inclusion
probability somewhere fails when they sit there): no certification costs fewer documents judged outside the
reviewed set, and a sample that finds a relevant document needs more.

**The certifier.** The planned policy certifies only through the monitor: an audit stream (a uniformly random
permutation of the population, read in order, documents inside the reviewed prefix passed free) and the
time-uniform bound U*(m, x) of `monitor.upper_missed`. That bound holds at every m at once and for every reviewed
prefix of one fixed ranking, so the policy may decide after every look — from everything judged so far, audit
outcomes included — whether to review on or audit more, and how much, without losing P(false stop) ≤ α (the
argument is in the monitor's docstring). With no relevant document found by the audit outside the prefix, the
monitor judges about 8 % more documents than the one-look floor on CLEF 2017 (mean 7.7 %, 1.5–11.5 % over the 30
waterloo.A topics at τ 0.95: bench/monitor_price_bench.py; the prior's price for being valid at every look).

**The projection** (:class:`Projection`) only moves the plan's expected cost and chance, never the validity of a
stop: the yield of the next documents is fitted to the prefix's recent gain curve (rate ρ₀ over the last W
reviewed, decaying by the ratio to the W before, never rising), capped by a random sample of the rest when there
is one (its Jeffreys estimate of the relevant documents left). Before review (nothing reviewed) the prefix says
nothing about the ranking, so the projection needs a random sample of the collection (a richness sample): where
its relevant documents sit along the ranking shapes the projection (:func:`project_from_sample`); without one no
path is priced and the plan asks for one (:func:`richness_sample_size`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from fractions import Fraction
from functools import lru_cache
from statistics import NormalDist

import numpy as np
import numpy.typing as npt

from reviewdepth.estimation.count_bound import FloorFigure, certification_floor
from reviewdepth.estimation.monitor import (
    certifies,
    least_audited_floor,
    least_audited_within,
    upper_missed,
    upper_missed_at_most,
)
from reviewdepth.estimation.percent import percent
from reviewdepth.estimation.planning import missed_allowed
from reviewdepth.estimation.two_phase import StratumSample, TwoPhaseAssumption, count_bounds

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


def floor_path(found: int, reviewed: int, population: int, yields: FloatArray, tau: Fraction,
               confidence: float, *, review_cost: float = 1.0, sample_cost: float = 1.0,
               step: int = 1) -> tuple[int, float]:
    """The least projected total over further review depths: min over D of review_cost·D + sample_cost·n_min(F +
    ⌊Ŷ(D)⌋, N_u − D), Ŷ(D) = ``yields[D]`` (cumulative projected relevant in the next D). Returns (D, cost)."""
    unreviewed = population - reviewed
    best_d, best = 0, math.inf
    for more in range(0, unreviewed + 1, max(1, step)):
        gained = math.floor(float(yields[min(more, len(yields) - 1)]) + 1e-9)
        cost = review_cost * more + sample_cost * certification_floor(found + gained, unreviewed - more, tau,
                                                                      confidence)
        if cost < best:
            best_d, best = more, cost
    return best_d, best


def floor_figure(prefix_labels: npt.ArrayLike, population: int, tau: Fraction, confidence: float, *,
                 rest_sample_size: int = 0, rest_sample_relevant: int = 0) -> FloorFigure:
    """:func:`certification_floor` now and :func:`floor_path` under :func:`project_yield` (200 depths at most)."""
    labels = np.asarray(prefix_labels).reshape(-1)
    found, rest = int(np.count_nonzero(labels == 1)), population - len(labels)
    projection = project_yield(labels, rest, rest_sample_size=rest_sample_size,
                               rest_sample_relevant=rest_sample_relevant)
    floor = certification_floor(found, rest, tau, confidence)
    if len(labels) == 0 and rest_sample_size == 0:
        # nothing reviewed and no random sample: the projection rests on nothing, so no depth is projected cheaper
        more, total = 0, float(floor)
    else:
        more, total = floor_path(found, len(labels), population, projection.cumulative, tau, confidence,
                                 step=max(1, rest // 200))
    above_half = floor > rest / 2
    alternatives: tuple[tuple[float, float, int], ...] = ()
    if above_half:
        cells = [(Fraction(t), c) for t in TABLE_TARGETS for c in TABLE_CONFIDENCES
                 if (Fraction(t) < tau and c == confidence) or (Fraction(t) == tau and c < confidence)]
        alternatives = tuple((float(t), c, certification_floor(found, rest, t, c)) for t, c in cells)
    return FloorFigure(float(tau), confidence, floor, rest, missed_allowed(found, rest, tau) if rest else 0, more,
                       total, above_half, projection.source, alternatives)


# --- the projection -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Projection:
    """Expected relevant documents in the next positions of the ranking: ``rate[j]`` for the j-th unreviewed
    document (j = 0 … N_u − 1), ρ₀·q^(j/W). ``source`` says what it rests on; it is a projection, never evidence."""

    rate: FloatArray
    recent_rate: float
    decay_per_window: float
    window: int
    rest_estimate: float
    source: str
    # a projection from a random sample of the rest (`project_from_sample`): per band along the rest, (first offset,
    # end offset, relevant, sampled); the replays draw each band's rate from its own posterior. Empty otherwise.
    bands: tuple[tuple[int, int, int, int], ...] = ()

    @property
    def cumulative(self) -> FloatArray:
        """Ŷ(D) for D = 0 … N_u (Ŷ(0) = 0)."""
        return np.concatenate([[0.0], np.cumsum(self.rate)])


def project_yield(prefix_labels: npt.ArrayLike, unreviewed: int, *, rest_sample_size: int = 0,
                  rest_sample_relevant: int = 0, window: int | None = None) -> Projection:
    """Fit ρ₀ = (a + ½)/(W + 1) to the a relevant among the last W reviewed (Jeffreys, so a window without one does
    not project zero) and the decay q = min(1, ρ₀/ρ₋₁) per W from the W before; with a random sample of the rest
    (n documents, y relevant) the projected total is capped at its Jeffreys estimate N_u·(y + ½)/(n + 1)."""
    labels = np.asarray(prefix_labels).reshape(-1)
    reviewed = len(labels)
    w = window if window is not None else min(reviewed, max(100, -(-reviewed // 10)))
    if reviewed == 0 or w == 0:
        recent = 0.5
        decay = 1.0
        w = max(1, w)
        source = "nothing reviewed yet: half of the rest assumed relevant"
    else:
        a = int(np.count_nonzero(labels[reviewed - w:] == 1))
        recent = (a + 0.5) / (w + 1)
        before = labels[max(0, reviewed - 2 * w):reviewed - w]
        if len(before):
            previous = (int(np.count_nonzero(before == 1)) + 0.5) / (len(before) + 1)
            decay = min(1.0, recent / previous)
        else:
            decay = 1.0
        source = f"{a} relevant in the last {w:,} reviewed, decaying ×{decay:.2f} per {w:,}"
    if decay < 1.0:
        # recent · decay^(j/W), computed in one array (the same values as the expression: the same operations on
        # each element); three temporaries of the queue's size cost a 10,000,000-entry report 0.2-0.3 s
        rate = np.arange(unreviewed, dtype=np.float64)
        rate /= w
        np.power(decay, rate, out=rate)
        rate *= recent
    else:
        rate = np.full(unreviewed, recent)
    total = float(rate.sum())
    if rest_sample_size > 0:
        cap = unreviewed * (rest_sample_relevant + 0.5) / (rest_sample_size + 1)
        if total > cap:
            rate *= cap / total
            total = cap
            source += (f"; scaled down to a rest sample's {rest_sample_relevant} relevant in {rest_sample_size:,} "
                       f"(about {cap:.1f} left)")
        else:
            source += (f"; within what a rest sample's {rest_sample_relevant} relevant in {rest_sample_size:,} "
                       f"allow (about {cap:.1f} left)")
    return Projection(rate, recent, decay, w, total, source)


def project_from_sample(offsets: npt.ArrayLike, relevant: npt.ArrayLike, unreviewed: int) -> Projection:
    """The yield of the unreviewed documents from a random sample of them, before any review: ``offsets`` are the
    sampled documents' positions among the N_u unreviewed (0-based, in rank order) and ``relevant`` their labels.
    The rest is cut into b bands at the midpoints between sampled positions, each holding about n/b sampled
    documents (b = ⌊y/3⌋ for y relevant in the sample, 1 to 8, and at least 30 sampled per band), each band's rate
    its Jeffreys mean (a + ½)/(m + 1); the bands are then scaled so that the total is the whole sample's Jeffreys
    estimate N_u·(y + ½)/(n + 1). So a ranking that front-loads relevant documents shows as a higher rate near the
    top only as far as the sample shows it, and a sample with few relevant documents gives an even rate."""
    where = np.asarray(offsets, dtype=np.int64).reshape(-1)
    hits = (np.asarray(relevant).reshape(-1) == 1)
    order = np.argsort(where, kind="stable")
    where, hits = where[order], hits[order]
    n, y = len(where), int(np.count_nonzero(hits))
    if unreviewed <= 0 or n == 0:
        return project_yield(np.zeros(0, dtype=np.int8), unreviewed)
    total = unreviewed * (y + 0.5) / (n + 1)
    bands = max(1, min(8, y // 3, n // 30))
    # band b holds sampled documents [cuts[b], cuts[b + 1]); its stretch of the rest ends midway to the next band
    cuts = np.linspace(0, n, bands + 1).round().astype(np.int64)
    ends = [int((where[c - 1] + where[c]) // 2) + 1 for c in cuts[1:-1]] + [unreviewed]
    rate = np.empty(unreviewed, dtype=np.float64)
    start = 0
    spans: list[tuple[int, int, int, int]] = []
    for b in range(bands):
        m = int(cuts[b + 1] - cuts[b])
        a = int(np.count_nonzero(hits[cuts[b]:cuts[b + 1]]))
        rate[start:ends[b]] = (a + 0.5) / (m + 1)
        spans.append((start, ends[b], a, m))
        start = ends[b]
    rate *= total / float(rate.sum())
    rate = np.minimum(rate, 1.0)
    shape = f" in {bands} bands along the ranking" if bands > 1 else ", spread evenly (too few to place them)"
    return Projection(rate, float(rate[0]), 1.0, max(1, unreviewed // bands), float(rate.sum()),
                      f"a random sample of the rest: {y} relevant in {n:,}{shape} (about {total:.1f} left)",
                      tuple(spans))


# a richness sample is sized for its estimate of the collection's richness: ± RICHNESS_MARGIN at the plan's
# confidence (the usual e-discovery sizing, normal approximation with the finite-population correction)
RICHNESS_MARGIN = 0.05


def richness_sample_size(population: int, confidence: float, margin: float = RICHNESS_MARGIN) -> int:
    """The documents of a simple random sample of the collection whose share of relevant documents is within
    ± ``margin`` of the collection's at ``confidence`` whatever the richness (worst case ½): n₀ = z²/(4·margin²),
    n = n₀/(1 + (n₀ − 1)/N), rounded up; at most N. It sizes the first look, certifies nothing."""
    if population <= 0:
        return 0
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    first = z * z / (4 * margin * margin)
    return min(population, math.ceil(first / (1 + (first - 1) / population)))


def rate_multipliers(evidence: tuple[float, float] | None, total: float, points: int = 200) -> FloatArray:
    """The uncertainty of a projected rate as ``points`` equally likely multipliers of mean 1 (quantiles at
    (i + ½)/points): a rest sample's Beta(a, b) posterior on the rest's rate (``evidence``), else a Gamma with the
    projection's ``total`` relevant left as mean and shape total + ½ (the fit's own count, Jeffreys-like)."""
    from reviewdepth.estimation.distributions import _special

    q = (np.arange(points, dtype=np.float64) + 0.5) / points
    special = _special()
    if evidence is not None:
        a, b = evidence
        return np.asarray(special.betaincinv(a, b, q), dtype=np.float64) / (a / (a + b))
    shape = max(total, 0.0) + 0.5
    return np.asarray(special.gammaincinv(shape, q), dtype=np.float64) / shape


def outcome_chance(size: int, max_positives: int, rate: float, multipliers: FloatArray) -> float:
    """P(Y ≤ ``max_positives``) for the relevant documents Y in a fresh sample of ``size`` of the rest, with the
    rest's rate an estimate, not a known count: the mean over the rate's uncertainty (``rate`` × each of
    `rate_multipliers`) of Binomial(size, rate·m)'s distribution function. Below 1 while the rate is above 0: a
    fixed count D_e = round(rate·N_u), as the one-look sizing uses, made every chance with k ≥ D_e exactly 1."""
    from reviewdepth.estimation.distributions import _special

    if max_positives < 0:
        return 0.0
    if rate <= 0.0 or max_positives >= size:
        return 1.0
    rates = np.minimum(1.0, rate * multipliers)
    return float(np.mean(_special().bdtr(max_positives, size, rates)))

# --- the certifier the policy stops by ----------------------------------------------------------------------------


class Certifier:
    """The monitor's stop condition for one population, target and confidence, with the audit size it needs cached.

    ``certified(F, x, m, d)``: U = max(min(U*(m, x), N − d), x) and `monitor.certifies` (τ, F, F + x, U), exactly as
    `monitor.monitor` decides with R_known = F + x. ``elements_needed(F, x)``: the least stream length m at which that
    holds if the audit finds no further relevant document outside the prefix (None: not even the whole stream).

    `monitor.certifies` (τ, F, F + x, U) holds exactly when U ≤ K(F, x) = max(0, ⌊F(1 − τ)/τ⌋, ⌊(1 − τ)(F + x)⌋)
    (:meth:`allowed`; both of its conditions fall in U), so a stop is the comparison of one bound with one integer,
    and the stream length needed depends on F only through K: the many F of a replay share one answer per K."""

    def __init__(self, population: int, tau: Fraction, confidence: float) -> None:
        self.population = population
        self.tau = tau
        self.confidence = confidence
        # K(F, x) is exact only in rational arithmetic; a float target keeps `certifies` as the judge
        self._exact = isinstance(tau, (Fraction, int))
        self._allowed: dict[tuple[int, int], int] = {}
        self._needed: dict[tuple[int, int], int | None] = {}

    def upper(self, missed: int, audited: int, reviewed: int) -> int:
        return max(min(upper_missed(self.population, audited, missed, self.confidence),
                       self.population - reviewed), missed)

    def allowed(self, found: int, missed: int) -> int:
        """K(F, x): the largest bound U with `monitor.certifies` (τ, F, F + x, U) (class docstring)."""
        key = (found, missed)
        answer = self._allowed.get(key)
        if answer is None:
            # τ = p/q: ⌊(1 − τ)(F + x)⌋ = ⌊(q − p)(F + x)/q⌋ and ⌊F(1 − τ)/τ⌋ = ⌊F(q − p)/p⌋, in integers
            tau = Fraction(self.tau)
            p, q = tau.numerator, tau.denominator
            answer = max(0, (q - p) * (found + missed) // q)
            if found > 0:
                answer = max(answer, found * (q - p) // p)
            self._allowed[key] = answer
        return answer

    def certified(self, found: int, missed: int, audited: int, reviewed: int) -> bool:
        if not self._exact:
            return certifies(self.tau, found, found + missed, self.upper(missed, audited, reviewed))
        allowed = self.allowed(found, missed)
        if missed > allowed:
            return False
        if self.population - reviewed <= allowed:
            return True
        # U*(m, x) ≤ K falls in m: it holds exactly from the least m that the audit needs on
        settled, least = least_audited_within(self.population, missed, self.confidence, allowed)
        if settled:
            return least is not None and audited >= least
        return upper_missed_at_most(self.population, audited, missed, self.confidence, allowed)

    def elements_needed(self, found: int, missed: int) -> int | None:
        if not self._exact:
            return self._needed_by_certifies(found, missed)
        return self.needed_within(self.allowed(found, missed), missed)

    @property
    def exact(self) -> bool:
        """Whether τ is rational, so that K(F, x) decides (:meth:`allowed_many`, :meth:`needed_within`)."""
        return self._exact

    def allowed_many(self, found: IntArray, missed: IntArray) -> IntArray:
        """:meth:`allowed` elementwise, in integer arithmetic (rational τ only)."""
        tau = Fraction(self.tau)
        p, q = tau.numerator, tau.denominator
        by_share = np.maximum(0, (q - p) * (found + missed) // q)
        by_found = np.where(found > 0, found * (q - p) // p, 0)
        allowed: IntArray = np.maximum(by_share, by_found)
        return allowed

    def needed_within(self, allowed: int, missed: int) -> int | None:
        """:meth:`elements_needed` by K(F, x) = ``allowed`` (rational τ only)."""
        key = (allowed, missed)
        if key not in self._needed:
            self._needed[key] = _stream_needed(self.population, self.confidence, allowed, missed)
        return self._needed[key]

    def needed_within_at_least(self, allowed: int, missed: int) -> int | None:
        """A lower bound on :meth:`needed_within` known without computing a bound (None: it is None, known)."""
        if missed > allowed:
            return None
        known = self._needed.get((allowed, missed), missed)
        return missed if known is None else max(known, least_audited_floor(self.population, missed,
                                                                         self.confidence, allowed))

    def needed_at_least(self, found: int, missed: int) -> int | None:
        """A lower bound on :meth:`elements_needed` known without computing a bound (None: it is None, known)."""
        if not self._exact:
            return missed
        return self.needed_within_at_least(self.allowed(found, missed), missed)

    def _needed_by_certifies(self, found: int, missed: int) -> int | None:
        n = self.population

        def ok(m: int) -> bool:
            return certifies(self.tau, found, found + missed, max(upper_missed(n, m, missed, self.confidence),
                                                                  missed))

        return _bisect_first(ok, missed, n)


def _bisect_first(ok: Callable[[int], bool], low: int, high: int) -> int | None:
    """The first m in [low, high] with ``ok(m)`` by bisection (``ok`` taken as monotone), None when not ``ok(high)``."""
    if not ok(high):
        return None
    lo, hi = low, high
    while lo < hi:
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid + 1
    return lo


@lru_cache(maxsize=1 << 16)
def _stream_needed(population: int, confidence: float, allowed: int, missed: int) -> int | None:
    """The stream length `Certifier.elements_needed` returns when K(F, x) = ``allowed``: the bisection over m of
    max(U*(m, x), x) ≤ K. It reads neither F nor τ, so every certifier of one population and confidence shares it."""
    if missed > allowed:
        return None
    settled, least = least_audited_within(population, missed, confidence, allowed)
    if settled:
        return least
    return _bisect_first(lambda m: upper_missed_at_most(population, m, missed, confidence, allowed), missed,
                         population)


# --- the planned policy -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PolicyState:
    """What the team knows at a look: the reviewed prefix depth d and its F, the stream elements consumed m, and
    the queue ranks (0-based) of the audit's relevant documents outside the prefix, plus the audited ranks beyond
    it (judged already: free when the review reaches them)."""

    reviewed: int
    found: int
    audited: int
    outside_positive_ranks: tuple[int, ...] = ()
    outside_audited_ranks: tuple[int, ...] = ()


@dataclass(frozen=True)
class Action:
    """``kind``: "stop" (certified), "review" (to depth ``to``), "audit" (stream elements to ``to``, stopping at
    the first relevant document outside the prefix). ``projected_cost`` is the policy's projected further cost."""

    kind: str
    to: int
    projected_cost: float


_EPS = 2.0 ** -52


def _projection_fit(ones_at: IntArray, reviewed: int) -> tuple[float, float, int]:
    """(ρ₀, q, W) of :func:`project_yield` for the prefix of length ``reviewed`` whose relevant count before each
    rank is ``ones_at`` (ones_at[i] = relevant among the first i), with the same arithmetic."""
    w = min(reviewed, max(100, -(-reviewed // 10)))
    if reviewed == 0 or w == 0:
        return 0.5, 1.0, max(1, w)
    a = int(ones_at[reviewed] - ones_at[reviewed - w])
    recent = (a + 0.5) / (w + 1)
    first = max(0, reviewed - 2 * w)
    before = reviewed - w - first
    if before:
        previous = (int(ones_at[reviewed - w] - ones_at[first]) + 0.5) / (before + 1)
        return recent, min(1.0, recent / previous), w
    return recent, 1.0, w


def _projected_gains(recent: float, decay: float, window: int, unreviewed: int, rest_size: int, rest_relevant: int,
                     offsets: IntArray, share: FloatArray) -> IntArray | None:
    """⌊Ŷ(D)·s + 10⁻⁹⌋ at the further depths D = ``offsets`` (s = ``share``) for the projection :func:`project_yield`
    makes from (ρ₀, q, W) over ``unreviewed`` with a rest sample of ``rest_size`` holding ``rest_relevant``, without
    the projection's arrays: Ŷ(D) in closed form (ρ₀·(q^(D/W) − 1)/(q^(1/W) − 1); ρ₀·D when q = 1), beside a bound
    on its distance from the arrays' sums (their rounding: D terms added in turn, each power rounded). None when a
    value or the cap's comparison lies within that bound of a step, where only the arrays' own rounding decides."""
    log_step = math.log(decay) / window if decay < 1.0 else 0.0

    def closed(count: FloatArray | float) -> FloatArray:
        count_arr = np.asarray(count, dtype=np.float64)
        if log_step == 0.0:
            return np.asarray(recent * count_arr, dtype=np.float64)
        return np.asarray(recent * np.expm1(count_arr * log_step) / math.expm1(log_step), dtype=np.float64)

    ks = offsets.astype(np.float64)
    cum = closed(ks)
    error = cum * _EPS * (2.0 * ks + 64.0 + 4.0 * np.abs(ks * log_step))
    if rest_size > 0:
        total = float(closed(float(unreviewed)))
        total_error = total * _EPS * (4.0 * (math.log2(unreviewed + 1) + 32.0) + 4.0 * abs(unreviewed * log_step))
        cap = unreviewed * (rest_relevant + 0.5) / (rest_size + 1)
        if abs(total - cap) <= total_error + 4.0 * _EPS * cap:
            return None
        if total > cap:
            scale = cap / total
            cum = cum * scale
            error = error * scale + cum * (total_error / total + 8.0 * _EPS)
    projected = cum * share
    shifted = projected + 1e-9
    steps = np.floor(shifted)
    slack = error * share + 8.0 * _EPS * (projected + 1.0) + 1e-15
    if np.any(shifted - steps <= slack) or np.any(steps + 1.0 - shifted <= slack):
        return None
    return steps.astype(np.int64)


class SortedRanks:
    """A growing set of ranks that counts its members below given ranks: sorted runs whose sizes at least double
    down the list (an insert merges the smaller runs into it), so an insert costs its amortised share of O(m log m)
    over a replay and a count O(log m) searches, where one sorted array rebuilt per insert cost O(m) each."""

    def __init__(self, ranks: IntArray | None = None) -> None:
        self._runs: list[IntArray] = []
        self._size = 0
        if ranks is not None and len(ranks):
            self.insert(ranks)

    def __len__(self) -> int:
        return self._size

    def insert(self, ranks: IntArray) -> None:
        run = np.sort(np.asarray(ranks, dtype=np.int64))
        if not len(run):
            return
        self._size += len(run)
        while self._runs and len(self._runs[-1]) <= 2 * len(run):
            # two sorted runs end to end: the stable sort (a merge sort that finds runs) merges them in one pass
            run = np.sort(np.concatenate([self._runs.pop(), run]), kind="stable")
        self._runs.append(run)

    def count_below(self, ranks: IntArray) -> IntArray:
        """How many members are < each of ``ranks``."""
        counts = np.zeros(len(ranks), dtype=np.int64)
        for run in self._runs:
            counts += np.searchsorted(run, ranks)
        return counts

    def count_below_one(self, rank: int) -> int:
        return sum(int(np.searchsorted(run, rank)) for run in self._runs)


# a look's memo key (`PlannedPolicy._look`): depth, found, audited, the audit's positive ranks beyond the depth, the
# audited count beyond it, the prefix's fit (ρ₀, q), and the audited documents each candidate depth passes (bytes)
MemoKey = tuple[int, int, int, tuple[int, ...], int, float, float, bytes]


@dataclass
class PlannedPolicy:
    """Review on or audit, whichever the projection says is cheaper, look by look; stop when the monitor certifies.

    At a look with prefix d, F found, m audited, x audit positives outside: the candidate moves are (a) audit until
    the monitor would certify with x unchanged — projected cost c_s·(m*(F, x) − m)·(N − d)/N, the expected share of
    stream elements outside the prefix — or (b) review to d' (the next ``horizon`` batches, and the rank of each
    known audit positive) — cost c_r·(documents of (d, d'] not yet judged) plus the audit then needed with F' = F +
    the known positives passed + the projected yield of the others, x' = x − those passed. The cheapest wins; a
    review move advances one batch (or to the known positive) and the next look re-plans with a refitted
    projection (:func:`project_yield`, the audit's documents outside the prefix serving as its rest sample).

    A look costs what its candidates need, not the queue: the fit reads two window counts of the prefix, the
    projected yields come in closed form (the projection's arrays only when a yield sits at a step of ⌊·⌋ within
    their rounding, :func:`_projected_gains`), the audit needed is `Certifier.elements_needed` by K."""

    population: int
    certifier: Certifier
    batch: int
    review_cost: float = 1.0
    sample_cost: float = 1.0
    horizon: int = 40
    # decisions by everything a look's decision reads (`_look`); one policy serves many paths, so the key must
    # tell apart looks that share a depth and an audit count but not the labels or the audit behind them
    _memo: dict[MemoKey, Action] = field(default_factory=dict)

    def _audit_cost(self, found: int, missed: int, audited: int, reviewed: int) -> float:
        return self._audit_cost_of(self.certifier.elements_needed(found, missed), audited, reviewed)

    def _audit_cost_of(self, need: int | None, audited: int, reviewed: int) -> float:
        """The audit's projected cost when the monitor needs ``need`` stream elements (None: not even all): a
        lower ``need`` never gives a higher cost, term by term in floating point too, so a lower bound on the need
        gives a lower bound on the cost."""
        if need is None:
            return self.review_cost * (self.population - reviewed)
        share = (self.population - reviewed) / self.population
        return self.sample_cost * max(0, need - audited) * share

    def decide(self, state: PolicyState, prefix_labels: npt.NDArray[np.int8]) -> Action:
        """The next move from ``state``; ``prefix_labels`` are the labels of the reviewed prefix (rank order)."""
        d = state.reviewed
        positives = tuple(sorted(state.outside_positive_ranks))
        audited = SortedRanks(np.array(state.outside_audited_ranks, dtype=np.int64))
        ones_at = np.concatenate([[0], np.cumsum(np.asarray(prefix_labels[:d]) == 1, dtype=np.int64)])
        return self._look(d, state.found, state.audited, positives, audited, 0, ones_at, prefix_labels)

    def _targets(self, d: int, positives: IntArray) -> IntArray:
        """The candidate depths of a review move from ``d``: the next ``horizon`` batches and just past each known
        audit positive, sorted, each beyond ``d``."""
        steps = np.minimum(self.population, d + self.batch * np.arange(1, self.horizon + 1, dtype=np.int64))
        targets = np.unique(np.concatenate([steps, positives + 1]))
        found: IntArray = targets[targets > d]
        return found

    def _look(self, d: int, f: int, m: int, positives: tuple[int, ...], audited_sorted: SortedRanks, below_d: int,
              ones_at: IntArray, labels: npt.NDArray[np.int8]) -> Action:
        """:meth:`decide` at depth ``d`` with ``f`` found and ``m`` stream elements judged: ``positives`` the sorted
        ranks of the audit's relevant documents beyond ``d``, ``audited_sorted`` sorted audited ranks of which the
        first ``below_d`` lie inside the prefix, ``ones_at`` the relevant count before each rank, ``labels`` the
        queue's labels (read only when the closed-form yields cannot decide, see :func:`_projected_gains`).

        The memo's key is what the decision reads, no more, so that another path (a replicate, a synthetic queue
        of the plan) reuses a decision exactly when it would make the same one: d, F, m; the audit's positives
        beyond d (ranks: the candidate depths and what each passes); the audited count beyond d (the projection's
        rest sample); the prefix's fit (ρ₀, q; W follows from d), which is all that the projection reads of the
        prefix's labels, the arrays included; and the audited documents beyond d that each candidate depth passes
        (their review is free). Depth and audit count alone let a path take another's decision when the labels
        or the audited ranks differed (a replay's figures then depended on which replicates a process had seen)."""
        positive_ranks = np.array(positives, dtype=np.int64)
        targets = self._targets(d, positive_ranks)
        passed_audited = audited_sorted.count_below(targets) - below_d
        recent, decay, window = _projection_fit(ones_at, d)
        outside = len(audited_sorted) - below_d
        key = (d, f, m, positives, outside, recent, decay, passed_audited.tobytes())
        hit = self._memo.get(key)
        if hit is not None:
            return hit
        action = self._decide(d, f, m, positive_ranks, outside, targets, passed_audited, (recent, decay, window),
                              labels)
        self._memo[key] = action
        return action

    def _decide(self, d: int, f: int, m: int, positives: IntArray, outside: int, targets: IntArray,
                passed_audited: IntArray, fit: tuple[float, float, int], labels: npt.NDArray[np.int8]) -> Action:
        """The move at a look from what `_look` keys it by: the candidate depths ``targets``, the audited documents
        beyond d each passes, the prefix's ``fit`` (ρ₀, q, W)."""
        x = len(positives)
        if d >= self.population or self.certifier.certified(f, x, m, d):
            return Action("stop", d, 0.0)
        best = Action("audit", self.certifier.elements_needed(f, x) or self.population,
                      self._audit_cost(f, x, m, d))
        # one pass over the candidate depths: what each passes (known positives, audited documents) and gains
        passed_pos = np.searchsorted(positives, targets)
        share = 1 - passed_audited / (targets - d)
        recent, decay, window = fit
        projected_steps = _projected_gains(recent, decay, window, self.population - d, outside, x, targets - d,
                                           share)
        if projected_steps is None:
            # a yield at a step of ⌊·⌋ within the closed form's distance from the arrays: the arrays decide (they
            # read the prefix's labels only through the fit's two window counts)
            cum = project_yield(labels[:d], self.population - d, rest_sample_size=outside,
                                rest_sample_relevant=x).cumulative
            projected_steps = np.floor(cum[targets - d] * share + 1e-9).astype(np.int64)
        gained = passed_pos + projected_steps
        review = self.review_cost * (targets - d - passed_audited)
        certifier = self.certifier
        # K(F', x') of every candidate at once (rational τ); the audit each needs is then read by K
        allowed: list[int] = certifier.allowed_many(f + gained, x - passed_pos).tolist() if certifier.exact else []
        passed_list, gained_list = passed_pos.tolist(), gained.tolist()
        for i, (to, cost_of_review) in enumerate(zip(targets.tolist(), review.tolist(), strict=True)):
            if cost_of_review >= best.projected_cost - 1e-9:
                # the audit's part is never negative and the review's grows with the depth: neither this depth
                # nor any further one can be cheaper than the best, so their audits need not be computed
                break
            missed = x - passed_list[i]
            if not certifier.exact:
                cost = cost_of_review + self._audit_cost(f + gained_list[i], missed, m, to)
            else:
                k = allowed[i]
                if cost_of_review + self._audit_cost_of(certifier.needed_within_at_least(k, missed), m,
                                                        to) >= best.projected_cost - 1e-9:
                    continue  # not cheaper than the best even at the least audit it can need: left uncomputed
                cost = cost_of_review + self._audit_cost_of(certifier.needed_within(k, missed), m, to)
            if cost < best.projected_cost - 1e-9:
                best = Action("review", to, cost)
        if best.kind == "review":
            return Action("review", min(best.to, d + self.batch), best.projected_cost)
        return best


@dataclass(frozen=True)
class PlannedRun:
    """One replayed run of the planned policy: the depth and F at the stop, stream elements consumed, documents
    judged (prefix ∪ audited), and whether the monitor certified (False only when the queue ran out);
    ``paid``: stream elements judged as audit documents (outside the prefix when drawn, the start's included),
    ``paid_inside``: those of them the review later reached (judged once, as audit documents)."""

    depth: int
    found: int
    audited: int
    cost: int
    certified: bool
    paid: int = 0
    paid_inside: int = 0

    def cost_at(self, review_cost: float, sample_cost: float) -> float:
        """The run's cost at per-role costs: c_r per document the review judged (its depth less the audit
        documents it reached, judged before as audit documents) plus c_s per audit document judged. With unit
        costs it is ``cost``."""
        return review_cost * (self.depth - self.paid_inside) + sample_cost * self.paid


def _audit_until_found(permutation: npt.NDArray[np.int64], labels: npt.NDArray[np.int8], start: int, stop: int,
                       reviewed: int) -> tuple[npt.NDArray[np.int64], bool]:
    """The stream's elements from ``start`` up to ``stop`` (exclusive) or to the first relevant document beyond the
    prefix ``reviewed``, inclusive, and whether it was found: read in blocks that double, so that a find after a
    few hundred elements does not cost the whole allowance (an audit step may allow most of the queue)."""
    block = 256
    at = start
    while at < stop:
        end = min(stop, at + block)
        chunk = permutation[at:end]
        hits = np.flatnonzero((chunk >= reviewed) & (labels[chunk] == 1))
        if len(hits):
            return permutation[start:at + int(hits[0]) + 1], True
        at, block = end, 2 * block
    return permutation[start:stop], False


def run_planned(labels: npt.NDArray[np.int8], permutation: npt.NDArray[np.int64], policy: PlannedPolicy,
                *, start: PolicyState | None = None) -> PlannedRun:
    """Follow ``policy`` on a queue with known ``labels`` (rank order) and one audit ``permutation`` of its ranks
    (the stream), from ``start`` (default: nothing reviewed). Every stop is the monitor's certification, or the
    end of the queue (then recall is 1, known).

    The run keeps what a look reads as it goes (the audited ranks sorted, the audit's positives beyond the prefix,
    relevant counts by rank), so a look costs its candidates, not the queue."""
    n = len(labels)
    found_at = np.concatenate([[0], np.cumsum(labels, dtype=np.int64)])
    ones_at = np.concatenate([[0], np.cumsum(labels == 1, dtype=np.int64)])
    state = start or PolicyState(0, 0, 0)
    d, m = state.reviewed, state.audited
    paid = np.zeros(n, dtype=np.bool_)
    head = permutation[:m]
    paid[head[head >= d]] = True
    audited_sorted = SortedRanks(head)
    beyond = head[head >= d]
    positives = sorted(beyond[labels[beyond] == 1].tolist())
    certified = True
    while True:
        below_d = audited_sorted.count_below_one(d)
        action = policy._look(d, int(found_at[d]), m, tuple(positives), audited_sorted, below_d, ones_at, labels)
        if action.kind == "stop":
            certified = d >= n or policy.certifier.certified(int(found_at[d]), len(positives), m, d)
            break
        if action.kind == "review":
            d = action.to
            positives = [p for p in positives if p >= d]
            continue
        # audit up to action.to elements, stopping at the first relevant document outside the prefix
        stop_at = min(max(action.to, m + 1), n)
        taken, hit = _audit_until_found(permutation, labels, m, stop_at, d)
        paid[taken[taken >= d]] = True
        if hit:
            positives = sorted([*positives, int(taken[-1])])
        audited_sorted.insert(taken)
        m += len(taken)
        if m >= n:
            d = n  # the whole stream is judged: every document is known
            positives = []
    stream = permutation[:m]
    cost = d + int(np.count_nonzero(stream >= d))
    return PlannedRun(d, int(found_at[d]), m, cost, certified, int(paid.sum()), int(paid[:d].sum()))


def cheapest_audit_depth(found: int, reviewed: int, certifier: Certifier, projection: Projection, *,
                         review_cost: float = 1.0, sample_cost: float = 1.0,
                         step: int = 1) -> tuple[int, float, int | None]:
    """Under the projection, the further review D that minimises c_r·D + c_s·(stream elements the monitor needs
    with no audit positive outside, F + ⌊Ŷ(D)⌋ found)·(N − d − D)/N: (D, that cost, the stream elements needed)."""
    population = certifier.population
    cum = projection.cumulative
    best: tuple[int, float, int | None] = (0, math.inf, None)
    for more in range(0, population - reviewed + 1, max(1, step)):
        if review_cost * more >= best[1]:
            break  # the audit's part is never negative: no further depth can be cheaper
        gained = math.floor(float(cum[min(more, len(cum) - 1)]) + 1e-9)
        left = population - reviewed - more
        least = certifier.needed_at_least(found + gained, 0)
        if least is not None and review_cost * more + sample_cost * (least * left / population) >= best[1]:
            continue  # not cheaper even at the least audit it can need: left uncomputed
        need = certifier.elements_needed(found + gained, 0)
        audit = left if need is None else need * left / population
        # (the bound above is this sum with ``least`` for ``need``, term by term, so its rounding never passes it)
        cost = review_cost * more + sample_cost * audit
        if cost < best[1]:
            best = (more, cost, need)
    return best


def choose_audit_rate(found: int, reviewed: int, certifier: Certifier, projection: Projection, *,
                      step: int = 1) -> int:
    """K for an audit stream started now: one audit document per K ranked, so that the stream holds the elements
    the monitor needs (with no positive outside) when the review reaches the projected cheapest depth
    (:func:`cheapest_audit_depth`): K = max(1, ⌊D/m*⌋); 1 when the cheapest path is to audit now."""
    more, _, need = cheapest_audit_depth(found, reviewed, certifier, projection, step=step)
    if not need or more <= 0:
        return 1
    return max(1, more // need)


# --- the plan at one state ----------------------------------------------------------------------------------------

TABLE_TARGETS: tuple[str, ...] = ("0.8", "0.9", "0.95", "0.99")
TABLE_CONFIDENCES: tuple[float, ...] = (0.9, 0.95, 0.99)


@dataclass(frozen=True)
class ReviewEvidence:
    """What the plan reads (the service loads it; no I/O here): the reviewed prefix's labels in rank order (its
    length is d), the population N (= the queue), the audit stream consumed so far (``audited`` elements; the ranks
    of its documents beyond the prefix and which of those are relevant) and a random sample of the rest, if any
    (its documents still in the rest, and the relevant among them)."""

    prefix_labels: npt.NDArray[np.int8]
    population: int
    audited: int = 0
    outside_audited_ranks: tuple[int, ...] = ()
    outside_positive_ranks: tuple[int, ...] = ()
    rest_sample_size: int = 0
    rest_sample_relevant: int = 0
    # where the rest sample's documents sit among the unreviewed (0-based offsets in rank order) and which of them
    # are relevant: before review they shape the projection (`project_from_sample`); empty when not known
    rest_sample_offsets: tuple[int, ...] = ()
    rest_sample_positive_offsets: tuple[int, ...] = ()

    @property
    def reviewed(self) -> int:
        return len(self.prefix_labels)

    @property
    def found(self) -> int:
        return int(np.count_nonzero(self.prefix_labels == 1))


@dataclass(frozen=True)
class PathPlan:
    """One way to a certified stop. ``kind``: sample_now | review_then_sample (one elusion test, valid for that one
    look) | audit_stream (the monitor at rate ``every``) | planned (the plan followed at every look, the monitor
    certifying) | produce_cutoff (produce to a rank cutoff unreviewed, one two-phase validation; offered only with a
    produce cost). ``review_more`` D, ``sample_size`` n and ``max_positives`` (one-look paths: the outcome that
    certifies), ``expected_cost`` in cost units with its 5–95 % ``cost_range``, ``chance`` that the certification
    step succeeds as planned, ``certified_by`` and ``assumes`` (what only the projection assumes)."""

    kind: str
    review_more: int
    sample_size: int | None
    max_positives: int | None
    every: int | None
    expected_cost: float
    cost_range: tuple[float, float]
    chance: float
    feasible: bool
    certified_by: str
    assumes: str
    # the production-cutoff path only (kind "produce_cutoff"; None elsewhere): the cutoff rank K (uncoded documents
    # ranked 1..K are produced without review), the N_a produced unreviewed and the N_b of the discard pile below K,
    # the n_a sampled from the produced part (``sample_size`` is then the discard pile's sample n_b, and
    # ``max_positives`` the most relevant in it that certify when the produced sample holds none), the projected
    # precision of the produced set, and the certifying outcomes: (y_a, most discard-sample relevant that certify
    # with y_a relevant in the produced sample) at each y_a where that number changes (-1: none certifies)
    produce_to: int | None = None
    produced_unreviewed: int | None = None
    discard_pile: int | None = None
    produced_sample: int | None = None
    produced_precision: float | None = None
    certifying: tuple[tuple[int, int], ...] = ()
    # what the two-phase certification rests on (codes of `two_phase.TwoPhaseAssumption`; sentences in wording)
    two_phase_assumptions: tuple[str, ...] = ()


@dataclass(frozen=True)
class TableCell:
    target: float
    confidence: float
    floor: int
    planned_cost: float


@dataclass(frozen=True)
class StopPlan:
    """The plan at one state: the floor n_min(F, N_u) and the least projected total over further review depths
    (``floor_review_more``, ``floor_total``), each path, the recommended one (least expected cost among the feasible
    paths whose chance is ≥ the power), the target × confidence table and the projection it rests on."""

    target: float
    confidence: float
    power: float
    review_cost: float
    sample_cost: float
    population: int
    reviewed: int
    found: int
    unreviewed: int
    missed_allowed: int
    floor: int
    floor_review_more: int
    floor_total: float
    floor_above_half: bool
    paths: tuple[PathPlan, ...]
    recommended: str | None
    table: tuple[TableCell, ...]
    projection_source: str
    projected_rest_relevant: float
    validity: str = ("the projection moves only the expected costs and chances, which hold if it holds (its total "
                     "drawn from the evidence's uncertainty, placed along the ranking, evenly or steeper); every "
                     "certification step keeps its stated confidence whatever the projection says")
    # the cost of a document produced without being reviewed (a two-phase production above a cutoff); None: not
    # given, and then no path produces an unreviewed document (the production-cutoff path is not offered)
    produce_cost: float | None = None
    # the path recommended at the team's previous plan (``previous``), and, when this plan recommends another way
    # to stop, what changed: (previous kind, its expected cost now or None when no longer feasible, the new one's)
    previous: str | None = None
    change: tuple[str, float | None, float] | None = None
    # before review (nothing reviewed): the richness sample the plan asks for when it has no random sample of the
    # collection to price a path from (its size; None when one is there or the review has begun)
    richness_size: int | None = None

    @property
    def before_review(self) -> bool:
        """Nothing reviewed yet: the paths are TAR 1.0 (a cutoff chosen now, one test of the rest) against TAR 2.0
        (review in ranked order until the monitor certifies)."""
        return self.reviewed == 0 and self.unreviewed > 0


def _synthetic(evidence: ReviewEvidence, projection: Projection, rng: np.random.Generator,
               uncertainty: tuple[float, float] | None = None) -> npt.NDArray[np.int8]:
    """A complete queue consistent with what is known: the prefix's labels, the audit's known labels beyond it,
    and Bernoulli draws for the other unreviewed documents. The projection is a model, so each queue draws its
    own: with a projection placed by a sample of the rest (``bands``), each band's rate from its Beta posterior;
    otherwise the rest's total from its uncertainty (a rest sample's Beta posterior ``uncertainty``, scaled to the
    projection's total; else a Gamma with the projection's total as mean and shape total + ½), placed a third
    of the time as the projection places it (decaying along the ranking), a third evenly over the rest and a third
    steeper than the fit (×e^(−3j/N_u): the ranking keeps finding as it has), so that the cost range spans all three
    (one shape alone gave 10–90 % ranges that missed the true mean in 8 of 14 cases; the fit and the even spread
    alone held it in 0.530 of 270 bench states at 20 replays, the three in 0.637, and in 0.667 at the service's 40;
    the stated range is therefore the replays' 5–95 %, which held it in 0.822: `COST_RANGE_QUANTILES`)."""
    size = len(projection.rate)
    total = float(projection.rate.sum())
    if projection.bands:
        # a sample of the rest placed its relevant documents: each band's rate from its own Jeffreys posterior
        rate = np.empty(size, dtype=np.float64)
        for start, end, hits, sampled in projection.bands:
            rate[start:end] = rng.beta(hits + 0.5, sampled - hits + 0.5)
    elif size and total > 0:
        if uncertainty is not None:
            a, b = uncertainty
            drawn = rng.beta(a, b) * size * total / (size * a / (a + b))
        else:
            drawn = rng.gamma(total + 0.5, total / (total + 0.5))
        pick = rng.random()
        if pick < 1 / 3:
            shape = projection.rate / total
        elif pick < 2 / 3:
            shape = np.full(size, 1.0 / size)
        else:
            # steeper than the fit: the ranking keeps finding as it has (most of what is left just ahead)
            steep = projection.rate * np.exp(-3.0 * np.arange(size, dtype=np.float64) / size)
            shape = steep / float(steep.sum())
        rate = np.minimum(1.0, drawn * shape)
    else:
        rate = projection.rate
    rest = (rng.random(size) < rate).astype(np.int8)
    labels = np.concatenate([evidence.prefix_labels.astype(np.int8), rest])
    audited = np.array(evidence.outside_audited_ranks, dtype=np.int64)
    labels[audited] = 0
    labels[np.array(evidence.outside_positive_ranks, dtype=np.int64)] = 1
    return labels


def _rest_sample_offsets(evidence: ReviewEvidence) -> tuple[IntArray, IntArray]:
    """The rest sample's documents as offsets among the unreviewed and which of them are relevant (1/0): the
    sample's when given, else the audit stream's documents beyond the prefix."""
    if evidence.rest_sample_offsets:
        offsets = np.array(evidence.rest_sample_offsets, dtype=np.int64)
        positive = np.isin(offsets, np.array(evidence.rest_sample_positive_offsets, dtype=np.int64))
    else:
        offsets = np.array(evidence.outside_audited_ranks, dtype=np.int64) - evidence.reviewed
        positive = np.isin(offsets + evidence.reviewed, np.array(evidence.outside_positive_ranks, dtype=np.int64))
    return offsets, positive.astype(np.int64)


def _start_state(evidence: ReviewEvidence) -> PolicyState:
    return PolicyState(evidence.reviewed, evidence.found, evidence.audited, evidence.outside_positive_ranks,
                       evidence.outside_audited_ranks)


def _stream_for(evidence: ReviewEvidence, rng: np.random.Generator) -> npt.NDArray[np.int64]:
    """A stream permutation whose first ``audited`` elements hold the known audit documents beyond the prefix
    (the others of those first elements fall inside the prefix) and whose rest is a uniform order of the others."""
    n, m = evidence.population, evidence.audited
    known = np.array(evidence.outside_audited_ranks, dtype=np.int64)
    inside_needed = max(0, m - len(known))
    prefix_ranks = rng.permutation(evidence.reviewed)[:inside_needed].astype(np.int64)
    head = rng.permutation(np.concatenate([known, prefix_ranks]))
    used = np.zeros(n, dtype=np.bool_)
    used[head] = True
    tail = rng.permutation(np.flatnonzero(~used)).astype(np.int64)
    return np.concatenate([head, tail])


def run_fixed_rate(labels: npt.NDArray[np.int8], permutation: npt.NDArray[np.int64], every: int, batch: int,
                   certifier: Certifier, start: PolicyState, review_cost: float = 1.0,
                   sample_cost: float = 1.0) -> float:
    """Documents judged by an audit stream at one audit document per ``every`` ranked (from ``start``), the monitor
    checked after every ``batch`` ranked: the review's cost to the monitor's certified stop (or the queue's end),
    c_r per document the review judged and c_s per audit document (as `PlannedRun.cost_at`; with unit costs,
    the depth plus the audit documents outside it)."""
    n = len(labels)
    found_at = np.concatenate([[0], np.cumsum(labels, dtype=np.int64)])
    d, m, served, begin = start.reviewed, start.audited, 0, start.reviewed
    paid = np.zeros(n, dtype=np.bool_)
    head = permutation[:m]
    paid[head[head >= d]] = True
    # the stream's relevant documents beyond the prefix, kept as the stream and the prefix grow (the prefix only
    # grows, so one that falls inside it never counts again)
    beyond = head[head >= d]
    outside_positives = beyond[labels[beyond] == 1]
    while True:
        due = (d - begin) // every
        while served < due and m < n:
            # the next stream elements up to the (due - served)-th one beyond the prefix, all at once
            wanted = due - served
            chunk = permutation[m:min(n, m + max(64, 2 * wanted))]
            counted = np.cumsum(chunk >= d)
            if counted[-1] >= wanted:
                chunk = chunk[:int(np.searchsorted(counted, wanted)) + 1]
            fresh = chunk[chunk >= d]
            paid[fresh] = True
            served += len(fresh)
            outside_positives = np.concatenate([outside_positives, fresh[labels[fresh] == 1]])
            m += len(chunk)
        outside_positives = outside_positives[outside_positives >= d]
        missed = len(outside_positives)
        if d >= n or certifier.certified(int(found_at[d]), missed, m, d):
            return review_cost * (d - int(paid[:d].sum())) + sample_cost * int(paid.sum())
        d = min(n, d + batch)


# the stated cost range: these quantiles of the replays' costs. The 10-90 % range held the realised mean cost in
# 0.667 of 270 calibration states; 5-95 % holds it in 0.822 (bench/plan_calibration_bench.py, goal 0.80): the
# projection's own uncertainty is wider than its replays show, so the range says what was measured, not 90 %
COST_RANGE_QUANTILES = (0.05, 0.95)


def _quantiles(costs: npt.NDArray[np.float64]) -> tuple[float, float, float]:
    low, high = COST_RANGE_QUANTILES
    return float(costs.mean()), float(np.quantile(costs, low)), float(np.quantile(costs, high))


# --- the production-cutoff (two-phase, TAR 1.0) path ---------------------------------------------------------------

# Sizes tried for the sample of the produced-unreviewed part (n_a): at least 50, so that the production's precision
# gets an interval worth showing; larger ones raise the lower bound on the relevant documents produced unreviewed.
PRODUCED_SAMPLE_SIZES: tuple[int, ...] = (50, 200, 800)
# Cutoffs tried: the reviewed depth plus these shares of what is left after the review (the discard pile is never
# empty: producing every document is a dump, not a cutoff).
PRODUCED_SHARES: tuple[float, ...] = (0.02, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)


@dataclass(frozen=True)
class ProductionPlan:
    """One production-cutoff plan (:func:`plan_production`): review ``review_more`` D more, produce the next
    ``produced`` N_a unreviewed (cutoff rank K = d + D + N_a), sample n_a of them and n_b of the ``discard`` N_b
    below K; ``chance`` that the two-phase recall bound certifies, ``certifying`` its outcomes (see `PathPlan`)."""

    review_more: int
    produced: int
    discard: int
    produced_sample: int
    discard_sample: int
    found: int
    assumed_produced_relevant: int
    assumed_discard_relevant: int
    chance: float
    certifying: tuple[tuple[int, int], ...] = ()


# what the production path's certification rests on: the two-phase recall's own assumptions with both strata sampled
# (`two_phase.two_phase_recall` lists them for its figure)
PRODUCTION_ASSUMPTIONS: tuple[str, ...] = tuple(str(a) for a in (
    TwoPhaseAssumption.CODING_CORRECT, TwoPhaseAssumption.CUTOFF_BEFORE_SAMPLES,
    TwoPhaseAssumption.CODING_BLIND_TO_SAMPLES, TwoPhaseAssumption.PRODUCED_SAMPLE_SRS,
    TwoPhaseAssumption.DISCARD_SAMPLE_SRS, TwoPhaseAssumption.JOINT_LEVEL))


def production_stratum_level(confidence: float) -> float:
    """γ = √(1 − α): the level each stratum's one-sided bound is taken at when neither stratum is known exactly, as
    `two_phase.two_phase_recall` takes it (Šidák; both hold at once with probability γ² = 1 − α)."""
    return math.sqrt(confidence)


def discard_allowed(found: int, produced: int, produced_sample: int, produced_relevant: int, discard: int,
                    tau: Fraction, confidence: float) -> int:
    """B(y_a): the most relevant documents the discard pile's one-sided upper bound U_b may reach with the two-phase
    recall's one-sided lower bound (F + L_a)/(F + L_a + U_b) still ≥ τ, where L_a is the one-sided lower bound (at
    γ, :func:`production_stratum_level`) on the relevant among the ``produced`` N_a from ``produced_relevant`` of
    ``produced_sample`` — the bound `two_phase.two_phase_recall` computes, compared as `report --produce-to`
    compares it (floats); capped at N_b."""
    lower, _ = count_bounds(StratumSample(produced_sample, produced_relevant), produced,
                            production_stratum_level(confidence), "hypergeometric", "lower")
    return missed_allowed(found + int(lower), discard, tau)


def _production_chance(found: int, produced: int, n_a: int, x_a: int, discard: int, x_b: int, tau: Fraction,
                       confidence: float, power: float) -> tuple[int, float] | None:
    """The least discard sample n_b (< N_b) whose chance of certifying is ≥ ``power`` given n_a of the N_a produced
    sampled, X_a and X_b the assumed relevant in each stratum: (n_b, chance), or None.

    With y_a relevant in the produced sample, the two-phase bound certifies iff U_b(y_b) ≤ B(y_a)
    (:func:`discard_allowed`), i.e. iff P(Y_b ≤ y_b | N_b, B + 1, n_b) ≤ 1 − γ (U_b is the largest K with that
    probability above 1 − γ, and it falls in K) — the elusion test's outcome at level γ, so
    `planning._elusion_outcomes` gives its k(n_b) and chance; chance(n_b) = Σ P(y_a)·P(Y_b ≤ k_B(y_a)(n_b)),
    Y_a ~ Hypergeometric(N_a, X_a, n_a), Y_b ~ Hypergeometric(N_b, X_b, n_b) (y_a of probability < 1e-12 left out)."""
    from scipy import stats

    from reviewdepth.estimation.planning import _chunks, _elusion_outcomes

    tail = 1.0 - production_stratum_level(confidence)
    y_a = np.arange(n_a + 1)
    p_a = stats.hypergeom.pmf(y_a, produced, x_a, n_a)
    weight: dict[int, float] = {}
    for y, p in zip(y_a.tolist(), p_a.tolist(), strict=True):
        if p >= 1e-12:
            allowed = discard_allowed(found, produced, n_a, y, discard, tau, confidence)
            weight[allowed] = weight.get(allowed, 0.0) + p

    def chance_of(sizes: IntArray) -> FloatArray:
        total = np.zeros(len(sizes), dtype=np.float64)
        # a cell outside a pmf's support may overflow in exp before it is masked to 0 (a probability inside the
        # support is at most 1): the warning says nothing about the result
        with np.errstate(over="ignore"):
            for allowed, p in weight.items():
                total += p if allowed >= discard else p * _elusion_outcomes(sizes, discard, allowed, x_b, tail)[1]
        return total

    top = discard - 1
    if top < 1 or float(chance_of(np.array([top], dtype=np.int64))[0]) < power:
        return None
    for a, b in _chunks(1, top):
        sizes = np.arange(a, b + 1, dtype=np.int64)
        chances = chance_of(sizes)
        hit = np.flatnonzero(chances >= power)
        if len(hit):
            return int(sizes[hit[0]]), float(chances[hit[0]])
    return None


def certifying_outcomes(plan: ProductionPlan, tau: Fraction, confidence: float) -> tuple[tuple[int, int], ...]:
    """The plan's certifying outcomes as steps: (y_a, the most relevant in the discard sample that certify with
    y_a relevant in the produced sample; -1 when none does), at y_a = 0 and wherever that number changes, up to
    the first y_a at which every discard outcome certifies or beyond which y_a has probability < 1e-9."""
    from scipy import stats

    from reviewdepth.estimation.planning import _elusion_outcomes

    tail = 1.0 - production_stratum_level(confidence)
    n_a, n_b = plan.produced_sample, plan.discard_sample
    last_likely = int(stats.hypergeom.isf(1e-9, plan.produced, plan.assumed_produced_relevant, n_a)) + 1
    steps: list[tuple[int, int]] = []
    for y in range(min(n_a, max(last_likely, 0)) + 1):
        allowed = discard_allowed(plan.found, plan.produced, n_a, y, plan.discard, tau, confidence)
        most = n_b if allowed >= plan.discard else int(_elusion_outcomes(np.array([n_b], dtype=np.int64),
                                                                          plan.discard, allowed, 0, tail)[0][0])
        if not steps or most != steps[-1][1]:
            steps.append((y, most))
        if most >= n_b:
            break
    return tuple(steps)


def plan_production(found: int, rest: int, projection: Projection, review_more: int, tau: Fraction,
                    confidence: float, *, power: float, review_cost: float, sample_cost: float,
                    produce_cost: float) -> ProductionPlan | None:
    """The cheapest production cutoff after reviewing ``review_more`` D more of the ``rest`` unreviewed: over the
    cutoffs (:data:`PRODUCED_SHARES`) and produced-sample sizes (:data:`PRODUCED_SAMPLE_SIZES`), the least discard
    sample with chance ≥ ``power`` (:func:`_production_chance`), the plan with the least expected cost
    c_r·D + c_s·(n_a + n_b) + chance·c_p·N_a + (1 − chance)·c_r·(N_u − D − n_a − n_b) (a failed test: nothing is
    produced and the rest is reviewed, as the one-look paths assume). X_a, X_b and F + ⌊Ŷ(D)⌋ come from the
    projection; they move the chance and the cost, never the certifying outcomes."""
    cum = projection.cumulative
    left = rest - review_more
    gained = math.floor(float(cum[review_more]) + 1e-9)
    f = found + gained
    best: tuple[float, ProductionPlan] | None = None
    for produced in sorted({round(left * share) for share in PRODUCED_SHARES}):
        discard = left - produced
        if produced < 2 or discard < 2:
            continue
        x_a = min(produced, round(float(cum[review_more + produced] - cum[review_more])))
        x_b = min(discard, round(float(cum[-1] - cum[review_more + produced])))
        for size in sorted({min(s, produced - 1) for s in PRODUCED_SAMPLE_SIZES}):
            # no discard sample makes this cheaper than: D reviewed, n_a + 1 sampled, and either the N_a produced
            # or (the test failing) at least the N_a − n_a unsampled of them reviewed
            least = (review_cost * review_more + sample_cost * (size + 1)
                     + min(produce_cost * produced, review_cost * (produced - size)))
            if best is not None and least >= best[0]:
                continue
            found_plan = _production_chance(f, produced, size, x_a, discard, x_b, tau, confidence, power)
            if found_plan is None:
                continue
            n_b, chance = found_plan
            plan = ProductionPlan(review_more, produced, discard, size, n_b, f, x_a, x_b, chance, ())
            expected = production_cost(plan, rest, review_cost, sample_cost, produce_cost)[0]
            if best is None or expected < best[0] - 1e-9:
                best = (expected, plan)
    if best is None:
        return None
    return replace(best[1], certifying=certifying_outcomes(best[1], tau, confidence))


def production_cost(plan: ProductionPlan, rest: int, review_cost: float, sample_cost: float,
                    produce_cost: float) -> tuple[float, float, float]:
    """(expected, if certified, if not) cost of a production plan: see :func:`plan_production`."""
    judged = plan.produced_sample + plan.discard_sample
    success = review_cost * plan.review_more + sample_cost * judged + produce_cost * plan.produced
    failure = review_cost * plan.review_more + sample_cost * judged + review_cost * (rest - plan.review_more - judged)
    return plan.chance * success + (1 - plan.chance) * failure, success, failure


def _production_path(found: int, reviewed: int, rest: int, projection: Projection, review_more: list[int],
                     tau: Fraction, confidence: float, power: float, review_cost: float, sample_cost: float,
                     produce_cost: float) -> PathPlan:
    """The cheapest :func:`plan_production` over the further reviews ``review_more``, as a `PathPlan`."""
    best: tuple[float, ProductionPlan] | None = None
    for more in review_more:
        plan = plan_production(found, rest, projection, more, tau, confidence, power=power,
                               review_cost=review_cost, sample_cost=sample_cost, produce_cost=produce_cost)
        if plan is not None:
            cost = production_cost(plan, rest, review_cost, sample_cost, produce_cost)[0]
            if best is None or cost < best[0] - 1e-9:
                best = (cost, plan)
    certified_by = "two-phase recall bound (one look)"
    if best is None:
        return PathPlan("produce_cutoff", 0, None, None, None, review_cost * rest, (0.0, 0.0), 0.0, False,
                        certified_by, f"no cutoff tried reaches a {percent(power)} chance of certifying "
                        f"({projection.source})", two_phase_assumptions=PRODUCTION_ASSUMPTIONS)
    plan = best[1]
    expected, success, failure = production_cost(plan, rest, review_cost, sample_cost, produce_cost)
    produced_relevant = plan.found + plan.assumed_produced_relevant
    precision = produced_relevant / (plan.found + plan.produced)
    return PathPlan(
        "produce_cutoff", plan.review_more, plan.discard_sample,
        plan.certifying[0][1] if plan.certifying and plan.certifying[0][1] >= 0 else None, None, expected,
        (success, failure), plan.chance, True, certified_by,
        f"{plan.found - found} more relevant in the next {plan.review_more:,}, {plan.assumed_produced_relevant} "
        f"among the {plan.produced:,} produced unreviewed and {plan.assumed_discard_relevant} in the discard pile "
        f"({projection.source})",
        produce_to=reviewed + plan.review_more + plan.produced, produced_unreviewed=plan.produced,
        discard_pile=plan.discard, produced_sample=plan.produced_sample, produced_precision=precision,
        certifying=plan.certifying, two_phase_assumptions=PRODUCTION_ASSUMPTIONS)


# how much dearer than the cheapest the previous plan's path may be projected and still be kept (`plan_stop`'s
# ``previous``): above the replays' own noise at 40 replicates, below a difference worth a change of course
HYSTERESIS = 0.10
# what following each path leads to at the next look: "review D more, then sample" becomes "sample now" once the D
# are reviewed; an audit stream followed look by look is the planned policy's audit
CONTINUATIONS: dict[str, set[str]] = {"planned": {"planned", "audit_stream"},
                                      "audit_stream": {"audit_stream", "planned"}, "sample_now": {"sample_now"},
                                      "review_then_sample": {"review_then_sample", "sample_now"},
                                      "produce_cutoff": {"produce_cutoff"}}


def plan_stop(evidence: ReviewEvidence, tau: Fraction, confidence: float, *, power: float = 0.8,
              review_cost: float = 1.0, sample_cost: float = 1.0, replicates: int = 40, seed: int = 0,
              table: bool = True, produce_cost: float | None = None, previous: str | None = None) -> StopPlan:
    """The cheapest defensible stop from ``evidence`` (module docstring): floor, paths, recommendation, table.

    One-look paths (an elusion test of n of the rest, now or after D more reviewed) are planned by
    `planning.plan_elusion` at the projected elusion rate, with chance = P(the outcome certifies) and a failed test
    costed as reviewing the whole rest (the one-look guarantee allows no second test of that sample). Monitor paths
    (a stream at rate K; the plan followed at every look) always end certified — at worst at the queue's end — and
    their cost is replayed ``replicates`` times on queues drawn from the projection (mean and 5–95 % range); their
    chance of certifying is 1. These paths stop and withhold the unreviewed rest (one-phase).

    With a ``produce_cost`` (the cost of producing one document without reviewing it; None: production of
    unreviewed documents is not on the table, and the path is not offered) the production-cutoff path is planned
    too (:func:`plan_production`, after D = 0, the floor's and the best one-look path's further review): review D
    more, produce the next N_a unreviewed, and certify by the two-phase recall's one-sided lower bound at
    ``confidence`` (`two_phase.two_phase_recall`, as `report --produce-to` does) from a sample of the produced part
    and one of the discard pile."""
    from reviewdepth.estimation.planning import ElusionPlan, plan_elusion

    n, d, f = evidence.population, evidence.reviewed, evidence.found
    rest = n - d
    rest_size = evidence.rest_sample_size or len(evidence.outside_audited_ranks)
    rest_relevant = evidence.rest_sample_relevant if evidence.rest_sample_size else len(
        evidence.outside_positive_ranks)
    offsets, positives = _rest_sample_offsets(evidence)
    floor = certification_floor(f, rest, tau, confidence)
    if d == 0 and rest > 0 and len(offsets) == 0:
        # nothing reviewed and no random sample: no projection rests on evidence, so no path is priced; the plan
        # asks for a richness sample of the collection first
        return StopPlan(float(tau), confidence, power, review_cost, sample_cost, n, 0, 0, rest,
                        missed_allowed(0, rest, tau), floor, 0, 0.0, floor > rest / 2, (), None, (),
                        "nothing reviewed and no random sample: no projection", 0.0,
                        produce_cost=produce_cost, previous=previous,
                        richness_size=richness_sample_size(n, confidence))
    if d == 0 and len(offsets):
        projection = project_from_sample(offsets, positives, rest)
    else:
        projection = project_yield(evidence.prefix_labels, rest, rest_sample_size=rest_size,
                                   rest_sample_relevant=rest_relevant)
    cum = projection.cumulative
    step = max(1, rest // 200)
    more, total = floor_path(f, d, n, cum, tau, confidence, review_cost=review_cost, sample_cost=sample_cost,
                             step=step)
    paths: list[PathPlan] = []

    # the projection's total over the rest, spread evenly: the rest's relevant documents no more concentrated
    # just ahead than anywhere else (as a random sample of the rest sees them). A one-look path is sized and its
    # chance stated under whichever of the two leaves more relevant after D: the decaying fit alone made the rest
    # look empty after a few hundred more (chance "100 %" for paths whose true chance was 69 % or 2 %)
    even_rate = projection.rest_estimate / rest if rest else 0.0
    # the rest sample's own (Jeffreys) rate: the fit may sit at the lowest total the sample allows, and among ~50
    # cutoffs the cheapest one-look path is the one the fit flatters most (7 one-look paths recommended on held-out
    # CLEF rankings stated 0.80-0.87 and came true 0.00-0.14). A one-look path is recommended only if it keeps the
    # power at this rate, spread evenly over the rest, too; its stated chance stays the projection's, which is
    # calibrated over all paths (stating every chance at this rate understated them by 0.07-0.12)
    sample_rate = (rest_relevant + 0.5) / (rest_size + 1) if rest_size else 0.0

    uncertainty = ((rest_relevant + 0.5, rest_size - rest_relevant + 0.5) if rest_size else None)
    multipliers = rate_multipliers(uncertainty, projection.rest_estimate)

    def _sized_for_power(plan: ElusionPlan, found_then: int, left: int, rate: float,
                         wanted: float, multipliers: FloatArray = multipliers) -> ElusionPlan:
        """``plan`` with its chance recomputed by `outcome_chance`, its size grown (×1.1 a step, at most to the
        whole rest) until that chance reaches ``wanted``; infeasible when none does."""
        size = plan.size or 0
        best = plan
        while True:
            sized = plan_elusion(found_then, left, tau, confidence, min(1.0, rate), power=power, size=size)
            if sized.feasible and sized.max_positives is not None:
                honest = outcome_chance(size, sized.max_positives, rate, multipliers)
                best = replace(sized, chance=honest, reason=sized.reason)
                if honest >= wanted or size >= left:
                    return best
            if size >= left:
                return replace(best, feasible=(best.chance is not None and best.chance >= wanted) or best.feasible)
            size = min(left, max(size + 1, int(size * 1.1)))

    def one_look(review_more: int) -> PathPlan:
        left = rest - review_more
        projected_gain = float(cum[review_more])
        projected_rate = float(cum[-1] - cum[review_more]) / left if left else 0.0
        uncertain = multipliers
        if projection.bands:
            # a random sample placed the relevant documents along the ranking: the rate after D is the sample's
            # own for the bands beyond D, uncertain as their pooled posterior is
            gained = math.floor(projected_gain + 1e-9)
            rate = projected_rate
            spread = "as the sample places them"
            beyond = [(a, m) for start, end, a, m in projection.bands if end > review_more]
            hits, seen = sum(a for a, _ in beyond), sum(m for _, m in beyond)
            uncertain = rate_multipliers((hits + 0.5, seen - hits + 0.5), 0.0)
        elif left and even_rate > projected_rate:
            gained = math.floor(even_rate * review_more + 1e-9)
            rate = even_rate
            spread = "spread evenly over the rest"
        else:
            gained = math.floor(projected_gain + 1e-9)
            rate = projected_rate
            spread = "as the projection places them"
        plan = plan_elusion(f + gained, left, tau, confidence, min(1.0, rate), power=power)
        kind = "sample_now" if review_more == 0 else "review_then_sample"
        if not plan.feasible or plan.size is None or plan.chance is None:
            return PathPlan(kind, review_more, plan.min_size, None, None, review_cost * review_more + sample_cost
                            * left, (0.0, 0.0), 0.0, False, "elusion test (one look)", plan.reason)
        # the chance with the rate uncertain (`outcome_chance`), the sample grown until it reaches the power
        plan = _sized_for_power(plan, f + gained, left, rate, power, uncertain)
        if not plan.feasible or plan.size is None or plan.chance is None:
            return PathPlan(kind, review_more, plan.min_size, None, None, review_cost * review_more + sample_cost
                            * left, (0.0, 0.0), 0.0, False, "elusion test (one look)", plan.reason)
        fail = 1 - plan.chance
        expected = review_cost * review_more + sample_cost * plan.size + fail * review_cost * (left - plan.size)
        return PathPlan(kind, review_more, plan.size, plan.max_positives, None, expected,
                        (review_cost * review_more + sample_cost * plan.size,
                         review_cost * review_more + sample_cost * plan.size + review_cost * (left - plan.size)),
                        plan.chance, True, "elusion test (one look)",
                        f"{gained} more relevant in the next {review_more:,} and an elusion rate of {rate:.4f} "
                        f"after them, the relevant left {spread} ({projection.source})")

    if rest > 0:
        paths.append(one_look(0))
        best_more, best_cost = 0, paths[0].expected_cost if paths[0].feasible else math.inf
        for candidate in range(max(step, rest // 50), rest, max(step, rest // 50)):
            p = one_look(candidate)
            if p.feasible and p.chance >= power and p.expected_cost < best_cost:
                best_more, best_cost = candidate, p.expected_cost
        if best_more:
            paths.append(one_look(best_more))
        certifier = Certifier(n, tau, confidence)
        batch = max(10, n // 200)
        policy = PlannedPolicy(n, certifier, batch, review_cost, sample_cost)
        rng = np.random.default_rng(seed)
        start = _start_state(evidence)
        every = choose_audit_rate(f, d, certifier, projection, step=step) if evidence.audited == 0 else None
        planned_costs, stream_costs = [], []
        for _ in range(replicates):
            labels = _synthetic(evidence, projection, rng, uncertainty)
            perm = _stream_for(evidence, rng)
            run = run_planned(labels, perm, policy, start=start)
            # what was judged before the plan: the prefix (review) and the audit documents outside it
            judged_before = review_cost * d + sample_cost * len(evidence.outside_audited_ranks)
            planned_costs.append(run.cost_at(review_cost, sample_cost) - judged_before)
            if every is not None:
                stream_costs.append(run_fixed_rate(labels, perm, every, batch, certifier, start, review_cost,
                                                   sample_cost) - judged_before)
        costs = np.array(planned_costs, dtype=np.float64)
        mean, low, high = _quantiles(costs)
        paths.append(PathPlan("planned", int(cheapest_audit_depth(f, d, certifier, projection, step=step)[0]), None,
                              None, None, mean, (low, high), 1.0, True,
                              "anytime-valid monitor (audit stream)",
                              f"labels of the unreviewed drawn from the projection ({projection.source})"))
        if every is not None:
            costs = np.array(stream_costs, dtype=np.float64)
            mean, low, high = _quantiles(costs)
            paths.append(PathPlan("audit_stream", 0, None, None, every, mean, (low, high), 1.0, True,
                                  "anytime-valid monitor (audit stream)",
                                  f"labels of the unreviewed drawn from the projection ({projection.source})"))
    if produce_cost is not None and rest > 0:
        paths.append(_production_path(f, d, rest, projection, sorted({0, more, best_more} - {rest}), tau,
                                      confidence, power, review_cost, sample_cost, produce_cost))
    def holds_at_sample_rate(p: PathPlan) -> bool:
        """Whether a one-look path's own sample still certifies with chance ≥ power if the rest holds relevant
        documents at the rest sample's rate, spread evenly (the D more find that rate too)."""
        if not sample_rate or p.kind not in ("sample_now", "review_then_sample") or not p.sample_size:
            return True
        left = rest - p.review_more
        gained = math.floor(sample_rate * p.review_more + 1e-9)
        sized = plan_elusion(f + gained, left, tau, confidence, min(1.0, sample_rate), power=power,
                             size=p.sample_size)
        if not sized.feasible or sized.max_positives is None:
            return False
        return outcome_chance(p.sample_size, sized.max_positives, sample_rate, multipliers) >= power

    eligible = [p for p in paths if p.feasible and (p.kind in ("planned", "audit_stream") or (
        p.chance >= power and holds_at_sample_rate(p)))]
    recommended = min(eligible, key=lambda p: p.expected_cost).kind if eligible else None
    change: tuple[str, float | None, float] | None = None
    if previous is not None and recommended is not None:
        # a plan that survives being followed: the previous way to stop stays recommended while it is still open
        # and within HYSTERESIS of the cheapest (the replays' own noise must not switch the team's path); else the
        # plan says what changed
        best = min(eligible, key=lambda p: p.expected_cost)
        going_on = [p for p in eligible if p.kind in CONTINUATIONS.get(previous, {previous})]
        kept = min(going_on, key=lambda p: p.expected_cost) if going_on else None
        if kept is not None and kept.expected_cost <= (1 + HYSTERESIS) * best.expected_cost:
            recommended = kept.kind
        elif recommended not in CONTINUATIONS.get(previous, {previous}):
            change = (previous, None if kept is None else kept.expected_cost, best.expected_cost)
    cells: list[TableCell] = []
    if table and rest > 0:
        for t in TABLE_TARGETS:
            for c in TABLE_CONFIDENCES:
                frac = Fraction(t)
                cert = Certifier(n, frac, c)
                _, cost, _ = cheapest_audit_depth(f, d, cert, projection, step=step)
                cells.append(TableCell(float(frac), c, certification_floor(f, rest, frac, c), cost))
    return StopPlan(float(tau), confidence, power, review_cost, sample_cost, n, d, f, rest,
                    missed_allowed(f, rest, tau) if rest else 0, floor, more, total, floor > rest / 2, tuple(paths),
                    recommended, tuple(cells), projection.source, projection.rest_estimate,
                    produce_cost=produce_cost, previous=previous, change=change)
