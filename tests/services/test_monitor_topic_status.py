"""The monitor's ``topic_status`` is the decision's own record (`reviewdepth.report.status_model.TopicStatus`), not
a dictionary of it, and its JSON is what it was when the monitor held the dictionary (`TopicStatus.as_dict`):
the same keys, values and order, so ``watch --format json``, ``GET /topics/{t}/monitor`` and the stored dashboard
summaries do not change. Four states of a small topic: no bound yet, a rest sample deciding, an audit stream
certifying, and an audit stream with documents still waiting."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from sqlalchemy import Engine, select

from reviewdepth.report.model import as_json_data
from reviewdepth.report.monitor_model import MonitorReport
from reviewdepth.report.status_model import TopicStatus
from reviewdepth.services.answers.monitor import build_monitor
from reviewdepth.services.answers.monitor_summaries import store_reports, stored_reports
from reviewdepth.services.answers.report import ReportOptions, build_report
from reviewdepth.services.review.samples import draw_sample
from reviewdepth.store.models import Topic

from .test_monitor_service import DOCS, judge, served_audit, topic_with_review


def _no_bound(engine: Engine) -> str:
    topic_with_review(engine)
    return "0.95"


def _sample_decides(engine: Engine) -> str:
    topic_with_review(engine)
    sample = draw_sample(engine, "T", 15, frame="unreviewed", seed=4)
    judge(engine, sample.doc_ids, "sample")
    return "0.8"


def _audit_certifies(engine: Engine) -> str:
    topic_with_review(engine)
    judge(engine, served_audit(engine), "audit")
    return "0.6"


def _audit_waiting(engine: Engine) -> str:
    topic_with_review(engine)
    audit = served_audit(engine)
    judge(engine, audit[:5], "audit")
    return "0.95"


STATES: dict[str, Callable[[Engine], str]] = {
    "no bound": _no_bound, "sample decides": _sample_decides, "audit certifies": _audit_certifies,
    "audit waiting": _audit_waiting}
DECIDED_BY = {"no bound": None, "sample decides": "elusion", "audit certifies": "audit stream",
              "audit waiting": "audit stream"}


def _json_as_before(report: MonitorReport) -> str:
    """The monitor's JSON as it was written when ``topic_status`` held ``TopicStatus.as_dict()``: the report's other
    keys as they are, that dictionary in its place (`JsonResult.to_json`'s writer)."""
    data: dict[str, Any] = report.to_dict()
    data["topic_status"] = as_json_data(report.topic_status.as_dict())  # same key: its place is kept
    return json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


@pytest.mark.parametrize("state", list(STATES))
def test_the_monitor_holds_the_decision_and_writes_it_as_before(engine: Engine, state: str) -> None:
    target = STATES[state](engine)
    report = build_monitor(engine, "T", target=target)
    status = report.topic_status
    assert isinstance(status, TopicStatus)
    assert status.decided_by == DECIDED_BY[state]
    # the same decision the report reaches, not a copy of its words
    assert status == build_report(engine, "T", ReportOptions(targets=[target])).answer.topic_status
    assert report.state == status.status and report.next_step == status.next_step
    # byte for byte the JSON of the dictionary the monitor held before, keys in the same order
    assert report.to_json() == _json_as_before(report)
    written = report.to_dict()["topic_status"]
    assert list(written) == list(status.as_dict()) and written["text"] == status.text


@pytest.mark.parametrize("state", ["no bound", "audit waiting"])
def test_a_stored_summary_reads_back_as_the_same_decision(engine: Engine, state: str) -> None:
    """The dashboard keeps monitors as JSON (`reviewdepth.services.answers.monitor_summaries`): the typed decision comes
    back equal, and writes the same JSON."""
    target = STATES[state](engine)
    report = build_monitor(engine, "T", target=target)
    with engine.connect() as conn:
        topic_id = int(conn.execute(select(Topic.id).where(Topic.name == "T")).scalar_one())
    assert store_reports(engine, "settings", {topic_id: (("marker", len(DOCS)), report)})
    with engine.connect() as conn:
        (back,) = stored_reports(conn, "settings", {topic_id: ("marker", len(DOCS))}).values()
    assert isinstance(back.topic_status, TopicStatus) and back.topic_status == report.topic_status
    assert back.to_json() == report.to_json()
