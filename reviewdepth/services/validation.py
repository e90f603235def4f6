"""The validation document of a topic (`reviewdepth validation TOPIC`, ``GET /topics/{t}/validation``): the depth
report (`reviewdepth.services.report.report_of`, the very report ``reviewdepth report`` prints) read in the same
snapshot as the sample documents' coding and the topic's audit streams, laid out as
`reviewdepth.report.validation_model.ValidationDocument`. Every figure is the report's; the only arithmetic here
forms a margin of error (half the width of a two-sided interval the report gives) and the elusion rate's bounds
(the report's eluded-document bounds over the discard pile)."""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Mapping, Sequence
from fractions import Fraction

from sqlalchemy import Engine

from reviewdepth.estimation.assessment import AnswerStatus, Basis
from reviewdepth.estimation.stopping import RuleKind
from reviewdepth.report.model import Provenance, Report, SampleRow
from reviewdepth.report.status_model import AUDIT_BASIS
from reviewdepth.report.validation_model import (
    AuditStreamEvidence,
    Coder,
    Cutoff,
    Decision,
    Evidence,
    Plan,
    Protocol,
    Results,
    SampleDocument,
    SampleEvidence,
    ValidationDocument,
)
from reviewdepth.report.wording import design, validation_caveats
from reviewdepth.services.errors import Invalid
from reviewdepth.services.evidence.audit import stream_pace, streams_of
from reviewdepth.services.evidence.sample_coding import sample_coding
from reviewdepth.services.evidence.topic import find_queue
from reviewdepth.services.report import ReportOptions, report_of
from reviewdepth.store.chain import canonical_time
from reviewdepth.store.models import AuditStream
from reviewdepth.store.snapshot import read_snapshot

AUDIT = AUDIT_BASIS  # the decision's basis when the audit stream decides


def build_validation(engine: Engine, topic: str, options: ReportOptions,
                     produce_to: int | None = None) -> ValidationDocument:
    """The validation document of ``topic`` for its one target (``options.targets``, a recall below 1): the
    report, the sample coding and the audit streams, read in one snapshot; with ``produce_to`` (a rank cutoff, or
    ``options.produce_to``), the two-phase figures at that cutoff too: the report's own two-phase section
    (`reviewdepth.services.two_phase.two_phase_of`), computed once."""
    if produce_to is not None:
        options = dataclasses.replace(options, produce_to=produce_to)
    # a document to hand over states the plan's recommended path when the target is not reached
    options = dataclasses.replace(options, with_plan=True)
    if len(options.targets) != 1:
        raise Invalid("a validation document is for one target recall")
    options.validate()
    if Fraction(str(options.targets[0])) >= 1:
        raise Invalid(f"target recall must be below 1 for a validation (no sample certifies recall 1), not "
                      f"{options.targets[0]}")
    with read_snapshot(engine) as conn:
        report = report_of(conn, topic, options)
        topic_id, _ = find_queue(conn, topic, options.queue)
        as_of = report.answer.as_of_judgment
        coding = sample_coding(conn, topic_id, [s.id for s in report.samples], as_of)
        streams = [s for s in streams_of(conn, topic_id) if as_of is None or s.as_of is None or s.as_of <= as_of]
    return validation_of(report, coding, streams)


def _half_width(lower: float | None, upper: float | None) -> float | None:
    return None if lower is None or upper is None else (upper - lower) / 2


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _results(report: Report) -> Results:
    basis = report.depth_basis
    figure = next((r for r in report.recall if r.basis == basis), None)
    row = next((e for e in report.estimates if e.estimate.method == basis), None)
    estimate = None if row is None else row.estimate
    details = {} if estimate is None else estimate.details
    elusion = basis == Basis.ELUSION and estimate is not None
    unreviewed = _number(details.get("unreviewed")) if elusion else None
    eluded_lower = _number(details.get("missed_lower")) if elusion else None
    eluded_upper = _number(details.get("missed_upper")) if elusion else None
    rate_lower = None if eluded_lower is None or not unreviewed else eluded_lower / unreviewed
    rate_upper = None if eluded_upper is None or not unreviewed else eluded_upper / unreviewed
    sample_id = details.get("sample_id") if elusion else None
    sample_size = details.get("sample_size") if elusion else None
    sample_relevant = details.get("sample_relevant") if elusion else None
    return Results(
        basis=basis, confidence=report.settings.confidence,
        recall=None if figure is None else figure.point, recall_lower=None if figure is None else figure.lower,
        recall_upper=None if figure is None else figure.upper,
        recall_lower_one_sided=None if figure is None else figure.lower_one_sided,
        recall_margin=None if figure is None else _half_width(figure.lower, figure.upper),
        recall_note=None if figure is None else figure.note,
        elusion_sample_id=int(sample_id) if isinstance(sample_id, int) else None,
        elusion_sample_size=int(sample_size) if isinstance(sample_size, int) else None,
        elusion_sample_relevant=int(sample_relevant) if isinstance(sample_relevant, int) else None,
        elusion_rate=_number(details.get("elusion")) if elusion else None,
        elusion_rate_lower=rate_lower, elusion_rate_upper=rate_upper,
        elusion_margin=_half_width(rate_lower, rate_upper),
        eluded=_number(details.get("missed_point")) if elusion else None,
        eluded_lower=eluded_lower, eluded_upper=eluded_upper,
        relevant_estimate=None if estimate is None else estimate.point,
        relevant_lower=None if estimate is None else estimate.lower,
        relevant_upper=None if estimate is None else estimate.upper,
        reviewed=report.current.depth, relevant_in_reviewed=report.current.relevant_found,
        precision=report.current.precision)


