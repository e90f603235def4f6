"""The depth answer at one moment of a live review: which samples still speak for the unreviewed rest, |R| and
recall by every basis the evidence allows, and for each target recall whether it is reached, by what evidence, and
if not, how many more documents to review (reference §4, §6, §7).

Pure: numpy arrays and plain records in, plain records out. The report service and the simulation benches call
:func:`assess` with the same inputs, so what the benches measure is what the report prints.

Notation: the queue holds S documents in rank order; the reviewed prefix is the first c; F = relevant in it; the
unreviewed rest U is ranks c+1..S (N_u = S − c documents). A sample is a simple random sample drawn without
replacement from a frame of queue ranks fixed at draw time.

**Rolling a sample forward.** A sample drawn from the frame ranks > s (s = 0: the whole queue) that holds m of its
documents at ranks > c (c ≥ s) is, conditional on m, a simple random sample of U: every m-subset of U is equally
likely. So a rest or population sample stays usable as the review moves on; only the part below the current
cutoff is used for the rest, and the documents it drew above c are simply part of the reviewed prefix. The
conditioning assumes the review's progress does not depend on which documents were drawn.

**Choosing among samples** (one rule, stated in every report): for the rest, the usable sample with the most
documents in U (ties: more documents drawn, then the older sample); for whole-queue rules (SRS prevalence, direct
recall, QBCB, target method), the largest whole-queue sample. A small late sample never displaces a larger one.

**Scope.** Samples are drawn from the queue, so every estimate speaks for the relevant documents *in the queue*.
When the stated population N is larger than the queue, the estimates are labelled ``scope = "queue"`` and say how
many documents they do not cover.

**Coherence** (checked by property tests): every lower bound on R is at least the relevant documents already
judged in its scope, every point and upper bound at least the lower bound, every recall in [0, 1].

**Reached.** A target τ < 1 is *reached* only when the one-sided (confidence) upper bound R_U satisfies
F ≥ ⌈τ·R_U⌉ (which is exactly the elusion test when the basis is the rest sample), or when a certified rule that
certifies the reviewed prefix says stop, or when R is known and the prefix holds ⌈τ·R⌉ relevant documents. A
target of 1 is reached only with R known. Point-estimate depths are labelled as such and never make a target
reached. With no random sample the status is *unknown*.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from fractions import Fraction
from typing import Any, Literal, get_args

import numpy as np
import numpy.typing as npt

from reviewdepth.estimation import relevant, stopping
from reviewdepth.estimation import rules as stopping_rules
from reviewdepth.estimation.depth_unknown import forward_depth, recent_yield_projection
from reviewdepth.estimation.stop_plan import certification_floor
from reviewdepth.measures.depth import depth_to_recall, exact_fraction

IntArray = npt.NDArray[np.int64]
LabelArray = npt.NDArray[np.int8]

#: interval methods a report may use: both exact, so every bound keeps its nominal coverage
ReportInterval = Literal["hypergeometric", "clopper-pearson"]
REPORT_INTERVALS: tuple[str, ...] = get_args(ReportInterval)
UNJUDGED = -1


class Basis(StrEnum):
    """The basis of an |R| estimate (`relevant.Estimate.method`) that the depth answer reads: R known, the elusion
    test on a rest sample, the stratified estimate, a whole-queue simple random sample, the screened set declared a
    random sample, the relevant judged so far (a lower bound only), and direct recall (shown, never the basis). The
    values are the report's strings."""

    KNOWN = "known"
    ELUSION = "elusion"
    STRATIFIED = "stratified"
    SRS = "srs"
    SCREENED = "screened"
    JUDGED = "judged"
    DIRECT = "direct"


class AnswerStatus(StrEnum):
    """Whether a target recall is reached: certified by the evidence (reached), not yet (not reached), or unknown
    without a random sample (the rule is the module docstring's "Reached")."""

    REACHED = "reached"
    NOT_REACHED = "not reached"
    UNKNOWN = "unknown"


class NextStep(StrEnum):
    """What the team should do next, as the headline says it (`reviewdepth.report.wording.next_step` gives the
    words; its counts are in ``Headline.step_counts``)."""

    STATE_RECALL = "state recall"  # reached: judge a fresh random sample of the rest to state recall
    CERTIFY_FLOOR = "certify floor"  # point met, not certified: at least (floor,) more judged documents
    CERTIFY = "certify"  # point met, not certified: the plan gives the cheapest path
    SCREEN_MORE = "screen more"  # declared random order: (more,) in the same order, then a fresh rest sample
    REVIEW_MORE = "review more"  # (more, to rank), then a fresh rest sample
    REVIEW_ON = "review on"
    DRAW_SAMPLE = "draw sample"  # no random sample: draw one of the unreviewed rest


@dataclass(frozen=True)
class SampleDraw:
    """A complete random sample expressed on the current queue.

    ``frame_start`` s: the frame is every queue rank > s (0: the whole queue); ``frame_end``: the last rank of a
    rank-band frame (None: to the end of the queue). ``ranks``/``labels``: per drawn document still in the queue,
    in draw order, its rank (1-based) and label (1/0). ``drawn``: documents originally drawn. ``origin`` says
    where the frame came from (e.g. another queue) for the report."""

    sample_id: int
    frame_start: int
    ranks: IntArray
    labels: IntArray
    drawn: int
    frame_end: int | None = None
    origin: str = ""


