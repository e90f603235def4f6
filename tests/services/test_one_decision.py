"""Issue 38: one decision per topic and moment, stated once, the same at every door.

Two states of the issue on real CLEF TAR 2017 rankings:

* CD010276 (AMC's ranking): 2,053 reviewed in rank order, a rest sample of 2,173 judged, the review carried on to
  rank 4,343, then an audit stream judged until its anytime-valid bound certifies 95 % recall, while the rest
  sample alone (one look) does not. Before the decision object the report said "reached" on its first line and
  "not reached …; to certify: about 872 more" on its second, JSON ``answer.status`` was ``reached`` beside an
  ``answer.text`` of "not reached", and the next step was to audit more.
* CD009579 (Waterloo's ranking A): 500 reviewed, a 400-document rest sample holding one relevant document; no
  audit stream, so the samples decide.

Every door (the report as table, JSON, CSV and HTML; `watch`/the monitor route; the dashboard; `topics` and
``GET /topics``; the validation document) must carry the decision's status word, bound and next step."""

from __future__ import annotations

import csv
import gzip
import io
import json
from html import escape
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sqlalchemy import Engine, update

from reviewdepth.report.depth_render import answer_lines, render_csv, render_html
from reviewdepth.report.render import render
from reviewdepth.services.answers.monitor import build_dashboard, build_monitor, topic_statuses
from reviewdepth.services.answers.report import ReportOptions, build_report
from reviewdepth.services.answers.validation import build_validation
from reviewdepth.services.files.imports import import_run
from reviewdepth.services.review.audit_stream import create_stream, next_documents
from reviewdepth.services.review.judgments import record_judgments
from reviewdepth.services.review.samples import draw_sample
from reviewdepth.store.models import Topic

from ..conftest import shared_data


def _topic(engine: Engine, tmp_path: Path, topic: str, run_file: str) -> tuple[list[str], dict[str, str]]:
    """Import ``topic`` of a CLEF 2017 run (as its own queue, in file order) with N = its qrels' size; returns
    the ranking and the qrels' labels."""
    with gzip.open(shared_data("clef-tar-2017", "runs", run_file), "rt") as source:
        lines = [line for line in source if line.startswith(topic + " ")]
    run = tmp_path / f"{topic}.run"
    run.write_text("".join(lines))
    import_run(engine, str(run))
    labels: dict[str, str] = {}
    with gzip.open(shared_data("clef-tar-2017", "qrels", "qrel_abs_test.txt.gz"), "rt") as qrels:
        for line in qrels:
            fields = line.split()
            if fields and fields[0] == topic:
                labels[fields[2]] = fields[3]
    with engine.begin() as conn:
        conn.execute(update(Topic).where(Topic.name == topic).values(population_size=len(labels)))
    return [line.split()[2] for line in lines], labels


def _judge(engine: Engine, topic: str, labels: dict[str, str], docs: list[str], role: str) -> None:
    if docs:
        record_judgments(engine, topic, [(d, labels.get(d, "0")) for d in docs], reviewer=f"{role}-reviewer",
                         role=role)


def _audit_certified_state(engine: Engine, tmp_path: Path) -> str:
    topic = "CD010276"
    ranking, labels = _topic(engine, tmp_path, topic, "amc.run.gz")
    _judge(engine, topic, labels, ranking[:2053], "review")
    sample = draw_sample(engine, topic, 2173, frame="unreviewed", seed=11)
    _judge(engine, topic, labels, sample.doc_ids, "sample")
    drawn = set(sample.doc_ids)
    _judge(engine, topic, labels, [d for d in ranking[2053:4343] if d not in drawn], "review")
    create_stream(engine, topic, every=5, seed=3, reviewer="ana")
    for _ in range(60):
        batch = next_documents(engine, topic, count=20)
        _judge(engine, topic, labels, [d.doc_id for d in batch.documents if d.role == "audit"], "audit")
        if build_monitor(engine, topic, target="0.95").certified:
            break
    return topic


def _samples_decide_state(engine: Engine, tmp_path: Path) -> str:
    topic = "CD009579"
    ranking, labels = _topic(engine, tmp_path, topic, "waterloo.A-rank-normal.gz")
    _judge(engine, topic, labels, ranking[:500], "review")
    rest = ranking[500:]
    # the first seed whose 400-document rest sample holds exactly one relevant document (the state)
    seed = next(s for s in range(1000) if sum(labels.get(rest[i], "0") == "1" for i in np.random.default_rng(
        s).choice(len(rest), 400, replace=False)) == 1)
    sample = draw_sample(engine, topic, 400, frame="unreviewed", seed=seed)
    _judge(engine, topic, labels, sample.doc_ids, "sample")
    return topic


def _csv_answer(text: str) -> dict[str, str]:
    return {row["row"]: row["value"] for row in csv.DictReader(io.StringIO(text)) if row["section"] == "answer"}


