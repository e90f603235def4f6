"""The count bound of a topic (`reviewdepth.estimation.count_bound`): "at most m relevant documents remain
unreviewed (confidence c)" from the evidence that decides the topic — the audit stream's anytime-valid bound on the
documents missed when the stream decides, else the exact one-sided bound from the elusion sample of the
unreviewed rest, else the exact count when R is known — and what lowering it costs. ``reviewdepth plan TOPIC
--missed-at-most M`` and the validation packet print it."""

from __future__ import annotations

from fractions import Fraction

from sqlalchemy import Connection, Engine

from reviewdepth.estimation.assessment import Basis
from reviewdepth.estimation.count_bound import CountBound, at_most_from_sample, count_bound
from reviewdepth.report.model import Report
from reviewdepth.report.status_model import AUDIT_BASIS
from reviewdepth.services.answers.report import ReportOptions, report_of
from reviewdepth.store.snapshot import read_snapshot


def _int(value: object) -> int | None:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def count_bound_in(conn: Connection, report: Report, options: ReportOptions) -> CountBound:
    """The count bound of the topic of ``report`` (computed with ``options``, one target)."""
    status = report.answer.topic_status
    confidence = report.settings.confidence
    tau = Fraction(str(report.answer.target))
    found, reviewed = report.current.relevant_found, report.current.depth
    unreviewed = report.summary.population - reviewed
    if status.decided_by == AUDIT_BASIS:
        # the report's own monitor figure (the queue is not read again)
        audit = next(f for f in status.figures if f.basis == AUDIT_BASIS)
        stream = audit.evidence.split(",", 1)[0]
        return count_bound(found, unreviewed if audit.unreviewed is None else audit.unreviewed, confidence, tau,
                           basis=f"audit {stream} (anytime-valid)", at_most=audit.missed_at_most)
    row = next((e for e in report.estimates if e.estimate.method == report.depth_basis), None)
    details = {} if row is None else row.estimate.details
    if report.depth_basis == Basis.ELUSION and row is not None:
        n, x, rest = (_int(details.get("sample_size")), _int(details.get("sample_relevant")),
                      _int(details.get("unreviewed")))
        if n is not None and x is not None and rest is not None:
            at_most = at_most_from_sample(x, n, rest, confidence)
            return count_bound(found, rest, confidence, tau, basis=f"elusion sample {details.get('sample_id')} "
                                                                   "(one look)", at_most=at_most)
    if report.depth_basis == Basis.KNOWN and row is not None:
        return count_bound(found, unreviewed, confidence, tau, basis="R known (exact)",
                           at_most=max(0, int(row.estimate.point) - found))
    return count_bound(found, unreviewed, confidence, tau, basis="none", at_most=None)


def topic_count_bound(engine: Engine, topic: str, options: ReportOptions) -> CountBound:
    with read_snapshot(engine) as conn:
        report = report_of(conn, topic, options)
        return count_bound_in(conn, report, options)