@dataclass(frozen=True)
class ReviewState:
    """The queue's labels (1, 0, −1 unjudged per rank), the reviewed prefix c, the stated population N (None: the
    queue is the population), the relevant documents judged in the topic (in the queue or not) and R when known."""

    labels: LabelArray
    reviewed: int
    population: int | None = None
    relevant_judged: int | None = None
    known_relevant: int | None = None
    fully_judged: bool = False
    # declared (never guessed): the reviewed set was screened in a uniformly random order fixed in advance, so it
    # is a simple random sample of the queue (basis ``screened``)
    reviewed_random: bool = False
    # when documents were reviewed out of queue order, ``labels`` is the queue in review order (S first, then the
    # rest in queue order) and this is the queue rank at each of its positions (None: review order = queue order)
    queue_ranks: IntArray | None = None
    # the queue's scores, in the order of ``labels``, when declared per-document probabilities of relevance (the Quant
    # rule reads them; None: not declared, and the rule is not shown)
    probabilities: npt.NDArray[np.float64] | None = None


@dataclass(frozen=True)
class SampleUse:
    """How one sample is used at the current cutoff: ``role`` is ``rest`` / ``population`` / ``stratum`` /
    ``unused`` and ``status`` a sentence for people."""

    sample_id: int
    role: str
    in_rest: int
    rest_positives: int
    status: str


@dataclass(frozen=True)
class TargetAnswer:
    """The answer for one target recall.

    ``status``: ``reached`` / ``not reached`` / ``unknown``; ``reached_by`` names the evidence. ``point_*``: the
    depth from the point estimate R̂ (labelled point, never "reached" by itself). ``conservative_*``: from the
    one-sided upper bound R_U. ``forward_*``: when not reached, the projected depth (queue rank) to review to and
    ``more_*`` the documents that means (point and range), with ``forward_basis`` saying how it was projected;
    ``conservative_forward`` the projected rank where the conservative need (from the one-sided R_U) is met.
    ``certified_depth``: QBCB's depth from a whole-queue sample (certified for the stopping target).

    When the point estimate is met but the target is not reached, reviewing on is not what is missing: the answer
    is what certification costs. ``forward_depth``/``more_documents`` and their low end are then None (the point
    projection sits at the current depth, and "0 more" would read as done; the high end stays: the documents to
    review if R is at its upper bound), and ``certify_floor`` is n_min(F, N_u) at this target
    (`stop_plan.certification_floor`): no random-sample design certifies it with fewer further judged documents.
    The report fills ``certify_path`` (the stop plan's recommended path, `stop_plan.plan_stop`), with
    ``certify_review_more`` (D reviewed first), ``certify_expected`` and the ``certify_low``–``certify_high`` range
    of the documents it judges, for the stopping target."""

    target: float
    status: AnswerStatus
    reached_by: str | None
    needed: int | None
    depth: int | None
    point_needed: int | None
    point_depth: int | None
    point_reached: bool | None
    conservative_needed: int | None
    conservative_depth: int | None
    conservative_reached: bool | None
    conservative_forward: int | None
    certified_depth: int | None
    forward_depth: int | None
    forward_low: int | None
    forward_high: int | None
    more_documents: int | None
    more_low: int | None
    more_high: int | None
    forward_basis: str | None
    basis: str
    certify_floor: int | None = None
    certify_path: str | None = None
    certify_review_more: int | None = None
    certify_expected: float | None = None
    certify_low: float | None = None
    certify_high: float | None = None
    # the queue rank the recommended path reviews to before it certifies (None: it reviews no further)
    certify_to_rank: int | None = None


@dataclass(frozen=True)
class RecallFigure:
    """Recall of the reviewed prefix by one basis: point, two-sided interval, one-sided lower bound (each at
    ``confidence``) and what to beware of."""

    basis: str  # a Basis
    point: float | None
    lower: float | None
    upper: float | None
    lower_one_sided: float | None
    confidence: float
    scope: str
    note: str


@dataclass(frozen=True)
class Headline:
    """The first lines of every report: the stopping target and its status, the confidence and the next step."""

    target: float
    status: AnswerStatus
    text: str
    confidence: float
    # the next step as a code and its counts; `reviewdepth.report.wording.next_step` says it in words
    step: NextStep | None
    step_counts: tuple[int, ...] = ()


@dataclass(frozen=True)
class Assessment:
    queue_size: int
    reviewed: int
    found: int
    scope: str
    scope_note: str
    estimates: list[relevant.Estimate]
    basis: relevant.Estimate
    conservative_upper: float | None
    targets: list[TargetAnswer]
    recall: list[RecallFigure]
    stopping: list[stopping.StoppingEvidence]
    samples: list[SampleUse]
    headline: Headline
    rest_sample: int | None
    population_sample: int | None
    details: dict[str, Any] = field(default_factory=dict)


SCREENED_ASSUMPTIONS = (
    "declared by the team: the documents were screened in a uniformly random order fixed before screening, so the "
    "screened set is a simple random sample of the queue (a ranking, another tool's order or batches by custodian "
    "are not random)",
    "how many were screened was fixed in advance, or this is read once: stopping when the count looks good makes "
    "a one-look interval optimistic (an audit stream's bound is valid at every look)")


