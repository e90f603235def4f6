"""A report of a topic with an audit stream reads the queue's labels and evidence once: the monitor it asks for
the audit's figure takes the report's own labels and evidence of the queue instead of reading them again."""
from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import Engine

import reviewdepth.services.monitor as monitor_module
import reviewdepth.services.report as report_module
from reviewdepth.services.report import ReportOptions, build_report

from .test_one_decision import _audit_certified_state


def test_a_report_with_an_audit_stream_reads_the_queue_evidence_once(
        engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    topic = _audit_certified_state(engine, tmp_path)
    before = build_report(engine, topic, ReportOptions()).to_dict()
    reads: list[str] = []

    def counting(module: object, name: str) -> None:
        real = getattr(module, name)

        def counted(*args: object, **kwargs: object) -> object:
            reads.append(name)
            return real(*args, **kwargs)
        monkeypatch.setattr(module, name, counted)

    counting(report_module, "queue_evidence")
    counting(monitor_module, "queue_evidence")
    counting(report_module, "queue_labels")
    counting(monitor_module, "load_queue_labels")
    after = build_report(engine, topic, ReportOptions())
    assert after.to_dict() == before  # the same report, read once
    assert after.answer.topic_status.decided_by == "audit stream"  # the monitor's audit figure is in it
    assert reads.count("queue_evidence") == 1
    assert reads.count("queue_labels") + reads.count("load_queue_labels") == 1
