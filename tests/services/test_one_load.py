"""One evidence load and one assessment per topic state (issue 38, item 1).

A report of a topic with an audit stream reads the queue's labels and evidence once (the monitor it asks for the
audit's figure takes the report's own state of the queue) and assesses that state once; the plan reads the rest
sample from an assessment without the heuristic stopping rules; the policy sensitivity of a multi-reviewer topic
assesses each other labelling once, without heuristics. Each count fails if a second load or a second assessment of
the same state comes back."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, select

import reviewdepth.services.answers.assessment as assessment_module
import reviewdepth.services.answers.sample_plan as sample_plan_module
import reviewdepth.services.evidence.queue_state as state_module
from reviewdepth.services.answers.report import ReportOptions, build_report
from reviewdepth.services.answers.stop_plan import topic_stop_plan
from reviewdepth.services.review.judgments import record_judgments
from reviewdepth.store.labels import POLICIES
from reviewdepth.store.models import Judgment

from .test_one_decision import _audit_certified_state, _samples_decide_state

Calls = list[tuple[str, dict[str, Any]]]


def _count(monkeypatch: pytest.MonkeyPatch, calls: Calls, module: object, name: str) -> None:
    real: Callable[..., Any] = getattr(module, name)

    def counted(*args: object, **kwargs: Any) -> Any:
        calls.append((name, kwargs))
        return real(*args, **kwargs)
    monkeypatch.setattr(module, name, counted)


def _names(calls: Calls) -> list[str]:
    return [name for name, _ in calls]


def test_a_report_with_an_audit_stream_reads_and_assesses_its_state_once(
        engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    topic = _audit_certified_state(engine, tmp_path)
    before = build_report(engine, topic, ReportOptions()).to_dict()
    calls: Calls = []
    for name in ("queue_evidence", "load_queue_labels"):
        _count(monkeypatch, calls, state_module, name)
    _count(monkeypatch, calls, assessment_module, "assess")
    after = build_report(engine, topic, ReportOptions())
    assert after.to_dict() == before  # the same report, read and assessed once
    assert after.answer.topic_status.decided_by == "audit stream"  # the monitor's audit figure is in it
    assert _names(calls).count("load_queue_labels") == 1
    assert _names(calls).count("queue_evidence") == 1
    assert _names(calls).count("assess") == 1


def test_the_plan_reads_the_rest_sample_without_the_heuristics(
        engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    topic = _samples_decide_state(engine, tmp_path)
    before = topic_stop_plan(engine, topic)
    calls: Calls = []
    _count(monkeypatch, calls, sample_plan_module, "assess")
    _count(monkeypatch, calls, state_module, "load_queue_labels")
    after = topic_stop_plan(engine, topic)
    assert after == before
    assert _names(calls) == ["load_queue_labels", "assess"]
    assert calls[1][1].get("heuristics") is False  # no point-process fit to read which sample is the rest sample


def test_the_policy_sensitivity_assesses_each_other_labelling_once_without_heuristics(
        engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    topic = _samples_decide_state(engine, tmp_path)
    assert not build_report(engine, topic, ReportOptions()).review_quality.policy_sensitivity  # one reviewer
    # a second reviewer on ten reviewed documents: the report now shows the figures under every label policy
    with engine.connect() as conn:
        docs = list(conn.execute(select(Judgment.doc_id).order_by(Judgment.id).limit(10)).scalars())
    record_judgments(engine, topic, [(d, "1") for d in docs], reviewer="second", role="review")
    calls: Calls = []
    _count(monkeypatch, calls, assessment_module, "assess")
    report = build_report(engine, topic, ReportOptions())
    assert [row.policy for row in report.review_quality.policy_sensitivity][:len(POLICIES)] == list(POLICIES)
    assert _names(calls).count("assess") == len(POLICIES)
    heuristics = [kwargs.get("heuristics", True) for _, kwargs in calls]
    assert heuristics.count(True) == 1  # the report's own labelling, with its stopping rules
