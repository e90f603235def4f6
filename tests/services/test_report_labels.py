"""Issue 25, items 3 and 4: the depth report gives a number for "how deep" whenever there is random evidence, and
every label on its first screen says what its figure is. The scenario of the issue (CLEF 2017 CD009579, Waterloo's
run waterloo.A-rank-normal, 1,000 documents reviewed in rank order, a 400-document sample of the unreviewed rest
drawn with seed 7 holding no relevant document) is built from the shared data; the other cases are synthetic."""

from __future__ import annotations

import csv
import gzip
import io
import json
import re
from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import Engine

from reviewdepth.report.depth_render import answer_lines, render_csv, render_html
from reviewdepth.report.model import Report
from reviewdepth.report.monitor_render import render_text as monitor_text
from reviewdepth.report.render import render
from reviewdepth.report.wording import stop_label
from reviewdepth.services.admin.topics import create_topic
from reviewdepth.services.answers.monitor import build_monitor
from reviewdepth.services.answers.report import ReportOptions, build_report
from reviewdepth.services.answers.stop_plan import topic_stop_plan
from reviewdepth.services.files.imports import import_run
from reviewdepth.services.review.audit_stream import create_stream, next_documents
from reviewdepth.services.review.judgments import record_judgments
from reviewdepth.services.review.samples import draw_sample
from tests.conftest import shared_data

TOPIC = "CD009579"

def cd009579(engine: Engine, tmp_path: Path) -> None:
    """The issue's scenario: the first 1,000 ranks judged in order, then a judged rest sample of 400 (seed 7)."""
    runs = shared_data("clef-tar-2017", "runs", "waterloo.A-rank-normal.gz")
    qrels = shared_data("clef-tar-2017", "qrels", "qrel_abs_test.txt.gz")
    with gzip.open(runs, "rt") as f:
        lines = [line for line in f if line.split()[0] == TOPIC]
    run = tmp_path / "r.run"
    run.write_text("".join(lines))
    import_run(engine, str(run))
    with gzip.open(qrels, "rt") as f:
        truth = {p[2]: p[3] for p in (line.split() for line in f) if p and p[0] == TOPIC}
    docs = [line.split()[2] for line in lines]
    record_judgments(engine, TOPIC, [(d, truth.get(d, "0")) for d in docs[:1000]], reviewer="alice")
    sample = draw_sample(engine, TOPIC, 400, frame="unreviewed", seed=7)
    record_judgments(engine, TOPIC, [(d, truth.get(d, "0")) for d in sample.doc_ids], reviewer="bob",
                     role="sample")

def table(report: Report) -> str:
    return render(report, "table", width=160)

def section(text: str, title: str) -> str:
    """The lines of one Rich table of the rendered report, from its title to the next table's title."""
    start = text.index(title)
    after = text[start:]
    end = re.search(r"\n\s*\S[^\n]*\n[┏┌]", after[len(title):])
    return after if end is None else after[:len(title) + end.start()]

def rows_of(text: str) -> list[list[str]]:
    return [[c.strip() for c in line.split("│")[1:-1]] for line in text.splitlines() if line.startswith("│")]

def status_of(text: str) -> str:
    """The status words of a headline ("95% recall[ of …]: STATUS …")."""
    return text.split(": ", 1)[1]

