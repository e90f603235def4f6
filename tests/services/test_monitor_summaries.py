"""The dashboard's monitors kept in the store (issue 30), on SQLite and PostgreSQL: a new process (a new cache)
renders the page from the stored summaries without building a monitor; a judgment, a new setting, a new software
version or a damaged row makes that topic's monitor be built again (and only that one); a store that will not
take the summaries leaves the page as it was."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from sqlalchemy import Engine, func, select, update
from sqlalchemy.exc import OperationalError

from reviewdepth.report.monitor_render import render_dashboard
from reviewdepth.services.admin.topics import declare_screening_order
from reviewdepth.services.answers import monitor as monitor_service
from reviewdepth.services.answers import monitor_summaries
from reviewdepth.services.answers.monitor import MonitorCache, build_dashboard
from reviewdepth.store.models import TopicSummary

from .test_monitor_service import judge, topic_with_review


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The topics whose monitor is built, in order."""
    built: list[str] = []
    real = monitor_service.build_monitor

    def build(engine: Engine, topic: str, **kwargs: Any) -> Any:
        built.append(topic)
        return real(engine, topic, **kwargs)

    monkeypatch.setattr(monitor_service, "build_monitor", build)
    return built


def page(engine: Engine, **kwargs: Any) -> str:
    return render_dashboard(build_dashboard(engine, cache=MonitorCache(), **kwargs))  # a new process's cache


def test_a_new_process_reads_the_stored_monitors(engine: Engine, counted: list[str]) -> None:
    for reviewed, name in enumerate(("T", "U", "V"), start=10):
        topic_with_review(engine, reviewed=reviewed, topic=name)
    first = page(engine)
    assert sorted(counted) == ["T", "U", "V"]
    with engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(TopicSummary)).scalar_one() == 3
    counted.clear()
    assert page(engine) == first and counted == []  # every monitor read back, the same page

    judge(engine, ["d30"], topic="U")  # U moved: only U is built again
    counted.clear()
    moved = page(engine)
    assert counted == ["U"] and moved != first
    counted.clear()
    assert page(engine) == moved and counted == []

    declare_screening_order(engine, "V", "random")  # a setting that changes V's monitor moves its marker
    counted.clear()
    page(engine)
    assert counted == ["V"]

    counted.clear()
    page(engine, target="0.8")  # other settings: summaries of their own
    assert sorted(counted) == ["T", "U", "V"]


def test_a_summary_of_another_version_or_damaged_is_built_again(engine: Engine, counted: list[str],
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    topic_with_review(engine, reviewed=10, topic="T")
    topic_with_review(engine, reviewed=12, topic="U")
    first = page(engine)
    with engine.begin() as conn:
        conn.execute(update(TopicSummary).where(TopicSummary.topic_id == select(TopicSummary.topic_id)
                                                .order_by(TopicSummary.topic_id).limit(1).scalar_subquery())
                     .values(body='{"topic": "T", "not": "a report"}'))
    counted.clear()
    assert page(engine) == first and len(counted) == 1
    monkeypatch.setattr(monitor_summaries, "SOFTWARE", "9.9.9+s1")
    counted.clear()
    assert page(engine) == first and sorted(counted) == ["T", "U"]


def test_a_store_that_takes_no_summary_leaves_the_page_as_it_was(engine: Engine, counted: list[str],
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    topic_with_review(engine, reviewed=10, topic="T")
    expected = page(engine)
    with engine.begin() as conn:
        conn.execute(TopicSummary.__table__.delete())

    def busy(*args: Any, **kwargs: Any) -> Any:  # the database refuses the write (locked, read-only, …)
        raise OperationalError("INSERT INTO topic_summaries", {}, Exception("database is locked"))

    monkeypatch.setattr(monitor_summaries, "insert", busy)
    counted.clear()
    assert page(engine) == expected and counted == ["T"]
    counted.clear()
    assert page(engine) == expected and counted == ["T"]  # nothing kept: built again, still served


@pytest.mark.sqlite_only
def test_a_locked_sqlite_database_keeps_no_summary_and_the_connection_keeps_its_timeout(engine: Engine) -> None:
    """Another client holds SQLite's write lock: the summaries are not kept (the page does not wait out the
    store's busy timeout for them), and the connection goes back to the pool with the timeout it had."""
    import sqlite3

    topic_with_review(engine, reviewed=10, topic="T")
    report = build_dashboard(engine).entries[0].monitor
    assert report is not None
    with engine.connect() as conn:
        timeout = conn.exec_driver_sql("PRAGMA busy_timeout").scalar_one()
        topic_id = conn.exec_driver_sql("SELECT id FROM topics WHERE name = 'T'").scalar_one()
    holder = sqlite3.connect(engine.url.database, isolation_level=None)
    try:
        holder.execute("BEGIN IMMEDIATE")
        assert monitor_summaries.store_reports(engine, "s", {topic_id: ((1,), report)}) is False
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    with engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar_one() == timeout
    assert monitor_summaries.store_reports(engine, "s", {topic_id: ((1,), report)}) is True


def test_the_dashboards_monitor_skips_only_the_heuristics(engine: Engine) -> None:
    """Without the one-look rules the heuristics are not evaluated (the point process fits curves); every other
    figure of the monitor, the sample's status included, is that of the monitor with them."""
    import dataclasses

    from reviewdepth.estimation import rules
    from reviewdepth.services.answers.monitor import build_monitor
    from reviewdepth.services.review.samples import draw_sample

    from .test_monitor_service import DOCS

    topic_with_review(engine, reviewed=25, topic="T")
    sample = draw_sample(engine, "T", 10, frame="unreviewed", seed=3)
    judge(engine, list(sample.doc_ids), role="sample")
    with_rules = build_monitor(engine, "T", target="0.8", one_look=True)
    without = build_monitor(engine, "T", target="0.8", one_look=False)
    assert any(r.kind == "heuristic" for r in with_rules.one_look_rules) and without.one_look_rules == []
    assert without == dataclasses.replace(with_rules, one_look_rules=[])
    assert len(DOCS) == 40
    cut = rules.Cutoff(np.array([1, 0, 1, 0] * 10, dtype=np.int64), 40, 400, 20, 360, Fraction(4, 5), 0.05,
                       np.array([], dtype=np.int64), (50, np.zeros(50, dtype=np.int64)))
    every = rules.evaluate(cut)
    assert rules.evaluate(cut, heuristics=False) == [e for e in every if e.kind != "heuristic"]
    assert any(e.rule == "elusion" and e.kind == "certified" for e in rules.evaluate(cut, heuristics=False))
    assert any(e.kind == "heuristic" for e in every)
