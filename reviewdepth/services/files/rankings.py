"""Storing one topic's ranked queue from a request: a JSON list of documents, or a TREC/CLEF run file that
`reviewdepth.services.files.run_upload` checks and stores in bounded memory (same rules as ``reviewdepth import run``);
and paging a stored ranking with its current labels."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine, insert, select

from reviewdepth.formats.errors import InputError
from reviewdepth.services.errors import Conflict, Invalid
from reviewdepth.services.evidence import labels as evidence_labels
from reviewdepth.services.evidence import topic as evidence_topic
from reviewdepth.services.files.run_upload import store_run_stream
from reviewdepth.store import validation
from reviewdepth.store.evidence import chain_object
from reviewdepth.store.ingest import bulk_insert, utc_now
from reviewdepth.store.models import Queue, QueueEntry
from reviewdepth.store.ranking_blob import encode_ranking
from reviewdepth.store.snapshot import read_snapshot


@dataclass(frozen=True)
class RankedDocument:
    doc_id: str
    score: float | None = None


def _check_queue_name(name: str) -> str:
    return validation.queue_name(name, "queue name")


def _refuse_existing(engine: Engine, topic_id: int, topic: str, queue: str) -> None:
    with engine.connect() as conn:
        taken = conn.execute(select(Queue.id).where(Queue.topic_id == topic_id, Queue.name == queue)).first()
    if taken is not None:
        raise Conflict(f"topic {topic!r} already has a queue {queue!r}; queues are kept as stored (samples refer "
                       "to their ranks): store the new ranking under another name")


def store_ranking(engine: Engine, topic: str, queue: str, documents: Sequence[RankedDocument], *,
                  source: str = "api") -> None:
    """Store ``documents`` (rank order) as the queue ``queue`` of an existing topic, in one transaction."""
    queue = _check_queue_name(queue)
    if not documents:
        raise Invalid("documents: a ranking needs at least one document")
    seen: dict[str, int] = {}
    checked = []
    for position, doc in enumerate(documents):
        doc_id = validation.doc_id(doc.doc_id, f"documents[{position}].doc_id")
        if doc_id in seen:
            raise Invalid(f"documents[{position}].doc_id: duplicate doc id {doc_id!r} "
                          f"(first at documents[{seen[doc_id]}])")
        seen[doc_id] = position
        if doc.score is not None:
            validation.score(doc.score, f"documents[{position}].score")
        checked.append(RankedDocument(doc_id, doc.score))
    documents = checked
    with engine.connect() as conn:
        topic_id = evidence_topic.topic_id(conn, topic)
    _refuse_existing(engine, topic_id, topic, queue)
    docs = [d.doc_id for d in documents]
    with engine.begin() as conn:
        queue_id = int(conn.execute(insert(Queue).values(
            topic_id=topic_id, name=queue, ordering="given", run_tag=None, threshold_rank=None, size=len(docs),
            source=source, created_at=utc_now(), ranking_blob=encode_ranking(docs)).returning(Queue.id)).scalar_one())
        bulk_insert(conn, "queue_entries", ("queue_id", "rank", "doc_id", "score", "flag"),
                    ((queue_id, rank, d.doc_id, d.score, None) for rank, d in enumerate(documents, start=1)))
        chain_object(conn, "queue", queue_id)


def store_run_file(engine: Engine, topic: str, queue: str, path: str, *, order: str = "given") -> None:
    """Store a run file holding one topic's ranking as ``queue`` (every line must name ``topic``).

    The file is read in chunks and stored in bounded memory (`reviewdepth.services.files.run_upload`): in file order
    (the
    default, CLEF's rule) one chunk and 24 bytes a line; ranked by score (``order="trec_eval"``) every line's doc id,
    score and action packed as well."""
    queue = _check_queue_name(queue)
    with engine.connect() as conn:
        topic_id = evidence_topic.topic_id(conn, topic)
    _refuse_existing(engine, topic_id, topic, queue)
    try:
        store_run_stream(engine, topic_id, topic, queue, path, order=order)
    except InputError as exc:  # the upload's name, not the server's temporary file
        raise InputError("run", exc.line, exc.field, exc.message) from None


@dataclass(frozen=True)
class EntryPage:
    total: int
    offset: int
    entries: list[dict[str, object]]


LABEL_NAMES = {1: "relevant", 0: "nonrelevant", -1: None}


def ranking_page(engine: Engine, topic: str, queue: str, *, offset: int = 0, limit: int = 100,
                 policy: str = "latest", as_of: str | None = None) -> EntryPage:
    """Entries ``offset+1 .. offset+limit`` in rank order, each with its current label under ``policy``."""
    if offset < 0 or limit < 1:
        raise Invalid("offset must be >= 0 and limit >= 1")
    with read_snapshot(engine) as conn:
        row, labels = evidence_labels.queue_labels(conn, topic, queue, policy, as_of)
    # ranks run 1..size: a page past the end is empty, and the bounds sent to the database stay within int64
    # however large the offset asked for
    first = min(offset, labels.size)
    last = min(offset + limit, labels.size)
    rows: Sequence[Any] = ()
    if first < last:
        with engine.connect() as conn:
            rows = conn.execute(select(QueueEntry.rank, QueueEntry.doc_id, QueueEntry.score, QueueEntry.flag)
                                .where(QueueEntry.queue_id == row.id, QueueEntry.rank > first,
                                       QueueEntry.rank <= last)
                                .order_by(QueueEntry.rank)).all()
    entries: list[dict[str, object]] = []
    for rank, doc_id, score, flag in rows:
        value = int(labels.labels[int(rank) - 1])
        entries.append({"rank": int(rank), "doc_id": doc_id, "score": score, "flag": flag,
                        "label": LABEL_NAMES.get(value), "judged": value >= 0})
    return EntryPage(labels.size, offset, entries)