def test_cd009579_point_met_answer_is_the_plans_certification_cost(engine: Engine, tmp_path: Path) -> None:
    cd009579(engine, tmp_path)
    # without --plan the answer's certify figure is the floor and a sample now (the plan's replays are the most
    # of a report's time: issue 38, item 7); the decision is the same either way
    quick = build_report(engine, TOPIC, ReportOptions())
    assert quick.answer.certify is not None and quick.answer.certify.source == "floor"
    report = build_report(engine, TOPIC, ReportOptions(with_plan=True))
    assert report.answer.topic_status == quick.answer.topic_status
    answer = report.answer
    assert answer.status == "not reached"
    row = next(r for r in report.depth if r.target == 0.95)
    assert row.point.reached  # premise: the point estimate is met, the one-sided bound is not
    plan = topic_stop_plan(engine, TOPIC).plan
    best = next(p for p in plan.paths if p.kind == plan.recommended)
    certify = answer.certify
    # the plan's recommended path, with its expected documents and range, exactly as `reviewdepth plan` says
    assert certify.path == plan.recommended and certify.source == "plan"
    assert certify.expected == pytest.approx(best.expected_cost)
    assert (certify.low, certify.high) == pytest.approx(best.cost_range)
    # the plan's figures are printed on the answer's "to certify" line, beside the decision (never inside its
    # headline: `watch` and the dashboard, which run no plan, print the same headline and next step)
    lines = "\n".join(answer_lines(report))
    certify_line = next(line for line in answer_lines(report) if line.startswith("to certify: "))
    assert f"about {best.expected_cost:,.0f} more judged documents" in certify_line
    assert f"[{best.cost_range[0]:,.0f}–{best.cost_range[1]:,.0f}]" in certify_line
    assert answer.text in lines and "about" not in answer.text
    # the next step is an action with a number, not a dangling "or review on"
    assert "or review on" not in answer.next_step and re.search(r"\d", answer.next_step)
    # every target not reached has a number, never "0 to N" alone, never "to rank 1,000" (the current depth)
    text = table(report)
    depth = section(text, "depth to target recall")
    assert "0 to " not in depth
    for r in report.depth:
        assert r.status == "not reached"
        assert r.more.documents != 0 and r.to_rank.depth != 1000
        assert r.certify.floor and r.certify.floor > 0
    cells = rows_of(depth)
    assert cells and all(c[5] != "1,000" for c in cells if c[0])
    assert any(f"{best.expected_cost:,.0f}" in " ".join(c) for c in cells)
    # the HTML report's depth table says what certification costs, never "More documents 0"
    page = render_html(report)
    assert not re.search(r"<td[^>]*>0</td>\s*<td[^>]*>(—|0)</td>\s*<td[^>]*>[\d,]+</td>", page)
    assert "certify" in page

