"""A queue's labels under a policy as of a judgment, read through the caller's connection."""

from __future__ import annotations

from sqlalchemy import Connection

from reviewdepth.services.errors import Invalid
from reviewdepth.services.evidence.topic import find_queue, parse_as_of
from reviewdepth.store.ingest import db_time
from reviewdepth.store.labels import POLICIES
from reviewdepth.store.loaders import QueueLabels, load_queue_labels
from reviewdepth.store.models import Queue


def queue_labels(conn: Connection, topic: str, queue: str | None, policy: str = "latest",
                 as_of: str | None = None) -> tuple[Queue, QueueLabels]:
    """The queue row and its labels by rank (`reviewdepth.store.loaders.load_queue_labels`) as of ``as_of`` (a
    judgment id or an ISO time, as ``--as-of`` takes it)."""
    if policy not in POLICIES:
        raise Invalid(f"unknown label policy {policy!r}; choose one of {', '.join(POLICIES)}")
    topic_id, row = find_queue(conn, topic, queue)
    as_of_id, as_of_time = parse_as_of(conn, as_of)
    labels = load_queue_labels(conn, row.id, topic_id, int(row.size), policy, as_of_id,
                               None if as_of_time is None else db_time(conn, as_of_time))
    return row, labels
