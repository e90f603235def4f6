"""The validation document (`reviewdepth.report.validation_model.ValidationDocument`) as JSON, HTML and PDF.

The HTML page and the PDF print the same sections (`sections`), in the same words and with the same numbers:
proportions to four decimals, a lower bound rounded down and an upper bound rounded up (a printed bound is never
more favourable than the computed one), counts with thousands separators. The PDF is drawn by fpdf2 with its core
fonts only (no system font, nothing fetched), imported only here; its metadata (creation date, producer) come from
the document itself — the date of the chain head it was computed at — so the same judgment log gives the same
bytes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import ROUND_CEILING, ROUND_FLOOR, ROUND_HALF_EVEN, Decimal
from typing import Any, Literal

from reviewdepth.estimation.percent import percent
from reviewdepth.report.two_phase_model import TwoPhase, TwoPhaseCount, TwoPhaseRatio
from reviewdepth.report.validation_model import ValidationDocument
from reviewdepth.report.wording import two_phase_assumption, two_phase_gap

DocumentFormat = Literal["pdf", "html", "json"]
DOCUMENT_FORMATS: tuple[DocumentFormat, ...] = ("pdf", "html", "json")
# a document computed before any judgment has no chain-head time: it is dated by this constant
UNDATED = datetime(2000, 1, 1, tzinfo=UTC)
PLACES = Decimal("0.0001")
TWO_PHASE_SAMPLES_NOTE = ("The samples' status and use in the evidence below are the one-phase report's (which reads "
                          "the reviewed set as the cutoff); this section uses the samples named above.")


def _decimal(value: float, rounding: str) -> str:
    return str(Decimal(repr(float(value))).quantize(PLACES, rounding=rounding))


def proportion(value: float | None) -> str:
    """A point estimate of a proportion, four decimals (round half even); an em dash for none."""
    return "—" if value is None else _decimal(value, ROUND_HALF_EVEN)


def lower(value: float | None) -> str:
    """A lower bound, four decimals, rounded down."""
    return "—" if value is None else _decimal(value, ROUND_FLOOR)


def upper(value: float | None) -> str:
    """An upper bound, four decimals, rounded up."""
    return "—" if value is None else _decimal(value, ROUND_CEILING)


def count(value: float | None) -> str:
    """A count (or an estimated count) with thousands separators; a fractional estimate to one decimal."""
    if value is None:
        return "—"
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.1f}"


def _tenth(value: float, rounding: str) -> str:
    return f"{Decimal(repr(float(value))).quantize(Decimal('0.1'), rounding=rounding):,}"


def count_lower(value: float | None) -> str:
    """A lower bound on a count: a fractional one rounded down to one decimal."""
    if value is None:
        return "—"
    return count(value) if float(value).is_integer() else _tenth(value, ROUND_FLOOR)


def count_upper(value: float | None) -> str:
    """An upper bound on a count: a fractional one rounded up to one decimal."""
    if value is None:
        return "—"
    return count(value) if float(value).is_integer() else _tenth(value, ROUND_CEILING)


def measure(value: float | None, rounding: str = ROUND_HALF_EVEN) -> str:
    """A statistic that may be undefined (NaN, e.g. kappa with no variation): "undefined" then."""
    if value is not None and math.isnan(value):
        return "undefined"
    return {ROUND_FLOOR: lower, ROUND_CEILING: upper}.get(rounding, proportion)(value)


def level(confidence: float) -> str:
    """A confidence never printed above itself (0.999 → "99.9%"; `reviewdepth.estimation.percent`)."""
    return percent(confidence)


@dataclass(frozen=True)
class Table:
    """A table of the document; ``widths`` are relative; ``listing``: one line per row, no wrapping (the long
    appendix, drawn as plain lines in the PDF)."""

    headers: list[str]
    rows: list[list[str]]
    widths: list[int]
    listing: bool = False


@dataclass(frozen=True)
class Section:
    """One titled part of the document: label–value rows, then an optional table, then notes."""

    title: str
    rows: list[tuple[str, str]] = field(default_factory=list)
    table: Table | None = None
    notes: list[str] = field(default_factory=list)
    bullets: bool = False


def title(doc: ValidationDocument) -> str:
    return f"Validation of the stop decision: topic {doc.topic}, queue {doc.queue}"


def subtitle(doc: ValidationDocument) -> str:
    at = doc.protocol.as_of_judgment
    where = "before any judgment" if at is None else f"as of judgment {at:,}"
    dated = "" if doc.dated is None else f", dated {doc.dated}"
    return f"Computed {where} of the topic's log{dated}, by {doc.provenance.software}."


def _decision(doc: ValidationDocument) -> Section:
    """The decision as the decision object states it: its headline (the one status word), the deciding evidence,
    the supporting figures labelled as such, the rule and the next step."""
    d = doc.decision
    rows = [("Decision", d.headline), ("Decided by", d.decided_by or "no evidence bounds recall"),
            ("Deciding evidence", d.deciding or "none")]
    if d.certified_by is not None and d.certified_by != d.deciding:
        rows.append(("Certified by", d.certified_by))
    rows += [("Supporting, not deciding", text) for text in d.supporting]
    if d.rule is not None:
        rows += [("Stopping rule", d.rule), ("Guarantee", d.guarantee or "—"), ("Rule's reason", d.reason or "—")]
    rows += [("Next step", d.next_step or "—")]
    notes = [f"Assumption of the rule: {a}" for a in d.assumptions]
    return Section("Stop decision", rows, notes=notes)


def _tests(doc: ValidationDocument) -> Section:
    rows = [[str(t.order), t.evidence, t.kind, t.validity, "—" if t.at_judgment is None else f"{t.at_judgment:,}",
             f"{t.reviewed:,}", lower(t.recall_lower), f"{t.target:g}",
             "no bound" if t.passed is None else ("passed" if t.passed else "failed"),
             "decided" if t.decided else ""] for t in doc.tests]
    notes = ["Each test's one-sided lower bound on recall at "
             f"{level(doc.results.confidence)} as the report gave it at that judgment; a test passes when the bound "
             "is at least the target. Only the test marked 'decided' is the decision's evidence."]
    return Section("Every test run on the topic, in order", table=Table(
        ["#", "evidence", "test", "validity", "at judgment", "reviewed", "recall lower bound", "target", "result",
         ""], rows, [5, 16, 30, 14, 13, 11, 17, 9, 12, 11]) if rows else None,
        notes=notes if rows else ["No test has been run: no fully coded sample and no audit stream."])


def _flags(doc: ValidationDocument) -> Section | None:
    if not doc.flags:
        return None
    titles = {"reused-failed-sample": "A failed sample reused as evidence", "revalidate": "Re-validation needed"}
    return Section("Flags", [(titles.get(f.code, f.code), f.text) for f in doc.flags])


def _protocol(doc: ValidationDocument) -> Section:
    p = doc.protocol
    return Section("Protocol settings", [
        ("Target recall", f"{p.target:g}"), ("Confidence", f"{p.confidence:g} ({level(p.confidence)})"),
        ("Design", p.design), ("Estimate basis", p.basis), ("Interval", p.interval),
        ("Label policy", p.label_policy), ("Queue ordering", p.ordering), ("Recall is of", p.estimate_scope),
        ("As of judgment", "—" if p.as_of_judgment is None else f"{p.as_of_judgment:,}")])


NOT_RECORDED = "not recorded"


def _protocol_fields(doc: ValidationDocument) -> Section:
    """The protocol fields as entered once per topic (``reviewdepth topic protocol``), each "not recorded" when
    absent, and the acceptance criterion read against the evidence."""
    record = doc.protocol_fields
    f = record.fields if record is not None else None

    def text(value: str | None) -> str:
        return NOT_RECORDED if value is None else value

    def listed(values: list[str] | None) -> str:
        return NOT_RECORDED if not values else "; ".join(values)

    def docs(value: int | None) -> str:
        return NOT_RECORDED if value is None else f"{value:,} documents"

    if f is None:
        rows = [("Protocol fields", NOT_RECORDED)]
    else:
        dates = (NOT_RECORDED if f.date_from is None and f.date_to is None else
                 f"{f.date_from or 'not recorded'} to {f.date_to or 'not recorded'}")
        rows = [("Workflow", text(f.workflow)), ("TAR platform", text(f.platform)), ("Model", text(f.model)),
                ("Version", text(f.version)), ("Custodians", listed(f.custodians)), ("Date range", dates),
                ("Document types excluded", listed(f.excluded_types)),
                ("Processing exceptions", text(f.processing_exceptions)),
                ("Removed by de-duplication", docs(f.duplicates_removed)),
                ("Suppressed by e-mail threading", docs(f.threaded)),
                ("Acceptance criterion (agreed in advance)", NOT_RECORDED if f.acceptance is None
                 else f.acceptance.text),
                ("Reviewer roster", NOT_RECORDED if not f.reviewers else
                 "; ".join(f"{r.name} ({r.role})" for r in f.reviewers)),
                ("Validation sample coded blind", NOT_RECORDED if f.blind is None else ("yes" if f.blind else "no")),
                ("Produced", docs(f.produced)), ("Withheld (privilege)", docs(f.withheld))]
    a = doc.acceptance
    if a is not None:
        if a.met is None:
            verdict = f"not evaluated: {a.reason}"
        else:
            shown = upper(a.bound) if a.form == "elusion" else lower(a.bound)
            sign = "<=" if a.form == "elusion" else ">="
            verdict = (f"{'met' if a.met else 'not met'}: {a.reads} is {shown}, "
                       f"{'' if a.met else 'not '}{sign} {a.value:g}")
        rows.append(("Acceptance criterion, read against the evidence", verdict))
    notes = [] if record is None or record.recorded_at is None else [
        f"Entered by {record.recorded_by} at {record.recorded_at} (reviewdepth topic protocol); the fields are "
        "chained with the topic in the evidence chain."]
    if record is None or record.recorded_at is None:
        notes.append(f"No protocol fields were entered: reviewdepth topic protocol {doc.topic} --workflow ... "
                     "records them.")
    return Section("Protocol fields (what the protocol discloses)", rows, notes=notes)


def _richness(doc: ValidationDocument) -> Section:
    r = doc.richness
    if r is None:
        return Section("Richness (prevalence)", [("Richness", "not recorded: no control sample (a random sample of "
                                                              "the whole queue) is stored")])
    when = "before any judgment" if r.drawn_at_judgment is None else f"at judgment {r.drawn_at_judgment:,}"
    return Section("Richness (prevalence)", [
        ("Control sample", f"sample {r.sample_id}, drawn {when}: {r.relevant:,} relevant of {r.size:,} drawn from "
                           f"{r.frame_size:,} documents"),
        ("Richness (point)", proportion(r.point)),
        (f"Richness, two-sided {level(r.confidence)} interval", f"[{lower(r.lower)}, {upper(r.upper)}] (exact, "
                                                               "hypergeometric)")])


def _three_strata(doc: ValidationDocument) -> Section:
    t = doc.three_strata
    title_text = "Three-stratum validation (In re Broiler Chicken design)"
    if t is None:
        return Section(title_text, notes=["Not run: the topic has no QC sample of coded documents and no sample of "
                                          "the never-reviewed documents."])
    conf = level(t.confidence)
    rows = [[s.name, s.source, f"{s.size:,}", f"{s.sample:,}", f"{s.relevant:,}",
             "—" if s.relevant_lower is None else f"{count(s.relevant_lower)} to {count(s.relevant_upper)}",
             "found" if s.found else "missed"] for s in t.strata]
    pairs: list[tuple[str, str]] = []
    if t.recall is not None:
        pairs = [("Relevant documents (all strata)", f"{count(t.relevant)} [{count_lower(t.relevant_lower)}, "
                                                     f"{count_upper(t.relevant_upper)}]"),
                 ("Recall (point)", proportion(t.recall)),
                 (f"Recall, two-sided {conf} interval", f"[{lower(t.recall_lower)}, {upper(t.recall_upper)}]")]
    else:
        pairs = [("Recall", "not estimated: no sample of " + ", ".join(t.missing))]
    notes = [f"Each stratum's relevant count: the exact two-sided {conf} hypergeometric interval from its sample. "
             "Recall = relevant in the coded-responsive stratum over relevant in all three (stratified estimator, "
             "conservative Beta-posterior bounds). The coded strata are read from the QC sample's second coding: "
             "a responsive document recoded not relevant, or a non-responsive one recoded relevant, is a coding "
             "error the elusion test alone cannot see.",
             "The QC sample is taken as a random sample of each coded stratum (conditional on how many of its "
             "documents fall in each); it must be drawn from the reviewed documents (sample draw --frame judged "
             "after the review)."]
    return Section(title_text, pairs, table=Table(
        ["stratum", "sample", "documents", "sampled", "relevant in sample", f"relevant, {conf} range",
         "counts as"], rows, [22, 22, 14, 12, 16, 22, 12]), notes=notes)


def _quality(doc: ValidationDocument) -> Section:
    q = doc.review_quality
    title_text = "Quality control and agreement"
    if q is None:
        return Section(title_text, [("Quality control", NOT_RECORDED)])
    rows: list[tuple[str, str]] = [
        ("Documents with several reviewers", f"{q.documents_with_several_reviewers:,}"),
        ("Conflicts", f"{q.conflicts:,} ({q.conflicts_open:,} open, {q.conflicts_resolved:,} resolved)")]
    a = q.agreement
    if a is None:
        rows.append(("Agreement", "not measured: no document has two reviewers' decisions"))
    else:
        rows += [("Agreement", f"{measure(a.agreement.point)} [{measure(a.agreement.lower, ROUND_FLOOR)}, "
                               f"{measure(a.agreement.upper, ROUND_CEILING)}] over {a.documents:,} documents"),
                 ("Krippendorff's alpha", f"{measure(a.krippendorff_alpha.alpha)} "
                                          f"[{measure(a.krippendorff_alpha.lower, ROUND_FLOOR)}, "
                                          f"{measure(a.krippendorff_alpha.upper, ROUND_CEILING)}]")]
        rows += [(f"Cohen's kappa, {p.reviewer_a} / {p.reviewer_b}",
                  f"{measure(p.cohen_kappa.kappa)} [{measure(p.cohen_kappa.lower, ROUND_FLOOR)}, "
                  f"{measure(p.cohen_kappa.upper, ROUND_CEILING)}] over {p.cohen_kappa.n:,} documents")
                 for p in a.pairs]
    if not q.qc_samples:
        rows.append(("QC samples", "none: no QC sample of judged documents (sample draw --frame judged)"))
    for s in q.qc_samples:
        e = s.error_rates
        if e is None:
            rows.append((f"QC sample {s.sample_id}", f"{s.checked:,} of {s.size:,} checked: no error rates yet"))
            continue
        rows += [(f"QC sample {s.sample_id}, error rate",
                  f"{proportion(e.error_rate.point)} [{lower(e.error_rate.lower)}, {upper(e.error_rate.upper)}]: "
                  f"{e.disagreements:,} of {e.n:,} recoded"),
                 (f"QC sample {s.sample_id}, false negative rate",
                  f"{proportion(e.false_negative_rate.point)} [{lower(e.false_negative_rate.lower)}, "
                  f"{upper(e.false_negative_rate.upper)}]: {e.false_negative_rate.successes:,} of "
                  f"{e.false_negative_rate.trials:,} coded not relevant"),
                 (f"QC sample {s.sample_id}, false positive rate",
                  f"{proportion(e.false_positive_rate.point)} [{lower(e.false_positive_rate.lower)}, "
                  f"{upper(e.false_positive_rate.upper)}]: {e.false_positive_rate.successes:,} of "
                  f"{e.false_positive_rate.trials:,} coded relevant")]
    return Section(title_text, rows)


def _count_bound(doc: ValidationDocument) -> Section | None:
    """The count bound; its first note says so when the recall target cannot be certified at a sane cost."""
    from reviewdepth.report.count_bound_render import lowering_lines, now_line, target_line

    cb = doc.count_bound
    if cb is None:
        return None
    rows = [("Now", now_line(cb)), ("The target", target_line(cb))]
    rows += [("To lower it", line) for line in lowering_lines(cb)]
    notes = []
    if not cb.target_certified and cb.target_above_half:
        notes.append(f"The recall target cannot be certified at a sane cost: at most {cb.at_most:,} relevant "
                     f"documents remain unreviewed ({level(cb.confidence)} confidence) is the claim this evidence "
                     "supports.")
    notes.append("A count bound from a fresh random sample of the unreviewed documents holds when that sample finds "
                 "none relevant; reviewdepth plan TOPIC --missed-at-most M gives the sample for a chosen M.".replace(
                     "TOPIC", doc.topic))
    return Section("Count bound: relevant documents left unreviewed", rows, notes=notes)


def _cutoff(doc: ValidationDocument) -> Section:
    c = doc.cutoff
    rows = [("Rank cutoff", "not a rank: the reviewed set is not a prefix of the queue" if c.rank is None
             else f"{c.rank:,} (ranks 1 to {c.rank:,} reviewed)"),
            ("Reviewed set", f"{c.reviewed:,} documents"), ("Population", f"{c.population:,} documents"),
            ("Queue size", f"{c.queue_size:,} documents"),
            ("Discard pile", f"{c.discard_pile:,} documents neither reviewed nor produced")]
    notes = [] if c.review_order is None else [c.review_order]
    if doc.two_phase is not None:
        notes.append(f"This section reads the reviewed set as the cutoff (one-phase review). Producing ranks 1 to "
                     f"{doc.two_phase.cutoff:,} (the two-phase section), the discard pile is the "
                     f"{doc.two_phase.discard_pile:,} uncoded documents below that rank.")
    return Section("Rank cutoff and discard pile", rows, notes=notes)


def _results(doc: ValidationDocument) -> Section:
    r = doc.results
    conf = level(r.confidence)
    rows: list[tuple[str, str]] = [("Basis", r.basis)]
    if r.recall is not None or r.recall_lower is not None:
        rows += [("Recall (point)", proportion(r.recall)),
                 (f"Recall, two-sided {conf} interval", f"[{lower(r.recall_lower)}, {upper(r.recall_upper)}]"),
                 (f"Recall, one-sided {conf} lower bound", lower(r.recall_lower_one_sided)),
                 ("Margin of error (post-test)", f"±{upper(r.recall_margin)} (half-width of the two-sided interval)")]
    else:
        rows.append(("Recall", "no estimate: no usable random sample"))
    if r.elusion_rate is not None:
        rows += [("Elusion sample", f"sample {r.elusion_sample_id}: {count(r.elusion_sample_relevant)} relevant of "
                                    f"{count(r.elusion_sample_size)} in the discard pile"),
                 ("Elusion rate", proportion(r.elusion_rate)),
                 (f"Elusion rate, two-sided {conf} interval",
                  f"[{lower(r.elusion_rate_lower)}, {upper(r.elusion_rate_upper)}]"),
                 ("Elusion margin of error", f"±{upper(r.elusion_margin)}"),
                 ("Eluded documents (estimate)", count(r.eluded)),
                 (f"Eluded documents, {conf} range", f"{count(r.eluded_lower)} to {count(r.eluded_upper)}")]
    if r.relevant_estimate is not None:
        rows.append(("Relevant documents R", f"{count(r.relevant_estimate)} [{count(r.relevant_lower)}, "
                                             f"{count(r.relevant_upper)}]"))
    rows.append(("Precision of the reviewed set", f"{proportion(r.precision)} = {r.relevant_in_reviewed:,} relevant "
                                                  f"/ {r.reviewed:,} reviewed (exact: every reviewed document is "
                                                  "judged)"))
    decided_by = doc.decision.decided_by
    heading = "Results" if decided_by is None or decided_by == r.basis else (
        f"Results of the random samples (supporting, not deciding: the {decided_by} decided)")
    return Section(heading, rows, notes=[] if r.recall_note is None else [r.recall_note])


def _stratum_rows(what: str, sample_label: str, figure: TwoPhaseCount | None, conf: str) -> list[tuple[str, str]]:
    if figure is None:
        return [(what, "no estimate: no usable sample covers these documents")]
    if figure.stratum == 0:
        return [(what, "none: no uncoded document here")]
    sample = ("none" if figure.sample_id is None else
              f"sample {figure.sample_id}: {figure.sample_relevant:,} relevant of its {figure.sample_size:,} "
              f"documents among these {figure.stratum:,}"
              + (f", {figure.sample_unjudged:,} without a decision" if figure.sample_unjudged else ""))
    return [(sample_label, sample),
            (f"{what} (estimate)", count(figure.point) + (" (exact)" if figure.exact else "")),
            (f"{what}, two-sided {conf} range", f"{count(figure.lower)} to {count(figure.upper)}")]


def _ratio_rows(what: str, figure: TwoPhaseRatio | None, conf: str, missing: str) -> list[tuple[str, str]]:
    if figure is None:
        return [(what, f"no estimate: {missing}")]
    return [(f"{what} (point)", proportion(figure.point)),
            (f"{what}, two-sided {conf} interval", f"[{lower(figure.lower)}, {upper(figure.upper)}]"),
            (f"{what}, one-sided {conf} lower bound", lower(figure.lower_one_sided))]


def two_phase_section(t: TwoPhase, topic: str) -> Section:
    """The two-phase section in words (the validation document's, and the depth report's with ``--produce-to``):
    label–value rows and the notes that name what each figure assumes."""
    conf = level(t.confidence)
    below = t.coded_relevant - t.coded_relevant_above
    rows: list[tuple[str, str]] = [
        ("Rank cutoff", f"{t.cutoff:,} of {t.queue_size:,} (documents ranked 1 to {t.cutoff:,} are produced "
                        "unless coded not relevant)"),
        ("Produced set", f"{t.produced:,} documents: {t.coded_relevant:,} coded relevant ({t.coded_relevant_above:,} "
                         f"at or above the cutoff, {below:,} below) and {t.uncoded_above:,} uncoded at or above it"),
        ("Coded in review", f"{t.coded:,} documents, {t.coded_relevant:,} relevant"),
        ("Discard pile", f"{t.discard_pile:,} uncoded documents below the cutoff"),
        ("Interval", f"{t.interval} (exact)")]
    rows += _stratum_rows("Relevant uncoded produced", "Produced-set sample", t.found_uncoded, conf)
    rows += _stratum_rows("Eluded documents", "Discard-pile sample", t.eluded, conf)
    gaps = "; ".join(two_phase_gap(g, topic, t.cutoff) for g in t.gaps) or "a sample is missing"
    rows += _ratio_rows("Recall (Elusion with Recall)", t.recall, conf, gaps)
    if t.meets_target is not None and t.recall is not None and t.target is not None:
        rows.append((f"Target recall {t.target:g} at {conf}",
                     f"met: the one-sided lower bound {lower(t.recall.lower_one_sided)} is at least {t.target:g}"
                     if t.meets_target else
                     f"not shown: the one-sided lower bound {lower(t.recall.lower_one_sided)} is below {t.target:g}"))
    rows += _ratio_rows("Precision of the produced set", t.precision, conf, gaps)
    if t.control_sample_id is not None:
        rows.append(("Control set", f"sample {t.control_sample_id} (whole queue): {t.control_found:,} of its "
                                    f"{t.control_relevant:,} relevant documents count as found"))
        rows += _ratio_rows("Recall from the control set", t.control_recall, conf,
                            "the control set holds no relevant document")
    notes = ["A relevant document counts as found when it is coded relevant, or is uncoded and ranked at or above "
             "the cutoff (Relativity's \"Elusion with Recall\"). Recall = (coded relevant + relevant uncoded "
             "produced) / (those + eluded); precision = (coded relevant + relevant uncoded produced) / produced."]
    if t.recall is not None and t.recall.stratum_confidence != t.recall.confidence:
        notes.append(f"Recall's two strata are each estimated at {level(t.recall.stratum_confidence)} so that both "
                     f"hold at once at {conf}.")
    for name, figure in (("Recall", t.recall), ("Precision", t.precision),
                         ("Recall from the control set", t.control_recall)):
        if figure is not None:
            notes.append(f"{name} assumes: " + "; ".join(two_phase_assumption(a) for a in figure.assumptions) + ".")
    notes += [f"Not estimated: {two_phase_gap(g, topic, t.cutoff)}." for g in t.gaps]
    return Section(f"Two-phase (TAR 1.0) validation at rank cutoff {t.cutoff:,}", rows, notes=notes)


def _two_phase(doc: ValidationDocument) -> Section | None:
    if doc.two_phase is None:
        return None
    section = two_phase_section(doc.two_phase, doc.topic)
    return Section(section.title, section.rows, notes=[*section.notes, TWO_PHASE_SAMPLES_NOTE])


def _span(first: str | None, last: str | None) -> str:
    if first is None or last is None:
        return "—"
    return first if first == last else f"{first} to {last}"


def _evidence(doc: ValidationDocument) -> list[Section]:
    samples = doc.evidence.samples
    rows = [[str(s.id), s.frame, str(s.seed), f"{s.size:,}", f"{s.frame_size:,}",
             "—" if s.drawn_at_judgment is None else f"{s.drawn_at_judgment:,}", count(s.relevant),
             f"{s.uncoded:,}", s.use + (" (voided)" if s.voided else ""),
             ", ".join(f"{c.reviewer} ({c.documents:,})" for c in s.coders) or "—",
             _span(s.first_coded_at, s.last_coded_at)] for s in samples]
    notes = [f"Sample {s.id}: {s.frame_definition}; {s.status}" + (f"; voided: {s.void_reason}" if s.voided else "")
             for s in samples]
    out = [Section("Evidence: random samples", table=Table(
        ["id", "frame", "seed", "size", "frame size", "drawn at", "relevant", "uncoded", "use", "coders",
         "coded (UTC)"], rows, [8, 18, 10, 11, 14, 14, 13, 13, 14, 24, 43]) if samples else None,
        notes=notes or ["No random sample is stored for this queue."])]
    streams = doc.evidence.audit_streams
    out.append(Section("Evidence: audit stream", table=Table(
        ["id", "seed", "pace", "documents", "served", "created (UTC)", "voided", "recall lower bound"],
        [[str(a.id), str(a.seed), a.pace, f"{a.population:,}", f"{a.served:,}", a.created_at,
          "yes" if a.voided else "no", lower(a.recall_lower)] for a in streams],
        [10, 14, 18, 20, 16, 44, 14, 26]) if streams else None,
        notes=[f"Stream {a.id}: voided: {a.void_reason or 'no reason recorded'}" for a in streams if a.voided]
        if streams else ["The topic has no audit stream."]))
    return out


def _plan(doc: ValidationDocument) -> Section | None:
    plan = doc.plan
    rows: list[tuple[str, str]] = []
    if plan.floor is not None:
        f = plan.floor
        rows += [("Floor n_min now", f"{f.documents:,} documents judged outside the reviewed set (target "
                                     f"{f.target:g}, {level(f.confidence)}; {f.unreviewed:,} unreviewed, at most "
                                     f"{f.missed_allowed:,} relevant may be missed)"),
                 ("Least projected total", f"{count(f.least_total)} after {f.review_more:,} more reviewed"),
                 ("Projection", f.source)]
    if plan.sample_plan is not None:
        rows.append(("Sample plan", plan.sample_plan.summary))
    if plan.certify is not None:
        c = plan.certify
        rows += [("To certify", c.step), ("Certified by", c.certified_by)]
    return Section("Plan and floor", rows) if rows else None


def _provenance(doc: ValidationDocument) -> Section:
    p = doc.provenance
    head = p.judgment_chain_head
    return Section("Provenance", [
        ("Software", p.software), ("Queue source", p.queue_source),
        ("Input digests", ", ".join(p.input_digests) or "none (judgments recorded directly, not imported)"),
        ("Chain head", f"judgment {head.seq:,}, {head.recorded_at or 'no judgment yet'}"),
        ("Chain head hash", head.hash),
        ("Sample seeds", ", ".join(str(s) for s in p.sample_seeds) or "—")])


def _coding(relevant: bool | None, label: str | None) -> str:
    return "uncoded" if relevant is None else ("relevant" if relevant else "not relevant") + f" ({label})"


def _appendix(doc: ValidationDocument) -> list[Section]:
    """Every document that contributed evidence, grouped by sample and by audit stream, each with its coding,
    coder and time."""
    out: list[Section] = []
    note = "Each document's latest decision at the as-of point (the label policy 'latest' reads the same decision)."
    for s in doc.evidence.samples:
        rows = [[f"{d.rank:,}", d.doc_id, _coding(d.relevant, d.label), d.reviewer or "—", d.role or "—",
                 d.recorded_at or "—"] for d in s.documents]
        if rows:
            out.append(Section(f"Appendix: sample {s.id} ({s.frame}, {s.use}{', voided' if s.voided else ''}), "
                               f"{len(rows):,} documents", table=Table(
                                   ["rank", "document", "coding", "coder", "role", "recorded (UTC)"], rows,
                                   [14, 26, 30, 22, 18, 46], listing=True), notes=[note]))
    for a in doc.evidence.audit_streams:
        rows = [[f"{d.position:,}", "—" if d.rank is None else f"{d.rank:,}", d.doc_id, _coding(d.relevant, d.label),
                 d.reviewer or "—", d.role or "—", d.recorded_at or "—"] for d in a.documents]
        if rows:
            out.append(Section(f"Appendix: audit stream {a.id}, its judged prefix of {a.judged:,} documents",
                               table=Table(["position", "rank", "document", "coding", "coder", "role",
                                            "recorded (UTC)"], rows, [14, 14, 26, 30, 22, 18, 46], listing=True),
                               notes=["The stream's evidence is the judged prefix of its seeded permutation: every "
                                      "document in it counts, whether the review or the stream had it coded "
                                      "(the role says which). " + note]))
    return out


def _signature(doc: ValidationDocument) -> Section:
    blank = "_" * 40
    return Section("Signature", [
        ("Prepared by (name, role)", blank), ("Signature", blank), ("Date", blank),
        ("For the receiving party (name, role)", blank), ("Signature", blank), ("Date", blank)],
        notes=[f"Signed for the document dated {doc.dated or 'before any judgment'} (judgment chain head "
               f"{doc.provenance.judgment_chain_head.hash})."])


def sections(doc: ValidationDocument) -> list[Section]:
    """The document's parts in order, as both the HTML page and the PDF print them."""
    out = [_decision(doc), _tests(doc)]
    flags = _flags(doc)
    if flags is not None:
        out.append(flags)
    out += [_protocol_fields(doc), _protocol(doc), _richness(doc), _cutoff(doc), _results(doc)]
    bound = _count_bound(doc)
    if bound is not None:
        out.append(bound)
    out += [_three_strata(doc), _quality(doc)]
    two_phase = _two_phase(doc)
    if two_phase is not None:
        out.append(two_phase)
    out += _evidence(doc)
    plan = _plan(doc)
    if plan is not None:
        out.append(plan)
    out += [_provenance(doc), Section("Caveats", notes=list(doc.caveats), bullets=True), _signature(doc)]
    out += _appendix(doc)
    return out


