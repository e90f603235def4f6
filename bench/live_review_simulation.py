"""Simulated live reviews on a real labelled queue: the review goes on after a random sample is drawn, and the
report's answer (:func:`reviewdepth.estimation.assessment.assess`, the one function the report prints) is scored
against the truth. Used by ``bench/live_review_bench.py`` and ``tests/estimation/test_live_review_coverage.py``.

One *cell* is a queue of S documents with known labels (R relevant), a draw cutoff c0, a sample size n, a design
and a list of later cutoffs c1 ≥ c0. Per replicate:

1. the first c0 documents are reviewed in rank order;
2. a simple random sample of n is drawn (``numpy.random.Generator.choice`` without replacement) from the unreviewed
   rest, ranks c0+1 … S (design ``rest``), or from the whole queue (design ``population``), and judged;
3. the review continues in rank order to each c1, and :func:`assess` is called with the queue's labels (unjudged
   −1 past c1, except the sampled documents, which are judged), ``reviewed = c1`` and the sample as drawn
   (``frame_start = c0`` or 0). The sample is rolled forward by ``assess`` itself.

Truth at c1: F(c1) relevant in the prefix, recall = F(c1)/R, d* = the rank of the ⌈0.95·R⌉-th relevant document
(the minimal depth for 95 % recall). Scored per replicate: whether the basis' two-sided interval holds R, whether
the basis' recall interval holds the true recall, whether its one-sided lower bound is ≤ the true recall, whether
the 0.95 row says *reached*, the conservative depth (the rank of the ``conservative_needed``-th relevant document
of the queue, read off the truth; the whole queue S when the queue holds fewer), the projected depth (the forward
depth when not reached, else c1) and whether the forward range [forward_low, forward_high] holds max(d*, c1), the
depth the review must still reach.

:func:`old_behaviour` re-enacts what the report did at commit deac6fe (``git show
deac6fe:reviewdepth/services/answers/report.py``) with the core functions that code called, so benches can print what
changed. Identical inputs to :func:`assess` are evaluated once per cell (see :func:`simulate_cell`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np
import numpy.typing as npt

from reviewdepth.estimation import relevant, stopping
from reviewdepth.estimation.assessment import Assessment, ReviewState, SampleDraw, assess
from reviewdepth.estimation.depth_unknown import depth_under_unknown_r

FloatArray = npt.NDArray[np.float64]
TARGET_TEXT = "0.95"
TARGET = Fraction(TARGET_TEXT)
DESIGNS: tuple[str, ...] = ("rest", "population")

#: per-replicate outcomes of the current report (NaN where it gives no figure)
NEW_FIELDS: tuple[str, ...] = (
    "r_lower", "r_upper", "recall_lower", "recall_upper", "recall_lower_one", "reached", "conservative_depth",
    "projected_depth", "forward_low", "forward_high", "forward_given", "incoherent",
    # population design only: direct recall and QBCB's certified depth
    "direct_lower", "direct_upper", "direct_lower_one", "certified_depth")
#: per-replicate outcomes of the report at deac6fe
OLD_FIELDS: tuple[str, ...] = (
    "r_lower", "r_upper", "recall_lower", "recall_upper", "recall_lower_one", "reached", "point_reached",
    "conservative_depth", "projected_depth", "incoherent", "direct_lower", "direct_upper", "certified_depth")


def needed_for(tau: Fraction, relevant_count: float) -> int:
    """⌈τ·R⌉ in exact arithmetic (R read as its shortest decimal)."""
    return max(0, math.ceil(tau * Fraction(repr(float(relevant_count)))))


@dataclass(frozen=True)
class Truth:
    """What the simulation knows: ``ranks`` of the R relevant documents (sorted, 1-based), queue size S, d*."""

    ranks: npt.NDArray[np.int64]
    size: int
    relevant: int
    true_depth: int

    @classmethod
    def of(cls, rel: npt.ArrayLike) -> Truth:
        labels = np.asarray(rel).reshape(-1)
        ranks = (np.flatnonzero(labels == 1) + 1).astype(np.int64)
        r = len(ranks)
        if r == 0:
            raise ValueError("a simulated queue needs at least one relevant document")
        return cls(ranks, len(labels), r, int(ranks[needed_for(TARGET, r) - 1]))

    def found(self, cutoff: int) -> int:
        return int(np.searchsorted(self.ranks, cutoff, side="right"))

    def depth_of(self, needed: float) -> float:
        """Rank of the ``needed``-th relevant document; S when the queue holds fewer; NaN for NaN."""
        if math.isnan(needed):
            return math.nan
        k = int(needed)
        if k <= 0:
            return 0.0
        return float(self.ranks[k - 1]) if k <= self.relevant else float(self.size)


def _num(value: float | int | None) -> float:
    return math.nan if value is None else float(value)


def new_outcome(result: Assessment, truth: Truth, c1: int, judged_relevant: int) -> dict[str, float]:
    """Score one :class:`Assessment` (the 0.95 row must be its first target). ``incoherent``: an R lower bound
    below ``judged_relevant`` (the prefix's relevant plus the sample positives past c1), a bound below its lower
    bound, or a recall outside [0, 1]."""
    basis = result.basis
    # the "judged" figure (relevant found over relevant judged) is a bound, not an interval: no coverage to score
    figure = next((f for f in result.recall if f.basis == basis.method and basis.method != "judged"), None)
    answer = result.targets[0]
    to_rank = answer.forward.to_rank
    forward_given = to_rank.low is not None and to_rank.high is not None
    projected = to_rank.depth if answer.status != "reached" else c1
    direct = next((f for f in result.recall if f.basis == "direct"), None)
    found_all = truth.found(c1)
    incoherent = any(e.lower < judged_relevant - 1e-9 or e.point < e.lower - 1e-9
                     or (e.upper is not None and e.upper < e.lower - 1e-9)
                     for e in result.estimates if not math.isnan(e.point))
    incoherent = incoherent or any(v is not None and not 0.0 <= v <= 1.0 for f in result.recall
                                   for v in (f.point, f.lower, f.upper, f.lower_one_sided))
    assert result.found == found_all
    return {
        "r_lower": basis.lower, "r_upper": _num(basis.upper),
        "recall_lower": _num(None if figure is None else figure.lower),
        "recall_upper": _num(None if figure is None else figure.upper),
        "recall_lower_one": _num(None if figure is None else figure.lower_one_sided),
        "reached": float(answer.status == "reached"),
        "conservative_depth": truth.depth_of(_num(answer.conservative.needed)),
        "projected_depth": _num(projected),
        "forward_low": _num(to_rank.low) if forward_given else math.nan,
        "forward_high": _num(to_rank.high) if forward_given else math.nan,
        "forward_given": float(forward_given), "incoherent": float(incoherent),
        "direct_lower": _num(None if direct is None else direct.lower),
        "direct_upper": _num(None if direct is None else direct.upper),
        "direct_lower_one": _num(None if direct is None else direct.lower_one_sided),
        "certified_depth": _num(answer.certified_depth),
    }


@dataclass
class OldCache:
    """The deac6fe estimates per distinct (counts) input, for one cell at one confidence."""

    elusion: dict[tuple[int, ...], tuple[relevant.Estimate, float]] = field(default_factory=dict)
    srs: dict[tuple[int, ...], relevant.Estimate] = field(default_factory=dict)


def old_behaviour(truth: Truth, c0: int, c1: int, sample_index: npt.NDArray[np.int64], sample_labels:
                  npt.NDArray[np.int64], design: str, confidence: float,
                  cache: OldCache | None = None) -> dict[str, float]:
    """The report at commit deac6fe, re-enacted with the core functions it called.

    Rest sample drawn at c0: ``estimate_elusion(F(c0), S − c0, n, y)`` (two-sided, the whole sample, the stale
    cutoff) is the basis; recall = F(c1)/R̂ with [F(c1)/R_U, F(c1)/R_L] (not clipped); the one-sided figure is the
    elusion rule's bound at c0; the depth rows come from ``depth_under_unknown_r`` on that two-sided estimate
    (conservative = ⌈τ·R_U⌉ with the two-sided R_U; "reached" columns: point and conservative). Whole-queue sample:
    ``estimate_srs(y, n, S, found=relevant judged)`` (hypergeometric, two-sided) is the basis, direct recall is
    two-sided Clopper–Pearson, the projected depth u(⌈τ·r⌉) and QBCB's certified depth come from
    ``depth_under_unknown_r`` with the sample's positive ranks. The old report had no forward answer for a rest
    sample. ``incoherent``: an R lower bound below the relevant judged, or a recall outside [0, 1]. ``cache``
    keeps the estimates per distinct sample count across calls (they depend on nothing else)."""
    alpha = 1.0 - confidence
    memo = OldCache() if cache is None else cache
    n = len(sample_index)
    y = int(np.count_nonzero(sample_labels == 1))
    f0, f1 = truth.found(c0), truth.found(c1)
    sample_ranks = sample_index + 1
    positives = np.sort(sample_ranks[sample_labels == 1]).astype(np.int64)
    judged_relevant = f1 + int(np.count_nonzero(positives > c1))
    out = {name: math.nan for name in OLD_FIELDS}
    if design == "rest":
        key = (f0, truth.size - c0, n, y)
        if key not in memo.elusion:
            rule = stopping.elusion_rule(f0, truth.size - c0, n, y, tau=TARGET, alpha=alpha, reviewed=c0)
            memo.elusion[key] = (relevant.estimate_elusion(f0, truth.size - c0, n, y, confidence=confidence),
                                 float(rule.details["recall_lower"]))
        est, out["recall_lower_one"] = memo.elusion[key]
        sample_positive_ranks = None
    else:
        key = (y, n, truth.size, judged_relevant)
        if key not in memo.srs:
            memo.srs[key] = relevant.estimate_srs(y, n, truth.size, found=judged_relevant, confidence=confidence)
        est = memo.srs[key]
        sample_positive_ranks = positives
        if y:
            direct = relevant.direct_recall(int(np.count_nonzero(positives <= c1)), y, confidence=confidence)
            out["direct_lower"], out["direct_upper"] = _num(direct.recall_lower), _num(direct.recall_upper)
    prefix = truth.ranks[truth.ranks <= c1]
    [row] = depth_under_unknown_r(prefix, c1, est, [float(TARGET)], sample_positive_ranks=sample_positive_ranks,
                                  confidence=confidence)
    assert est.upper is not None
    out["r_lower"], out["r_upper"] = est.lower, est.upper
    recall_point = f1 / est.point if est.point > 0 else math.nan
    out["recall_lower"] = f1 / est.upper if est.upper > 0 else math.nan
    out["recall_upper"] = f1 / est.lower if est.lower > 0 else math.nan
    out["reached"] = float(bool(row.conservative_reached))
    out["point_reached"] = float(bool(row.point_reached))
    out["conservative_depth"] = truth.depth_of(_num(row.conservative_needed))
    out["projected_depth"] = _num(row.projected_depth)
    out["certified_depth"] = _num(row.certified_depth)
    out["incoherent"] = float(est.lower < judged_relevant or any(
        not math.isnan(v) and v > 1.0 for v in (recall_point, out["recall_upper"])))
    return out


@dataclass(frozen=True)
class CellResult:
    """Per-replicate outcome arrays of one cell, per c1: ``new[c1][field]``, ``old[c1][field]``."""

    truth: Truth
    c0: int
    n: int
    design: str
    c1s: tuple[int, ...]
    replicates: int
    new: dict[int, dict[str, FloatArray]]
    old: dict[int, dict[str, FloatArray]]
    assess_calls: int


def simulate_cell(rel: npt.ArrayLike, c0: int, n: int, c1s: Sequence[int], design: str, replicates: int,
                  seed: int | Sequence[int], *, confidence: float = 0.95, old: bool = True) -> CellResult:
    """Run one cell (module docstring). Deterministic given ``seed`` (passed to ``numpy.random.default_rng``).

    :func:`assess` is called once per distinct input: its answer depends on the sample only through the ranks of
    the sample positives (in draw order for a whole-queue sample, whose target method reads that order) and the
    number of sample documents past c1, so replicates that agree on those share one call."""
    if design not in DESIGNS:
        raise ValueError(f"design must be one of {DESIGNS}, got {design!r}")
    labels_true = np.asarray(rel, dtype=np.int8).reshape(-1)
    truth = Truth.of(labels_true)
    size = truth.size
    frame = np.arange(c0 if design == "rest" else 0, size, dtype=np.int64)
    if not 0 < n <= len(frame):
        raise ValueError(f"sample size {n} does not fit a frame of {len(frame)}")
    if any(c < c0 or c > size for c in c1s):
        raise ValueError("every c1 must lie in [c0, S]")
    rng = np.random.default_rng(seed)
    c1_list = tuple(int(c) for c in c1s)
    bases = {}
    for c1 in c1_list:
        base = labels_true.copy()
        base[c1:] = -1
        bases[c1] = base
    new_rows: dict[int, list[dict[str, float]]] = {c1: [] for c1 in c1_list}
    old_rows: dict[int, list[dict[str, float]]] = {c1: [] for c1 in c1_list}
    memo: dict[tuple[object, ...], dict[str, float]] = {}
    old_memo = OldCache()
    frame_start = c0 if design == "rest" else 0
    for _ in range(replicates):
        index = np.sort(rng.choice(frame, size=n, replace=False)) if design == "rest" else rng.choice(
            frame, size=n, replace=False)
        sample_labels = labels_true[index].astype(np.int64)
        draw = SampleDraw(1, frame_start, (index + 1).astype(np.int64), sample_labels, n)
        positive_ranks = tuple((index[sample_labels == 1] + 1).tolist())
        for c1 in c1_list:
            past = int(np.count_nonzero(index >= c1))
            past_positives = int(np.count_nonzero(sample_labels[index >= c1] == 1))
            key_positives = tuple(sorted(positive_ranks)) if design == "rest" else positive_ranks
            key = (c1, past, key_positives)
            outcome = memo.get(key)
            if outcome is None:
                labels = bases[c1].copy()
                labels[index] = labels_true[index]
                result = assess(ReviewState(labels, c1), [draw], [TARGET_TEXT],
                                confidence=confidence, interval="hypergeometric", stopping_target="0.95")
                outcome = new_outcome(result, truth, c1, truth.found(c1) + past_positives)
                memo[key] = outcome
            new_rows[c1].append(outcome)
            if old:
                old_rows[c1].append(old_behaviour(truth, c0, c1, index, sample_labels, design, confidence,
                                             old_memo))

    def columns(rows: list[dict[str, float]], fields: tuple[str, ...]) -> dict[str, FloatArray]:
        return {f: np.array([r[f] for r in rows], dtype=np.float64) for f in fields}

    return CellResult(truth, c0, n, design, c1_list, replicates,
                      {c1: columns(new_rows[c1], NEW_FIELDS) for c1 in c1_list},
                      {c1: columns(old_rows[c1], OLD_FIELDS) for c1 in c1_list} if old else {}, len(memo))


@dataclass(frozen=True)
class Count:
    """``hits`` of ``trials`` replicates (trials 0: not applicable)."""

    hits: int
    trials: int

    @property
    def rate(self) -> float:
        return self.hits / self.trials if self.trials else math.nan


@dataclass(frozen=True)
class Rates:
    """Rates over the replicates of one cell at one c1 (trials 0 / NaN when not applicable).

    ``cover_*``: the interval holds the truth, over the replicates that give it; ``reached``: the 0.95 row says
    reached; ``false_reached``: reached while the true recall is below 0.95; ``*_ratio_*``: depth / d* (median,
    90th percentile); ``forward_contains``: the forward range holds max(d*, c1), over the replicates that give a
    range; ``certified_fail``: QBCB's certified depth holds fewer than ⌈0.95·R⌉ relevant documents."""

    true_recall: float
    cover_r: Count
    cover_recall: Count
    cover_recall_one: Count
    reached: Count
    false_reached: Count
    conservative_ratio_median: float
    conservative_ratio_p90: float
    projected_ratio_median: float
    projected_ratio_p90: float
    forward_given: Count
    forward_contains: Count
    incoherent: Count
    cover_direct: Count
    cover_direct_one: Count
    certified_fail: Count
    certified_ratio_median: float
    point_false_reached: Count


def _count(mask: npt.NDArray[np.bool_], valid: npt.NDArray[np.bool_]) -> Count:
    return Count(int(np.count_nonzero(mask & valid)), int(np.count_nonzero(valid)))


def _quantile(values: FloatArray, q: float) -> float:
    finite = values[~np.isnan(values)]
    return float(np.quantile(finite, q)) if len(finite) else math.nan


def rates(cell: CellResult, c1: int, which: str = "new") -> Rates:
    """Coverage and cost rates of the ``new`` (current :func:`assess`) or ``old`` (deac6fe) answers at c1."""
    t = cell.truth
    data = cell.new[c1] if which == "new" else cell.old[c1]
    r, recall = t.relevant, t.found(c1) / t.relevant
    everything = np.ones(cell.replicates, dtype=bool)
    nothing = np.zeros(cell.replicates, dtype=bool)
    eps = 1e-12

    def has(name: str) -> npt.NDArray[np.bool_]:
        if name not in data:
            return nothing
        out: npt.NDArray[np.bool_] = ~np.isnan(data[name])
        return out

    def column(name: str) -> FloatArray:
        return data[name] if name in data else np.full(cell.replicates, math.nan)

    cover_r = (data["r_lower"] <= r) & (r <= data["r_upper"])
    cover_recall = (data["recall_lower"] <= recall + eps) & (recall <= data["recall_upper"] + eps)
    cover_one = data["recall_lower_one"] <= recall + eps
    reached = data["reached"] == 1
    remaining = max(t.true_depth, c1)
    given = column("forward_given") == 1
    contains = (column("forward_low") <= remaining) & (remaining <= column("forward_high"))
    cover_direct = (data["direct_lower"] <= recall + eps) & (recall <= data["direct_upper"] + eps)
    certified = data["certified_depth"]
    need = needed_for(TARGET, r)
    certified_fail = np.array([not math.isnan(d) and t.found(int(d)) < need for d in certified], dtype=bool)
    below = everything if recall < float(TARGET) else nothing
    return Rates(
        true_recall=recall,
        cover_r=_count(cover_r, has("r_upper")),
        cover_recall=_count(cover_recall, has("recall_upper")),
        cover_recall_one=_count(cover_one, has("recall_lower_one")),
        reached=_count(reached, everything),
        false_reached=_count(reached & below, everything),
        conservative_ratio_median=_quantile(data["conservative_depth"] / t.true_depth, 0.5),
        conservative_ratio_p90=_quantile(data["conservative_depth"] / t.true_depth, 0.9),
        projected_ratio_median=_quantile(data["projected_depth"] / t.true_depth, 0.5),
        projected_ratio_p90=_quantile(data["projected_depth"] / t.true_depth, 0.9),
        forward_given=_count(given, everything if "forward_given" in data else nothing),
        forward_contains=_count(contains, given),
        incoherent=_count(data["incoherent"] == 1, everything),
        cover_direct=_count(cover_direct, has("direct_upper")),
        cover_direct_one=_count(column("direct_lower_one") <= recall + eps, has("direct_lower_one")),
        certified_fail=_count(certified_fail, has("certified_depth")),
        certified_ratio_median=_quantile(certified / t.true_depth, 0.5),
        point_false_reached=_count((column("point_reached") == 1) & below,
                                   everything if "point_reached" in data else nothing),
    )
