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
from reviewdepth.estimation.count_bound import certification_floor
from reviewdepth.estimation.depth_unknown import forward_depth, recent_yield_projection
from reviewdepth.estimation.percent import percent
from reviewdepth.measures.depth import depth_at_count, depth_to_recall, exact_fraction, target_count_estimated

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


class SampleStatus(StrEnum):
    """Why a sample is used or not at the current cutoff (`reviewdepth.report.wording.sample_status` says it)."""

    STRATUM = "stratum"  # a rank band's sample: a stratum of the stratified estimate
    USED = "used"  # the rest sample, the whole-queue sample, or both (``SampleUse.role``)
    NOT_COVERED = "not covered"  # its frame starts past the reviewed prefix: ranks in between are unsampled
    NOTHING_LEFT = "nothing left"  # nothing is left unreviewed
    SUPERSEDED = "superseded"  # the review has passed every document it drew
    NOT_LARGEST = "not largest"  # another sample has more documents in the unreviewed rest


@dataclass(frozen=True)
class SampleUse:
    """How one sample is used at the current cutoff: ``role`` is ``rest`` / ``population`` / ``rest+population`` /
    ``stratum`` / ``unused``, and ``status`` why, as a code, with the figures its sentence names (the sample's
    ``origin``, its documents ``drawn`` and frame, the ``reviewed`` prefix)."""

    sample_id: int
    role: str
    in_rest: int
    rest_positives: int
    status: SampleStatus
    origin: str = ""
    drawn: int = 0
    frame_start: int = 0
    frame_end: int | None = None
    reviewed: int = 0


@dataclass(frozen=True)
class ReachedBy:
    """What reached a target, as a code (`reviewdepth.report.wording.reached_by` says it): the ``basis``' one-sided
    upper bound at ``confidence`` (the elusion test when the basis is the rest sample's), or R itself when the
    basis is ``known`` (``no_relevant``: R = 0)."""

    basis: Basis
    confidence: float | None = None
    no_relevant: bool = False


@dataclass(frozen=True)
class NeedFigure:
    """The relevant documents ``needed`` for a target at one value of R, the ``depth`` (queue rank) where the
    reviewed prefix holds them, and whether it does (``reached``); None: not computed on this basis."""

    needed: int | None = None
    depth: int | None = None
    reached: bool | None = None


@dataclass(frozen=True)
class ConservativeFigure(NeedFigure):
    """The need at the one-sided upper bound R_U, and ``forward``: the projected rank where it is met."""

    forward: int | None = None


@dataclass(frozen=True)
class RankRange:
    """The queue rank to review to (``depth``), with its range ``low``–``high``."""

    depth: int | None = None
    low: int | None = None
    high: int | None = None


@dataclass(frozen=True)
class CountRange:
    """The documents still to review (``documents``), with its range ``low``–``high``."""

    documents: int | None = None
    low: int | None = None
    high: int | None = None


@dataclass(frozen=True)
class Projection:
    """Where reviewing on reaches the target when it is not reached: the rank to review to, the documents that
    means, and how it was projected (``basis``)."""

    to_rank: RankRange = field(default_factory=RankRange)
    more: CountRange = field(default_factory=CountRange)
    basis: str | None = None


@dataclass(frozen=True)
class TargetAnswer:
    """The answer for one target recall.

    ``status``: ``reached`` / ``not reached`` / ``unknown``; ``reached_by`` the evidence, as a code; ``needed`` and
    ``depth``: from R itself when known. ``point``: the need and depth from the point estimate R̂ (labelled point,
    never "reached" by itself). ``conservative``: from the one-sided upper bound R_U, with the projected rank
    where it is met. ``forward``: when not reached, the projected rank to review to and the documents that means
    (point and range), with how it was projected. ``certified_depth``: QBCB's depth from a whole-queue sample
    (certified for the stopping target).

    When the point estimate is met but the target is not reached, reviewing on is not what is missing: the answer
    is what certification costs. The projection's rank and documents and their low ends are then None (the point
    projection sits at the current depth, and "0 more" would read as done; the high end stays: the documents to
    review if R is at its upper bound), and ``certify_floor`` is n_min(F, N_u) at this target
    (`count_bound.certification_floor`): no random-sample design certifies it with fewer further judged documents."""

    target: float
    status: AnswerStatus
    reached_by: ReachedBy | None
    basis: str
    needed: int | None = None
    depth: int | None = None
    point: NeedFigure = field(default_factory=NeedFigure)
    conservative: ConservativeFigure = field(default_factory=ConservativeFigure)
    certified_depth: int | None = None
    forward: Projection = field(default_factory=Projection)
    certify_floor: int | None = None


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
    """The first lines of every report as codes and numbers (`reviewdepth.report.wording.headline` says them): the
    stopping target and its status, the confidence, the next step (a code and its counts: the documents to
    certify, or to review and the rank to review to), and what the sentence names beside them: the recall's
    ``scope``, the evidence that reached the target, R_U (``upper``) when the point estimate is met but the target
    is not certified, the range of the documents to review, the ``reviewed`` count, and without a random sample
    the recent yield's ``guess`` of the documents to review. ``no_target``: no target was asked for."""

    target: float
    status: AnswerStatus
    confidence: float
    step: NextStep | None
    step_counts: tuple[int, ...] = ()
    scope: str = "population"
    reached_by: ReachedBy | None = None
    upper: float | None = None
    more_range: tuple[int, int] | None = None
    reviewed: int = 0
    guess: int | None = None
    no_target: bool = False


