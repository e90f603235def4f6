"""The dashboard's monitors kept in the store (``topic_summaries``), so that a new process renders a page of topics
from them instead of recomputing every queue (issue 30: "keeps per-topic state up to date … so a render reads a
summary").

A summary is the `MonitorReport` as JSON, stored with the settings it was built under (target, confidence), the
topic's change marker when it was built (`reviewdepth.services.answers.monitor.change_markers`: the judgment chain, the
newest queue, sample and audit-stream state, the screening order and conflict rule) and the software version. It
is used only while all three match; otherwise the monitor is built again and the summary replaced. A summary that
no longer reads as a report (a version's shape, or a row edited behind the application's back) is rebuilt, never
shown. Writing is best effort: a dashboard is a read, so a summary that cannot be stored now (a busy or read-only
database) is built again next time, and the page is served all the same.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any

from sqlalchemy import Connection, Engine, delete, insert, select
from sqlalchemy.exc import SQLAlchemyError

from reviewdepth import __version__
from reviewdepth.report.monitor_model import MonitorReport
from reviewdepth.store.ingest import utc_now
from reviewdepth.store.models import TopicSummary

# a new shape or meaning of the stored JSON that the version alone would not show (bump it with such a change)
# 2: the topic status carries the decision's headline and next step; 3: it is the decision's record (`TopicStatus`,
# its fields without the derived ``text``), no longer the dictionary of its JSON
SUMMARY_FORMAT = 3
WRITE_WAIT_MS = 50  # the longest a page waits to keep its summaries (`store_reports`)
SOFTWARE = f"{__version__}+s{SUMMARY_FORMAT}"


@cache
def _adapter() -> Any:
    """pydantic's reader and writer of `MonitorReport` (built once a process; pydantic loads only here, not on
    the status path of `watch --once`)."""
    from pydantic import TypeAdapter

    return TypeAdapter(MonitorReport)


def marker_text(marker: Sequence[Any]) -> str:
    return json.dumps(marker, separators=(",", ":"), default=str)


def stored_reports(conn: Connection, settings: str, markers: Mapping[int, Sequence[Any]]) -> dict[int, MonitorReport]:
    """The stored monitors of the topics of ``markers`` whose summary was built under ``settings`` and the
    topic's current marker, by this software."""
    if not markers:
        return {}
    from pydantic import ValidationError

    found: dict[int, MonitorReport] = {}
    wanted = {topic_id: marker_text(marker) for topic_id, marker in markers.items()}
    ids = sorted(wanted)
    for start in range(0, len(ids), 1000):
        for topic_id, marker, software, body in conn.execute(
                select(TopicSummary.topic_id, TopicSummary.marker, TopicSummary.software, TopicSummary.body).where(
                    TopicSummary.topic_id.in_(ids[start:start + 1000]), TopicSummary.settings == settings)):
            if marker != wanted[int(topic_id)] or software != SOFTWARE:
                continue
            try:
                found[int(topic_id)] = _adapter().validate_json(body)
            except (ValidationError, ValueError):
                continue  # not a report of this shape: built again, and the row replaced
    return found


def store_reports(engine: Engine, settings: str, built: Mapping[int, tuple[Sequence[Any], MonitorReport]]) -> bool:
    """Replace the summaries of ``built`` (topic id -> (marker, report)) in one transaction; False when the store
    would not take them now (module docstring: best effort)."""
    if not built:
        return True
    now = utc_now()
    rows = [{"topic_id": topic_id, "settings": settings, "marker": marker_text(marker), "software": SOFTWARE,
             "body": _adapter().dump_json(report).decode("utf-8"), "recorded_at": now}
            for topic_id, (marker, report) in built.items()]
    try:
        with engine.begin() as conn:
            waited = _wait_briefly(conn)
            try:
                conn.execute(delete(TopicSummary).where(TopicSummary.topic_id.in_(list(built)),
                                                        TopicSummary.settings == settings))
                conn.execute(insert(TopicSummary), rows)
            finally:
                if waited is not None:
                    conn.exec_driver_sql(f"PRAGMA busy_timeout = {int(waited)}")
    except SQLAlchemyError:  # busy, read-only, a topic deleted meanwhile, a concurrent writer of the same rows
        return False
    return True


def _wait_briefly(conn: Connection) -> int | None:
    """On SQLite, wait at most `WRITE_WAIT_MS` for the database's write lock (not the store's busy timeout, 10 s by
    default: a page must not wait on another client's long write to keep what it can rebuild); the timeout it had
    (restored after), or None on PostgreSQL, where only another writer of the same summaries could block it."""
    if conn.dialect.name != "sqlite":
        conn.exec_driver_sql(f"SET LOCAL lock_timeout = '{WRITE_WAIT_MS}ms'")
        return None
    before = int(conn.exec_driver_sql("PRAGMA busy_timeout").scalar_one())
    conn.exec_driver_sql(f"PRAGMA busy_timeout = {WRITE_WAIT_MS}")
    return before