def test_point_not_met_answer_says_how_many_more_after_the_reviewed_set(engine: Engine, tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    size = 3000
    prob = 0.4 * np.exp(-np.arange(size) / 400) + 0.02
    truth = {f"d{i}": int(rng.random() < prob[i]) for i in range(size)}
    run = tmp_path / "t.run"
    run.write_text("".join(f"T Q0 d{i} {i + 1} {size - i} sys\n" for i in range(size)))
    import_run(engine, str(run))
    record_judgments(engine, "T", [(f"d{i}", str(truth[f"d{i}"])) for i in range(400)], reviewer="r")
    sample = draw_sample(engine, "T", 300, frame="unreviewed", seed=3)
    record_judgments(engine, "T", [(d, str(truth[d])) for d in sample.doc_ids], reviewer="r", role="sample")
    report = build_report(engine, "T", ReportOptions())
    row = next(r for r in report.depth if r.target == 0.95)
    assert row.status == "not reached" and not row.point.reached  # premise
    more, low, high = row.more.documents, row.more.low, row.more.high
    assert more and more > 0
    assert (f"about {more:,} more documents [{low:,}–{high:,}] after the 400 reviewed"
            in report.answer.text)
    assert re.search(r"review about [\d,]+ more", report.answer.next_step)

def test_point_met_answer_on_a_queue_too_large_to_replay_gives_the_floor_and_a_sample(
        engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import reviewdepth.services.answers.report as report_service

    monkeypatch.setattr(report_service, "REPORT_PLAN_MAX", 100)  # this queue of 3,000 then counts as large
    size = 3000
    rng = np.random.default_rng(5)
    prob = 0.4 * np.exp(-np.arange(size) / 400) + 0.004
    prob[1500:] = 0.0  # nothing relevant after rank 1,500
    truth = {f"d{i}": int(rng.random() < prob[i]) for i in range(size)}
    run = tmp_path / "t.run"
    run.write_text("".join(f"T Q0 d{i} {i + 1} {size - i} sys\n" for i in range(size)))
    import_run(engine, str(run))
    record_judgments(engine, "T", [(f"d{i}", str(truth[f"d{i}"])) for i in range(1500)], reviewer="r")
    sample = draw_sample(engine, "T", 30, frame="unreviewed", seed=1)
    record_judgments(engine, "T", [(d, str(truth[d])) for d in sample.doc_ids], reviewer="r", role="sample")
    report = build_report(engine, "T", ReportOptions())
    answer = report.answer
    assert answer.status == "not reached" and "the point estimate is met" in answer.text  # premise
    certify, floor, plan = answer.certify, answer.floor, answer.plan
    assert certify.source == "floor" and certify.expected is None
    assert (certify.low, certify.high) == (floor.least_total, plan.size)
    certify_line = next(line for line in answer_lines(report) if line.startswith("to certify: "))
    # one figure when the floor over further depths is the sample now ("388 more", never "388 to 388")
    assert (f"{floor.least_total:,.0f} to {plan.size:,} more judged documents" in certify_line
            if round(floor.least_total) != plan.size else
            f"; {plan.size:,} more judged documents (a sample of the rest now" in certify_line)
    assert certify.step.startswith(f"judge a random sample of {plan.size:,} of the unreviewed rest")
    row = next(r for r in report.depth if r.target == 0.95)
    assert row.more.documents is None and row.certify.floor == floor.documents

def test_r_table_shows_the_headline_bound_with_its_sidedness(engine: Engine, tmp_path: Path) -> None:
    cd009579(engine, tmp_path)
    report = build_report(engine, TOPIC, ReportOptions())
    assert "R ≤ 176 at 95% one-sided" in report.answer.text
    text = table(report)
    estimates = section(text, "|R| estimates")
    assert "one-sided 95% upper" in estimates and "two-sided 95% interval" in estimates
    elusion = next(c for c in rows_of(estimates) if c[0] == "elusion")
    assert "176" in elusion and "[137, 185]" in elusion  # the headline's number, beside the two-sided interval
    assert "137.0000" not in text and "185.0000" not in text
    basis = next(e for e in report.estimates if e.estimate.method == "elusion")
    assert basis.upper_one_sided == 176.0 and basis.estimate.upper == 185.0  # JSON: full precision, both bounds
    rows = list(csv.reader(io.StringIO(render_csv(report))))
    got = {(r[1], r[2]): r[3] for r in rows if r[0] == "relevant_estimate"}
    assert (got["elusion", "point"], got["elusion", "upper"], got["elusion", "upper_one_sided"]) == (
        "137", "185", "176")
    page = render_html(report)
    assert "Upper (one-sided 95%)" in page and "137.0000" not in page

def test_status_words_start_with_the_json_status(engine: Engine, tmp_path: Path) -> None:
    cd009579(engine, tmp_path)
    report = build_report(engine, TOPIC, ReportOptions())
    assert status_of(report.answer.text).startswith(report.answer.status)
    assert "not certified" in report.answer.text  # the reason stays, after the status
    assert status_of(table(report).splitlines()[0]).startswith("not reached")
    depth = rows_of(section(table(report), "depth to target recall"))
    statuses = [c[1] for c in depth if c[0]]
    assert len(statuses) == len(report.depth)
    for shown, row in zip(statuses, report.depth, strict=True):
        assert shown.startswith(row.status), (shown, row.status)

def test_heuristic_stop_is_marked_as_having_no_guarantee(engine: Engine, tmp_path: Path) -> None:
    cd009579(engine, tmp_path)
    report = build_report(engine, TOPIC, ReportOptions())
    kinds = [e.evidence.kind for e in report.stopping]
    assert kinds == sorted(kinds, key=lambda k: k != "certified")  # certified rules first
    budget = next(e for e in report.stopping if e.evidence.rule == "budget")
    assert budget.evidence.kind == "heuristic" and budget.evidence.stop_now is True  # premise: the heuristic says stop
    assert budget.stop_label == "yes (heuristic, no guarantee)"
    assert next(e for e in report.stopping if e.evidence.rule == "elusion").stop_label == "no"
    stop = rows_of(section(table(report), "stopping evidence"))
    assert any(c[0] == "budget" and c[2] == "yes (heuristic, no guarantee)" for c in stop)
    assert "yes (heuristic, no guarantee)" in render_html(report)
    rows = list(csv.reader(io.StringIO(render_csv(report))))
    assert ["stopping", "budget", "stop_label", "yes (heuristic, no guarantee)"] in rows
    assert json.loads(report.to_json())["stopping"][-1]["stop_label"].endswith("no guarantee)")

def test_knee_rule_names_the_documents_reviewed(engine: Engine, tmp_path: Path) -> None:
    cd009579(engine, tmp_path)
    report = build_report(engine, TOPIC, ReportOptions())
    knee = next(e.evidence for e in report.stopping if e.evidence.rule == "knee")
    assert "after 990 reviewed" not in knee.reason
    assert "1,000 reviewed" in knee.reason and "990" in knee.reason  # the batch end, said as such
    assert "batch" in knee.reason

def test_headline_names_the_queue_scope(engine: Engine, tmp_path: Path) -> None:
    size = 1500
    create_topic(engine, "Q", population_size=6000)
    run = tmp_path / "q.run"
    run.write_text("".join(f"Q Q0 d{i} {i + 1} {size - i} sys\n" for i in range(size)))
    import_run(engine, str(run))
    truth = {f"d{i}": int(i < 300 and i % 3 == 0) for i in range(size)}  # nothing relevant after rank 300
    record_judgments(engine, "Q", [(f"d{i}", str(truth[f"d{i}"])) for i in range(600)], reviewer="r")
    sample = draw_sample(engine, "Q", 400, frame="unreviewed", seed=2)
    record_judgments(engine, "Q", [(d, str(truth[d])) for d in sample.doc_ids], reviewer="r", role="sample")
    report = build_report(engine, "Q", ReportOptions(targets=("0.8",)))
    assert report.summary.estimate_scope == "queue" and report.answer.status == "reached"  # premise
    assert report.answer.text.startswith("80% recall of the queue's relevant documents: reached")

def monitored_topic(engine: Engine, tmp_path: Path) -> None:
    """A topic of 400 with 150 reviewed and an audit stream of 60 judged documents: a bound, not yet a stop, at
    0.8."""
    size = 400
    create_topic(engine, "M")
    run = tmp_path / "m.run"
    run.write_text("".join(f"M Q0 d{i} {i + 1} {size - i} sys\n" for i in range(size)))
    import_run(engine, str(run))
    truth = {f"d{i}": int(i < 200 and i % 4 == 0) for i in range(size)}
    record_judgments(engine, "M", [(f"d{i}", str(truth[f"d{i}"])) for i in range(150)], reviewer="r")
    create_stream(engine, "M", every=1, seed=0, reviewer="r")
    served = next_documents(engine, "M", count=60).documents
    record_judgments(engine, "M", [(d.doc_id, str(truth[d.doc_id])) for d in served], reviewer="r", role="audit")

def test_monitor_to_go_names_its_confidence(engine: Engine, tmp_path: Path) -> None:
    monitored_topic(engine, tmp_path)
    result = build_monitor(engine, "M", target="0.8")
    assert result.to_go.bound is not None and not result.certified  # premise: a bound, not yet a stop
    assert result.to_go.text.startswith(f"at most {result.to_go.bound:,} more (anytime-valid bound at 95%;")

def test_monitor_one_look_rules_mark_heuristics(engine: Engine, tmp_path: Path) -> None:
    monitored_topic(engine, tmp_path)
    result = build_monitor(engine, "M", target="0.8")
    kinds = [r.kind for r in result.one_look_rules]
    assert kinds == sorted(kinds, key=lambda k: k != "certified")
    assert all(r.stop_label == stop_label(r.kind, r.stop_now) for r in result.one_look_rules)
    text = monitor_text(result, width=200)
    for rule in result.one_look_rules:
        if rule.kind == "heuristic" and rule.stop_now:
            assert "yes (heuristic, no guarantee)" in text


def test_commands_in_the_answer_name_the_topic() -> None:
    """Issue 25: a next step is a command to copy, so it names the topic, not a placeholder."""
    from reviewdepth.report.wording import with_topic

    assert with_topic("next: reviewdepth plan TOPIC compares the paths", "CD009579") == (
        "next: reviewdepth plan CD009579 compares the paths")
    assert with_topic("(reviewdepth sample stream start TOPIC --every 1)", "a b") == (
        "(reviewdepth sample stream start 'a b' --every 1)")
    assert with_topic("TOPIC is a word here", "T") == "TOPIC is a word here"