@dataclass(frozen=True)
class Assessment:
    queue_size: int
    reviewed: int
    found: int
    scope: str
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
    # the counts behind the figures (judged relevant in the rest and outside the queue, population, rest size)
    details: dict[str, int] = field(default_factory=dict)


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
    # the first unjudged position (argmax stops at the first True), without listing every unjudged one
    unjudged = labels == UNJUDGED
    first = int(np.argmax(unjudged)) if len(labels) else 0
    c = first if len(labels) and unjudged[first] else len(labels)
    if sample_ranks is not None and len(sample_ranks) and c:
        drawn = np.zeros(c + 1, dtype=bool)
        inside = sample_ranks[(sample_ranks >= 1) & (sample_ranks <= c)]
        drawn[inside] = True
        while c > 0 and drawn[c]:
            c -= 1
    return c


# --- the context: one cutoff of one review -------------------------------------------------------------------


@dataclass(frozen=True)
class ReviewCutoff:
    """The figures of the reviewed set at the current cutoff and the settings the answer is computed with: what
    every phase of :func:`assess` reads. ``prefix_relevant``: queue ranks of the relevant documents in the reviewed
    prefix (F = ``found`` of them); ``floor``: the relevant judged in the estimates' scope, every bound on R at
    least this; ``outside``: relevant judged outside the queue, added to the queue's estimates (0 when the scope is
    the queue); ``known``: R when it is known (given, or everything is judged)."""

    labels: LabelArray
    size: int
    reviewed: int
    prefix_relevant: IntArray
    relevant_judged: int
    judged_in_queue: int
    population: int
    scope: str
    outside: int
    floor: int
    known: int | None
    reviewed_random: bool
    confidence: float
    interval: str
    stopping_target: Fraction
    target_rule: str

    @property
    def found(self) -> int:
        return len(self.prefix_relevant)

    @property
    def rest_size(self) -> int:
        return self.size - self.reviewed

    @property
    def alpha(self) -> float:
        return 1.0 - self.confidence

    @property
    def finite_population(self) -> bool:
        return self.interval == "hypergeometric"


@dataclass(frozen=True)
class RestSample:
    """The sample chosen for the unreviewed rest: its documents there (queue ranks, 1/0 labels)."""

    draw: SampleDraw
    ranks: IntArray
    labels: IntArray

    @property
    def positives(self) -> IntArray:
        return np.sort(self.ranks[self.labels == 1])


@dataclass(frozen=True)
class SampleChoice:
    """Which samples speak for what at the cutoff (the module docstring's "Choosing among samples"): the rest
    sample, the whole-queue sample, and the rank-band samples (strata)."""

    rest: RestSample | None
    population: SampleDraw | None
    bands: list[SampleDraw]

    @property
    def population_positives(self) -> IntArray:
        """Queue ranks of the whole-queue sample's positives, in draw order (empty: no such sample)."""
        if self.population is None:
            return np.array([], dtype=np.int64)
        positives: IntArray = self.population.ranks[self.population.labels == 1]
        return positives


@dataclass(frozen=True)
class RelevantEstimates:
    """|R| by every basis the evidence allows (in report order), and the one-sided estimates kept for the basis."""

    all: list[relevant.Estimate]
    elusion_one: relevant.Estimate | None
    screened_one: relevant.Estimate | None


@dataclass(frozen=True)
class DepthBasis:
    """The |R| estimate depths are computed from, its one-sided estimate (R_U at the confidence, and recall ≥ F/R_U)
    and that upper bound R_U: the headline's "R ≤ …", the "reached" test and the recall table's one-sided lower
    bound all read this one bound."""

    estimate: relevant.Estimate
    one_sided: relevant.Estimate | None
    upper: float | None

    @property
    def method(self) -> str:
        return self.estimate.method