def reviewed_prefix(labels: LabelArray, sample_ranks: IntArray | None = None) -> int:
    """c: the longest fully judged prefix of the queue, less any sample documents at its end.

    Sample documents are judged out of turn; one that sits just past the reviewed prefix would otherwise extend
    it, and its label would count both as found (prefix) and as a sample observation of the rest."""
    unjudged = np.flatnonzero(labels == UNJUDGED)
    c = int(unjudged[0]) if len(unjudged) else len(labels)
    if sample_ranks is not None and len(sample_ranks) and c:
        drawn = np.zeros(c + 1, dtype=bool)
        inside = sample_ranks[(sample_ranks >= 1) & (sample_ranks <= c)]
        drawn[inside] = True
        while c > 0 and drawn[c]:
            c -= 1
    return c


def _rest_part(sample: SampleDraw, reviewed: int, size: int) -> tuple[bool, IntArray, IntArray]:
    """(usable, ranks, labels) of the sample's documents in the current rest (ranks > reviewed)."""
    covers = sample.frame_start <= reviewed and (sample.frame_end is None or sample.frame_end >= size)
    keep = sample.ranks > reviewed
    return covers, sample.ranks[keep], sample.labels[keep]


# the fields of a TargetAnswer that are ranks of the queue
RANK_FIELDS = ("depth", "point_depth", "conservative_depth", "conservative_forward", "certified_depth",
               "forward_depth", "forward_low", "forward_high")


def _on_queue_ranks(answer: TargetAnswer, queue_ranks: IntArray, reviewed: int) -> TargetAnswer:
    """``answer`` with its ranks past the reviewed set carried from the review order back to queue ranks."""
    changes: dict[str, Any] = {}
    for key in RANK_FIELDS:
        value = getattr(answer, key)
        if value is not None and reviewed < value <= len(queue_ranks):
            changes[key] = int(queue_ranks[value - 1])
    return replace(answer, **changes) if changes else answer


def _tau_of(target: str | float) -> Fraction:
    return exact_fraction(target)


def _ceil_times(tau: Fraction, value: float) -> int:
    return max(0, math.ceil(tau * Fraction(repr(float(value)))))


def _depth_of(rel_ranks: IntArray, needed: int) -> int | None:
    if needed <= 0:
        return 0
    return int(rel_ranks[needed - 1]) if len(rel_ranks) >= needed else None


def _floor_estimate(est: relevant.Estimate, floor: int, add: int, found: int) -> relevant.Estimate:
    """R estimates speak for the queue: add the relevant judged outside it (``add``, known exactly), keep every
    bound at least the relevant judged (``floor``), and recompute recall = F/R within [0, 1]."""
    if math.isnan(est.point):
        return est
    point = max(est.point + add, float(floor))
    lower = max(est.lower + add, float(floor))
    upper = None if est.upper is None else max(est.upper + add, lower)
    point = min(max(point, lower), upper) if upper is not None else max(point, lower)
    raised = [name for name, before, after in (("point", est.point + add, point), ("lower", est.lower + add, lower),
                                               ("upper", None if est.upper is None else est.upper + add, upper))
              if before is not None and after is not None and after > before]
    details = dict(est.details)
    if raised:
        details["raised_to_judged"] = ",".join(raised)
    if add:
        details["relevant_judged_outside_queue"] = add
    recall_point = min(1.0, found / point) if point > 0 else None
    recall_lower = None if upper is None else (min(1.0, found / upper) if upper > 0 else None)
    recall_upper = min(1.0, found / lower) if lower > 0 else None
    if est.method == Basis.DIRECT:  # direct recall is measured on the sample, not derived from R
        recall_point, recall_lower, recall_upper = est.recall_point, est.recall_lower, est.recall_upper
    return replace(est, point=point, lower=lower, upper=upper, details=details, recall_point=recall_point,
                   recall_lower=recall_lower, recall_upper=recall_upper)


def _elusion(found: int, rest_size: int, m: int, y: int, confidence: float, interval: str,
             sided: str) -> relevant.Estimate:
    method = "hypergeometric" if interval == "hypergeometric" else "clopper-pearson"
    return relevant.estimate_elusion(found, rest_size, m, y, confidence=confidence, method=method, sided=sided)


