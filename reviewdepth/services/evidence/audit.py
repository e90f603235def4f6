"""The topic's audit stream as evidence (`reviewdepth.services.review.audit_stream` for what a stream is), read
through the
caller's connection: the stream's rows, its population in permutation order, and its judged prefix."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import Connection, select

from reviewdepth.estimation.audit_order import audit_permutation, population_digest, sorted_population
from reviewdepth.services.errors import Conflict, Invalid, NotFound
from reviewdepth.store import validation
from reviewdepth.store.ingest import as_utc
from reviewdepth.store.labels import POLICIES, UNJUDGED, resolve_labels
from reviewdepth.store.loaders import load_judgment_arrays
from reviewdepth.store.models import AuditStream, Queue, QueueEntry, Topic


@dataclass(frozen=True)
class AuditEvidence:
    """What an audit stream shows at one moment, for the monitor (`reviewdepth.estimation.monitor`).

    Only the judged prefix is evidence: the first ``judged`` documents of the permutation, each with a resolved
    label. A stream with a gap (a document served or passed but not labelled yet) is used up to the gap: skipping
    the unlabelled document and counting those after it would make the sample depend on which documents got
    judged, and a reviewer who leaves a document for later may do so because of what it is (its label)."""

    stream_id: int
    seed: int
    population_size: int  # N
    position: int  # permutation elements passed
    served: int
    judged: int  # m: the longest prefix of the permutation (up to position) whose documents all have a label
    doc_ids: list[str]  # the first m documents of the permutation, in permutation order
    relevant: list[bool]  # their labels, resolved under the `policy` of `load_audit`
    ranks: list[int | None]  # each one's rank on the requested queue (None: not in that queue)
    pending: list[str]  # documents at positions >= m and < position lacking a label, in order
    description: str


def topic_of(conn: Connection, topic: str) -> tuple[int, int | None]:
    """(id, population size) of ``topic``; `NotFound` when it is not stored."""
    topic = validation.topic_name(topic)
    found = conn.execute(select(Topic.id, Topic.population_size).where(Topic.name == topic)).first()
    if found is None:
        raise NotFound(f"unknown topic {topic!r}")
    return int(found[0]), None if found[1] is None else int(found[1])


def stream_queue(conn: Connection, topic_id: int, topic: str, name: str | None, field_name: str = "queue") -> Queue:
    """The named queue of the topic, else its newest (highest id)."""
    from sqlalchemy.orm import Session

    with Session(bind=conn, expire_on_commit=False) as session:
        rows = session.execute(select(Queue).where(Queue.topic_id == topic_id).order_by(Queue.id)).scalars().all()
        for row in rows:
            session.expunge(row)
    if not rows:
        raise Conflict(f"topic {topic!r} has no queue; import a run first")
    if name is None:
        return rows[-1]
    name = validation.queue_name(name, field_name)
    for row in rows:
        if row.name == name:
            return row
    raise NotFound(f"{field_name}: topic {topic!r} has no queue {name!r} (its queues: "
                   f"{', '.join(q.name for q in rows)})")


def queue_docs(conn: Connection, queue_id: int) -> list[str]:
    """The queue's doc ids in rank order."""
    return list(conn.execute(select(QueueEntry.doc_id).where(QueueEntry.queue_id == queue_id)
                             .order_by(QueueEntry.rank)).scalars())


def stream_population(conn: Connection, stream: AuditStream, topic: str,
                known: dict[int, list[str]] | None = None) -> tuple[list[str], str | None]:
    """The stream's population in permutation order, and the name of the queue it was read from.

    Read from the queue the stream was created on; when that queue is gone, from the newest queue of the topic
    whose distinct documents have the stored digest. The digest is checked either way. ``known``: doc ids of
    queues the caller has read already (queue id -> ids)."""
    candidates: list[tuple[int, str]] = []
    if stream.queue_id is not None:
        name = conn.execute(select(Queue.name).where(Queue.id == stream.queue_id)).scalar_one_or_none()
        if name is not None:
            candidates.append((int(stream.queue_id), name))
    if not candidates:
        rows = conn.execute(select(Queue.id, Queue.name).where(
            Queue.topic_id == stream.topic_id, Queue.size == stream.population_size).order_by(Queue.id.desc())).all()
        candidates = [(int(i), n) for i, n in rows]
    for queue_id, name in candidates:
        ids = sorted_population(known[queue_id] if known and queue_id in known else queue_docs(conn, queue_id))
        if len(ids) == stream.population_size and population_digest(ids) == stream.population_digest:
            order = audit_permutation(ids, int(stream.seed))
            return [ids[i] for i in order], name
        if queue_id == stream.queue_id:
            raise Conflict(f"audit stream {stream.id} of topic {topic!r}: the documents of queue {name!r} no longer "
                           "match the stream's population digest; the stream cannot be used")
    raise Conflict(f"audit stream {stream.id} of topic {topic!r}: no stored queue holds its {stream.population_size:,} "
                   "documents any more; the stream cannot be used")


