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
        found.update(d for (d,) in driver_rows(
            conn, f"SELECT DISTINCT e.doc_id FROM queue_entries e JOIN queues q ON q.id = e.queue_id "
                  f"WHERE q.topic_id = ? AND {_in_list(conn, 'e.doc_id', part)}", (topic_id, *_in_params(conn, part)),
            plan_each_time=True))
    return {d for d in wanted if d not in found}


def topic_and_queued(conn: Connection, topic: str, doc_ids: Sequence[str]) -> tuple[int, list[tuple[int, str]],
                                                                                   set[str] | None] | None:
    """One round trip for a writer of judgments: the id of topic ``topic`` (None: no such topic), its queues
    (`topic_queues`), and the distinct ``doc_ids`` some queue of it contains (None when there are more than
    `CHUNK`: ask `documents_in_no_queue`)."""
    wanted = list(dict.fromkeys(doc_ids))
    sql = ("SELECT t.id, q.id, q.name, NULL FROM topics t LEFT JOIN queues q ON q.topic_id = t.id WHERE t.name = ?")
    params: list[object] = [topic]
    if 0 < len(wanted) <= CHUNK:
        # one document (every single post): a plain equality, whose generic plan is the index look-up, so the
        # statement may be prepared (parsed and planned once per connection, not once per post)
        sql += (" UNION ALL SELECT NULL, NULL, NULL, e.doc_id FROM topics t JOIN queues q ON q.topic_id = t.id "
                "JOIN queue_entries e ON e.queue_id = q.id WHERE t.name = ? AND "
                f"{'e.doc_id = ?' if len(wanted) == 1 else _in_list(conn, 'e.doc_id', wanted)}")
        params += [topic, *(wanted if len(wanted) == 1 else _in_params(conn, wanted))]
    topic_id: int | None = None
    queues: list[tuple[int, str]] = []
    found: set[str] = set()
    for tid, queue_id, name, doc in driver_rows(conn, sql, params, plan_each_time=len(wanted) > 1):
        if doc is not None:
            found.add(str(doc))
            continue
        topic_id = int(tid)
        if queue_id is not None:
            queues.append((int(queue_id), str(name)))
    if topic_id is None:
        return None
    queues.sort()
    return topic_id, queues, found if 0 < len(wanted) <= CHUNK else None


def _in_list(conn: Connection, column: str, values: Sequence[str]) -> str:
    """``column`` among ``values``: one array parameter on PostgreSQL (psycopg re-parses a statement text with
    thousands of placeholders every time), a list of placeholders on SQLite. Run such a statement with
    ``plan_each_time``: a generic plan for an array of unknown length scans the whole queue (seconds, not
    milliseconds, for a 1,000-document batch on a large queue)."""
    if conn.dialect.name == "postgresql":
        return f"{column} = ANY(?)"
    return f"{column} IN ({', '.join('?' for _ in values)})"


def _in_params(conn: Connection, values: Sequence[str]) -> list[object]:
    return [list(values)] if conn.dialect.name == "postgresql" else list(values)