def render_json(doc: ValidationDocument) -> str:
    return doc.to_json()


def render_html(doc: ValidationDocument) -> str:
    from reviewdepth.report.templating import templates

    text: str = templates().get_template("validation.html.j2").render(
        title=title(doc), subtitle=subtitle(doc), sections=sections(doc))
    return text


# core fonts (Helvetica, Courier) hold Latin-1 only: the few other characters the words use, spelled in it
_LATIN1 = str.maketrans({"≥": ">=", "≤": "<=", "–": "-", "—": "-", "×": "x", "…": "...", "‘": "'", "’": "'",
                         "“": '"', "”": '"', "τ": "tau", "α": "alpha", "≈": "~", "·": ".", "−": "-", "→": "->",
                         "\u0302": "^", "Š": "S"})


def latin1(text: str) -> str:
    return text.translate(_LATIN1).encode("latin-1", "replace").decode("latin-1")


def document_date(doc: ValidationDocument) -> datetime:
    """The PDF's creation date: the chain head's time (the last judgment the document reads), else `UNDATED`."""
    if doc.dated is None:
        return UNDATED
    return datetime.fromisoformat(doc.dated).astimezone(UTC)


def render_pdf(doc: ValidationDocument) -> bytes:
    """The document as an A4 PDF (fpdf2, core fonts): deterministic bytes for the same document."""
    from fpdf import FPDF
    from fpdf.enums import XPos, YPos

    pdf = FPDF(orientation="portrait", unit="mm", format="A4")
    pdf.set_creation_date(document_date(doc))
    pdf.set_producer(doc.provenance.software)
    pdf.set_creator(doc.provenance.software)
    pdf.set_title(latin1(title(doc)))
    pdf.set_subject(latin1(f"validation document of topic {doc.topic}"))
    pdf.set_lang("en")
    pdf.set_auto_page_break(auto=True, margin=15)
    pdf.set_margins(15, 15, 15)
    footer_text = latin1(f"{doc.topic} / {doc.queue}: validation document")

    def footer() -> None:
        pdf.set_y(-10)
        pdf.set_font("Helvetica", size=7)
        pdf.cell(0, 4, f"{footer_text} - page {pdf.page_no()}", align="C")

    pdf.footer = footer  # type: ignore[method-assign]
    pdf.add_page()
    width = pdf.epw
    pdf.set_font("Helvetica", style="B", size=14)
    pdf.multi_cell(width, 7, latin1(title(doc)), new_x=XPos.LMARGIN, new_y=YPos.NEXT, align="L")
    pdf.set_font("Helvetica", size=9)
    pdf.multi_cell(width, 5, latin1(subtitle(doc)), new_x=XPos.LMARGIN, new_y=YPos.NEXT, align="L")
    for section in sections(doc):
        pdf.ln(3)
        pdf.set_font("Helvetica", style="B", size=11)
        pdf.multi_cell(width, 6, latin1(section.title), new_x=XPos.LMARGIN, new_y=YPos.NEXT, align="L")
        if section.rows:
            pdf.set_font("Helvetica", size=8.5)
            with pdf.table(col_widths=(52, width - 52), first_row_as_headings=False, line_height=4.2,
                           padding=0.8, text_align="LEFT") as table:
                for label, value in section.rows:
                    row = table.row()
                    row.cell(latin1(label))
                    row.cell(latin1(value))
        if section.table is not None and section.table.listing:
            pdf.ln(1)
            _listing(pdf, section.table, width)
        elif section.table is not None:
            pdf.ln(1)
            pdf.set_font("Helvetica", size=6.5)
            with pdf.table(col_widths=tuple(section.table.widths), line_height=3.4, padding=0.6,
                           text_align="LEFT") as table:
                row = table.row()
                for heading in section.table.headers:
                    row.cell(latin1(heading))
                for cells in section.table.rows:
                    row = table.row()
                    for cell in cells:
                        row.cell(latin1(cell))
        if section.notes:
            pdf.ln(1)
            pdf.set_font("Helvetica", size=8)
            for note in section.notes:
                pdf.multi_cell(width, 4, latin1(("- " if section.bullets else "") + note), new_x=XPos.LMARGIN,
                               new_y=YPos.NEXT, align="L")
                pdf.ln(0.8)
    return bytes(pdf.output())