def stream_pace(every: int | None, rate: float | None) -> str:
    return f"every {every}" if every is not None else f"rate {rate:g}"


def stream_description(stream: AuditStream, queue: str | None, topic_population: int | None) -> str:
    where = f"queue {queue}" if queue is not None else "a queue no longer stored"
    text = (f"a seeded random permutation of the {int(stream.population_size):,} documents of {where} "
            f"({stream_pace(stream.every_k, stream.rate)})")
    if topic_population is not None and topic_population > stream.population_size:
        text += (f"; the topic's collection has {topic_population:,} documents: the audit covers the queue's "
                 "documents only")
    return text


def streams_of(conn: Connection, topic_id: int) -> list[AuditStream]:
    """The topic's streams, newest first (detached rows)."""
    from sqlalchemy.orm import Session

    with Session(bind=conn, expire_on_commit=False) as session:
        rows = list(session.execute(select(AuditStream).where(AuditStream.topic_id == topic_id)
                                    .order_by(AuditStream.id.desc())).scalars())
        for row in rows:
            session.expunge(row)
    return rows


def active_stream(conn: Connection, topic_id: int) -> AuditStream | None:
    return next((s for s in streams_of(conn, topic_id) if s.voided_at is None), None)


# ----------------------------------------------------------------------------------------------------------------
# evidence


def load_audit(conn: Connection, topic: str, queue: str | None = None, *, policy: str = "latest",
               as_of: int | None = None) -> AuditEvidence | None:
    """The topic's audit stream as evidence at judgment id ``as_of`` (default: now): the judged prefix of the
    permutation with labels resolved under ``policy`` (as `reviewdepth.services.evidence.labels.queue_labels` resolves
    them) and ranks on ``queue`` (default: the topic's newest).

    None when the topic has no active stream, or when it was created after ``as_of`` (its ``as_of`` field, the
    topic's last judgment id at creation, is later). A voided stream is never evidence. Only the judged prefix
    counts (see `AuditEvidence`): a document passed or served but not labelled stops the evidence there, and the
    documents after it wait in ``pending``."""
    if policy not in POLICIES:
        raise Invalid(f"policy: unknown label policy {policy!r}; choose one of {', '.join(POLICIES)}")
    if as_of is not None and (isinstance(as_of, bool) or not 0 <= as_of <= validation.INT64_MAX):
        raise Invalid(f"as_of: must be a judgment id, not {as_of!r}")
    topic = validation.topic_name(topic)
    topic_id, topic_population = topic_of(conn, topic)
    stream = active_stream(conn, topic_id)
    if stream is None or (as_of is not None and stream.as_of is not None and stream.as_of > as_of):
        return None
    target = stream_queue(conn, topic_id, topic, queue)
    target_docs = queue_docs(conn, target.id)
    order, origin = stream_population(conn, stream, topic, {target.id: target_docs})
    docs, ids, rel, adj, markers = load_judgment_arrays(conn, topic_id, as_of)
    resolved = resolve_labels(docs, ids, rel, adj, policy, markers)
    label_of = dict(zip(resolved.doc_ids.tolist(), resolved.labels.tolist(), strict=True))
    position = int(stream.position)
    judged = 0
    while judged < position and label_of.get(order[judged], UNJUDGED) != UNJUDGED:
        judged += 1
    prefix = order[:judged]
    rank_of = {d: i + 1 for i, d in enumerate(target_docs)}
    return AuditEvidence(
        stream_id=int(stream.id), seed=int(stream.seed), population_size=int(stream.population_size),
        position=position, served=int(stream.served), judged=judged, doc_ids=prefix,
        relevant=[label_of[d] == 1 for d in prefix], ranks=[rank_of.get(d) for d in prefix],
        pending=[d for d in order[judged:position] if label_of.get(d, UNJUDGED) == UNJUDGED],
        description=stream_description(stream, origin, topic_population))