def assess(state: ReviewState, samples: Sequence[SampleDraw], targets: Sequence[str | float], *,
           confidence: float = 0.95, interval: str = "hypergeometric", stopping_target: str | float = "0.95",
           target_rule: str = "ceil") -> Assessment:
    """Everything the report says about depth, recall and stopping at the current cutoff (module docstring)."""
    if interval not in REPORT_INTERVALS:
        raise ValueError(f"interval must be one of {', '.join(REPORT_INTERVALS)}: approximate intervals (Wilson, "
                         f"Jeffreys, Agresti–Coull) under-cover one-sided and are not used for certified figures")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be strictly between 0 and 1, got {confidence!r}")
    labels = np.asarray(state.labels)
    size = len(labels)
    c = state.reviewed
    rel_queue = labels == 1
    prefix_rel_ranks = (np.flatnonzero(rel_queue[:c]) + 1).astype(np.int64)
    found = len(prefix_rel_ranks)
    judged_in_queue = int(np.count_nonzero(rel_queue))
    judged_in_rest = judged_in_queue - found
    relevant_judged = judged_in_queue if state.relevant_judged is None else max(state.relevant_judged,
                                                                                 judged_in_queue)
    population = size if state.population is None else max(state.population, size)
    rest_size = size - c
    if population > size:
        scope = "queue"
        scope_note = (f"the estimates cover the {size:,} documents of the queue only: {population - size:,} "
                      "documents of the population are outside it and are never sampled")
        outside = 0
        floor = judged_in_queue
    else:
        scope = "population"
        scope_note = "the queue holds the whole population"
        outside = relevant_judged - judged_in_queue
        floor = relevant_judged
    alpha = 1.0 - confidence

    # which samples speak for what --------------------------------------------------------------------------
    uses: list[SampleUse] = []
    rest_choice: tuple[SampleDraw, IntArray, IntArray] | None = None
    rest_key: tuple[int, int, int] | None = None
    population_choice: SampleDraw | None = None
    bands = [s for s in samples if s.frame_end is not None]
    for s in samples:
        if s.frame_end is not None:
            continue
        covers, r_ranks, r_labels = _rest_part(s, c, size)
        if covers and len(r_ranks) and rest_size:
            key = (len(r_ranks), s.drawn, -s.sample_id)
            if rest_key is None or key > rest_key:
                rest_key, rest_choice = key, (s, r_ranks, r_labels)
        if s.frame_start == 0 and len(s.ranks) and (population_choice is None or
                                                   (len(s.ranks), -s.sample_id) >
                                                   (len(population_choice.ranks), -population_choice.sample_id)):
            population_choice = s
    rest_sample = rest_choice[0] if rest_choice else None
    for s in samples:
        covers, r_ranks, r_labels = _rest_part(s, c, size)
        roles = []
        if rest_sample is not None and s.sample_id == rest_sample.sample_id:
            roles.append("rest")
        if population_choice is not None and s.sample_id == population_choice.sample_id:
            roles.append("population")
        if s.frame_end is not None:
            status = f"rank band {s.frame_start + 1}–{s.frame_end}: a stratum of the stratified estimate"
            role = "stratum"
        elif roles:
            role = "+".join(roles)
            parts = []
            if "rest" in roles:
                parts.append(f"{len(r_ranks):,} of its {s.drawn:,} documents are in the unreviewed rest "
                             f"(ranks > {c:,}): used as a random sample of it")
            if "population" in roles:
                parts.append("a random sample of the whole queue: used for the whole-queue rules")
            status = "; ".join(parts)
        elif not covers:
            status = (f"not used: its frame starts after rank {s.frame_start:,} but the review has reached only "
                      f"{c:,}, so it says nothing about ranks {c + 1:,}–{s.frame_start:,}")
        elif not rest_size:
            status = "not used: nothing is left unreviewed"
        elif not len(r_ranks):
            status = "superseded: the review has passed every document it drew"
        else:
            status = (f"not used: another sample has more documents in the unreviewed rest ({len(r_ranks):,} "
                      "here); the largest is used")
        uses.append(SampleUse(s.sample_id, role if (roles or s.frame_end is not None) else "unused", len(r_ranks),
                              int(np.count_nonzero(r_labels == 1)), (s.origin + ": " if s.origin else "") + status))

    # |R| by every basis -------------------------------------------------------------------------------------
    estimates: list[relevant.Estimate] = [relevant.estimate_judged(relevant_judged)]
    known = state.known_relevant if state.known_relevant is not None else (
        relevant_judged if state.fully_judged or (rest_size == 0 and population == size) else None)
    if known is not None:
        estimates.append(relevant.estimate_known(max(known, 0)))
    elusion_two = elusion_one = None
    if rest_size == 0 and known is None:
        elusion_two = elusion_one = relevant.estimate_elusion(found, 0, 0, 0, confidence=confidence)
    elif rest_choice is not None:
        _, r_ranks, r_labels = rest_choice
        m, y = len(r_ranks), int(np.count_nonzero(r_labels == 1))
        elusion_two = _elusion(found, rest_size, m, y, confidence, interval, "two")
        elusion_one = _elusion(found, rest_size, m, y, confidence, interval, "upper")
    if elusion_two is not None:
        assumptions = (*elusion_two.assumptions,
                       "a sample drawn at an earlier cutoff is rolled forward: its documents still unreviewed are a "
                       "random sample of the rest given their number, as long as the review's progress does not "
                       "depend on which documents were drawn")
        details = dict(elusion_two.details)
        if rest_sample is not None:
            details["sample_id"] = rest_sample.sample_id
        estimates.append(replace(elusion_two, assumptions=assumptions, details=details))
    if population_choice is not None:
        n = len(population_choice.ranks)
        y_all = int(np.count_nonzero(population_choice.labels == 1))
        estimates.append(relevant.estimate_srs(y_all, n, size, found=0, confidence=confidence,
                                               method="clopper-pearson",
                                               finite_population=interval == "hypergeometric"))
        if y_all:
            positives = population_choice.ranks[population_choice.labels == 1]
            estimates.append(relevant.direct_recall(int(np.count_nonzero(positives <= c)), y_all,
                                                    confidence=confidence, found=found))
    screened_one: relevant.Estimate | None = None
    if state.reviewed_random and 0 < c < size:
        # S itself is a simple random sample of the queue: found of c screened speaks for all size documents.
        # Only R and recall come from it; the whole-queue rules (QBCB, target, direct) would compare S with itself
        screened = relevant.estimate_srs(found, c, size, found=0, confidence=confidence, method="clopper-pearson",
                                         finite_population=interval == "hypergeometric")
        screened_one = relevant.estimate_srs(found, c, size, confidence=confidence, method="clopper-pearson",
                                             finite_population=interval == "hypergeometric", sided="upper")
        estimates.append(replace(screened, method=Basis.SCREENED, assumptions=SCREENED_ASSUMPTIONS))
    strata = _strata(bands, c, rel_queue, size)
    if strata is not None:
        estimates.append(relevant.estimate_stratified(strata, confidence=confidence))
    estimates = [e if e.method in (Basis.JUDGED, Basis.KNOWN) else _floor_estimate(e, floor, outside, found)
                 for e in estimates]
    basis = _choose(estimates)

    # the one-sided upper bound behind "conservative" and "reached" -------------------------------------------
    # the basis' one-sided estimate (R_U at the confidence, and recall ≥ F/R_U): the headline's "R ≤ …", the
    # "reached" test and the recall table's one-sided lower bound all read this one estimate
    conservative_upper: float | None = None
    basis_one: relevant.Estimate | None = None
    if basis.method == Basis.KNOWN:
        conservative_upper = basis.point
    elif basis.method == Basis.ELUSION and elusion_one is not None:
        basis_one = _floor_estimate(elusion_one, floor, outside, found)
    elif basis.method == Basis.SRS and population_choice is not None:
        n = len(population_choice.ranks)
        y_all = int(np.count_nonzero(population_choice.labels == 1))
        one = relevant.estimate_srs(y_all, n, size, confidence=confidence, method="clopper-pearson",
                                    finite_population=interval == "hypergeometric", sided="upper")
        basis_one = _floor_estimate(one, floor, outside, found)
    elif basis.method == Basis.SCREENED and screened_one is not None:
        basis_one = _floor_estimate(screened_one, floor, outside, found)
    elif basis.method in (Basis.STRATIFIED, Basis.DIRECT) and basis.upper is not None:
        # these intervals are two-sided; their upper bound is (more than) a one-sided bound at this confidence
        conservative_upper = basis.upper
    if basis_one is not None:
        conservative_upper = basis_one.upper

    # stopping rules at the stopping target ------------------------------------------------------------------
    tau_stop = _tau_of(stopping_target)
    rules = stopping_rules.evaluate(stopping_rules.Cutoff(
        (labels[:c] == 1).astype(np.int64), c, size, found, rest_size, tau_stop, alpha,
        population_choice.ranks[population_choice.labels == 1] if population_choice is not None
        else np.array([], dtype=np.int64),
        None if rest_choice is None else (len(rest_choice[1]), (rest_choice[2] == 1).astype(np.int64)),
        state.probabilities))
    certified_stop = [r for r in rules if r.kind == "certified" and r.stop_now and r.certifies == "reviewed prefix"]

    # the answer per target ----------------------------------------------------------------------------------
    answers = [_target_answer(_tau_of(t), basis, conservative_upper, prefix_rel_ranks, found, c, size, rest_size,
                              rest_choice, population_choice, certified_stop if _tau_of(t) == tau_stop else [],
                              labels, confidence, target_rule) for t in targets]
    if state.queue_ranks is not None:
        # ranks past the reviewed set are positions on the review order until here; the team reads queue ranks
        # ("review to rank k": the queue's unreviewed documents up to rank k); counts stay counts
        answers = [_on_queue_ranks(a, state.queue_ranks, c) for a in answers]

    recall = _recall_figures(basis, basis_one, found, relevant_judged, confidence, scope, certified_stop,
                             answers, tau_stop, outside, floor, population_choice, c)
    headline = _headline(answers, tau_stop, confidence, basis, conservative_upper, scope, c)
    return Assessment(size, c, found, scope, scope_note, estimates, basis, conservative_upper, answers, recall, rules,
                      uses, headline, None if rest_sample is None else rest_sample.sample_id,
                      None if population_choice is None else population_choice.sample_id,
                      {"relevant_judged_in_rest": judged_in_rest, "relevant_judged_outside_queue": outside,
                       "population": population, "rest_size": rest_size})


