"""Topics as resources: create one (with its population size N), list them, describe one with its queues."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import Engine, func, insert, select
from sqlalchemy.exc import IntegrityError

from reviewdepth.services.errors import Conflict, NotFound
from reviewdepth.services.judgments import as_utc
from reviewdepth.store import validation
from reviewdepth.store.ingest import utc_now
from reviewdepth.store.models import VOID_ROLE, Judgment, Queue, Topic


@dataclass
class TopicRecord:
    id: int
    name: str
    population_size: int | None
    created_at: datetime
    queues: list[str] = field(default_factory=list)
    judgments: int = 0

    def as_dict(self) -> dict[str, object]:
        return {"id": self.id, "name": self.name, "population_size": self.population_size,
                "created_at": as_utc(self.created_at).isoformat(), "queues": self.queues,
                "judgments": self.judgments}


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
    except IntegrityError:
        raise Conflict(f"topic {name!r} already exists") from None
    return TopicRecord(int(new_id), name, population_size, now)


def list_topics(engine: Engine, *, offset: int = 0, limit: int | None = None) -> list[TopicRecord]:
    stmt = select(Topic.id, Topic.name, Topic.population_size, Topic.created_at).order_by(Topic.id).offset(offset)
    if limit is not None:
        stmt = stmt.limit(limit)
    with engine.connect() as conn:
        rows = conn.execute(stmt).all()
        ids = [int(r[0]) for r in rows]
        queues: dict[int, list[str]] = {}
        if ids:
            for topic_id, qname in conn.execute(select(Queue.topic_id, Queue.name).where(Queue.topic_id.in_(ids))
                                                .order_by(Queue.id)):
                queues.setdefault(int(topic_id), []).append(qname)
    return [TopicRecord(int(r[0]), r[1], r[2], r[3], queues.get(int(r[0]), [])) for r in rows]


def get_topic(engine: Engine, name: str) -> TopicRecord:
    name = validation.topic_name(name)
    with engine.connect() as conn:
        row = conn.execute(select(Topic.id, Topic.name, Topic.population_size, Topic.created_at)
                           .where(Topic.name == name)).first()
        if row is None:
            raise NotFound(f"unknown topic {name!r}")
        queues = list(conn.execute(select(Queue.name).where(Queue.topic_id == row[0]).order_by(Queue.id)).scalars())
        count = conn.execute(select(func.count()).select_from(Judgment).where(Judgment.topic_id == row[0],
                                                                            Judgment.role != VOID_ROLE))
        judgments = int(count.scalar_one())
    return TopicRecord(int(row[0]), row[1], row[2], row[3], queues, judgments)