def assess(state: ReviewState, samples: Sequence[SampleDraw], targets: Sequence[str | float], *,
           confidence: float = 0.95, interval: str = "hypergeometric", stopping_target: str | float = "0.95",
           target_rule: str = "ceil", heuristics: bool = True) -> Assessment:
    """Everything the report says about depth, recall and stopping at the current cutoff (module docstring), in
    phases over one :class:`ReviewCutoff`: which samples speak for what, |R| by every basis, the depth basis, the
    stopping rules, the answer per target, recall per basis and the headline. ``heuristics`` False: the heuristic
    rules are not evaluated (`Assessment.stopping` then lists none; every other figure is the same)."""
    cut = review_cutoff(state, confidence=confidence, interval=interval, stopping_target=stopping_target,
                        target_rule=target_rule)
    chosen = choose_samples(cut, samples)
    uses = [sample_use(cut, chosen, s) for s in samples]
    estimates = relevant_estimates(cut, chosen)
    basis = depth_basis(cut, chosen, estimates)
    rules = stopping_evidence(cut, chosen, state.probabilities, heuristics=heuristics)
    certified_stop = [r for r in rules if r.kind == "certified" and r.stop_now and r.certifies == "reviewed prefix"]
    answers = [target_answer(cut, basis, chosen, _tau_of(t),
                             certified_stop if _tau_of(t) == cut.stopping_target else []) for t in targets]
    if state.queue_ranks is not None:
        # ranks past the reviewed set are positions on the review order until here; the team reads queue ranks
        # ("review to rank k": the queue's unreviewed documents up to rank k); counts stay counts
        answers = [_on_queue_ranks(a, state.queue_ranks, cut.reviewed) for a in answers]
    recall = recall_figures(cut, basis, chosen, answers)
    return Assessment(cut.size, cut.reviewed, cut.found, cut.scope, estimates.all, basis.estimate,
                      basis.upper, answers, recall, rules, uses, headline(cut, basis, answers),
                      None if chosen.rest is None else chosen.rest.draw.sample_id,
                      None if chosen.population is None else chosen.population.sample_id,
                      {"relevant_judged_in_rest": cut.judged_in_queue - cut.found,
                       "relevant_judged_outside_queue": cut.outside, "population": cut.population,
                       "rest_size": cut.rest_size})


# --- phase 1: the figures of the reviewed set ---------------------------------------------------------------


def review_cutoff(state: ReviewState, *, confidence: float, interval: str, stopping_target: str | float,
                  target_rule: str) -> ReviewCutoff:
    """The cutoff's figures: F, the relevant judged, the population and the estimates' scope, R when known."""
    if interval not in REPORT_INTERVALS:
        raise ValueError(f"interval must be one of {', '.join(REPORT_INTERVALS)}: approximate intervals (Wilson, "
                         f"Jeffreys, Agresti–Coull) under-cover one-sided and are not used for certified figures")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be strictly between 0 and 1, got {confidence!r}")
    labels = np.asarray(state.labels)
    size, c = len(labels), state.reviewed
    rel_queue = labels == 1
    judged_in_queue = int(np.count_nonzero(rel_queue))
    relevant_judged = judged_in_queue if state.relevant_judged is None else max(state.relevant_judged,
                                                                                 judged_in_queue)
    population = size if state.population is None else max(state.population, size)
    if population > size:
        scope, outside, floor = "queue", 0, judged_in_queue
    else:
        scope, outside, floor = "population", relevant_judged - judged_in_queue, relevant_judged
    known = state.known_relevant if state.known_relevant is not None else (
        relevant_judged if state.fully_judged or (size == c and population == size) else None)
    return ReviewCutoff(labels, size, c, (np.flatnonzero(rel_queue[:c]) + 1).astype(np.int64), relevant_judged,
                        judged_in_queue, population, scope, outside, floor, known, state.reviewed_random,
                        confidence, interval, _tau_of(stopping_target), target_rule)


# --- phase 2: which samples speak for what ----------------------------------------------------------------------


def _rest_part(sample: SampleDraw, reviewed: int, size: int) -> tuple[bool, IntArray, IntArray]:
    """(usable, ranks, labels) of the sample's documents in the current rest (ranks > reviewed)."""
    covers = sample.frame_start <= reviewed and (sample.frame_end is None or sample.frame_end >= size)
    keep = sample.ranks > reviewed
    return covers, sample.ranks[keep], sample.labels[keep]


def choose_samples(cut: ReviewCutoff, samples: Sequence[SampleDraw]) -> SampleChoice:
    """The rest sample (most documents in the rest; ties: more drawn, then older) and the whole-queue sample (the
    largest; ties: older)."""
    whole = [s for s in samples if s.frame_end is None]
    rest: RestSample | None = None
    if cut.rest_size:
        parts = [(s, *_rest_part(s, cut.reviewed, cut.size)) for s in whole]
        usable = [(len(ranks), s.drawn, -s.sample_id, RestSample(s, ranks, labels))
                  for s, covers, ranks, labels in parts if covers and len(ranks)]
        rest = max(usable, key=lambda u: u[:3])[3] if usable else None
    queue_wide = [s for s in whole if s.frame_start == 0 and len(s.ranks)]
    population = max(queue_wide, key=lambda s: (len(s.ranks), -s.sample_id)) if queue_wide else None
    return SampleChoice(rest, population, [s for s in samples if s.frame_end is not None])