def _assert_every_door_says_the_decision(engine: Engine, topic: str, tmp_path: Path) -> dict[str, Any]:
    report = build_report(engine, topic, ReportOptions(targets=["0.8", "0.9", "0.95", "0.99"]))
    answer = report.answer
    decision = answer.topic_status
    word, step = decision.status, decision.next_step
    assert step, "a decision always says what to do next"
    # the report's answer is the decision: one status, one headline, one next step
    assert (answer.status, answer.text, answer.next_step) == (word, decision.lead, step)
    lines = answer_lines(report)
    assert lines[0] == decision.text and f"next: {step}" in lines
    assert decision.lead.split(": ", 1)[1].startswith(word)
    other_words = {"reached", "not reached", "unknown"} - {word}
    first_screen = "\n".join(lines)
    for other in other_words:
        assert f": {other}" not in first_screen, (other, first_screen)
    if word == "reached":
        # a reached topic has no "to certify" next step, no plan and no floor of a certification
        assert answer.certify is None and answer.plan is None and answer.floor is None
        assert "to certify" not in first_screen and "certify" not in step
    stopping_row = next(r for r in report.depth if r.target == 0.95)
    assert str(stopping_row.status) == word  # the depth table says the decision for the stopping target
    # JSON, CSV and HTML say the same
    data = json.loads(render(report, "json"))["answer"]
    assert (data["status"], data["text"], data["next_step"]) == (word, decision.lead, step)
    assert data["topic_status"]["next_step"] == step and data["topic_status"]["text"] == decision.text
    row = _csv_answer(render_csv(report))
    assert (row["status"], row["text"], row["next_step"]) == (word, decision.lead, step)
    html = render_html(report)
    assert decision.text.replace("≥", "&ge;") in html or decision.text in html or escape(decision.text) in html
    if word == "reached":
        assert "to certify: " not in html
    # watch and GET /topics/{t}/monitor, the dashboard, topics and GET /topics
    watch = build_monitor(engine, topic, target="0.95")
    assert watch.topic_status == decision
    assert watch.state == word and watch.next_step == step
    (entry,) = build_dashboard(engine, target="0.95", topics=[topic]).entries
    assert entry.monitor is not None and entry.monitor.topic_status == decision
    assert entry.monitor.next_step == step
    # commands name the topic, ready to run: no literal placeholder at any door (issue 39)
    from reviewdepth.report.monitor_render import render_fragment, render_text
    for text in (step, decision.text, render_text(watch), render_fragment(entry.monitor), "\n".join(lines)):
        assert "TOPIC" not in text.replace(topic, ""), text
    assert topic_statuses(engine, [topic])[topic] == (word, decision.text)
    # the validation document's decision block
    document = build_validation(engine, topic, ReportOptions(targets=["0.95"]))
    assert (document.decision.status, document.decision.headline, document.decision.next_step) == (
        word, decision.lead, step)
    assert document.decision.status_text == decision.text
    return {"status": word, "decided_by": decision.decided_by, "next_step": step, "text": decision.text}


def test_an_audit_certified_topic_reads_reached_at_every_door(engine: Engine, tmp_path: Path) -> None:
    topic = _audit_certified_state(engine, tmp_path)
    seen = _assert_every_door_says_the_decision(engine, topic, tmp_path)
    assert seen["status"] == "reached" and seen["decided_by"] == "audit stream"
    # premise of the state: the rest sample alone (one look) would not have certified
    report = build_report(engine, topic, ReportOptions(targets=["0.95"]))
    elusion = next(f for f in report.answer.topic_status.figures if f.basis == "elusion")
    assert not elusion.certifies and elusion.recall_lower is not None and elusion.recall_lower < 0.95
    assert "supporting, not deciding: recall ≥" in seen["text"]


def test_a_topic_the_samples_decide_reads_the_same_at_every_door(engine: Engine, tmp_path: Path) -> None:
    topic = _samples_decide_state(engine, tmp_path)
    seen = _assert_every_door_says_the_decision(engine, topic, tmp_path)
    assert seen["status"] == "not reached" and seen["decided_by"] == "elusion"
    watch = build_monitor(engine, topic, target="0.95")
    assert not watch.headline.startswith("CONTINUE")  # the monitor does not decide here, the samples do


@pytest.mark.parametrize("confidence", [0.9, 0.975])
def test_the_decision_is_the_same_at_other_confidences(engine: Engine, tmp_path: Path, confidence: float) -> None:
    topic = _samples_decide_state(engine, tmp_path)
    report = build_report(engine, topic, ReportOptions(targets=["0.95"], confidence=confidence))
    watch = build_monitor(engine, topic, target="0.95", confidence=confidence)
    assert watch.topic_status == report.answer.topic_status