def _choose(estimates: list[relevant.Estimate]) -> relevant.Estimate:
    """The |R| estimate depths are computed from: known > elusion > stratified > srs > judged (lower bound).
    Direct recall gives R only through F/recall and is shown, not used as the basis."""
    order: list[str] = [Basis.KNOWN, Basis.ELUSION, Basis.STRATIFIED, Basis.SRS, Basis.SCREENED, Basis.JUDGED]
    usable = [e for e in estimates if e.method in order]
    return min(usable, key=lambda e: order.index(e.method))


def _strata(bands: Sequence[SampleDraw], reviewed: int, rel_queue: npt.NDArray[np.bool_],
            size: int) -> list[relevant.Stratum] | None:
    """Reviewed prefix (exact) plus rank-band samples that together cover the rest of the queue exactly."""
    if not bands:
        return None
    strata = [relevant.Stratum("reviewed", reviewed, reviewed, int(np.count_nonzero(rel_queue[:reviewed])),
                               reviewed=True, found=True)] if reviewed else []
    covered = reviewed
    for s in sorted(bands, key=lambda b: b.frame_start):
        assert s.frame_end is not None
        if s.frame_start != covered:
            return None
        strata.append(relevant.Stratum(f"ranks {s.frame_start + 1}-{s.frame_end}", s.frame_end - s.frame_start,
                                       len(s.ranks), int(np.count_nonzero(s.labels == 1)), reviewed=False,
                                       found=False))
        covered = s.frame_end
    return strata if covered == size else None


