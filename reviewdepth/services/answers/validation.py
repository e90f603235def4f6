"""The validation document of a topic (`reviewdepth validation TOPIC`, ``GET /topics/{t}/validation``): the depth
report (`reviewdepth.services.answers.report.report_of`, the very report ``reviewdepth report`` prints) read in the same
snapshot as the sample documents' coding and the topic's audit streams, laid out as
`reviewdepth.report.validation_model.ValidationDocument`. Every figure is the report's; the only arithmetic here
forms a margin of error (half the width of a two-sided interval the report gives) and the elusion rate's bounds
(the report's eluded-document bounds over the discard pile)."""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Mapping, Sequence

from sqlalchemy import Connection, Engine

from reviewdepth.estimation.assessment import AnswerStatus, Basis
from reviewdepth.estimation.intervals import hypergeometric_interval
from reviewdepth.estimation.percent import percent
from reviewdepth.estimation.relevant import Stratum, estimate_stratified
from reviewdepth.estimation.stopping import RuleKind
from reviewdepth.report.model import Provenance, Report, SampleRow
from reviewdepth.report.protocol_model import RecordedProtocol, TopicProtocol
from reviewdepth.report.status_model import AUDIT_BASIS
from reviewdepth.report.validation_model import (
    AcceptanceCheck,
    AuditDocument,
    AuditStreamEvidence,
    Coder,
    Cutoff,
    Decision,
    Evidence,
    Flag,
    Plan,
    Protocol,
    ProtocolRecord,
    Results,
    Richness,
    SampleDocument,
    SampleEvidence,
    StratumTally,
    TestRun,
    ThreeStrata,
    ValidationDocument,
)
from reviewdepth.report.wording import design, validation_caveats
from reviewdepth.services.answers.count_bound import count_bound_in
from reviewdepth.services.answers.protocol import protocol_in
from reviewdepth.services.answers.report import ReportOptions, report_of
from reviewdepth.services.errors import Invalid
from reviewdepth.services.evidence.audit import AuditEvidence, load_audit, stream_pace, streams_of
from reviewdepth.services.evidence.coding import Coding, first_decisions, latest_coding
from reviewdepth.services.evidence.confidence import checked_target
from reviewdepth.services.evidence.sample_coding import sample_coding
from reviewdepth.services.evidence.topic import find_queue
from reviewdepth.store.chain import canonical_time
from reviewdepth.store.models import AuditStream
from reviewdepth.store.snapshot import read_snapshot

AUDIT = AUDIT_BASIS  # the decision's basis when the audit stream decides


def build_validation(engine: Engine, topic: str, options: ReportOptions,
                     produce_to: int | None = None) -> ValidationDocument:
    """The validation document of ``topic`` for its one target (``options.targets``, a recall below 1): the
    report, the sample coding and the audit streams, read in one snapshot; with ``produce_to`` (a rank cutoff, or
    ``options.produce_to``), the two-phase figures at that cutoff too: the report's own two-phase section
    (`reviewdepth.services.answers.two_phase.two_phase_of`), computed once."""
    if produce_to is not None:
        options = dataclasses.replace(options, produce_to=produce_to)
    # a document to hand over states the plan's recommended path when the target is not reached
    options = dataclasses.replace(options, with_plan=True)
    if len(options.targets) != 1:
        raise Invalid("a validation document is for one target recall")
    options.validate()
    checked_target(options.targets[0], certify=True)
    with read_snapshot(engine) as conn:
        report = report_of(conn, topic, options)
        topic_id, _ = find_queue(conn, topic, options.queue)
        as_of = report.answer.as_of_judgment
        coding = sample_coding(conn, topic_id, [s.id for s in report.samples], as_of)
        streams = [s for s in streams_of(conn, topic_id) if as_of is None or s.as_of is None or s.as_of <= as_of]
        audit = load_audit(conn, topic, options.queue, policy=options.policy, as_of=as_of)
        audit_coding = {} if audit is None else latest_coding(conn, topic_id, audit.doc_ids, as_of)
        earlier = _earlier_tests(conn, topic, options, report, topic_id, coding)
        recorded = protocol_in(conn, report.topic, topic_id)
        bound = count_bound_in(conn, report, options)
    return dataclasses.replace(
        validation_of(report, coding, streams, audit=audit, audit_coding=audit_coding, earlier=earlier,
                      recorded=recorded), count_bound=bound)


