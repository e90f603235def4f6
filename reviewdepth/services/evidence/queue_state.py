"""One topic's queue at one moment, read once: the queue row, the stated population, the as-of judgment, the labels
by rank under a policy and the queue's evidence (reviewed set, samples expressed on it). The report, the monitor,
the plans, PRISMA and the validation document all start from this one load, so a request reads a queue's labels
once and every answer it gives is computed from the same state."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Connection

from reviewdepth.services.errors import Invalid
from reviewdepth.services.evidence.queue_evidence import QueueEvidence, queue_evidence
from reviewdepth.services.evidence.topic import find_queue, last_judgment_id, recorded_judgment
from reviewdepth.services.evidence.topic import population_size as topic_population
from reviewdepth.store.labels import POLICIES
from reviewdepth.store.loaders import QueueLabels, load_queue_labels
from reviewdepth.store.models import Queue


@dataclass(frozen=True)
class QueueState:
    """A queue as of one judgment under one label policy (module docstring).

    ``labels_by_rank`` holds the labels in queue order; ``labels`` the same on the review order (the reviewed set
    first when documents were reviewed out of queue order: `QueueEvidence.in_review_order`)."""

    topic_id: int
    queue: Queue
    population_size: int | None
    as_of: int | None
    policy: str
    labels_by_rank: QueueLabels
    evidence: QueueEvidence

    @property
    def labels(self) -> QueueLabels:
        return self.evidence.in_review_order(self.labels_by_rank)


def load_queue_state(conn: Connection, topic: str, queue: str | None, policy: str = "latest",
                     as_of: int | None = None) -> QueueState:
    """The topic's queue (named, else its only or newest one) as of judgment ``as_of`` (None: its last judgment),
    under ``policy``, read through ``conn``. `NotFound` for an unknown topic or queue, `Invalid` for an unknown
    policy or an as-of id no judgment has."""
    if policy not in POLICIES:
        raise Invalid(f"unknown label policy {policy!r}; choose one of {', '.join(POLICIES)}")
    topic_id, row = find_queue(conn, topic, queue)
    if as_of is None:
        as_of = last_judgment_id(conn, topic_id)
    else:
        as_of = recorded_judgment(conn, as_of)
    return queue_state_of(conn, topic_id, row, topic_population(conn, topic_id), policy, as_of)


def queue_state_of(conn: Connection, topic_id: int, row: Queue, population_size: int | None, policy: str,
                   as_of: int | None) -> QueueState:
    """The state of queue ``row`` of a topic already found (the monitor reads every queue of its topic so)."""
    labels = load_queue_labels(conn, row.id, topic_id, int(row.size), policy, as_of)
    return QueueState(topic_id, row, population_size, as_of, policy, labels,
                      queue_evidence(conn, topic_id, row, labels, as_of))