def sample_use(cut: ReviewCutoff, chosen: SampleChoice, sample: SampleDraw) -> SampleUse:
    """How ``sample`` is used at the cutoff, and why (as a code)."""
    covers, r_ranks, r_labels = _rest_part(sample, cut.reviewed, cut.size)
    roles = [role for role, draw in (("rest", None if chosen.rest is None else chosen.rest.draw),
                                     ("population", chosen.population))
             if draw is not None and draw.sample_id == sample.sample_id]
    if sample.frame_end is not None:
        role, status = "stratum", SampleStatus.STRATUM
    elif roles:
        role, status = "+".join(roles), SampleStatus.USED
    elif not covers:
        role, status = "unused", SampleStatus.NOT_COVERED
    elif not cut.rest_size:
        role, status = "unused", SampleStatus.NOTHING_LEFT
    elif not len(r_ranks):
        role, status = "unused", SampleStatus.SUPERSEDED
    else:
        role, status = "unused", SampleStatus.NOT_LARGEST
    return SampleUse(sample.sample_id, role, len(r_ranks), int(np.count_nonzero(r_labels == 1)), status,
                     sample.origin, sample.drawn, sample.frame_start, sample.frame_end, cut.reviewed)


# --- phase 3: |R| by every basis --------------------------------------------------------------------------------


def relevant_estimates(cut: ReviewCutoff, chosen: SampleChoice) -> RelevantEstimates:
    """|R| by every basis the evidence allows: judged (a lower bound), known, elusion, whole-queue SRS and direct
    recall, the screened set declared random, stratified; each but judged and known floored at the judged."""
    estimates: list[relevant.Estimate] = [relevant.estimate_judged(cut.relevant_judged)]
    if cut.known is not None:
        estimates.append(relevant.estimate_known(max(cut.known, 0)))
    elusion_two, elusion_one = _elusion_estimates(cut, chosen.rest)
    if elusion_two is not None:
        estimates.append(elusion_two)
    estimates += _whole_queue_estimates(cut, chosen.population)
    screened_one: relevant.Estimate | None = None
    if cut.reviewed_random and 0 < cut.reviewed < cut.size:
        # S itself is a simple random sample of the queue: found of c screened speaks for all size documents.
        # Only R and recall come from it; the whole-queue rules (QBCB, target, direct) would compare S with itself
        screened = relevant.estimate_srs(cut.found, cut.reviewed, cut.size, found=0, confidence=cut.confidence,
                                         method="clopper-pearson", finite_population=cut.finite_population)
        screened_one = relevant.estimate_srs(cut.found, cut.reviewed, cut.size, confidence=cut.confidence,
                                             method="clopper-pearson", finite_population=cut.finite_population,
                                             sided="upper")
        estimates.append(replace(screened, method=Basis.SCREENED, assumptions=SCREENED_ASSUMPTIONS))
    strata = _strata(chosen.bands, cut.reviewed, cut.labels == 1, cut.size)
    if strata is not None:
        estimates.append(relevant.estimate_stratified(strata, confidence=cut.confidence))
    floored = [e if e.method in (Basis.JUDGED, Basis.KNOWN) else _floor_estimate(cut, e) for e in estimates]
    return RelevantEstimates(floored, elusion_one, screened_one)


def _elusion(cut: ReviewCutoff, m: int, y: int, sided: str) -> relevant.Estimate:
    method = "hypergeometric" if cut.interval == "hypergeometric" else "clopper-pearson"
    return relevant.estimate_elusion(cut.found, cut.rest_size, m, y, confidence=cut.confidence, method=method,
                                     sided=sided)


def _elusion_estimates(cut: ReviewCutoff, rest: RestSample | None,
                       ) -> tuple[relevant.Estimate | None, relevant.Estimate | None]:
    """The elusion estimate (two-sided, as reported) and its one-sided upper estimate."""
    if cut.rest_size == 0 and cut.known is None:
        two = one = relevant.estimate_elusion(cut.found, 0, 0, 0, confidence=cut.confidence)
    elif rest is not None:
        m, y = len(rest.ranks), int(np.count_nonzero(rest.labels == 1))
        two, one = _elusion(cut, m, y, "two"), _elusion(cut, m, y, "upper")
    else:
        return None, None
    assumptions = (*two.assumptions,
                   "a sample drawn at an earlier cutoff is rolled forward: its documents still unreviewed are a "
                   "random sample of the rest given their number, as long as the review's progress does not "
                   "depend on which documents were drawn")
    details = dict(two.details)
    if rest is not None:
        details["sample_id"] = rest.draw.sample_id
    return replace(two, assumptions=assumptions, details=details), one


def _whole_queue_estimates(cut: ReviewCutoff, population: SampleDraw | None) -> list[relevant.Estimate]:
    """SRS prevalence and direct recall from the whole-queue sample."""
    if population is None:
        return []
    n = len(population.ranks)
    y_all = int(np.count_nonzero(population.labels == 1))
    out = [relevant.estimate_srs(y_all, n, cut.size, found=0, confidence=cut.confidence, method="clopper-pearson",
                                 finite_population=cut.finite_population)]
    if y_all:
        positives = population.ranks[population.labels == 1]
        out.append(relevant.direct_recall(int(np.count_nonzero(positives <= cut.reviewed)), y_all,
                                          confidence=cut.confidence, found=cut.found))
    return out


