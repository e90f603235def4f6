"""Topics as resources: create one (with its population size N), list them, describe one with its queues and what
the store holds for it."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np
from sqlalchemy import Connection, Engine, Select, func, insert, select, update
from sqlalchemy.exc import IntegrityError

from reviewdepth.services.errors import Conflict, Invalid, NotFound
from reviewdepth.services.evidence.queue_evidence import queue_evidence
from reviewdepth.store import validation
from reviewdepth.store.evidence import chain_object
from reviewdepth.store.ingest import as_utc, utc_now
from reviewdepth.store.loaders import load_queue_labels
from reviewdepth.store.models import VOID_ROLE, Judgment, Queue, Topic
from reviewdepth.store.snapshot import read_snapshot


@dataclass
class TopicRecord:
    """A topic, its queues (oldest first) and what the store holds for it.

    ``judgments``: the rows of its judgment log (not the rows that log a voided sample). ``newest_queue``: its
    newest queue (the last of ``queues``, the one a judgment is served from unless it names another), with that
    queue's ``queue_size``, ``reviewed`` prefix as the depth report counts it
    (`reviewdepth.services.evidence.queue_evidence.queue_evidence`, labels by the ``latest`` policy) and the relevant
    documents in that prefix (``relevant_found_in_reviewed``, the report's name); all None when the topic has no
    queue. ``last_activity``: when its newest judgment was logged (None: none yet). ``screening_order``: ``random``
    when the team declared it screened in a random order fixed in advance (`declare_screening_order`), else
    ``queue``."""

    id: int
    name: str
    population_size: int | None
    created_at: datetime
    queues: list[str] = field(default_factory=list)
    judgments: int = 0
    newest_queue: str | None = None
    queue_size: int | None = None
    reviewed: int | None = None
    relevant_found_in_reviewed: int | None = None
    last_activity: datetime | None = None
    screening_order: str = "queue"
    # the topic's one status (`reviewdepth.services.answers.monitor.topic_statuses`), filled when asked for
    status: str | None = None
    status_text: str | None = None

    def as_dict(self) -> dict[str, object]:
        out = dict(self.__dict__)
        out["created_at"] = as_utc(self.created_at).isoformat()
        out["last_activity"] = None if self.last_activity is None else as_utc(self.last_activity).isoformat()
        out["queues"] = list(self.queues)
        return out


def create_topic(engine: Engine, name: str, population_size: int | None = None) -> TopicRecord:
    """A new, empty topic; an existing name is a conflict."""
    name = validation.topic_name(name, "topic name")
    if population_size is not None:
        validation.integer(population_size, "population_size", minimum=1)
    now = utc_now()
    try:
        with engine.begin() as conn:
            new_id = conn.execute(insert(Topic).values(name=name, population_size=population_size, created_at=now)
                                  .returning(Topic.id)).scalar_one()
            chain_object(conn, "topic", int(new_id))
    except IntegrityError:
        raise Conflict(f"topic {name!r} already exists") from None
    return TopicRecord(int(new_id), name, population_size, now)


SCREENING_ORDERS = ("queue", "random")


def declare_screening_order(engine: Engine, topic: str, order: str) -> TopicRecord:
    """Record how the team screens ``topic``: ``random`` (a uniformly random order fixed before screening, so the
    screened set is a random sample of the queue and says so in every estimate) or ``queue`` (along the queue, or
    an order not declared random; the default). A declaration, never a guess from the data: reviewdepth cannot
    tell a random order from an unlucky ranking."""
    name = validation.topic_name(topic)
    if order not in SCREENING_ORDERS:
        raise Invalid(f"screening order: must be one of {', '.join(SCREENING_ORDERS)}, not {order!r}")
    with engine.begin() as conn:
        done = conn.execute(update(Topic).where(Topic.name == name).values(
            screening_order=None if order == "queue" else order))
        if done.rowcount != 1:
            raise NotFound(f"unknown topic {name!r}")
    return get_topic(engine, name)


def list_topics(engine: Engine, *, offset: int = 0, limit: int | None = None) -> list[TopicRecord]:
    """The topics in creation order (``offset``, ``limit``: a page of them), each described (`TopicRecord`)."""
    chosen = select(Topic.id).order_by(Topic.id).offset(offset)
    if limit is not None:
        chosen = chosen.limit(limit)
    return _described(engine, chosen)


def get_topic(engine: Engine, name: str) -> TopicRecord:
    name = validation.topic_name(name)
    found = _described(engine, select(Topic.id).where(Topic.name == name))
    if not found:
        raise NotFound(f"unknown topic {name!r}")
    return found[0]


def newest_judgments(conn: Connection, chosen: Select[Any] | None = None) -> dict[int, tuple[int, datetime]]:
    """The id and time of each topic's newest judgment-log row (every topic's, or those whose ids ``chosen``
    selects); a topic with none is absent."""
    newest = select(Judgment.topic_id, func.max(Judgment.id).label("id")).group_by(Judgment.topic_id)
    if chosen is not None:
        newest = newest.where(Judgment.topic_id.in_(chosen))
    last = newest.subquery()
    rows = conn.execute(select(Judgment.topic_id, Judgment.id, Judgment.recorded_at)
                        .join(last, Judgment.id == last.c.id))
    return {int(topic_id): (int(judgment_id), moment) for topic_id, judgment_id, moment in rows}


def _described(engine: Engine, chosen: Select[Any]) -> list[TopicRecord]:
    """The topics whose ids ``chosen`` selects, in id order, described: four grouped queries for all of them,
    then, for each topic with a queue in turn, its newest queue's labels loaded once (`load_queue_labels`) and its
    reviewed prefix found from them and the topic's samples (`queue_evidence`)."""
    with read_snapshot(engine) as conn:
        rows = conn.execute(select(Topic.id, Topic.name, Topic.population_size, Topic.created_at,
                                   Topic.screening_order).where(Topic.id.in_(chosen)).order_by(Topic.id)).all()
        if not rows:
            return []
        queues: dict[int, list[Queue]] = {}
        for topic_id, queue_id, queue_name, size in conn.execute(
                select(Queue.topic_id, Queue.id, Queue.name, Queue.size).where(Queue.topic_id.in_(chosen))
                .order_by(Queue.id)):
            queues.setdefault(int(topic_id), []).append(Queue(id=int(queue_id), name=queue_name, size=int(size)))
        counts = {int(topic_id): int(n) for topic_id, n in conn.execute(
            select(Judgment.topic_id, func.count()).where(Judgment.topic_id.in_(chosen), Judgment.role != VOID_ROLE)
            .group_by(Judgment.topic_id))}
        last = newest_judgments(conn, chosen)
        records = []
        for topic_id, name, population_size, created_at, screening_order in rows:
            topic_id = int(topic_id)
            record = TopicRecord(topic_id, name, population_size, created_at,
                                 [q.name for q in queues.get(topic_id, [])], counts.get(topic_id, 0),
                                 screening_order=screening_order or "queue")
            if topic_id in queues:
                # one topic's labels at a time (a page of large topics held them all at once)
                newest = queues[topic_id][-1]
                labels = load_queue_labels(conn, newest.id, topic_id, newest.size)
                evidence = queue_evidence(conn, topic_id, newest, labels, None)
                reviewed, in_order = evidence.reviewed, evidence.in_review_order(labels)
                record.newest_queue, record.queue_size, record.reviewed = newest.name, newest.size, reviewed
                record.relevant_found_in_reviewed = int(np.count_nonzero(in_order.labels[:reviewed] == 1))
            if topic_id in last:
                record.last_activity = last[topic_id][1]
            records.append(record)
    return records
