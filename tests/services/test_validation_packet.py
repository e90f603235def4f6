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
from reviewdepth.services.answers.report import ReportOptions, build_report
from reviewdepth.services.answers.validation import build_validation
from reviewdepth.services.review.audit_stream import load_audit

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


def _numbers(data: object, path: str = "") -> list[tuple[str, float]]:
    """Every number of a JSON value with its path (list indices as [*]); booleans are not numbers."""
    if isinstance(data, bool) or data is None or isinstance(data, str):
        return []
    if isinstance(data, (int, float)):
        return [(path, float(data))]
    if isinstance(data, dict):
        return [n for k, v in data.items() for n in _numbers(v, f"{path}.{k}" if path else k)]
    assert isinstance(data, list)
    return [n for v in data for n in _numbers(v, f"{path}[*]")]


def test_every_number_of_the_packet_json_is_the_report_json(engine: Engine, tmp_path: Path) -> None:
    """Each number of ``validation --format json`` is a number of ``report --format json`` (now, or as of the
    judgment a listed test ran at; the audit stream's counts from ``watch --format json``), a protocol field as
    entered, or one of the few figures the packet derives, each recomputed here from the report's JSON by its
    stated formula."""
    import json
    import math

    from typer.testing import CliRunner

    from reviewdepth.cli.app import create_cli
    from reviewdepth.estimation.intervals import hypergeometric_interval
    from reviewdepth.estimation.relevant import Stratum, estimate_stratified
    from reviewdepth.services.review.judgments import record_judgments
    from reviewdepth.services.review.samples import draw_sample

    topic = _audit_certified_state(engine, tmp_path)
    labels = {d.doc_id: d.relevant for s in build_validation(engine, topic, ReportOptions(targets=["0.95"]))
              .evidence.samples for d in s.documents}
    qc = draw_sample(engine, topic, 300, frame="judged", seed=21)  # a second coding of judged documents
    record_judgments(engine, topic, [(d, "1" if labels.get(d) else "0") for d in qc.doc_ids], reviewer="qc-1",
                     role="qc")
    # a control sample of the whole queue (its documents coded as the qrels code them)
    import gzip

    from ..conftest import shared_data

    with gzip.open(shared_data("clef-tar-2017", "qrels", "qrel_abs_test.txt.gz"), "rt") as f:
        truth = {p[2]: p[3] for p in (line.split() for line in f) if p and p[0] == topic}
    control = draw_sample(engine, topic, 250, frame="all", seed=8)
    record_judgments(engine, topic, [(d, truth.get(d, "0")) for d in control.doc_ids], reviewer="senior-1",
                     role="sample")
    url = engine.url.render_as_string(hide_password=False)
    runner = CliRunner()

    def cli(*args: str) -> dict[str, object]:
        done = runner.invoke(create_cli(), [*args, "--db", url])
        assert done.exit_code == 0, done.output
        return json.loads(done.stdout)  # type: ignore[no-any-return]

    assert runner.invoke(create_cli(), ["topic", "protocol", topic, "--acceptance", "elusion<=1%@95%",
                                        "--produced", "54", "--duplicates-removed", "7", "--db", url]).exit_code == 0
    packet = cli("validation", topic, "--target", "0.95", "--format", "json")
    report = cli("report", topic, "--target", "0.95", "--format", "json")
    allowed = {v for _, v in _numbers(report)}
    # the audit stream's counts are the decision's monitor's (``watch --format json``, the same decision object)
    watch = cli("watch", topic, "--target", "0.95", "--format", "json")
    allowed |= {v for _, v in _numbers(watch)}
    for test in packet["tests"]:  # type: ignore[attr-defined]
        if test["at_judgment"] is not None:
            allowed |= {v for _, v in _numbers(cli("report", topic, "--target", "0.95", "--as-of",
                                                   str(test["at_judgment"]), "--format", "json"))}
    allowed |= {v for _, v in _numbers(packet["protocol_fields"])}  # as entered (checked in test_protocol_api)

    # the derived figures, by the formulas the packet states
    r: dict[str, object] = report
    summary, current = r["summary"], r["current"]  # type: ignore[index]
    recall = next(x for x in r["recall"] if x["basis"] == r["depth_basis"])  # type: ignore[attr-defined]
    elusion = next(e for e in r["estimates"] if e["method"] == "elusion")  # type: ignore[attr-defined]
    details = elusion["details"]
    derived: dict[str, float] = {
        "results.recall_margin": (recall["upper"] - recall["lower"]) / 2,
        "results.elusion_rate_lower": details["missed_lower"] / details["unreviewed"],
        "results.elusion_rate_upper": details["missed_upper"] / details["unreviewed"],
        "results.elusion_margin": (details["missed_upper"] - details["missed_lower"]) / details["unreviewed"] / 2,
        "cutoff.discard_pile": summary["population"] - summary["reviewed"],  # type: ignore[index]
        "acceptance.bound": details["missed_upper"] / details["unreviewed"],
    }
    # the three strata: the QC sample's second coding of the coded strata and the elusion sample of the rest
    (qc_row,) = r["review_quality"]["qc_samples"]  # type: ignore[index]
    fp, fn = qc_row["error_rates"]["false_positive_rate"], qc_row["error_rates"]["false_negative_rate"]
    found, reviewed = current["relevant_found"], current["depth"]  # type: ignore[index]
    strata = [("coded responsive", found, fp["trials"], fp["trials"] - fp["successes"], True),
              ("coded non-responsive", reviewed - found, fn["trials"], fn["successes"], False),
              ("never reviewed", details["unreviewed"], details["sample_size"], details["sample_relevant"], False)]
    stratum_values: list[float] = []
    for _, size, n, k, _ in strata:
        low, high = hypergeometric_interval(k, n, size, 0.95, "two")
        stratum_values += [size, n, k, low, high]
    est = estimate_stratified([Stratum(name, size, n, k, False, f) for name, size, n, k, f in strata],
                              confidence=0.95)
    assert [v for p, v in _numbers(packet["three_strata"]) if p.startswith("strata")] == stratum_values
    derived.update({"three_strata.relevant": est.point, "three_strata.relevant_lower": est.lower,
                    "three_strata.relevant_upper": float(est.upper or math.nan),
                    "three_strata.recall": float(est.recall_point or math.nan),
                    "three_strata.recall_lower": float(est.recall_lower or 0.0),
                    "three_strata.recall_upper": float(est.recall_upper or math.nan)})

    rich = packet["richness"]
    assert rich is not None
    row = next(x for x in r["samples"] if x["frame"] == "all")  # type: ignore[attr-defined]
    low, high = hypergeometric_interval(row["relevant"], row["size"], row["frame_size"], 0.95, "two")
    derived.update({"richness.point": row["relevant"] / row["size"], "richness.lower": low / row["frame_size"],
                    "richness.upper": high / row["frame_size"]})

    # each sample's coders: its appendix documents counted by coder
    from collections import Counter

    for sample in packet["evidence"]["samples"]:  # type: ignore[index]
        counted = Counter(d["reviewer"] for d in sample["documents"] if d["reviewer"] is not None)
        assert {c["reviewer"]: c["documents"] for c in sample["coders"]} == dict(counted)
        assert sample["uncoded"] == sum(d["relevant"] is None for d in sample["documents"])
    # the count bound: the monitor's bound on the documents missed (the audit stream decides), and its price list
    from fractions import Fraction

    from reviewdepth.estimation.count_bound import sample_for_at_most
    from reviewdepth.estimation.planning import missed_allowed

    bound = packet["count_bound"]
    unreviewed = watch["population"] - watch["reviewed"]  # type: ignore[index, operator]
    assert bound["at_most"] == watch["missed_upper"] and bound["unreviewed"] == unreviewed  # type: ignore[index]
    allows = missed_allowed(current["relevant_found"], unreviewed, Fraction("0.95"))  # type: ignore[index]
    derived.update({"count_bound.unreviewed": unreviewed, "count_bound.target_allows": allows,
                    "count_bound.target_floor": sample_for_at_most(unreviewed, allows, 0.95)})
    for step in bound["lowering"]:  # type: ignore[index]
        assert step["sample"] == sample_for_at_most(unreviewed, step["at_most"], 0.95)
        assert step["share"] == step["sample"] / unreviewed

    skipped = ("evidence.samples[*].documents[*]", "count_bound.lowering", "evidence.audit_streams[*].documents[*]",
               "three_strata.strata",
               "evidence.samples[*].coders[*]")
    checked = 0
    for path, value in _numbers(packet):
        if path.startswith(skipped) or path.endswith((".id", ".seed", "sample_id", ".order")):
            continue
        checked += 1
        if path in derived:
            assert value == derived[path], (path, value, derived[path])
        else:
            assert value in allowed, (path, value)
    assert checked > 60
    # the appendix: each listed document's rank is its queue rank, and each audit document's position its order
    (stream,) = packet["evidence"]["audit_streams"]  # type: ignore[index]
    assert [d["position"] for d in stream["documents"]] == list(range(1, stream["judged"] + 1))