def _floor_estimate(cut: ReviewCutoff, est: relevant.Estimate) -> relevant.Estimate:
    """R estimates speak for the queue: add the relevant judged outside it (known exactly), keep every bound at
    least the relevant judged (the cutoff's floor), and recompute recall = F/R within [0, 1]."""
    if math.isnan(est.point):
        return est
    add, floor = cut.outside, float(cut.floor)
    point = max(est.point + add, floor)
    lower = max(est.lower + add, floor)
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
    if est.method == Basis.DIRECT:  # direct recall is measured on the sample, not derived from R
        recall = est.recall_point, est.recall_lower, est.recall_upper
    else:
        recall = _recall_of(cut.found, point, lower, upper)
    return replace(est, point=point, lower=lower, upper=upper, details=details, recall_point=recall[0],
                   recall_lower=recall[1], recall_upper=recall[2])


def _recall_of(found: int, point: float, lower: float, upper: float | None,
               ) -> tuple[float | None, float | None, float | None]:
    """Recall F/R (point, lower, upper) within [0, 1] for R = point in [lower, upper]."""
    recall_point = min(1.0, found / point) if point > 0 else None
    recall_lower = None if upper is None else (min(1.0, found / upper) if upper > 0 else None)
    recall_upper = min(1.0, found / lower) if lower > 0 else None
    return recall_point, recall_lower, recall_upper


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


# --- phase 4: the depth basis and its one-sided bound ------------------------------------------------------


def depth_basis(cut: ReviewCutoff, chosen: SampleChoice, estimates: RelevantEstimates) -> DepthBasis:
    """The basis (:func:`_choose`) and the one-sided upper bound behind "conservative" and "reached"."""
    basis = _choose(estimates.all)
    one: relevant.Estimate | None = None
    if basis.method == Basis.KNOWN:
        return DepthBasis(basis, None, basis.point)
    if basis.method == Basis.ELUSION:
        one = estimates.elusion_one
    elif basis.method == Basis.SRS and chosen.population is not None:
        population = chosen.population
        one = relevant.estimate_srs(int(np.count_nonzero(population.labels == 1)), len(population.ranks), cut.size,
                                    confidence=cut.confidence, method="clopper-pearson",
                                    finite_population=cut.finite_population, sided="upper")
    elif basis.method == Basis.SCREENED:
        one = estimates.screened_one
    elif basis.method in (Basis.STRATIFIED, Basis.DIRECT):
        # these intervals are two-sided; their upper bound is (more than) a one-sided bound at this confidence
        return DepthBasis(basis, None, basis.upper)
    if one is None:
        return DepthBasis(basis, None, None)
    floored = _floor_estimate(cut, one)
    return DepthBasis(basis, floored, floored.upper)


# --- phase 5: the stopping rules at the stopping target ----------------------------------------------------


def stopping_evidence(cut: ReviewCutoff, chosen: SampleChoice, probabilities: npt.NDArray[np.float64] | None, *,
                      heuristics: bool = True) -> list[stopping.StoppingEvidence]:
    """Every rule of the rule table that applies (``heuristics`` False: not the heuristic ones), evaluated on the
    cutoff (`rules.evaluate`)."""
    rest = chosen.rest
    return stopping_rules.evaluate(stopping_rules.Cutoff(
        (cut.labels[:cut.reviewed] == 1).astype(np.int64), cut.reviewed, cut.size, cut.found, cut.rest_size,
        cut.stopping_target, cut.alpha, chosen.population_positives,
        None if rest is None else (len(rest.ranks), (rest.labels == 1).astype(np.int64)), probabilities),
        heuristics=heuristics)


# --- phase 6: the answer per target ----------------------------------------------------------------------------

def _on_queue_ranks(answer: TargetAnswer, queue_ranks: IntArray, reviewed: int) -> TargetAnswer:
    """``answer`` with its ranks past the reviewed set carried from the review order back to queue ranks."""

    def rank(value: int | None) -> int | None:
        return int(queue_ranks[value - 1]) if value is not None and reviewed < value <= len(queue_ranks) else value

    to_rank, point, conservative = answer.forward.to_rank, answer.point, answer.conservative
    return replace(answer, depth=rank(answer.depth), certified_depth=rank(answer.certified_depth),
                   point=replace(point, depth=rank(point.depth)),
                   conservative=replace(conservative, depth=rank(conservative.depth),
                                        forward=rank(conservative.forward)),
                   forward=replace(answer.forward, to_rank=RankRange(rank(to_rank.depth), rank(to_rank.low),
                                                                     rank(to_rank.high))))


def _tau_of(target: str | float) -> Fraction:
    return exact_fraction(target)