def _target_answer(tau: Fraction, basis: relevant.Estimate, upper_one: float | None, rel_ranks: IntArray,
                   found: int, c: int, size: int, rest_size: int,
                   rest_choice: tuple[SampleDraw, IntArray, IntArray] | None, population: SampleDraw | None,
                   certified_stop: list[stopping.StoppingEvidence], labels: LabelArray, confidence: float,
                   target_rule: str) -> TargetAnswer:
    t = float(tau)
    empty: dict[str, Any] = dict(needed=None, depth=None, point_needed=None, point_depth=None, point_reached=None,
                 conservative_needed=None, conservative_depth=None, conservative_reached=None,
                 conservative_forward=None, certified_depth=None,
                 forward_depth=None, forward_low=None, forward_high=None, more_documents=None, more_low=None,
                 more_high=None, forward_basis=None)
    if basis.method == Basis.KNOWN:
        r = int(basis.point)
        all_ranks = (np.flatnonzero(labels == 1) + 1).astype(np.int64)
        if r == 0:
            return TargetAnswer(t, AnswerStatus.REACHED, "R known: there is no relevant document", **{
                **empty, "needed": 0, "depth": 0}, basis="R = 0 (known)")
        [row] = depth_to_recall(all_ranks[:r], r, [str(tau)], rule=target_rule)
        reached = row.depth is not None and row.depth <= c
        status = AnswerStatus.REACHED if reached else AnswerStatus.NOT_REACHED
        text = f"R = {r:,} known"
        out_known: dict[str, Any] = {**empty, "needed": row.needed, "depth": row.depth if reached else None}
        if not reached:
            if row.depth is not None and bool(np.all(labels[:row.depth] >= 0)):
                # every document up to the needed relevant one is judged: the depth is exact
                out_known.update(depth=row.depth, forward_depth=row.depth, more_documents=row.depth - c,
                                 forward_basis="exact: R is known and every document up to that depth is judged")
            else:
                if row.depth is None:
                    text += f"; only {len(all_ranks):,} of the {row.needed:,} relevant documents needed are judged"
                else:
                    text += (f"; the {row.needed:,}th judged relevant document is at rank {row.depth:,}, an upper "
                             "bound on the depth (unjudged documents lie before it)")
                known_estimate = relevant.estimate_known(r)
                out_known.update(_forward(tau, known_estimate, float(r), found, c, size, rest_size, rest_choice,
                                          labels))
                if row.depth is not None and (out_known["forward_depth"] is None
                                              or out_known["forward_depth"] > row.depth):
                    out_known.update(forward_depth=row.depth, more_documents=row.depth - c, forward_low=None,
                                     forward_high=None, more_low=None, more_high=None,
                                     forward_basis="upper bound: the judged relevant documents reach the need there")
        return TargetAnswer(t, status, "R known" if reached else None, **out_known, basis=text)

    out: dict[str, Any] = dict(empty)
    parts = [f"R estimate {basis.method} = {basis.point:g}"]
    if basis.method != Basis.JUDGED:
        out["point_needed"] = _ceil_times(tau, basis.point)
        out["point_depth"] = _depth_of(rel_ranks, out["point_needed"])
        out["point_reached"] = found >= out["point_needed"]
    if upper_one is not None:
        out["conservative_needed"] = _ceil_times(tau, upper_one)
        out["conservative_depth"] = _depth_of(rel_ranks, out["conservative_needed"])
        out["conservative_reached"] = found >= out["conservative_needed"]
        parts.append(f"one-sided {confidence:.0%} upper bound {upper_one:g}")
    if population is not None and 0 < tau < 1:
        positives = np.sort(population.ranks[population.labels == 1])
        j = stopping.qbcb_threshold(len(positives), tau, 1 - confidence)
        if j is not None:
            out["certified_depth"] = int(positives[j - 1])
    reached_by = None
    if tau < 1 and out["conservative_reached"]:
        reached_by = (f"the elusion test (one-sided {confidence:.0%})" if basis.method == Basis.ELUSION
                      else f"the {basis.method} upper bound (one-sided {confidence:.0%})")
    elif tau < 1 and certified_stop:
        # one criterion decides "reached" (taking whichever of several tests fires would spend α several times);
        # a rule that disagrees is named, not obeyed
        parts.append(f"rule {certified_stop[0].rule} would stop here; it is a different test, so the status "
                     "follows the basis' one-sided bound")
    if basis.method == Basis.JUDGED:
        status = AnswerStatus.UNKNOWN
    elif reached_by is not None:
        status = AnswerStatus.REACHED
    else:
        status = AnswerStatus.NOT_REACHED
    if tau == 1 and status == AnswerStatus.NOT_REACHED:
        parts.append("recall 1 can only be confirmed by judging every document")
    if status != AnswerStatus.REACHED:
        out.update(_forward(tau, basis, upper_one, found, c, size, rest_size, rest_choice, labels))
    if status == AnswerStatus.NOT_REACHED and out["point_reached"] and 0 < tau < 1 and rest_size:
        # the point projection says "already met": what is missing is certification, and it has a floor
        out.update(forward_depth=None, more_documents=None, forward_low=None, more_low=None,
                   certify_floor=certification_floor(found, rest_size, tau, confidence))
    return TargetAnswer(t, status, reached_by, **out, basis="; ".join(parts))