@dataclasses.dataclass(frozen=True)
class EarlierTest:
    """A sample's one-look test as it stood when its last document was coded: the report as of that judgment."""

    sample_id: int
    at_judgment: int
    reviewed: int
    recall_lower: float | None


def _sample_figure(report: Report, sample_id: int) -> float | bool | None:
    """The one-sided lower bound on recall ``report`` draws from sample ``sample_id`` on its basis (None: no bound
    from it; False: the report's basis does not read that sample)."""
    basis = report.depth_basis
    row = next((e for e in report.estimates if e.estimate.method == basis), None)
    if row is None or row.estimate.details.get("sample_id") != sample_id:
        return False
    figure = next((r for r in report.recall if r.basis == basis), None)
    return None if figure is None else figure.lower_one_sided


def _earlier_tests(conn: Connection, topic: str, options: ReportOptions, report: Report, topic_id: int,
                   coding: Mapping[int, Sequence[SampleDocument]]) -> list[EarlierTest]:
    """Each fully coded sample's test when its coding was complete (the first decision on its last document to be
    coded; a later recoding does not move it): the report (the same options) as of that judgment, read in the
    caller's snapshot. Samples the report never reads are left out."""
    out: list[EarlierTest] = []
    for row in report.samples:
        docs = coding.get(row.id, ())
        if row.voided or not docs or any(d.relevant is None for d in docs):
            continue
        found = first_decisions(conn, topic_id, [d.doc_id for d in docs], report.answer.as_of_judgment)
        if len(found) < len({d.doc_id for d in docs}):
            continue
        last = max(found.values())  # the judgment that completed the sample's coding: its test was run then
        then = report_of(conn, topic, dataclasses.replace(options, as_of=last, with_plan=False))
        figure = _sample_figure(then, row.id)
        if figure is False or then.current.depth == 0:  # a control sample read before any review tests nothing
            continue
        out.append(EarlierTest(row.id, last, then.current.depth, figure if isinstance(figure, float) else None))
    return out


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
    """The decision block: the words of the topic's one decision (the report's ``answer.topic_status``, which its
    first lines, ``watch`` and the dashboard print), never a verdict of its own; ``certified_by``: what reached
    the target when the decision says reached (the deciding audit figure, or the depth row's reason)."""
    status = report.answer.topic_status
    figure = next((f for f in status.figures if f.basis == status.decided_by), None)
    certified_by: str | None = None
    if status.status == AnswerStatus.REACHED and status.decided_by == AUDIT:
        certified_by = None if figure is None else figure.text
    elif status.status == AnswerStatus.REACHED:
        # the depth table's row for the stopping target says by what (the decision carries the bound, not this)
        target_row = next((r for r in report.depth if r.target == report.answer.target), None)
        certified_by = None if target_row is None else target_row.reached_by
    rule = next((s.evidence for s in report.stopping if s.evidence.rule == status.decided_by
                 and s.evidence.kind == RuleKind.CERTIFIED and s.evidence.stop_now), None)
    return Decision(
        deciding=None if figure is None else figure.text,
        supporting=[f.text for f in status.figures if f.basis != status.decided_by],
        status=status.status, headline=status.lead, decided_by=status.decided_by, status_text=status.text,
        certified_by=certified_by, rule=None if rule is None else rule.rule,
        guarantee=None if rule is None else rule.guarantee, reason=None if rule is None else rule.reason,
        assumptions=[] if rule is None else list(rule.assumptions), next_step=status.next_step)


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