def audit_doc_ids(conn: Connection, topic: str, count: int | None = None) -> Sequence[str]:
    """The first ``count`` documents of the topic's active stream in permutation order (all when None)."""
    topic_id, _ = topic_of(conn, topic)
    stream = active_stream(conn, topic_id)
    if stream is None:
        raise NotFound(f"topic {topic!r} has no active audit stream")
    order = stream_population(conn, stream, topic)[0]
    return order if count is None else order[:count]


@dataclass
class StreamRecord:
    """A stored audit stream as `sample stream show` and ``GET /topics/{topic}/samples/stream`` report it.

    ``judged``, ``relevant`` and ``pending`` are the evidence counts of `load_audit` (None when not computed)."""

    id: int
    topic: str
    queue: str | None  # the queue the stream was created on (None: that queue is no longer stored)
    seed: int
    population_size: int
    population_digest: str
    every: int | None
    rate: float | None
    position: int
    served: int
    as_of: int | None
    created_at: datetime
    created_by: str
    description: str
    voided: bool = False
    voided_at: datetime | None = None
    void_reason: str | None = None
    voided_by: str | None = None
    judged: int | None = None
    relevant: int | None = None
    pending: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, object]:
        return {
            "id": self.id, "topic": self.topic, "queue": self.queue, "seed": self.seed,
            "population_size": self.population_size, "population_digest": self.population_digest,
            "every": self.every, "rate": self.rate, "position": self.position, "served": self.served,
            "as_of": self.as_of, "created_at": _iso(self.created_at), "created_by": self.created_by,
            "description": self.description, "voided": self.voided,
            "voided_at": None if self.voided_at is None else _iso(self.voided_at), "void_reason": self.void_reason,
            "voided_by": self.voided_by, "judged": self.judged, "relevant": self.relevant, "pending": self.pending,
        }


def _iso(moment: datetime) -> str:
    return as_utc(moment).isoformat()


def stream_record(conn: Connection, stream: AuditStream, topic: str, topic_population: int | None) -> StreamRecord:
    """The stored stream as reported, without its evidence counts."""
    queue = None
    if stream.queue_id is not None:
        queue = conn.execute(select(Queue.name).where(Queue.id == stream.queue_id)).scalar_one_or_none()
    return StreamRecord(
        int(stream.id), topic, queue, int(stream.seed), int(stream.population_size), stream.population_digest,
        stream.every_k, stream.rate, int(stream.position), int(stream.served),
        None if stream.as_of is None else int(stream.as_of), stream.created_at, stream.created_by,
        stream_description(stream, queue, topic_population), stream.voided_at is not None, stream.voided_at,
        stream.void_reason, stream.voided_by)


def stream_with_evidence(conn: Connection, topic: str, *, policy: str = "latest",
                         stream_id: int | None = None) -> StreamRecord:
    """The topic's newest audit stream (or stream ``stream_id``) with its evidence counts (`load_audit`, when the
    stream is not voided); `NotFound` when the topic has none."""
    topic_id, topic_population = topic_of(conn, topic)
    streams = streams_of(conn, topic_id)
    if stream_id is not None:
        streams = [s for s in streams if s.id == stream_id]
    if not streams:
        raise NotFound(f"topic {topic!r} has no audit stream; start one with `reviewdepth sample stream "
                       f"start {topic} --every K` (or --rate R)")
    record = stream_record(conn, streams[0], topic, topic_population)
    if not record.voided:
        evidence = load_audit(conn, topic, policy=policy)
        if evidence is not None and evidence.stream_id == record.id:
            record.judged = evidence.judged
            record.relevant = sum(evidence.relevant)
            record.pending = evidence.pending
    return record