def _forward(tau: Fraction, basis: relevant.Estimate, upper_one: float | None, found: int, c: int, size: int,
             rest_size: int, rest_choice: tuple[SampleDraw, IntArray, IntArray] | None,
             labels: LabelArray) -> dict[str, Any]:
    """Where to review to: from the rest sample's positive ranks when there is one, else the recent yield
    (heuristic). The range comes from the two-sided interval on R."""
    if rest_size == 0:
        return {}
    if basis.method == Basis.SCREENED and rest_choice is None:
        return _forward_in_random_order(tau, basis, found, rest_size)
    if rest_choice is not None and basis.method != Basis.JUDGED:
        sample, r_ranks, r_labels = rest_choice
        positives = np.sort(r_ranks[r_labels == 1])
        m = len(r_ranks)
        point = forward_depth(found, c, rest_size, m, positives, basis.point, tau)
        low = forward_depth(found, c, rest_size, m, positives, basis.lower, tau)
        high_r = basis.upper if basis.upper is not None else upper_one
        high = None if high_r is None else forward_depth(found, c, rest_size, m, positives, high_r, tau)
        conservative = None if upper_one is None else forward_depth(found, c, rest_size, m, positives, upper_one,
                                                                    tau)
        text = (f"projected from the ranks of the {len(positives)} positives among the {m:,} documents of sample "
                f"{sample.sample_id} in the unreviewed rest; range from the {basis.method} interval on R")
        if point.beyond_sample or (high is not None and high.beyond_sample):
            text += "; the sample cannot locate documents past its last positive: the range runs to the queue's end"
        return {"forward_depth": point.depth, "forward_low": low.depth,
                "forward_high": None if high is None else high.depth, "more_documents": point.more_documents,
                "more_low": low.more_documents, "more_high": None if high is None else high.more_documents,
                "conservative_forward": None if conservative is None else conservative.depth,
                "forward_basis": text}
    projection = recent_yield_projection(labels[:c], rest_size, found, tau)
    if projection is None or projection.more_documents is None:
        return {"forward_basis": "heuristic: no relevant document among the recently reviewed, so the recent yield "
                                 "cannot project a depth; draw a sample"}
    return {"forward_depth": c + projection.more_documents, "more_documents": projection.more_documents,
            "forward_basis": f"heuristic: {projection.basis}"}


def _more_in_random_order(tau: Fraction, relevant_total: float, found: int, rest_size: int) -> int:
    """Documents still to screen, in a random order, until ⌈τ·R⌉ relevant are found when R = ``relevant_total``:
    the k-th of b relevant documents in a random order of N_u comes at k(N_u + 1)/(b + 1) on average."""
    need = _ceil_times(tau, relevant_total) - found
    left = max(0, math.floor(relevant_total + 1e-9) - found)
    if need <= 0:
        return 0
    if need > left:
        return rest_size
    return min(rest_size, math.ceil(need * (rest_size + 1) / (left + 1)))


def _forward_in_random_order(tau: Fraction, basis: relevant.Estimate, found: int, rest_size: int) -> dict[str, Any]:
    """How many more to screen when the screening order is declared random: no rank to review to (the order is
    not the queue's), a count with its range from the interval on R."""
    bounds = [_more_in_random_order(tau, r, found, rest_size) for r in (basis.lower, basis.upper) if r is not None]
    return {"more_documents": _more_in_random_order(tau, basis.point, found, rest_size),
            "more_low": min(bounds) if bounds else None, "more_high": max(bounds) if bounds else None,
            "forward_basis": "random screening order (declared): the k-th of the b relevant documents left comes, "
                             "on average, after k(N_u + 1)/(b + 1) more screened; range from the interval on R"}


