"""The topic, its queues and the as-of point, read through the caller's connection."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Connection, func, select
from sqlalchemy.orm import Session

from reviewdepth.services.errors import Conflict, Invalid, NotFound
from reviewdepth.store import validation
from reviewdepth.store.ingest import as_utc
from reviewdepth.store.models import Judgment, Queue, Topic


def topic_id(conn: Connection, topic: str) -> int:
    """The stored topic's id; `NotFound` when there is none of that name."""
    topic = validation.topic_name(topic)
    found = conn.execute(select(Topic.id).where(Topic.name == topic)).scalar_one_or_none()
    if found is None:
        raise NotFound(f"unknown topic {topic!r}")
    return int(found)


def population_size(conn: Connection, topic_id: int) -> int | None:
    """The topic's stated population N (None: not stated)."""
    found = conn.execute(select(Topic.population_size).where(Topic.id == topic_id)).scalar_one()
    return None if found is None else int(found)


def last_judgment_id(conn: Connection, topic_id: int) -> int | None:
    """The id of the topic's newest judgment-log row (None: nothing logged yet)."""
    last = conn.execute(select(func.max(Judgment.id)).where(Judgment.topic_id == topic_id)).scalar_one()
    return None if last is None else int(last)


def find_queue(conn: Connection, topic: str, queue: str | None) -> tuple[int, Queue]:
    """The topic id and the named queue (or the topic's only queue); the row is detached."""
    found_id = topic_id(conn, topic)
    with Session(bind=conn, expire_on_commit=False) as session:
        rows = session.execute(select(Queue).where(Queue.topic_id == found_id).order_by(Queue.id)).scalars().all()
        for row in rows:
            session.expunge(row)
    if not rows:
        raise Conflict(f"topic {topic!r} has no queue; import a run first")
    if queue is None:
        if len(rows) > 1:
            raise Conflict(f"topic {topic!r} has several queues ({', '.join(q.name for q in rows)}); "
                          "choose one with --queue")
        return found_id, rows[0]
    for row in rows:
        if row.name == queue:
            return found_id, row
    raise NotFound(f"topic {topic!r} has no queue {queue!r} (it has {', '.join(q.name for q in rows)})")


def recorded_judgment(conn: Connection, judgment_id: int) -> int:
    """``judgment_id`` when a judgment of that id was recorded, of any topic (ids order the one log of every
    topic, so another topic's judgment is a point in this one's); `NotFound` otherwise: the log "as of" an id
    never recorded would silently be the whole log (or none of it)."""
    if conn.execute(select(Judgment.id).where(Judgment.id == judgment_id)).first() is not None:
        return judgment_id
    last = conn.execute(select(func.max(Judgment.id))).scalar_one()
    recorded = "no judgment is recorded yet" if last is None else f"the last one recorded is {last}"
    raise NotFound(f"--as-of {judgment_id}: no judgment has this id ({recorded})")


def parse_as_of(conn: Connection, value: str | None) -> tuple[int | None, datetime | None]:
    """``--as-of``: the id of a recorded judgment (`recorded_judgment`) or an ISO 8601 time (UTC when no offset is
    given)."""
    if value is None or value == "":
        return None, None
    if value.strip().isdigit():  # any digits, ASCII or not (²): `digits` says which are refused
        return recorded_judgment(conn, validation.digits(value, "as_of")), None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise Invalid(f"--as-of must be a judgment id or an ISO 8601 time, not {value!r}") from None
    return None, as_utc(moment)


def judgment_id_as_of(conn: Connection, value: str | None, command: str) -> int | None:
    """``--as-of`` for commands that take only a judgment id."""
    as_of_id, as_of_time = parse_as_of(conn, value)
    if as_of_time is not None:
        raise Invalid(f"{command} takes --as-of as a judgment id")
    return as_of_id
