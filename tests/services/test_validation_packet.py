"""Issue 41, the validation packet on the CD010276 state of issue 38 (AMC's CLEF 2017 ranking: a rest sample that
fails its test, the review carried on, then an audit stream that certifies 95 % recall).

The packet must state the decision as the decision object does and no other status; list every document that
contributed evidence (the audit stream's judged prefix as well as the sample's), each with coding, coder and time;
list every test run on the topic in order with the one that decided; and flag the failed sample read again."""

from __future__ import annotations

import dataclasses
import io
from pathlib import Path

from sqlalchemy import Engine

from reviewdepth.report.validation_render import render_document
from reviewdepth.services.audit_stream import load_audit
from reviewdepth.services.report import ReportOptions, build_report
from reviewdepth.services.validation import build_validation

from .test_one_decision import _audit_certified_state


def _pdf_text(content: bytes) -> str:
    from pypdf import PdfReader

    return " ".join(" ".join(page.extract_text() for page in PdfReader(io.BytesIO(content)).pages).split())


def test_the_packet_lists_the_audit_stream_evidence_and_every_test(engine: Engine, tmp_path: Path) -> None:
    topic = _audit_certified_state(engine, tmp_path)
    options = ReportOptions(targets=["0.95"])
    doc = build_validation(engine, topic, options)
    decision = build_report(engine, topic, options).answer.topic_status

    # (a) the decision as the decision object states it; the supporting figure named as such
    assert (doc.decision.status, doc.decision.headline, doc.decision.decided_by) == (
        decision.status, decision.lead, decision.decided_by) == ("reached", decision.lead, "audit stream")
    deciding = next(f for f in decision.figures if f.basis == decision.decided_by)
    assert doc.decision.deciding == deciding.text
    assert doc.decision.supporting == [f.text for f in decision.figures if f is not deciding]

    # (b) the audit stream's judged prefix is in the evidence, each document with its coding, coder and time
    audit = load_audit(engine, topic)
    assert audit is not None
    (stream,) = doc.evidence.audit_streams
    assert [d.doc_id for d in stream.documents] == audit.doc_ids and stream.judged == audit.judged > 0
    assert [d.relevant for d in stream.documents] == audit.relevant
    assert all(d.reviewer and d.role and d.recorded_at for d in stream.documents)
    assert {d.role for d in stream.documents} >= {"audit", "review"}
    (sample,) = doc.evidence.samples
    assert len(sample.documents) == 2173

    # (c) every test in order: the sample's failed test when it was coded, its re-reading now, the stream's bound
    tests = doc.tests
    assert [(t.evidence, t.kind) for t in tests] == [
        ("sample 1", "one-look test when coded"), ("sample 1", "read again at the current cutoff"),
        ("stream 1", "anytime-valid bound now")]
    assert [t.order for t in tests] == [1, 2, 3]
    assert [t.decided for t in tests] == [False, False, True]
    first = tests[0]
    assert first.at_judgment is not None
    then = build_report(engine, topic, dataclasses.replace(options, as_of=first.at_judgment))
    figure = next(r for r in then.recall if r.basis == then.depth_basis)
    assert (first.reviewed, first.recall_lower) == (then.current.depth, figure.lower_one_sided)
    assert first.reviewed == 2053
    assert first.passed is False and first.recall_lower is not None and first.recall_lower < 0.95
    assert tests[2].recall_lower == deciding.recall_lower and tests[2].passed is True
    codes = {f.code: f.text for f in doc.flags}
    assert set(codes) == {"reused-failed-sample", "revalidate"}
    assert "one-look" in codes["reused-failed-sample"] and "audit stream" in codes["reused-failed-sample"]

    # the PDF: the decision's status word and no other; the audit appendix; the flags; a signature block
    flat = _pdf_text(render_document(doc, "pdf"))
    assert f"Decision {decision.lead}" in flat
    for other in ("not reached", "unknown"):
        assert other not in flat, other
    assert f"Appendix: audit stream 1, its judged prefix of {audit.judged:,} documents" in flat
    assert "Appendix: sample 1 (unreviewed, rest), 2,173 documents" in flat
    assert "A failed sample reused as evidence" in flat and "Re-validation needed" in flat
    assert "Signature" in flat and "decided" in flat
