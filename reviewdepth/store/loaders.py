"""The one way to load a queue and its current labels into numpy arrays (Core, selected columns)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import numpy as np
import numpy.typing as npt
from sqlalchemy import Connection, select

from reviewdepth.store.labels import UNJUDGED, resolve_labels
from reviewdepth.store.models import Judgment, QueueEntry


@dataclass(frozen=True)
class QueueLabels:
    """A queue in rank order with each entry's current label (1, 0, -1 unjudged), plus topic-wide counts.

    ``relevant_total`` and ``nonrelevant_total`` count every judged document of the topic, in the queue or
    not (R and the judged non-relevant N of trec_eval).
    """

    size: int
    labels: npt.NDArray[np.int8]
    relevant_total: int
    nonrelevant_total: int
    judged_total: int
    policy: str
    as_of: int | None


def load_judgment_arrays(conn: Connection, topic_id: int, as_of: int | None = None,
                         as_of_time: datetime | None = None) -> tuple[list[str], npt.NDArray[np.int64],
                                                                      npt.NDArray[np.int8], npt.NDArray[np.bool_]]:
    """(doc ids, judgment ids, relevant as 1/0/-1, is-adjudication) of a topic's judgments up to ``as_of``."""
    stmt = select(Judgment.doc_id, Judgment.id, Judgment.relevant, Judgment.role).where(Judgment.topic_id == topic_id)
    if as_of is not None:
        stmt = stmt.where(Judgment.id <= as_of)
    if as_of_time is not None:
        stmt = stmt.where(Judgment.recorded_at <= as_of_time)
    rows = conn.execute(stmt).all()
    docs = [r[0] for r in rows]
    ids = np.fromiter((r[1] for r in rows), dtype=np.int64, count=len(rows))
    rel = np.fromiter((UNJUDGED if r[2] is None else int(r[2]) for r in rows), dtype=np.int8, count=len(rows))
    adj = np.fromiter((r[3] == "adjudication" for r in rows), dtype=bool, count=len(rows))
    return docs, ids, rel, adj


def load_queue_labels(conn: Connection, queue_id: int, topic_id: int, size: int, policy: str = "latest",
                      as_of: int | None = None, as_of_time: datetime | None = None) -> QueueLabels:
    """Labels by rank: only judged documents are fetched from the queue, so a 2M-entry queue stays cheap."""
    docs, ids, rel, adj = load_judgment_arrays(conn, topic_id, as_of, as_of_time)
    resolved = resolve_labels(docs, ids, rel, adj, policy)
    labels = np.full(size, UNJUDGED, dtype=np.int8)
    if len(resolved.doc_ids):
        judged = select(Judgment.doc_id).where(Judgment.topic_id == topic_id)
        if as_of is not None:
            judged = judged.where(Judgment.id <= as_of)
        if as_of_time is not None:
            judged = judged.where(Judgment.recorded_at <= as_of_time)
        judged_docs = judged.distinct().subquery()
        found = conn.execute(
            select(QueueEntry.rank, QueueEntry.doc_id)
            .join(judged_docs, judged_docs.c.doc_id == QueueEntry.doc_id)
            .where(QueueEntry.queue_id == queue_id)
        ).all()
        if found:
            label_of = dict(zip(resolved.doc_ids.tolist(), resolved.labels.tolist(), strict=True))
            ranks = np.fromiter((r[0] for r in found), dtype=np.int64, count=len(found))
            values = np.fromiter((label_of[r[1]] for r in found), dtype=np.int8, count=len(found))
            labels[ranks - 1] = values
    return QueueLabels(
        size=size,
        labels=labels,
        relevant_total=int(np.count_nonzero(resolved.labels == 1)),
        nonrelevant_total=int(np.count_nonzero(resolved.labels == 0)),
        judged_total=int(np.count_nonzero(resolved.labels >= 0)),
        policy=policy,
        as_of=as_of,
    )