def _stream(stream: AuditStream, report: Report, audit: AuditEvidence | None,
            audit_coding: Mapping[str, Coding]) -> AuditStreamEvidence:
    figure = next((f for f in report.answer.topic_status.figures if f.basis == AUDIT), None)
    current = figure is not None and stream.voided_at is None
    documents: list[AuditDocument] = []
    if audit is not None and audit.stream_id == int(stream.id):
        for i, (doc_id, rank) in enumerate(zip(audit.doc_ids, audit.ranks, strict=True)):
            c = audit_coding.get(doc_id)
            documents.append(AuditDocument(int(stream.id), i + 1, rank, doc_id, *(
                (None, None, None, None, None) if c is None else (c.label, c.relevant, c.reviewer, c.role,
                                                                  c.recorded_at))))
    return AuditStreamEvidence(
        judged=len(documents), documents=documents,
        id=int(stream.id), seed=int(stream.seed), pace=stream_pace(stream.every_k, stream.rate),
        population=int(stream.population_size), served=int(stream.served),
        created_at=canonical_time(stream.created_at), voided=stream.voided_at is not None,
        void_reason=stream.void_reason if stream.voided_at is not None else None,
        recall_lower=figure.recall_lower if current and figure is not None else None,
        certifies=figure.certifies if current and figure is not None else None)


def _tests(report: Report, earlier: Sequence[EarlierTest]) -> list[TestRun]:
    """Every test run on the topic in order: each sample's test when it was coded, the sample read again at
    today's cutoff when the report still reads it there, then the audit stream's bound now."""
    status = report.answer.topic_status
    target, confidence = report.answer.target, report.settings.confidence
    now, reviewed = report.answer.as_of_judgment, report.current.depth
    latest = now if now is not None else 2 ** 63  # before any judgment: every test is "now"
    runs: list[tuple[int, str, str, str, int | None, int, float | None, bool]] = []
    for test in sorted(earlier, key=lambda t: t.at_judgment):
        evidence = f"sample {test.sample_id}"
        runs.append((test.at_judgment, evidence, "one-look test when coded", "one look", test.at_judgment,
                     test.reviewed, test.recall_lower, False))
        figure = _sample_figure(report, test.sample_id)
        if figure is not False and test.reviewed != reviewed:
            runs.append((latest, evidence, "read again at the current cutoff", "one look", now, reviewed,
                         figure if isinstance(figure, float) else None,
                         status.decided_by == report.depth_basis and status.decided_by != AUDIT))
        elif figure is not False and status.decided_by == report.depth_basis:
            runs[-1] = (*runs[-1][:7], True)
    audit = next((f for f in status.figures if f.basis == AUDIT), None)
    if audit is not None:
        runs.append((latest, audit.evidence.split(",")[0], "anytime-valid bound now", "anytime-valid", now,
                     reviewed, audit.recall_lower, status.decided_by == AUDIT))
    runs.sort(key=lambda r: r[0])  # stable: a sample's tests stay in the order they were run
    return [TestRun(order=i + 1, evidence=evidence, kind=kind, validity=validity, at_judgment=at,
                    reviewed=depth, recall_lower=lower, target=target, confidence=confidence,
                    passed=None if lower is None else lower >= target, decided=decided)
            for i, (_, evidence, kind, validity, at, depth, lower, decided) in enumerate(runs)]


