"""Reading stored queues: a topic's list of them, summaries and trec_eval-style measures over the stored data."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

import numpy as np
from sqlalchemy import Engine, select

from reviewdepth.measures.ranking import NOT_IN_QRELS, RankedQueries
from reviewdepth.measures.suite import MeasureSpec, evaluate_ranked
from reviewdepth.services.evidence import labels as evidence_labels
from reviewdepth.services.evidence import topic as evidence_topic
from reviewdepth.store.ingest import as_utc
from reviewdepth.store.loaders import QueueLabels
from reviewdepth.store.models import Queue
from reviewdepth.store.snapshot import read_snapshot


@dataclass
class QueueSummary:
    topic: str
    queue: str
    ordering: str
    size: int
    judged: int
    relevant_found: int
    deepest_judged_rank: int | None
    threshold_rank: int | None
    relevant_in_topic: int
    policy: str
    as_of: str | None
    measures: dict[str, float | int | str] = field(default_factory=dict)

    def as_dict(self) -> dict[str, object]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class QueueRecord:
    """One stored queue of a topic: its ``size``, how its ranks were assigned (``ordering``: given or trec_eval),
    where it came from (``source``: ``import:`` and the SHA-256 of the imported file, ``api``, …), the run's tag
    and own stopping point when it had them, and whether it is the topic's ``newest`` (the queue a judgment is
    served from unless it names another)."""

    name: str
    size: int
    ordering: str
    source: str
    run_tag: str | None
    threshold_rank: int | None
    created_at: datetime
    newest: bool

    def as_dict(self) -> dict[str, object]:
        out = dict(self.__dict__)
        out["created_at"] = as_utc(self.created_at).isoformat()
        return out


def list_queues(engine: Engine, topic: str) -> list[QueueRecord]:
    """The topic's queues, oldest first (the last is the newest); `NotFound` for an unknown topic."""
    with engine.connect() as conn:
        topic_id = evidence_topic.topic_id(conn, topic)
        rows = conn.execute(select(Queue.name, Queue.size, Queue.ordering, Queue.source, Queue.run_tag,
                                   Queue.threshold_rank, Queue.created_at)
                            .where(Queue.topic_id == topic_id).order_by(Queue.id)).all()
    return [QueueRecord(name, int(size), ordering, source, run_tag, None if threshold is None else int(threshold),
                        created_at, i == len(rows) - 1)
            for i, (name, size, ordering, source, run_tag, threshold, created_at) in enumerate(rows)]


def find_queue(engine: Engine, topic: str, queue: str | None) -> tuple[int, Queue]:
    """The topic id and the named queue (or the topic's only queue), in a connection of its own
    (`reviewdepth.services.evidence.topic.find_queue`)."""
    with engine.connect() as conn:
        return evidence_topic.find_queue(conn, topic, queue)


def queue_labels(engine: Engine, topic: str, queue: str | None, policy: str = "latest",
                 as_of: str | None = None) -> tuple[Queue, QueueLabels]:
    """The queue and its labels (`reviewdepth.services.evidence.labels.queue_labels`) in one read snapshot."""
    with read_snapshot(engine) as conn:
        return evidence_labels.queue_labels(conn, topic, queue, policy, as_of)


def ranked_from_labels(labels: QueueLabels, name: str) -> RankedQueries:
    """A one-query `RankedQueries` (unjudged = not in qrels, as trec_eval treats unjudged documents)."""
    rel = labels.labels.astype(np.int64)
    rel[rel < 0] = NOT_IN_QRELS
    return RankedQueries(qids=[name], offsets=np.array([0, labels.size], dtype=np.int64), rel=rel,
                         num_rel=np.array([labels.relevant_total], dtype=np.int64),
                         num_nonrel=np.array([labels.nonrelevant_total], dtype=np.int64), level=1,
                         source_rows=np.arange(labels.size, dtype=np.int64))


def queue_summary(engine: Engine, topic: str, queue: str | None = None, *, policy: str = "latest",
                  as_of: str | None = None, measures: list[str] | None = None) -> QueueSummary:
    """Size, judged, relevant found, deepest judged rank and the trec_eval measures over the stored queue."""
    row, labels = queue_labels(engine, topic, queue, policy, as_of)
    judged_ranks = np.flatnonzero(labels.labels >= 0)
    summary = QueueSummary(
        topic=topic, queue=row.name, ordering=row.ordering, size=labels.size, judged=len(judged_ranks),
        relevant_found=int(np.count_nonzero(labels.labels == 1)),
        deepest_judged_rank=int(judged_ranks[-1]) + 1 if len(judged_ranks) else None,
        threshold_rank=row.threshold_rank, relevant_in_topic=labels.relevant_total, policy=policy, as_of=as_of)
    if labels.size:
        spec = MeasureSpec.parse(measures or ["all"])
        result = evaluate_ranked(ranked_from_labels(labels, topic), spec, run_id=row.run_tag or row.name)
        summary.measures = {k: v for k, v in result.summary.items() if k not in ("runid", "num_q")}
    return summary