def target_answer(cut: ReviewCutoff, basis: DepthBasis, chosen: SampleChoice, tau: Fraction,
                  certified_stop: list[stopping.StoppingEvidence]) -> TargetAnswer:
    """The answer for target ``tau``: from R itself when it is known, else from the basis' estimate."""
    if basis.method == Basis.KNOWN:
        return _known_answer(cut, chosen, tau, int(basis.estimate.point))
    return _estimated_answer(cut, basis, chosen, tau, certified_stop)


def _known_answer(cut: ReviewCutoff, chosen: SampleChoice, tau: Fraction, r: int) -> TargetAnswer:
    t, c, labels = float(tau), cut.reviewed, cut.labels
    all_ranks = (np.flatnonzero(labels == 1) + 1).astype(np.int64)
    if r == 0:
        return TargetAnswer(t, AnswerStatus.REACHED, ReachedBy(Basis.KNOWN, no_relevant=True), "R = 0 (known)",
                            needed=0, depth=0)
    [row] = depth_to_recall(all_ranks[:r], r, [str(tau)], rule=cut.target_rule)
    text = f"R = {r:,} known"
    if row.depth is not None and row.depth <= c:
        return TargetAnswer(t, AnswerStatus.REACHED, ReachedBy(Basis.KNOWN), text, needed=row.needed, depth=row.depth)
    if row.depth is not None and bool(np.all(labels[:row.depth] >= 0)):
        # every document up to the needed relevant one is judged: the depth is exact
        exact = Projection(RankRange(row.depth), CountRange(row.depth - c),
                           "exact: R is known and every document up to that depth is judged")
        return TargetAnswer(t, AnswerStatus.NOT_REACHED, None, text, needed=row.needed, depth=row.depth,
                            forward=exact)
    if row.depth is None:
        text += f"; only {len(all_ranks):,} of the {row.needed:,} relevant documents needed are judged"
    else:
        text += (f"; the {row.needed:,}th judged relevant document is at rank {row.depth:,}, an upper "
                 "bound on the depth (unjudged documents lie before it)")
    forward, conservative_forward = _forward(cut, relevant.estimate_known(r), float(r), chosen.rest, tau)
    if row.depth is not None and (forward.to_rank.depth is None or forward.to_rank.depth > row.depth):
        forward = Projection(RankRange(row.depth), CountRange(row.depth - c),
                             "upper bound: the judged relevant documents reach the need there")
    return TargetAnswer(t, AnswerStatus.NOT_REACHED, None, text, needed=row.needed,
                        conservative=ConservativeFigure(forward=conservative_forward), forward=forward)


def _estimated_answer(cut: ReviewCutoff, basis: DepthBasis, chosen: SampleChoice, tau: Fraction,
                      certified_stop: list[stopping.StoppingEvidence]) -> TargetAnswer:
    estimate, upper_one = basis.estimate, basis.upper
    point, conservative = _point_and_conservative(cut, basis, tau)
    parts = [f"R estimate {estimate.method} = {estimate.point:g}"]
    if upper_one is not None:
        parts.append(f"one-sided {percent(cut.confidence)} upper bound {upper_one:g}")
    reached_by = None
    if tau < 1 and conservative.reached:
        reached_by = ReachedBy(Basis(estimate.method), cut.confidence)
    elif tau < 1 and certified_stop:
        # one criterion decides "reached" (taking whichever of several tests fires would spend α several times);
        # a rule that disagrees is named, not obeyed
        parts.append(f"rule {certified_stop[0].rule} would stop here; it is a different test, so the status "
                     "follows the basis' one-sided bound")
    status = (AnswerStatus.UNKNOWN if estimate.method == Basis.JUDGED
              else AnswerStatus.REACHED if reached_by is not None else AnswerStatus.NOT_REACHED)
    if tau == 1 and status == AnswerStatus.NOT_REACHED:
        parts.append("recall 1 can only be confirmed by judging every document")
    forward, floor = Projection(), None
    if status != AnswerStatus.REACHED:
        forward, conservative_forward = _forward(cut, estimate, upper_one, chosen.rest, tau)
        conservative = replace(conservative, forward=conservative_forward)
    if status == AnswerStatus.NOT_REACHED and point.reached and 0 < tau < 1 and cut.rest_size:
        # the point projection says "already met": what is missing is certification, and it has a floor
        forward = Projection(RankRange(high=forward.to_rank.high), CountRange(high=forward.more.high), forward.basis)
        floor = certification_floor(cut.found, cut.rest_size, tau, cut.confidence)
    return TargetAnswer(float(tau), status, reached_by, "; ".join(parts), point=point, conservative=conservative,
                        certified_depth=_certified_depth(cut, chosen.population, tau), forward=forward,
                        certify_floor=floor)