def _flags(report: Report, tests: Sequence[TestRun], discard_pile: int) -> list[Flag]:
    flags: list[Flag] = []
    audit_decides = report.answer.topic_status.decided_by == AUDIT
    for first in tests:
        if first.kind != "one-look test when coded":
            continue
        again = next((t for t in tests if t.evidence == first.evidence and t.kind != first.kind), None)
        if first.passed is False and again is not None:
            flags.append(Flag("reused-failed-sample", first.evidence, (
                f"{first.evidence.capitalize()} failed its test (recall lower bound below {first.target:g} with "
                f"{first.reviewed:,} reviewed) and is read again as evidence with {again.reviewed:,} reviewed. "
                "This breaks the one-look assumption: a random sample certifies at its stated confidence only for "
                "one test at a cutoff fixed before it was drawn; testing it again after it failed lets the stop "
                "depend on the sample (reviewing on until the same sample passes), so its error rate is no longer "
                f"at most 1 − {first.confidence:g}." + (
                    " Here it is supporting evidence only: the audit stream (anytime-valid) decided."
                    if audit_decides else " Its figure should not decide: draw a fresh sample of the discard pile."))))
        if again is not None and again.reviewed != first.reviewed:
            flags.append(Flag("revalidate", first.evidence, (
                f"The discard pile changed after {first.evidence} was coded: {first.reviewed:,} documents were "
                f"reviewed then, {again.reviewed:,} now, so the pile it sampled is not today's {discard_pile:,} "
                "documents. Re-validation needs a fresh random sample of the current discard pile" + (
                    "; the audit stream, which decided, samples the whole queue and stays valid at every look."
                    if audit_decides else "."))))
    return flags


def _acceptance(fields: TopicProtocol, report: Report, results: Results) -> AcceptanceCheck | None:
    """The acceptance criterion read against the evidence: a recall criterion against the deciding figure's
    one-sided lower bound, an elusion criterion against the elusion rate's two-sided upper bound."""
    a = fields.acceptance
    if a is None:
        return None
    conf = report.settings.confidence

    def check(reads: str, bound: float | None, met: bool | None, reason: str | None = None) -> AcceptanceCheck:
        return AcceptanceCheck(a.text, a.form, a.value, a.confidence, reads, bound, met, reason)

    if a.confidence != conf:
        return check("nothing", None, None, f"the packet is computed at {conf:g} confidence and the criterion asks "
                                            f"{a.confidence:g}: run reviewdepth validation {report.topic} "
                                            f"--confidence {a.confidence:g}")
    status = report.answer.topic_status
    if a.form == "recall":
        figure = next((f for f in status.figures if f.basis == status.decided_by), None)
        if figure is None or figure.recall_lower is None:
            return check("the deciding figure", None, None, "no evidence bounds recall")
        return check(f"the deciding figure's one-sided {percent(conf)} lower bound on recall ({figure.basis})",
                     figure.recall_lower, figure.recall_lower >= a.value)
    if results.elusion_rate_upper is None:
        return check("the elusion rate", None, None, "no elusion sample of the discard pile")
    return check(f"the elusion rate's two-sided {percent(conf)} upper bound (sample {results.elusion_sample_id})",
                 results.elusion_rate_upper, results.elusion_rate_upper <= a.value)


def _richness(report: Report) -> Richness | None:
    """Prevalence from the first control sample (a random sample of the whole queue, frame ``all``) fully coded:
    the exact hypergeometric interval on its frame's relevant count, over the frame."""
    conf = report.settings.confidence
    for row in sorted(report.samples, key=lambda r: r.id):
        if row.voided or row.frame != "all" or row.relevant is None or row.size == 0:
            continue
        low, high = hypergeometric_interval(row.relevant, row.size, row.frame_size, conf, "two")
        return Richness(row.id, row.drawn_at_judgment, row.size, row.frame_size, row.relevant,
                        row.relevant / row.size, low / row.frame_size, high / row.frame_size, conf)
    return None


RESPONSIVE, NON_RESPONSIVE, NEVER_REVIEWED = "coded responsive", "coded non-responsive", "never reviewed"


