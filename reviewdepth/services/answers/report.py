"""Build the depth report for a stored topic and queue: evidence from the store, numbers from the pure core."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np
from sqlalchemy import Connection, Engine, exists, func, select

from reviewdepth import __version__
from reviewdepth.estimation import relevant
from reviewdepth.estimation.agreement import corrected_relevant_count
from reviewdepth.estimation.assessment import (
    REPORT_INTERVALS,
    AnswerStatus,
    Assessment,
    Basis,
    CountRange,
    NextStep,
    RankRange,
)
from reviewdepth.estimation.count_bound import FloorFigure
from reviewdepth.estimation.distributions import STATUS_SCIPY, import_scipy_in_background
from reviewdepth.estimation.stop_plan import floor_figure
from reviewdepth.estimation.stopping import RuleKind
from reviewdepth.estimation.target import Target
from reviewdepth.estimation.two_phase import TWO_PHASE_METHODS
from reviewdepth.measures import tar, trec
from reviewdepth.measures.suite import MeasureSpec, evaluate_ranked
from reviewdepth.measures.tar_suite import TopicRun, clean_topic
from reviewdepth.report.decision import AUDIT_BASIS, audit_figure, sample_figure, topic_status
from reviewdepth.report.model import (
    Agreement,
    Answer,
    CertifyCost,
    ChainHead,
    CorrectedSensitivityRow,
    Current,
    DepthCertify,
    DepthRow,
    EstimateRow,
    Gain,
    GainMarker,
    Measure,
    PairAgreement,
    PolicySensitivityRow,
    PrecisionRecall,
    Provenance,
    QcSample,
    Report,
    ReviewQuality,
    SamplePlan,
    SampleRow,
    Settings,
    StoppingRow,
    Summary,
)
from reviewdepth.report.prisma_model import PrismaCounts
from reviewdepth.report.status_model import TopicStatus
from reviewdepth.report.wording import (
    SAMPLE_CHOICE_RULE,
    out_of_order_note,
    reached_by_audit,
    review_before_sampling,
    sample_coding_text,
    sample_now_step,
    sample_status,
    scope_note,
    stop_label,
    with_topic,
)
from reviewdepth.report.wording import headline as headline_words
from reviewdepth.report.wording import next_step as next_step_words
from reviewdepth.services.answers.agreement import AgreementSummary, agreement_of
from reviewdepth.services.answers.assessment import fully_judged as is_fully_judged
from reviewdepth.services.answers.assessment import queue_assessment, queue_population, stopping_target
from reviewdepth.services.answers.conflicts import conflicts_of
from reviewdepth.services.answers.monitor import monitor_of
from reviewdepth.services.answers.queues import ranked_from_labels
from reviewdepth.services.answers.sample_plan import sample_plan_figures
from reviewdepth.services.answers.two_phase import two_phase_of
from reviewdepth.services.errors import Invalid, ServiceError
from reviewdepth.services.evidence.calibration import stopping_calibrations
from reviewdepth.services.evidence.confidence import checked_confidence, checked_target
from reviewdepth.services.evidence.identification import records_per_source
from reviewdepth.services.evidence.prisma_counts import (
    decision_counts,
    identified_queue,
    outside_queue_counts,
    prisma_counts,
)
from reviewdepth.services.evidence.qc import qc_result
from reviewdepth.services.evidence.queue_evidence import QueueEvidence, queue_scores
from reviewdepth.services.evidence.queue_state import QueueState, load_queue_state
from reviewdepth.services.evidence.sample_coding import sample_coding_counts
from reviewdepth.services.evidence.samples import SampleRecord, load_samples
from reviewdepth.services.evidence.screening import conflict_rule_of
from reviewdepth.services.evidence.two_phase import two_phase_evidence
from reviewdepth.store.chain import chain_head_at
from reviewdepth.store.labels import POLICIES
from reviewdepth.store.loaders import QueueLabels
from reviewdepth.store.models import AuditStream, ImportRecord, Judgment, Queue, Topic
from reviewdepth.store.snapshot import read_snapshot
from reviewdepth.store.votes import reviewers_per_document, several_positions

DEFAULT_TARGETS = tuple(Target.parse(t) for t in ("0.80", "0.90", "0.95", "0.99"))
MAX_CURVE_POINTS = 800
PREFIX_CUTOFFS = (5, 10, 20, 50, 100, 200, 500, 1000)


@dataclasses.dataclass
class ReportOptions:
    """The settings a report is computed with; all of them are printed in it."""

    queue: str | None = None
    # `Target`s from the doors; a text from a Python caller is parsed by `validate`
    targets: Sequence[Target | str] = DEFAULT_TARGETS
    confidence: float = 0.95
    # exact intervals only (hypergeometric on counts, or Clopper–Pearson on proportions): every bound the report
    # calls conservative or certified must keep its nominal coverage
    interval: str = "hypergeometric"
    policy: str = "latest"
    as_of: int | None = None
    target_rule: str = "ceil"
    known_relevant: int | None = None
    scores_are_probabilities: bool = False
    # whether reviewers screened blind and independently (PRISMA); reviewdepth cannot observe it
    independent: bool | None = None
    # two-phase (TAR 1.0) validation at this rank cutoff (``--produce-to RANK``): adds the report's ``two_phase``
    produce_to: int | None = None
    # replay the stop plan for the answer's "to certify" (``--plan``): its recommended path with expected cost;
    # without it the answer gives the floor over further depths and a sample now (its replays cost about 1 s per
    # 5,000 documents, the most of a report's time, and `reviewdepth plan` gives them when asked)
    with_plan: bool = False

    def validate(self) -> None:
        if self.produce_to is not None and self.interval not in TWO_PHASE_METHODS:
            raise Invalid(f"--interval: two-phase figures need an exact interval ({', '.join(TWO_PHASE_METHODS)}), "
                          f"not {self.interval!r}")
        self.targets = tuple(checked_target(t) for t in self.targets)
        checked_confidence(self.confidence)
        if self.interval not in REPORT_INTERVALS:
            raise Invalid(f"interval must be one of {', '.join(REPORT_INTERVALS)}, not {self.interval!r} (approximate "
                          "intervals such as Wilson or Jeffreys cover less than their nominal level one-sided, so the "
                          "report does not use them)")
        if self.known_relevant is not None and self.known_relevant < 0:
            raise Invalid(f"the number of relevant documents cannot be negative, not {self.known_relevant}")
        if self.policy not in POLICIES:
            raise Invalid(f"policy must be one of {', '.join(POLICIES)}, not {self.policy!r}")
        if self.target_rule not in ("ceil", "tar_eval", "asreview"):
            raise Invalid("target rule must be ceil, tar_eval or asreview")


def _thin(n: int) -> np.ndarray:
    """Indices 0..n-1 thinned to at most MAX_CURVE_POINTS, always keeping the last."""
    if n <= MAX_CURVE_POINTS:
        return np.arange(n)
    return np.unique(np.concatenate((np.linspace(0, n - 1, MAX_CURVE_POINTS).round().astype(np.int64), [n - 1])))


def _estimate_row(estimate: relevant.Estimate, assessment: Assessment) -> EstimateRow:
    """One |R| estimate; the depth basis also carries the one-sided upper bound the headline's "R ≤ …" and the
    conservative depths use (``upper`` is the two-sided interval's)."""
    return EstimateRow(estimate, "population" if estimate.method in (Basis.JUDGED, Basis.KNOWN) else assessment.scope,
                       assessment.conservative_upper if estimate.method == assessment.basis.method else None)


@dataclasses.dataclass(frozen=True)
class _Evidence:
    """What one report reads from the store: the queue's state (`load_queue_state`), its samples and, when declared
    probabilities (``scores_are_probabilities``), its scores in queue order."""

    state: QueueState
    samples: list[SampleRecord]
    scores: np.ndarray | None = None

    @property
    def labels(self) -> QueueLabels:
        """The labels in review order (``state.labels_by_rank``: in queue order, as the two-phase counts index
        them)."""
        return self.state.labels


def _evidence(conn: Connection, topic: str, options: ReportOptions) -> _Evidence:
    options.validate()
    import_scipy_in_background(STATUS_SCIPY)  # while the reads below wait on the database
    state = load_queue_state(conn, topic, options.queue, options.policy, options.as_of)
    samples = load_samples(conn, topic, state.queue, state.labels_by_rank, as_of=state.as_of)
    scores = (queue_scores(conn, state.queue.id, state.labels_by_rank.size) if options.scores_are_probabilities
              else None)
    return _Evidence(state, samples, scores)


@dataclasses.dataclass(frozen=True)
class Curves:
    """What a chart of the report draws: its two curves, the stopping target marked on them and the confidence."""

    gain: Gain
    precision_recall: PrecisionRecall
    target: float
    confidence: float


def build_curves(engine: Engine, topic: str, options: ReportOptions) -> Curves:
    """The report's charts' data alone (`reviewdepth plot`): the same evidence and assessment as `build_report`,
    without the sections a chart does not draw (measures, plan, topic status, review quality, provenance)."""
    with read_snapshot(engine) as conn:
        ev = _evidence(conn, topic, options)
    fig = _figures(ev.labels, ev.state.evidence, ev.state.population_size, options, ev.scores)
    gain, pr = _curves(ev.labels.labels[:fig.reviewed], fig.assessment)
    return Curves(gain, pr, float(stopping_target(fig.targets)), options.confidence)


def build_report(engine: Engine, topic: str, options: ReportOptions) -> Report:
    """The report of ``topic`` (`report_of`), every section read in one snapshot."""
    with read_snapshot(engine) as conn:
        return report_of(conn, topic, options)


def report_of(conn: Connection, topic: str, options: ReportOptions) -> Report:
    """Collect the evidence (labels as of a judgment id, samples) through ``conn`` and compute every section of the
    report."""
    ev = _evidence(conn, topic, options)
    state, samples = ev.state, ev.samples
    topic_id, row, population_size, as_of, labels, evidence = (
        state.topic_id, state.queue, state.population_size, state.as_of, ev.labels, state.evidence)

    fig = _figures(labels, evidence, population_size, options, ev.scores)
    size, population, reviewed, rel_queue = fig.size, fig.population, fig.reviewed, fig.rel_queue
    found_prefix, found_topic, judged_ranks, fully_judged = (fig.found_prefix, fig.found_topic, fig.judged_ranks,
                                                             fig.fully_judged)
    assessment, confidence = fig.assessment, options.confidence

    # trec_eval's measures over the reviewed prefix: unjudged = non-relevant and R = relevant judged so far, as
    # trec_eval counts them (so recall@k is left out: the recall section gives recall against estimated R)
    measures: dict[str, Measure] = {}
    if reviewed:
        prefix = dataclasses.replace(labels, size=reviewed, labels=labels.labels[:reviewed])
        spec = MeasureSpec.parse(["map", "Rprec", "recip_rank", "P." + ",".join(map(str, PREFIX_CUTOFFS))])
        result = evaluate_ranked(ranked_from_labels(prefix, topic), spec, run_id=row.run_tag or row.name)
        measures = {k: v for k, v in result.summary.items() if k not in ("runid", "num_q")}
    completed: dict[str, Measure] | None = None
    if fully_judged and found_topic == 0:
        completed = {"note": "no relevant document in the topic: the recall-oriented measures are undefined"}
    elif fully_judged:
        values = clean_topic(TopicRun.plain(topic, rel_queue.astype(np.int64), population, found_topic)).values
        completed = {k: v for k, v in values.items()}

    summary = Summary(
        queue_size=size, population=population, population_source="topic" if population_size else "queue size",
        estimate_scope=assessment.scope,
        scope_note=scope_note(assessment.queue_size, population),
        ordering=row.ordering, reviewed=reviewed, judged=len(judged_ranks),
        relevant_found=int(np.count_nonzero(rel_queue)), relevant_found_in_reviewed=found_prefix,
        relevant_judged_in_topic=found_topic,
        deepest_judged_rank=int(judged_ranks[-1]) + 1 if len(judged_ranks) else None,
        last_relevant_rank=tar.last_rel(rel_queue[:reviewed].astype(np.int64)) if found_prefix else None,
        run_threshold_rank=row.threshold_rank, fully_judged=fully_judged)
    uses = {u.sample_id: u for u in assessment.samples}
    coding = sample_coding_counts(conn, topic_id, [(e.id, e.drawn_at) for e in evidence.entries], as_of)
    sample_rows = []
    for entry in evidence.entries:
        use = uses.get(entry.id)
        coded, uncoded = coding[entry.id]
        sample_rows.append(SampleRow(
            id=entry.id, queue=entry.queue, frame=entry.frame, frame_definition=entry.frame_definition,
            size=entry.size, frame_size=entry.frame_size, seed=entry.seed, drawn_at_judgment=entry.drawn_at,
            missing=len(entry.missing), relevant=entry.relevant, voided=entry.voided, void_reason=entry.void_reason,
            status=entry.status if use is None else sample_status(use), use="unused" if use is None else use.role,
            in_unreviewed_rest=None if use is None else use.in_rest,
            positives_in_rest=None if use is None else use.rest_positives,
            coded=sample_coding_text(coded, uncoded), coding=coded, uncoded=uncoded))
    tau = stopping_target(fig.targets)
    headline = assessment.headline
    depth_rows = [DepthRow.of(a) for a in assessment.targets]
    review_order = out_of_order_note(evidence.out_of_order, reviewed) if evidence.out_of_order else None
    floor = _floor(fig, labels.labels, tau, confidence) if fig.size > fig.reviewed else None
    # the samples' own answer and next step (the decision's when no audit stream decides)
    sample_text = headline_words(headline)
    sample_next = next_step_words(headline.step, headline.step_counts)
    plan: SamplePlan | None = None
    if headline.status != AnswerStatus.REACHED:
        plan = _plan(fig, labels.labels, tau, confidence)
        if plan is not None and not plan.feasible and headline.step is not NextStep.REVIEW_MORE:
            # the next step must not send the reader to a plan that says no sample can certify yet (a next
            # step that already says how many more to review stands)
            sample_next = review_before_sampling(plan.reason, unknown=headline.status == AnswerStatus.UNKNOWN)
    status = _topic_status(conn, topic, options, tau, fig, sample_text, sample_next, state)
    if status.decided_by == AUDIT_BASIS:
        depth_rows = _audit_decides_row(depth_rows, tau, status)
    certify: CertifyCost | None = None
    if status.status != AnswerStatus.REACHED and (status.decided_by != AUDIT_BASIS or options.with_plan):
        # (when the audit stream decides, its monitor's next step is the way on: a sample of the rest drawn now
        # would be a second basis; the plan, when asked, weighs every path)
        certify = _certify(fig, labels.labels, tau, confidence, floor, plan, replay=options.with_plan)
        if certify is not None:
            at = next(i for i, r in enumerate(depth_rows) if r.target == float(tau))
            depth_rows[at] = dataclasses.replace(depth_rows[at], certify=dataclasses.replace(
                depth_rows[at].certify, path=certify.path, review_more=certify.review_more,
                expected=certify.expected, low=certify.low, high=certify.high,
                to_rank=evidence.queue_rank(reviewed + certify.review_more) if certify.review_more else None))
            # commands in the answer name this topic, ready to run
            # (the plan's recommended path is supporting detail printed beside the next step, never in its place:
            # `watch` and the dashboard, which run no plan, must print the same next step as the report)
            certify = dataclasses.replace(certify, step=with_topic(certify.step, topic))
    else:
        # a reached topic has nothing left to certify: no sample plan, no "to certify", no floor of a certification
        plan = floor = None
    if plan is not None and plan.command:
        plan = dataclasses.replace(plan, command=with_topic(plan.command, topic))  # ready to run, as every step
    answer = Answer(target=headline.target, status=status.status, text=status.lead, confidence=confidence,
                    as_of_judgment=as_of, next_step=status.next_step, basis=assessment.basis.method,
                    scope=assessment.scope, topic_status=status, review_order=review_order, floor=floor, plan=plan,
                    certify=certify)
    settings = Settings(targets=[t.text for t in fig.targets], stopping_target=tau.text, confidence=confidence,
                        interval=options.interval, independent_screening=options.independent,
                        label_policy=options.policy, ordering=row.ordering, as_of_judgment=as_of,
                        target_rule=options.target_rule, depth_basis=assessment.basis.method,
                        sample_choice=SAMPLE_CHOICE_RULE, scores_are_probabilities=options.scores_are_probabilities)
    head = chain_head_at(conn, topic_id, options.as_of)
    provenance = Provenance(
        software=f"reviewdepth {__version__}", queue_source=row.source,
        input_digests=_digests(conn, topic_id, as_of),
        # the judgment chain's head the report was computed at: keep it to prove later that the log still
        # extends it (`reviewdepth audit verify TOPIC --head HASH`)
        judgment_chain_head=ChainHead(**head),  # type: ignore[arg-type]  # the store's dict of these three keys
        sample_seeds=[seed for _, seed in sorted({**{x.id: x.seed for x in samples},
                                                  **{e.id: e.seed for e in evidence.entries}}.items())])
    heuristic = [e.rule for e in assessment.stopping if e.kind == RuleKind.HEURISTIC]
    calibrations = stopping_calibrations(conn, heuristic, tau)
    stopping_rows = [StoppingRow(e, stop_label(e.kind, e.stop_now), calibrations.get(e.rule))
                     for e in assessment.stopping]
    gain, pr = _curves(labels.labels[:reviewed], assessment)
    quality, prisma = _review_quality(conn, topic, topic_id, row, labels, samples, fig, population_size,
                                      options, as_of, in_queue_order=evidence.order is None)
    current = Current(depth=reviewed, relevant_found=found_prefix,
                      precision=found_prefix / reviewed if reviewed else None)
    two_phase = None
    if options.produce_to is not None:
        two_phase = two_phase_of(two_phase_evidence(state, samples, options.produce_to), confidence, options.interval,
                                 headline.target)
    return Report(topic=topic, queue=row.name, summary=summary, answer=answer,
                  estimates=[_estimate_row(e, assessment) for e in assessment.estimates],
                  depth_basis=assessment.basis.method, depth=depth_rows, current=current,
                  recall=list(assessment.recall), stopping=stopping_rows, measures=measures,
                  completed_review=completed, samples=sample_rows, settings=settings, provenance=provenance,
                  gain=gain, precision_recall=pr, review_quality=quality, prisma=prisma, two_phase=two_phase)


def _audit_decides_row(rows: list[DepthRow], tau: Target, status: TopicStatus) -> list[DepthRow]:
    """The depth table's row for the stopping target when the audit stream decides: its status is the decision's
    (one status per screen), the samples' depths stay as estimates, and a reached row has nothing to certify."""
    target = float(tau)
    figure = next((f for f in status.figures if f.basis == AUDIT_BASIS), None)
    out = []
    for depth_row in rows:
        if depth_row.target == target:
            reached = status.status == AnswerStatus.REACHED
            depth_row = dataclasses.replace(
                depth_row, status=AnswerStatus(status.status),
                reached_by=None if not reached or figure is None else reached_by_audit(figure.text))
            if reached:
                depth_row = dataclasses.replace(depth_row, certify=DepthCertify(), more=CountRange(),
                                                to_rank=RankRange(), needed=None, forward_basis=None)
        out.append(depth_row)
    return out


@dataclasses.dataclass
class _Figures:
    """The depth figures of one labelling of the queue (the report's policy, or another for the sensitivity)."""

    size: int
    population: int
    reviewed: int
    rel_queue: np.ndarray
    found_prefix: int
    found_topic: int
    judged_ranks: np.ndarray
    fully_judged: bool
    targets: list[Target]
    assessment: Assessment


def _topic_status(conn: Connection, topic: str, options: ReportOptions, tau: Target, fig: _Figures, sample_text: str,
                  sample_next: str | None, state: QueueState) -> TopicStatus:
    """The topic's one decision (`reviewdepth.report.decision`): this report's samples, and the audit
    stream's monitor when the topic has a stream (the figure and next step `reviewdepth watch` shows)."""
    audit = None
    audit_next = None
    streams = conn.execute(select(func.count()).select_from(AuditStream).join(Topic).where(
        Topic.name == topic, AuditStream.voided_at.is_(None))).scalar_one()
    if streams:
        try:
            monitor = monitor_of(conn, topic, queue=state.queue.name, target=tau, confidence=options.confidence,
                                 policy=options.policy, as_of=state.as_of, one_look=False, with_samples=False,
                                 loaded=state)  # this report's state of the queue: not read twice
        except ServiceError:  # e.g. a target of 1, which no audit certifies: the samples' answer stands
            monitor = None
        if monitor is not None and monitor.audit is not None:
            audit = audit_figure(monitor.audit.stream_id, monitor.audit.judged,
                                 monitor.recall_lower, options.confidence, monitor.certified, monitor.missed_upper,
                                 monitor.population - monitor.reviewed)
            audit_next = monitor.next_step  # the monitor (no samples asked) decides by its audit: its step
    status = topic_status(tau, options.confidence, fig.reviewed, fig.found_prefix,
                          sample=sample_figure(fig.assessment), sample_status=fig.assessment.headline.status,
                          audit=audit, sample_headline=with_topic(sample_text, topic),
                          sample_next=None if sample_next is None else with_topic(sample_next, topic),
                          audit_next=audit_next, topic=topic)
    return dataclasses.replace(status, next_step=None if status.next_step is None
                               else with_topic(status.next_step, topic))


def _figures(labels: QueueLabels, evidence: QueueEvidence, population_size: int | None,
             options: ReportOptions, scores: np.ndarray | None = None, *, heuristics: bool = True) -> _Figures:
    """The figures of one labelling; ``heuristics`` False: without the heuristic stopping rules (the policy
    sensitivity reads the depth answer and recall of another labelling, not its stopping rules)."""
    size = labels.size
    population = queue_population(labels, population_size)
    reviewed = evidence.reviewed
    rel_queue = labels.labels == 1
    found_prefix = int(np.count_nonzero(rel_queue[:reviewed]))
    found_topic = labels.relevant_total
    judged_ranks = np.flatnonzero(labels.labels >= 0)
    fully_judged = is_fully_judged(labels, population)
    targets = [checked_target(t) for t in options.targets]  # Targets already once `validate` has run
    if options.known_relevant is not None and options.known_relevant < found_topic:
        raise Invalid(f"--relevant {options.known_relevant} is below the {found_topic:,} documents already judged "
                      "relevant in this topic")
    assessment = queue_assessment(labels, evidence, population, fully_judged, targets, confidence=options.confidence,
                                  interval=options.interval, target_rule=options.target_rule,
                                  known_relevant=options.known_relevant, scores=scores, heuristics=heuristics)
    return _Figures(size, population, reviewed, rel_queue, found_prefix, found_topic, judged_ranks, fully_judged,
                    targets, assessment)


def _floor(fig: _Figures, labels: np.ndarray, tau: Target, confidence: float) -> FloorFigure:
    """The floor of any random-sample certification of the stopping target now, and the least projected total."""
    size = rel = 0
    assessment = fig.assessment
    if assessment.rest_sample is not None:
        use = next(u for u in assessment.samples if u.sample_id == assessment.rest_sample)
        size, rel = use.in_rest, use.rest_positives
    prefix = (np.asarray(labels[:fig.reviewed]) == 1).astype(np.int8)
    return floor_figure(prefix, fig.size, tau.value, confidence, rest_sample_size=size,
                        rest_sample_relevant=rel)


# the stop plan's replays (`stop_plan.plan_stop`) cost about 0.2 s per 1,000 documents of the queue: the report runs
# them up to this size and otherwise gives the floor and the one-look sample (`reviewdepth plan` replays any size)
REPORT_PLAN_MAX = 10_000


def _certify(fig: _Figures, labels: np.ndarray, tau: Target, confidence: float, floor: FloorFigure | None,
             sample: SamplePlan | None, *, replay: bool = False) -> CertifyCost | None:
    """The certification cost of the stopping target (:class:`CertifyCost`) when its point estimate is met: the
    stop plan's recommended path when ``replay`` (and the queue is small enough to replay here), else the floor
    over further depths and the one-look sample now."""
    from reviewdepth.estimation.stop_plan import ReviewEvidence, plan_stop
    from reviewdepth.report.stop_plan_render import path_sentence

    target = tau.value
    row = next((a for a in fig.assessment.targets if a.target == float(target)), None)
    if (row is None or row.status != AnswerStatus.NOT_REACHED or not row.point.reached or row.certify_floor is None
            or not floor):
        return None
    size, rel = 0, 0
    assessment = fig.assessment
    if assessment.rest_sample is not None:
        use = next(u for u in assessment.samples if u.sample_id == assessment.rest_sample)
        size, rel = use.in_rest, use.rest_positives
    rest = fig.size - fig.reviewed
    if replay and fig.size <= REPORT_PLAN_MAX:
        prefix = (np.asarray(labels[:fig.reviewed]) == 1).astype(np.int8)
        plan = plan_stop(ReviewEvidence(prefix, fig.size, rest_sample_size=size, rest_sample_relevant=rel), target,
                         confidence, table=False)
        best = next((p for p in plan.paths if p.kind == plan.recommended), None)
        if best is not None:
            return CertifyCost("plan", best.kind, best.review_more, best.sample_size, best.expected_cost,
                               best.cost_range[0], best.cost_range[1], plan.floor, best.certified_by,
                               path_sentence(best))
    sized = sample is not None and sample.feasible and bool(sample.size)
    high = float(sample.size) if sample is not None and sample.size and sized else float(rest)
    step = (sample_now_step(sample.size, sample.command, sample.max_positives)
            if sample is not None and sample.size and sized else sample_now_step(None, None, None))
    return CertifyCost("floor", None, floor.review_more, None if sample is None else sample.size, None,
                       floor.least_total, max(high, floor.least_total), floor.documents,
                       "elusion test (one look)", step)


def _plan(fig: _Figures, labels: np.ndarray, tau: Target, confidence: float) -> SamplePlan | None:
    """What a fresh sample of the unreviewed rest would need to certify the stopping target now."""
    rest = fig.size - fig.reviewed
    if rest <= 0:
        return None
    # the service's keys are the section's fields: one renamed on either side fails here, not in a renderer
    return SamplePlan(**sample_plan_figures(fig.found_prefix, fig.reviewed, rest, fig.assessment, tau.value, confidence,
                                            prefix_labels=labels))


def _review_quality(conn: Connection, topic: str, topic_id: int, queue: Queue, labels: QueueLabels,
                    samples: list[SampleRecord], fig: _Figures, population_size: int | None, options: ReportOptions,
                    as_of: int | None, in_queue_order: bool = True) -> tuple[ReviewQuality, PrismaCounts]:
    """Several reviewers and QC: conflicts, agreement, QC error rates, the figures under every label policy, and
    the PRISMA counts. Documents judged by one reviewer only cost one grouped count."""
    per_record = reviewers_per_document(conn, topic_id, as_of)
    positions, multi = several_positions(conn, topic_id, as_of, per_record)
    qc = [qc_result(conn, topic_id, s, options.policy, as_of, options.confidence, "clopper-pearson")
          for s in samples if s.frame == "judged"]
    conflicts = conflicts_of(positions, conflict_rule_of(conn, topic_id))
    resolved = sum(c.status == "resolved" for c in conflicts)
    sensitivity: list[PolicySensitivityRow | CorrectedSensitivityRow] = []
    if multi or qc:
        tau = float(stopping_target(fig.targets))
        for policy in POLICIES:
            figures = fig
            if policy != options.policy:
                other = load_queue_state(conn, topic, queue.name, policy, as_of)
                figures = _figures(other.labels, other.evidence, population_size,
                                   dataclasses.replace(options, policy=policy), heuristics=False)
            sensitivity.append(_sensitivity_row(policy, figures, tau))
        rated = [q for q in qc if q.rates is not None]
        if rated:
            rates = rated[-1].rates
            assert rates is not None
            point, lower, upper = corrected_relevant_count(fig.found_topic, labels.nonrelevant_total, rates)
            in_prefix = corrected_relevant_count(fig.found_prefix, fig.reviewed - fig.found_prefix, rates)
            sensitivity.append(CorrectedSensitivityRow(
                policy=f"{options.policy}, corrected by QC sample {rated[-1].sample_id}",
                relevant_judged=point, relevant_judged_lower=lower, relevant_judged_upper=upper,
                relevant_in_reviewed=in_prefix[0], note="expected relevant among the judged documents if the "
                "QC error rates hold for every judged document (the QC reviewer taken as right); depths not "
                "recomputed"))
    quality = ReviewQuality(
        documents_with_several_reviewers=len(multi), conflicts=len(conflicts),
        conflicts_open=len(conflicts) - resolved, conflicts_resolved=resolved,
        agreement=_agreement(agreement_of(multi, options.confidence)) if multi else None,
        qc_samples=[QcSample(q.sample_id, q.seed, q.size, q.checked, len(q.missing), q.rates,
                             dict(sorted(q.by_reviewer.items()))) for q in qc],
        policy_sensitivity=sensitivity)
    outside_included, outside_excluded = outside_queue_counts(
        conn, topic_id, labels, population_stated=bool(population_size), as_of=as_of)
    prisma = prisma_counts(
        population=fig.population, population_stated=bool(population_size), included=labels.relevant_total,
        excluded=labels.nonrelevant_total, reviewed_prefix=fig.reviewed, reviewed=fig.reviewed,
        relevant_in_reviewed=fig.found_prefix, in_queue_order=in_queue_order, reviewers_per_record=per_record,
        conflicts=len(conflicts), conflicts_resolved=resolved, independent=options.independent,
        policy=options.policy, outside_included=outside_included, outside_excluded=outside_excluded,
        decisions=decision_counts(conn, topic_id, options.policy, as_of, identified_in=identified_queue(
            conn, topic_id, queue.id, population_stated=bool(population_size))),
        sources=records_per_source(conn, topic_id))
    # by number of reviewers, as `PrismaCounts.as_dict` writes them
    return quality, dataclasses.replace(prisma, reviewers_per_record=dict(sorted(prisma.reviewers_per_record.items())))


def _agreement(summary: AgreementSummary) -> Agreement:
    return Agreement(summary.reviewers, summary.documents, summary.agreement, summary.alpha,
                     [PairAgreement(p.reviewer_a, p.reviewer_b, p.agreement, p.kappa) for p in summary.pairs])


def _sensitivity_row(policy: str, fig: _Figures, tau: float) -> PolicySensitivityRow:
    a = fig.assessment
    row = next((r for r in a.targets if abs(r.target - tau) < 1e-12), None)
    recall = a.recall[0] if a.recall and a.recall[0].basis == a.basis.method else None
    return PolicySensitivityRow(
        policy=policy, relevant_judged=fig.found_topic, relevant_in_reviewed=fig.found_prefix,
        depth_basis=a.basis.method, relevant_estimate=a.basis.point,
        relevant_lower=a.basis.lower, relevant_upper=a.basis.upper,
        recall=None if recall is None else recall.point,
        recall_lower=None if recall is None else recall.lower,
        recall_upper=None if recall is None else recall.upper, target=tau,
        status=None if row is None else row.status,
        depth=None if row is None else next((d for d in (row.depth, row.point.depth, row.forward.to_rank.depth)
                                              if d is not None), None),
        conservative_depth=None if row is None else row.conservative.depth)


def _digests(conn: Connection, topic_id: int, as_of: int | None) -> list[str]:
    # EXISTS per import (few) over ix_judgments_import_id, rather than a join over every judgment of the topic
    used = exists().where(Judgment.import_id == ImportRecord.id, Judgment.topic_id == topic_id)
    if as_of is not None:
        used = used.where(Judgment.id <= as_of)
    stmt = select(ImportRecord.digest).where(used).distinct()
    return sorted(str(d) for d in conn.execute(stmt).scalars())


def _curves(prefix_labels: np.ndarray, assessment: Assessment) -> tuple[Gain, PrecisionRecall]:
    basis = assessment.basis
    n = len(prefix_labels)
    cg = np.cumsum(prefix_labels == 1)
    keep = _thin(n)
    r_point = basis.point if basis.point > 0 and basis.method != Basis.JUDGED else None
    gain = Gain(depth=(keep + 1).tolist(), found=cg[keep].tolist(), relevant_estimate=r_point,
                relevant_lower=basis.lower if r_point else None, relevant_upper=basis.upper if r_point else None,
                markers=[GainMarker(r.target, r.depth if r.depth is not None else r.point.depth,
                                    r.conservative.depth) for r in assessment.targets])
    pr = PrecisionRecall()
    if n and r_point:
        curve = trec.precision_recall_points(prefix_labels == 1, r_point)
        pr = PrecisionRecall(recall=np.minimum(curve["recall"][keep], 1.0).tolist(),
                             precision=curve["precision"][keep].tolist(),
                             interpolated_precision=curve["interpolated_precision"][keep].tolist())
    return gain, pr