def _recall_figures(basis: relevant.Estimate, basis_one: relevant.Estimate | None, found: int,
                    relevant_judged: int, confidence: float, scope: str,
                    certified_stop: list[stopping.StoppingEvidence], answers: list[TargetAnswer],
                    tau_stop: Fraction, outside: int, floor: int, population: SampleDraw | None,
                    c: int) -> list[RecallFigure]:
    """One recall per basis, each labelled with its sidedness, confidence and caveat."""
    out: list[RecallFigure] = []
    stop_answer = next((a for a in answers if a.target == float(tau_stop)), None)
    decided_by_sample = (stop_answer is not None and stop_answer.status == AnswerStatus.REACHED
                         and basis.method not in (Basis.KNOWN, Basis.JUDGED))
    if basis.method == Basis.KNOWN:
        value = found / basis.point if basis.point > 0 else 1.0
        out.append(RecallFigure(Basis.KNOWN, value, value, value, value, 1.0, scope, "exact: R is known"))
    elif basis.method != Basis.JUDGED:
        one_sided = None
        if basis_one is not None:
            one_sided = basis_one.recall_lower
        elif basis.recall_lower is not None:
            # stratified: its two-sided lower bound, which is (more than) a one-sided bound at this confidence
            one_sided = basis.recall_lower
        note = (f"two-sided {confidence:.0%} interval and one-sided {confidence:.0%} lower bound from the "
                f"{basis.method} estimate of R")
        if decided_by_sample:
            note += ("; conditional: the same sample decided that the target is reached, and given that decision "
                     "this interval is optimistic; a fresh sample drawn now gives an unconditional one")
        out.append(RecallFigure(basis.method, basis.recall_point, basis.recall_lower, basis.recall_upper,
                                one_sided, confidence, scope, note))
    if population is not None:
        positives = population.ranks[population.labels == 1]
        if len(positives):
            f = int(np.count_nonzero(positives <= c))
            direct = relevant.direct_recall(f, len(positives), confidence=confidence)
            one = relevant.direct_recall(f, len(positives), confidence=confidence, sided="lower")
            out.append(RecallFigure(Basis.DIRECT, direct.recall_point, direct.recall_lower, direct.recall_upper,
                                    one.recall_lower, confidence, scope,
                                    f"{f} of the {len(positives)} positives of the whole-queue sample lie in the "
                                    "reviewed prefix (Clopper–Pearson, conditional on the number of positives)"))
    if floor > 0:
        # the relevant documents judged in the estimates' own scope (the queue's, when the scope is the queue)
        value = found / floor
        out.append(RecallFigure(Basis.JUDGED, None, None, value, None, 1.0, scope,
                                "relevant in the reviewed prefix over relevant judged so far: an upper bound on "
                                "recall, not an estimate"))
    return out


def _headline(answers: list[TargetAnswer], tau: Fraction, confidence: float, basis: relevant.Estimate,
              upper_one: float | None, scope: str = "population", reviewed: int = 0) -> Headline:
    """The status for the stopping target in words that start with its code (``reached`` / ``not reached`` /
    ``unknown``) and name the recall's scope when the queue is not the whole population."""
    answer = next((a for a in answers if a.target == float(tau)), answers[0] if answers else None)
    if answer is None:
        return Headline(float(tau), AnswerStatus.UNKNOWN, "unknown: no target", confidence, None)
    pct = f"{answer.target * 100:g}% recall" + (" of the queue's relevant documents" if scope == "queue" else "")
    step: NextStep | None = None
    counts: tuple[int, ...] = ()
    if answer.status == AnswerStatus.REACHED:
        text = f"{pct}: reached, by {answer.reached_by}"
        if basis.method not in (Basis.KNOWN, Basis.JUDGED):
            step = NextStep.STATE_RECALL
    elif answer.status == AnswerStatus.NOT_REACHED and answer.point_reached and upper_one is not None:
        text = (f"{pct}: not reached (not certified: the point estimate is met; R ≤ {upper_one:,.0f} at "
                f"{confidence:.0%} one-sided)")
        if answer.certify_floor:
            text += f"; to certify: at least {answer.certify_floor:,} more judged documents"
            step, counts = NextStep.CERTIFY_FLOOR, (answer.certify_floor,)
        else:
            step = NextStep.CERTIFY
    elif answer.status == AnswerStatus.NOT_REACHED:
        text = f"{pct}: not reached"
        if answer.more_documents is not None and answer.forward_depth is None and basis.method == Basis.SCREENED:
            rng = ""
            if answer.more_low is not None and answer.more_high is not None:
                rng = f" [{answer.more_low:,}–{answer.more_high:,}]"
            text += (f"; about {answer.more_documents:,} more documents{rng} after the {reviewed:,} screened, in "
                     "the same random order")
            step, counts = NextStep.SCREEN_MORE, (answer.more_documents,)
        elif answer.more_documents is not None and answer.forward_depth is not None:
            rng = ""
            if answer.more_low is not None and answer.more_high is not None:
                rng = f" [{answer.more_low:,}–{answer.more_high:,}]"
            text += (f"; about {answer.more_documents:,} more documents{rng} after the {reviewed:,} reviewed, to "
                     f"rank {answer.forward_depth:,}")
            step, counts = NextStep.REVIEW_MORE, (answer.more_documents, answer.forward_depth)
        else:
            step = NextStep.REVIEW_ON
    else:
        text = f"{pct}: unknown (no random sample)"
        if answer.more_documents is not None:
            text += f"; heuristic guess: {answer.more_documents:,} more documents"
        step = NextStep.DRAW_SAMPLE
    return Headline(answer.target, answer.status, text, confidence, step, counts)