def _point_and_conservative(cut: ReviewCutoff, basis: DepthBasis,
                            tau: Fraction) -> tuple[NeedFigure, ConservativeFigure]:
    """The relevant documents needed, the depth where the prefix holds them and whether it does: from R̂ (point)
    and from the one-sided R_U (conservative)."""
    point, conservative = NeedFigure(), ConservativeFigure()
    if basis.method != Basis.JUDGED:
        needed = target_count_estimated(tau, basis.estimate.point)
        point = NeedFigure(needed, depth_at_count(cut.prefix_relevant, needed), cut.found >= needed)
    if basis.upper is not None:
        needed = target_count_estimated(tau, basis.upper)
        conservative = ConservativeFigure(needed, depth_at_count(cut.prefix_relevant, needed), cut.found >= needed)
    return point, conservative


def _certified_depth(cut: ReviewCutoff, population: SampleDraw | None, tau: Fraction) -> int | None:
    """QBCB's depth from the whole-queue sample: certified for ``tau`` at the cutoff's confidence."""
    if population is None or not 0 < tau < 1:
        return None
    positives = np.sort(population.ranks[population.labels == 1])
    j = stopping.qbcb_threshold(len(positives), tau, cut.alpha)
    return None if j is None else int(positives[j - 1])


def _forward(cut: ReviewCutoff, basis: relevant.Estimate, upper_one: float | None, rest: RestSample | None,
             tau: Fraction) -> tuple[Projection, int | None]:
    """Where to review to: from the rest sample's positive ranks when there is one, else the recent yield
    (heuristic). The range comes from the two-sided interval on R. Also the projected rank where the
    conservative need is met (None: not projected)."""
    if cut.rest_size == 0:
        return Projection(), None
    if basis.method == Basis.SCREENED and rest is None:
        return _forward_in_random_order(tau, basis, cut.found, cut.rest_size), None
    if rest is not None and basis.method != Basis.JUDGED:
        return _forward_from_sample(cut, basis, upper_one, rest, tau)
    projection = recent_yield_projection(cut.labels[:cut.reviewed], cut.rest_size, cut.found, tau)
    if projection is None or projection.more_documents is None:
        return Projection(basis="heuristic: no relevant document among the recently reviewed, so the recent yield "
                                "cannot project a depth; draw a sample"), None
    return Projection(RankRange(cut.reviewed + projection.more_documents), CountRange(projection.more_documents),
                      f"heuristic: {projection.basis}"), None


def _forward_from_sample(cut: ReviewCutoff, basis: relevant.Estimate, upper_one: float | None, rest: RestSample,
                         tau: Fraction) -> tuple[Projection, int | None]:
    """The projected depth from the rest sample's positives (`depth_unknown.forward_depth`): at R̂, at the ends of
    the two-sided interval and at the one-sided R_U."""
    positives, m = rest.positives, len(rest.ranks)

    def at(r: float | None) -> Any:
        return None if r is None else forward_depth(cut.found, cut.reviewed, cut.rest_size, m, positives, r, tau)

    point, low = at(basis.point), at(basis.lower)
    high = at(basis.upper if basis.upper is not None else upper_one)
    conservative = at(upper_one)
    text = (f"projected from the ranks of the {len(positives)} positives among the {m:,} documents of sample "
            f"{rest.draw.sample_id} in the unreviewed rest; range from the {basis.method} interval on R")
    if point.beyond_sample or (high is not None and high.beyond_sample):
        text += "; the sample cannot locate documents past its last positive: the range runs to the queue's end"
    return (Projection(RankRange(point.depth, low.depth, None if high is None else high.depth),
                       CountRange(point.more_documents, low.more_documents,
                                  None if high is None else high.more_documents), text),
            None if conservative is None else conservative.depth)


def _more_in_random_order(tau: Fraction, relevant_total: float, found: int, rest_size: int) -> int:
    """Documents still to screen, in a random order, until ⌈τ·R⌉ relevant are found when R = ``relevant_total``:
    the k-th of b relevant documents in a random order of N_u comes at k(N_u + 1)/(b + 1) on average."""
    need = target_count_estimated(tau, relevant_total) - found
    left = max(0, math.floor(relevant_total + 1e-9) - found)
    if need <= 0:
        return 0
    if need > left:
        return rest_size
    return min(rest_size, math.ceil(need * (rest_size + 1) / (left + 1)))


def _forward_in_random_order(tau: Fraction, basis: relevant.Estimate, found: int, rest_size: int) -> Projection:
    """How many more to screen when the screening order is declared random: no rank to review to (the order is
    not the queue's), a count with its range from the interval on R."""
    bounds = [_more_in_random_order(tau, r, found, rest_size) for r in (basis.lower, basis.upper) if r is not None]
    return Projection(more=CountRange(_more_in_random_order(tau, basis.point, found, rest_size),
                                      min(bounds) if bounds else None, max(bounds) if bounds else None),
                      basis="random screening order (declared): the k-th of the b relevant documents left comes, "
                            "on average, after k(N_u + 1)/(b + 1) more screened; range from the interval on R")


# --- phase 7: recall per basis ----------------------------------------------------------------------------------