LISTING_FONT_SIZE = 7
LISTING_LINE_HEIGHT = 3.6


def listing_widths(pdf: Any, table: Table, width: float) -> list[float]:
    """The listing's column widths (mm), sized by content: each column as wide as its widest cell or heading
    (plus the cell margins) when they all fit in ``width``, the spare width shared in proportion; otherwise the
    narrow columns keep their width and the rest share what is left equally (their cells then wrap). Fixed
    relative widths let a long coding run into the coder's column ("not relevant (non-responsive)qc1")."""
    margin = 2 * pdf.c_margin
    pdf.set_font("Helvetica", style="B", size=LISTING_FONT_SIZE)
    natural = [pdf.get_string_width(latin1(h)) + margin for h in table.headers]
    pdf.set_font("Helvetica", size=LISTING_FONT_SIZE)
    for cells in table.rows:
        for i, cell in enumerate(cells):
            natural[i] = max(natural[i], pdf.get_string_width(latin1(cell)) + margin)
    total = sum(natural)
    if total <= width:
        return [w + (width - total) * w / total for w in natural]
    widths = list(natural)
    left = sorted(range(len(natural)), key=lambda i: natural[i])
    remaining = width
    while left:
        share = remaining / len(left)
        if natural[left[0]] > share:
            for i in left:  # every column still left is wider than an equal share: they share it and wrap
                widths[i] = share
            break
        i = left.pop(0)
        remaining -= natural[i]
    return widths


