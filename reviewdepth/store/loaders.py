"""The one way to load a queue and its current labels into numpy arrays (Core, selected columns)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import numpy as np
import numpy.typing as npt
from sqlalchemy import Connection, select

from reviewdepth.store.labels import UNJUDGED, resolve_codes, resolve_labels
from reviewdepth.store.models import Judgment, Queue, QueueEntry
from reviewdepth.store.ranking_blob import decode_ranking, strings_with_hashes_or_none


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


def _driver_rows(conn: Connection, sql: str, params: tuple[object, ...]) -> list[tuple[object, ...]]:
    """Rows straight from the DBAPI cursor (qmark SQL): no per-row result objects for large reads."""
    raw = conn.connection.driver_connection
    assert raw is not None
    if conn.dialect.name != "sqlite":
        sql = sql.replace("?", "%s")
    cursor = raw.cursor()
    try:
        cursor.execute(sql, params)
        return list(cursor.fetchall())
    finally:
        cursor.close()


def load_judgment_arrays(conn: Connection, topic_id: int, as_of: int | None = None,
                         as_of_time: datetime | None = None) -> tuple[list[str], npt.NDArray[np.int64],
                                                                      npt.NDArray[np.int8], npt.NDArray[np.bool_]]:
    """(doc ids, judgment ids, relevant as 1/0/-1, is-adjudication) of a topic's judgments up to ``as_of``."""
    sql = ("SELECT doc_id, id, CASE WHEN relevant IS NULL THEN -1 WHEN relevant THEN 1 ELSE 0 END, "
           "CASE WHEN role = 'adjudication' THEN 1 ELSE 0 END FROM judgments WHERE topic_id = ?")
    params: list[object] = [topic_id]
    if as_of is not None:
        sql += " AND id <= ?"
        params.append(as_of)
    if as_of_time is not None:
        sql += " AND recorded_at <= ?"
        params.append(as_of_time.isoformat(" ") if conn.dialect.name == "sqlite" else as_of_time)
    rows = _driver_rows(conn, sql + " ORDER BY id", tuple(params))
    if not rows:
        return [], np.zeros(0, np.int64), np.zeros(0, np.int8), np.zeros(0, bool)
    docs, ids, rel, adj = zip(*rows, strict=True)
    return (list(docs), np.array(ids, dtype=np.int64), np.array(rel, dtype=np.int8),  # type: ignore[arg-type]
            np.array(adj, dtype=bool))


def load_queue_labels(conn: Connection, queue_id: int, topic_id: int, size: int, policy: str = "latest",
                      as_of: int | None = None, as_of_time: datetime | None = None) -> QueueLabels:
    """Labels by rank. Judged documents are numbered by their 64-bit hash and joined to the queue's stored hash
    index (every match verified byte for byte); queues without the index, doc ids with whitespace or a hash
    collision take the plain path (a dictionary of doc ids and a join in SQL)."""
    docs, ids, rel, adj = load_judgment_arrays(conn, topic_id, as_of, as_of_time)
    labels = np.full(size, UNJUDGED, dtype=np.int8)
    per_doc = np.zeros(0, dtype=np.int8)
    if docs:
        blob = conn.execute(select(Queue.ranking_blob).where(Queue.id == queue_id)).scalar_one()
        fast = _hashed_path(blob, docs, ids, rel, adj, policy, labels) if blob else None
        if fast is not None:
            per_doc = fast
        else:
            resolved = resolve_labels(docs, ids, rel, adj, policy)
            per_doc = resolved.labels
            _join_in_sql(conn, queue_id, topic_id, as_of, as_of_time, resolved.doc_ids.tolist(), per_doc, labels)
    return QueueLabels(
        size=size,
        labels=labels,
        relevant_total=int(np.count_nonzero(per_doc == 1)),
        nonrelevant_total=int(np.count_nonzero(per_doc == 0)),
        judged_total=int(np.count_nonzero(per_doc >= 0)),
        policy=policy,
        as_of=as_of,
    )


def _hashed_path(blob: bytes, docs: list[str], ids: npt.NDArray[np.int64], rel: npt.NDArray[np.int8],
                 adj: npt.NDArray[np.bool_], policy: str, out: npt.NDArray[np.int8]) -> npt.NDArray[np.int8] | None:
    """Resolve labels per document and fill ``out`` by rank; None when this path cannot be taken."""
    ranking = decode_ranking(blob)
    column = strings_with_hashes_or_none(docs)
    if ranking is None or column is None or len(ranking.doc_ids) != len(out):
        return None
    order = np.argsort(column.hashes, kind="stable")
    hashes = column.hashes[order]
    values = column.values[order]
    first = np.ones(len(hashes), dtype=bool)
    first[1:] = hashes[1:] != hashes[:-1]
    repeat = ~first[1:]
    if not bool(np.all(values[1:][repeat] == values[:-1][repeat])):
        return None  # two different doc ids share a 64-bit hash
    codes = np.empty(len(docs), dtype=np.int64)
    codes[order] = np.cumsum(first) - 1
    per_doc = resolve_codes(codes, int(first.sum()), ids, rel, adj, policy)
    doc_hashes, doc_values = hashes[first], values[first]
    if len(ranking.sorted_hashes):
        pos = np.minimum(np.searchsorted(ranking.sorted_hashes, doc_hashes), len(ranking.sorted_hashes) - 1)
        hit = np.flatnonzero(ranking.sorted_hashes[pos] == doc_hashes)
        ranks = ranking.rank_of_sorted[pos[hit]]
        if not bool(np.all(ranking.doc_ids[ranks] == doc_values[hit])):
            return None
        out[ranks] = per_doc[hit]
    return per_doc


def _join_in_sql(conn: Connection, queue_id: int, topic_id: int, as_of: int | None, as_of_time: datetime | None,
                 judged_docs: list[str], judged_labels: npt.NDArray[np.int8], out: npt.NDArray[np.int8]) -> None:
    judged = select(Judgment.doc_id).where(Judgment.topic_id == topic_id)
    if as_of is not None:
        judged = judged.where(Judgment.id <= as_of)
    if as_of_time is not None:
        judged = judged.where(Judgment.recorded_at <= as_of_time)
    judged_sub = judged.distinct().subquery()
    found = conn.execute(
        select(QueueEntry.rank, QueueEntry.doc_id)
        .join(judged_sub, judged_sub.c.doc_id == QueueEntry.doc_id)
        .where(QueueEntry.queue_id == queue_id)
    ).all()
    if found:
        label_of = dict(zip(judged_docs, judged_labels.tolist(), strict=True))
        ranks = np.fromiter((r[0] for r in found), dtype=np.int64, count=len(found))
        values = np.fromiter((label_of[r[1]] for r in found), dtype=np.int8, count=len(found))
        out[ranks - 1] = values