def recall_figures(cut: ReviewCutoff, basis: DepthBasis, chosen: SampleChoice,
                   answers: list[TargetAnswer]) -> list[RecallFigure]:
    """One recall per basis, each labelled with its sidedness, confidence and caveat: the basis', direct recall
    from the whole-queue sample, and the judged upper bound."""
    out: list[RecallFigure] = []
    estimate = basis.estimate
    if estimate.method == Basis.KNOWN:
        value = cut.found / estimate.point if estimate.point > 0 else 1.0
        out.append(RecallFigure(Basis.KNOWN, value, value, value, value, 1.0, cut.scope, "exact: R is known"))
    elif estimate.method != Basis.JUDGED:
        out.append(_basis_recall(cut, basis, answers))
    if chosen.population is not None:
        positives = chosen.population.ranks[chosen.population.labels == 1]
        if len(positives):
            f = int(np.count_nonzero(positives <= cut.reviewed))
            direct = relevant.direct_recall(f, len(positives), confidence=cut.confidence)
            one = relevant.direct_recall(f, len(positives), confidence=cut.confidence, sided="lower")
            out.append(RecallFigure(Basis.DIRECT, direct.recall_point, direct.recall_lower, direct.recall_upper,
                                    one.recall_lower, cut.confidence, cut.scope,
                                    f"{f} of the {len(positives)} positives of the whole-queue sample lie in the "
                                    "reviewed prefix (Clopper–Pearson, conditional on the number of positives)"))
    if cut.floor > 0:
        # the relevant documents judged in the estimates' own scope (the queue's, when the scope is the queue)
        value = cut.found / cut.floor
        out.append(RecallFigure(Basis.JUDGED, None, None, value, None, 1.0, cut.scope,
                                "relevant in the reviewed prefix over relevant judged so far: an upper bound on "
                                "recall, not an estimate"))
    return out


def _basis_recall(cut: ReviewCutoff, basis: DepthBasis, answers: list[TargetAnswer]) -> RecallFigure:
    """Recall from the basis' estimate of R, conditional when its own sample decided the stopping target."""
    estimate = basis.estimate
    stop_answer = next((a for a in answers if a.target == float(cut.stopping_target)), None)
    decided_by_sample = stop_answer is not None and stop_answer.status == AnswerStatus.REACHED
    # stratified: its two-sided lower bound, which is (more than) a one-sided bound at this confidence
    one_sided = basis.one_sided.recall_lower if basis.one_sided is not None else estimate.recall_lower
    note = (f"two-sided {percent(cut.confidence)} interval and one-sided {percent(cut.confidence)} lower bound "
            f"from the {estimate.method} estimate of R")
    if decided_by_sample:
        note += ("; conditional: the same sample decided that the target is reached, and given that decision "
                 "this interval is optimistic; a fresh sample drawn now gives an unconditional one")
    return RecallFigure(estimate.method, estimate.recall_point, estimate.recall_lower, estimate.recall_upper,
                        one_sided, cut.confidence, cut.scope, note)


# --- phase 8: the headline ----------------------------------------------------------------------------------------


def headline(cut: ReviewCutoff, basis: DepthBasis, answers: list[TargetAnswer]) -> Headline:
    """The status for the stopping target (else the first target), the next step and the figures its sentence
    names (`reviewdepth.report.wording.headline`)."""
    tau, confidence = cut.stopping_target, cut.confidence
    answer = next((a for a in answers if a.target == float(tau)), answers[0] if answers else None)
    if answer is None:
        return Headline(float(tau), AnswerStatus.UNKNOWN, confidence, None, no_target=True)
    figures = Headline(answer.target, answer.status, confidence, None, scope=cut.scope, reviewed=cut.reviewed)
    more, to_rank = answer.forward.more, answer.forward.to_rank.depth
    if answer.status == AnswerStatus.REACHED:
        step = None if basis.method in (Basis.KNOWN, Basis.JUDGED) else NextStep.STATE_RECALL
        return replace(figures, step=step, reached_by=answer.reached_by)
    if answer.status == AnswerStatus.UNKNOWN:
        return replace(figures, step=NextStep.DRAW_SAMPLE, guess=more.documents)
    if answer.point.reached and basis.upper is not None:
        if answer.certify_floor:
            return replace(figures, step=NextStep.CERTIFY_FLOOR, step_counts=(answer.certify_floor,),
                           upper=basis.upper)
        return replace(figures, step=NextStep.CERTIFY, upper=basis.upper)
    more_range = None if more.low is None or more.high is None else (more.low, more.high)
    if more.documents is not None and to_rank is None and basis.method == Basis.SCREENED:
        return replace(figures, step=NextStep.SCREEN_MORE, step_counts=(more.documents,), more_range=more_range)
    if more.documents is not None and to_rank is not None:
        return replace(figures, step=NextStep.REVIEW_MORE, step_counts=(more.documents, to_rank),
                       more_range=more_range)
    return replace(figures, step=NextStep.REVIEW_ON)