def _decision(report: Report) -> Decision:
    answer = report.answer
    status = answer.topic_status
    target_row = next((r for r in report.depth if r.target == answer.target), None)
    certified_by: str | None = None
    if status.decided_by == AUDIT:
        figure = next((f for f in status.figures if f.basis == AUDIT), None)
        certified_by = figure.text if figure is not None and figure.certifies else None
    elif target_row is not None and target_row.status == AnswerStatus.REACHED:
        certified_by = target_row.reached_by
    rule = next((s.evidence for s in report.stopping if s.evidence.rule == status.decided_by
                 and s.evidence.kind == RuleKind.CERTIFIED and s.evidence.stop_now), None)
    return Decision(
        status=answer.status, headline=answer.text, decided_by=status.decided_by, status_text=status.text,
        certified_by=certified_by, rule=None if rule is None else rule.rule,
        guarantee=None if rule is None else rule.guarantee, reason=None if rule is None else rule.reason,
        assumptions=[] if rule is None else list(rule.assumptions), next_step=answer.next_step)


def _sample(row: SampleRow, coded: Sequence[SampleDocument]) -> SampleEvidence:
    times = sorted(d.recorded_at for d in coded if d.recorded_at is not None)
    coders = Counter(d.reviewer for d in coded if d.reviewer is not None)
    return SampleEvidence(
        id=row.id, frame=row.frame, frame_definition=row.frame_definition, seed=row.seed, size=row.size,
        frame_size=row.frame_size, drawn_at_judgment=row.drawn_at_judgment, relevant=row.relevant,
        uncoded=sum(d.relevant is None for d in coded), voided=row.voided, void_reason=row.void_reason,
        use=row.use, status=row.status, in_discard_pile=row.in_unreviewed_rest,
        relevant_in_discard_pile=row.positives_in_rest,
        coders=[Coder(name, count) for name, count in sorted(coders.items())],
        first_coded_at=times[0] if times else None, last_coded_at=times[-1] if times else None,
        documents=list(coded))


def _stream(stream: AuditStream, report: Report) -> AuditStreamEvidence:
    figure = next((f for f in report.answer.topic_status.figures if f.basis == AUDIT), None)
    current = figure is not None and stream.voided_at is None
    return AuditStreamEvidence(
        id=int(stream.id), seed=int(stream.seed), pace=stream_pace(stream.every_k, stream.rate),
        population=int(stream.population_size), served=int(stream.served),
        created_at=canonical_time(stream.created_at), voided=stream.voided_at is not None,
        recall_lower=figure.recall_lower if current and figure is not None else None,
        certifies=figure.certifies if current and figure is not None else None)


def validation_of(report: Report, coding: Mapping[int, Sequence[SampleDocument]],
                  streams: Sequence[AuditStream] = ()) -> ValidationDocument:
    """The validation document laid out from ``report`` (the depth report, with its two-phase section when it
    was asked for), each sample's ``coding`` and the topic's audit ``streams`` (newest first)."""
    summary, settings, answer = report.summary, report.settings, report.answer
    samples = [_sample(row, coding.get(row.id, ())) for row in report.samples]
    protocol = Protocol(
        target=answer.target, confidence=settings.confidence,
        design=design(report.depth_basis, answer.topic_status.decided_by), basis=report.depth_basis,
        interval=settings.interval, label_policy=settings.label_policy, ordering=settings.ordering,
        estimate_scope=summary.estimate_scope, as_of_judgment=answer.as_of_judgment)
    cutoff = Cutoff(rank=summary.reviewed if answer.review_order is None else None, reviewed=summary.reviewed,
                    population=summary.population, queue_size=summary.queue_size,
                    discard_pile=summary.population - summary.reviewed, review_order=answer.review_order)
    head = report.provenance.judgment_chain_head
    provenance = Provenance(
        software=report.provenance.software, queue_source=report.provenance.queue_source,
        input_digests=list(report.provenance.input_digests), judgment_chain_head=head,
        sample_seeds=list(report.provenance.sample_seeds))
    uncoded = sum(s.uncoded for s in samples if not s.voided)
    return ValidationDocument(
        topic=report.topic, queue=report.queue, dated=head.recorded_at, protocol=protocol,
        evidence=Evidence(samples, [_stream(s, report) for s in streams]), results=_results(report),
        cutoff=cutoff, decision=_decision(report),
        plan=Plan(floor=answer.floor, sample_plan=answer.plan, certify=answer.certify), provenance=provenance,
        caveats=validation_caveats(report.topic, uncoded, sum(s.voided for s in samples)),
        two_phase=report.two_phase)