def _listing(pdf: Any, table: Table, width: float) -> None:
    """A long table as plain lines (fpdf2's table layout costs ~2 ms a row): the headings again on each page;
    columns sized by content (`listing_widths`), a cell too wide for its column wrapped within it."""
    from fpdf.enums import XPos, YPos

    widths = listing_widths(pdf, table, width)
    height = LISTING_LINE_HEIGHT
    margin = 2 * pdf.c_margin

    def headings() -> None:
        pdf.set_font("Helvetica", style="B", size=LISTING_FONT_SIZE)
        for w, heading in zip(widths, table.headers, strict=True):
            pdf.cell(w, height, latin1(heading), border="B")
        pdf.ln(height)
        pdf.set_font("Helvetica", size=LISTING_FONT_SIZE)

    def lines_of(text: str, w: float) -> list[str]:
        if pdf.get_string_width(text) + margin <= w:
            return [text]
        return list(pdf.multi_cell(w, height, text, dry_run=True, output="LINES"))

    headings()
    for cells in table.rows:
        texts = [lines_of(latin1(cell), w) for w, cell in zip(widths, cells, strict=True)]
        row_height = height * max(len(lines) for lines in texts)
        if pdf.will_page_break(row_height):
            pdf.add_page()
            headings()
        top, x = pdf.get_y(), pdf.l_margin
        for w, lines in zip(widths, texts, strict=True):
            pdf.set_xy(x, top)
            for line in lines:
                pdf.cell(w, height, line, new_x=XPos.LEFT, new_y=YPos.NEXT)
            x += w
        pdf.set_xy(pdf.l_margin, top + row_height)


def render_document(doc: ValidationDocument, fmt: DocumentFormat) -> bytes:
    """The document in ``fmt``: PDF bytes, or the HTML page or JSON as UTF-8."""
    if fmt == "pdf":
        return render_pdf(doc)
    if fmt == "html":
        return render_html(doc).encode("utf-8")
    if fmt == "json":
        return render_json(doc).encode("utf-8")
    raise ValueError(f"format: {fmt!r} is not a format of the validation document (one of "
                     f"{', '.join(DOCUMENT_FORMATS)})")
