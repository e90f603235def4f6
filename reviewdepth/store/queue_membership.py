"""Which queues a topic has, and which documents are in none of them: set-based reads for the writers of
judgments (one query per 5,000 documents, through the ``(queue_id, doc_id)`` unique index of the entries)."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import Connection

from reviewdepth.store.ingest import driver_rows

CHUNK = 5000


def topic_queues(conn: Connection, topic_id: int) -> list[tuple[int, str]]:
    """(id, name) of the topic's queues, oldest first."""
    return [(int(i), str(n)) for i, n in driver_rows(
        conn, "SELECT id, name FROM queues WHERE topic_id = ? ORDER BY id", (topic_id,))]


def documents_in_no_queue(conn: Connection, topic_id: int, doc_ids: Sequence[str]) -> set[str]:
    """The distinct ``doc_ids`` that no queue of the topic contains."""
    wanted = list(dict.fromkeys(doc_ids))
    found: set[str] = set()
    for start in range(0, len(wanted), CHUNK):
        part = wanted[start:start + CHUNK]
        marks = ", ".join("?" for _ in part)
        found.update(d for (d,) in driver_rows(
            conn, f"SELECT DISTINCT e.doc_id FROM queue_entries e JOIN queues q ON q.id = e.queue_id "
                  f"WHERE q.topic_id = ? AND e.doc_id IN ({marks})", (topic_id, *part)))
    return {d for d in wanted if d not in found}