def _three_strata(report: Report, results: Results) -> ThreeStrata | None:
    """The three-stratum validation from the report's own figures: the newest QC sample of judged documents (its
    QC coding of documents coded relevant and not relevant: the report's error rates' trials and successes) and
    the elusion sample of the never-reviewed documents. None when the topic has neither."""
    qc = next((q for q in sorted(report.review_quality.qc_samples, key=lambda q: -q.sample_id)
               if q.error_rates is not None), None)
    if qc is None and results.elusion_sample_id is None:
        return None
    conf = report.settings.confidence
    reviewed, found = report.current.depth, report.current.relevant_found
    basis = next((e for e in report.estimates if e.estimate.method == Basis.ELUSION), None)
    unreviewed = None if basis is None else _number(basis.estimate.details.get("unreviewed"))
    rows: list[tuple[str, str, int, int | None, int | None, bool]] = []
    if qc is not None and qc.error_rates is not None:
        fp, fn = qc.error_rates.false_positive_rate, qc.error_rates.false_negative_rate
        source = f"QC sample {qc.sample_id}"
        rows.append((RESPONSIVE, source, found, fp.trials, fp.trials - fp.successes, True))
        rows.append((NON_RESPONSIVE, source, reviewed - found, fn.trials, fn.successes, False))
    else:
        rows += [(RESPONSIVE, "none", found, None, None, True), (NON_RESPONSIVE, "none", reviewed - found, None,
                                                                 None, False)]
    rows.append((NEVER_REVIEWED, "none" if results.elusion_sample_id is None else
                 f"elusion sample {results.elusion_sample_id}",
                 int(unreviewed) if unreviewed is not None else report.summary.population - reviewed,
                 results.elusion_sample_size, results.elusion_sample_relevant, False))
    tallies: list[StratumTally] = []
    missing: list[str] = []
    for name, source, size, n, k, is_found in rows:
        if n is None or k is None or (size > 0 and n == 0) or n > size:
            missing.append(name)
            tallies.append(StratumTally(name, source, size, n or 0, k or 0, None, None, is_found))
            continue
        low, high = hypergeometric_interval(k, n, size, conf, "two") if size > 0 else (0, 0)
        tallies.append(StratumTally(name, source, size, n, k, float(low), float(high), is_found))
    if missing:
        return ThreeStrata(tallies, conf, None, None, None, None, None, None, missing)
    estimate = estimate_stratified([Stratum(t.name, t.size, t.sample, t.relevant, False, t.found) for t in tallies],
                                   confidence=conf)
    return ThreeStrata(tallies, conf, estimate.point, estimate.lower, estimate.upper, estimate.recall_point,
                       estimate.recall_lower, estimate.recall_upper, [])


def validation_of(report: Report, coding: Mapping[int, Sequence[SampleDocument]],
                  streams: Sequence[AuditStream] = (), *, audit: AuditEvidence | None = None,
                  audit_coding: Mapping[str, Coding] | None = None,
                  earlier: Sequence[EarlierTest] = (), recorded: RecordedProtocol | None = None) -> ValidationDocument:
    """The validation document laid out from ``report`` (the depth report, with its two-phase section when it
    was asked for), each sample's ``coding``, the topic's audit ``streams`` (newest first) with the active one's
    judged prefix (``audit``) and its coding, and each sample's test when it was coded (``earlier``)."""
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
    tests = _tests(report, earlier)
    results = _results(report)
    recorded = recorded or RecordedProtocol(report.topic, TopicProtocol(), None, None)
    return ValidationDocument(
        tests=tests, flags=_flags(report, tests, cutoff.discard_pile),
        protocol_fields=ProtocolRecord(recorded.fields, recorded.recorded_at, recorded.recorded_by),
        acceptance=_acceptance(recorded.fields, report, results), richness=_richness(report),
        three_strata=_three_strata(report, results), review_quality=report.review_quality,
        topic=report.topic, queue=report.queue, dated=head.recorded_at, protocol=protocol,
        evidence=Evidence(samples, [_stream(s, report, audit, audit_coding or {}) for s in streams]),
        results=results,
        cutoff=cutoff, decision=_decision(report),
        plan=Plan(floor=answer.floor, sample_plan=answer.plan, certify=answer.certify), provenance=provenance,
        caveats=validation_caveats(report.topic, uncoded, sum(s.voided for s in samples)),
        two_phase=report.two_phase)
