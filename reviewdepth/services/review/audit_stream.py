"""The audit stream: a seeded random permutation of a queue's documents, served to reviewers beside the ranked queue
and judged with role ``audit``, so that the documents judged along it are a uniformly random sample of the
population at every moment (the evidence of an anytime-valid stop signal, `load_audit`).

The population is the set of distinct doc ids of the queue the stream is created on, in Python string order; the
order is ``numpy.random.default_rng(seed).permutation(N)`` of it (`reviewdepth.estimation.audit_order`). Only the
seed, N and the SHA-256 of the sorted ids are stored: the order is recomputed on every use and the digest proves
the ids are the same, so a re-ranking (a new queue of the same documents) leaves the stream as it was.

Serving (`next_documents`): the next unjudged documents of a queue in rank order (role ``review``), with audit
documents (role ``audit``) interleaved at the stream's pace: with ``every`` k, one audit document is due after
every k ranked documents reviewed; with ``rate`` r, ``floor(reviewed · r / (1 − r))`` are due, so audit documents
are a share r of all served. "Reviewed" is the queue's reviewed prefix as the report counts it
(`reviewdepth.services.evidence.queue_evidence.queue_evidence`). Advancing the stream passes permutation elements whose
document already has a judgment (any role; they cost nothing: ``position`` advances, ``served`` does not) and
serves the first that still needs one (both advance). A served audit document that is still unjudged is served
again, first, by every later call, so none is lost. A ranked document someone skipped or marked maybe, and no one
decided, is served after every other unjudged document of the queue (a skip moves on; a maybe waits for a
decision); it stays unjudged, so the reviewed prefix and the audit pace are as without the skip. The stream's row
is locked while it advances, so two calls at once never serve the same element as new.
"""

from __future__ import annotations

import math
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from fractions import Fraction

from sqlalchemy import Connection, Engine, func, insert, select, text, update
from sqlalchemy.exc import IntegrityError

from reviewdepth.estimation.audit_order import SEED_LIMIT, population_digest, sorted_population
from reviewdepth.services.errors import Conflict, Invalid
from reviewdepth.services.evidence import audit as evidence_audit
from reviewdepth.services.evidence.audit import (
    AuditEvidence,
    StreamRecord,
    active_stream,
    queue_docs,
    stream_population,
    stream_queue,
    topic_of,
)
from reviewdepth.services.evidence.queue_evidence import queue_evidence
from reviewdepth.services.review.sample_void import checked_void
from reviewdepth.store import validation
from reviewdepth.store.evidence import chain_object
from reviewdepth.store.ingest import utc_now
from reviewdepth.store.labels import POLICIES, UNJUDGED
from reviewdepth.store.loaders import load_queue_labels
from reviewdepth.store.models import SCREENING_FILTER, VOID_ROLE, AuditStream, Judgment
from reviewdepth.store.snapshot import read_snapshot

AUDIT_ROLE = "audit"
REVIEW_ROLE = "review"
MAX_COUNT = 10_000  # documents one `next` call returns at most


@dataclass(frozen=True)
class ServedDocument:
    """One document to judge: ``role`` is the role to record it with (``review`` or ``audit``); ``rank`` its rank on
    the queue served (None: an audit document outside that queue); ``audit_position`` its 1-based place in the
    permutation; ``again``: an audit document served before and still unjudged."""

    doc_id: str
    role: str
    rank: int | None
    audit_position: int | None = None
    again: bool = False

    def as_dict(self) -> dict[str, object]:
        return {"doc_id": self.doc_id, "role": self.role, "rank": self.rank, "audit_position": self.audit_position,
                "again": self.again}


@dataclass(frozen=True)
class NextBatch:
    """The answer of `next_documents`: the documents in the order to judge them, and the stream's state after."""

    topic: str
    queue: str
    reviewed: int
    documents: list[ServedDocument]
    stream_id: int | None = None
    position: int | None = None
    served: int | None = None
    due: int | None = None  # audit documents due at the reviewed prefix before this batch
    population_size: int | None = None

    def as_dict(self) -> dict[str, object]:
        stream = None if self.stream_id is None else {
            "id": self.stream_id, "position": self.position, "served": self.served, "due": self.due,
            "population_size": self.population_size}
        return {"topic": self.topic, "queue": self.queue, "reviewed": self.reviewed, "stream": stream,
                "documents": [d.as_dict() for d in self.documents]}


def _iso(moment: datetime) -> str:
    from reviewdepth.store.ingest import as_utc

    return as_utc(moment).isoformat()


# ----------------------------------------------------------------------------------------------------------------
# lookups


def _decided_docs(conn: Connection, topic_id: int) -> set[str]:
    """Documents of the topic with at least one judgment that gives a decision (any role but ``void``)."""
    return set(conn.execute(select(Judgment.doc_id).where(
        Judgment.topic_id == topic_id, Judgment.relevant.is_not(None), Judgment.role != VOID_ROLE).distinct())
        .scalars())


# ----------------------------------------------------------------------------------------------------------------
# the pace


def _rate_fraction(rate: float) -> Fraction:
    """The rate as written (0.3 is 3/10, not the binary float just below it), so that due counts are exact."""
    return Fraction(repr(float(rate)))


def audit_due(reviewed: int, *, every: int | None = None, rate: float | None = None) -> int:
    """Audit documents due after ``reviewed`` ranked documents: ``reviewed // every``, or
    ``floor(reviewed · rate / (1 − rate))`` (audit documents then make a share ``rate`` of all served)."""
    if every is not None:
        return reviewed // every
    assert rate is not None
    share = _rate_fraction(rate)
    return math.floor(reviewed * share / (1 - share))


def _checked_pace(every: int | None, rate: float | None) -> tuple[int | None, float | None]:
    if every is None and rate is None:
        raise Invalid("every, rate: give the pace, --every K (one audit document after every K reviewed) or "
                      "--rate R (the audit share of documents served, 0 < R < 1)")
    if every is not None and rate is not None:
        raise Invalid("every, rate: give one of --every and --rate, not both")
    if every is not None:
        if isinstance(every, bool) or not isinstance(every, int) or not 1 <= every <= validation.INT32_MAX:
            raise Invalid(f"every: must be an integer from 1 to {validation.INT32_MAX}, not {every!r}")
        return every, None
    assert rate is not None
    if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not math.isfinite(rate) or not 0 < rate < 1:
        raise Invalid(f"rate: must be a number strictly between 0 and 1, not {rate!r}")
    return None, float(rate)


def _checked_seed(seed: int | None) -> int:
    if seed is None:
        return secrets.randbits(63)
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < SEED_LIMIT:
        raise Invalid(f"seed: must be an integer in [0, 2^63), not {seed!r}")
    return seed


# ----------------------------------------------------------------------------------------------------------------
# create, show, void


def _existing_message(topic: str, stream_id: int) -> str:
    return (f"topic {topic!r} already has an active audit stream (stream {stream_id}); one topic has at most one. "
            f"Go on serving it, or void it first (`reviewdepth sample stream void {topic} --reason ...`)")


def create_stream(engine: Engine, topic: str, *, every: int | None = None, rate: float | None = None,
                  seed: int | None = None, queue: str | None = None, reviewer: str) -> StreamRecord:
    """Start the topic's audit stream over the distinct documents of ``queue`` (default: the topic's newest).

    Refused: no pace or both paces, a pace or seed out of range, an empty reviewer (`Invalid`); an unknown topic
    or queue (`NotFound`); a topic that already has an active stream (`Conflict`, naming it)."""
    every, rate = _checked_pace(every, rate)
    seed = _checked_seed(seed)
    if not reviewer.strip():
        raise Invalid("reviewer must not be empty")
    reviewer = validation.reviewer_name(reviewer)
    topic = validation.topic_name(topic)
    with engine.connect() as conn:
        topic_id, _ = topic_of(conn, topic)
        row = stream_queue(conn, topic_id, topic, queue)
        ids = sorted_population(queue_docs(conn, row.id))
    if not ids:
        raise Invalid(f"queue: queue {row.name!r} of topic {topic!r} has no documents")
    digest = population_digest(ids)
    try:
        with engine.begin() as conn:
            existing = active_stream(conn, topic_id)
            if existing is not None:
                raise Conflict(_existing_message(topic, int(existing.id)))
            last = conn.execute(select(func.max(Judgment.id)).where(Judgment.topic_id == topic_id)).scalar_one()
            stream_id = int(conn.execute(insert(AuditStream).values(
                topic_id=topic_id, queue_id=row.id, seed=seed, population_size=len(ids), population_digest=digest,
                every_k=every, rate=rate, position=0, served=0, as_of=last, created_at=utc_now(),
                created_by=reviewer).returning(AuditStream.id)).scalar_one())
            chain_object(conn, "stream", stream_id)
    except IntegrityError:  # another stream was created meanwhile: the partial unique index refused this one
        with engine.connect() as conn:
            existing = active_stream(conn, topic_id)
        if existing is None:
            raise
        raise Conflict(_existing_message(topic, int(existing.id))) from None
    return show_stream(engine, topic, stream_id=stream_id)


def show_stream(engine: Engine, topic: str, *, policy: str = "latest", stream_id: int | None = None) -> StreamRecord:
    """`reviewdepth.services.evidence.audit.stream_with_evidence` in one read snapshot of its own."""
    with read_snapshot(engine) as conn:
        return evidence_audit.stream_with_evidence(conn, topic, policy=policy, stream_id=stream_id)


def change_pace(engine: Engine, topic: str, *, every: int | None = None,
                rate: float | None = None) -> StreamRecord:
    """Set a new pace for the topic's active stream from now on: due audit documents = those served so far + the new
    pace's count over the documents reviewed from now. The permutation, its position and the evidence stay as they
    are; the monitor's guarantee does not depend on the pace, which may follow what the audit has found (the
    monitor's docstring and tests/estimation/test_adaptive_rate_dp.py), as long as the ranking does not."""
    every, rate = _checked_pace(every, rate)
    topic = validation.topic_name(topic)
    with engine.connect() as conn:
        topic_id, _ = topic_of(conn, topic)
        active = active_stream(conn, topic_id)
        if active is None:
            # the topic exists; its state has no stream to re-pace (409, as "no queue yet"): not a missing resource
            raise Conflict(f"topic {topic!r} has no active audit stream: start one with "
                           "reviewdepth sample stream start")
        row = stream_queue(conn, topic_id, topic, None)
        labels = load_queue_labels(conn, row.id, topic_id, int(row.size), "latest")
        reviewed = queue_evidence(conn, topic_id, row, labels, None).reviewed
    with engine.begin() as conn:
        locked = _lock_stream(conn, int(active.id))
        if locked is None:
            raise Conflict(f"audit stream {active.id} of topic {topic!r} was voided meanwhile")
        _, served = locked
        conn.execute(update(AuditStream).where(AuditStream.id == active.id).values(
            every_k=every, rate=rate, pace_from_reviewed=reviewed, pace_from_served=served))
        chain_object(conn, "stream", int(active.id), "pace")
    return show_stream(engine, topic, stream_id=int(active.id))


def void_stream(engine: Engine, topic: str, *, reason: str, reviewer: str) -> StreamRecord:
    """Stop the topic's active stream: kept for the record, never served or used as evidence again (also by an
    as-of query: the void is not a judgment and is not in the judgment log). A new stream may then be created."""
    reason, reviewer = checked_void(reason, reviewer, "say why the audit stream is voided")
    with engine.begin() as conn:
        topic_id, _ = topic_of(conn, topic)
        active = active_stream(conn, topic_id)
        if active is None:  # a state of the topic, not a missing resource (409)
            raise Conflict(f"topic {topic!r} has no active audit stream")
        done = conn.execute(update(AuditStream).where(AuditStream.id == active.id, AuditStream.voided_at.is_(None))
                            .values(voided_at=utc_now(), void_reason=reason, voided_by=reviewer))
        if done.rowcount != 1:
            raise Conflict(f"audit stream {active.id} of topic {topic!r} was voided meanwhile")
        chain_object(conn, "stream", int(active.id), "voided")
    return show_stream(engine, topic, stream_id=int(active.id))


# ----------------------------------------------------------------------------------------------------------------
# serving


def _lock_stream(conn: Connection, stream_id: int) -> tuple[int, int] | None:
    """Take the stream's row lock for the rest of the transaction and read (position, served) as committed last;
    None when the stream was voided meanwhile. SQLite: the no-op UPDATE is the transaction's first statement, so
    it takes the database's write lock before anything is read; PostgreSQL: ``SELECT … FOR UPDATE``."""
    if conn.dialect.name == "sqlite":
        found = conn.execute(update(AuditStream).where(AuditStream.id == stream_id, AuditStream.voided_at.is_(None))
                             .values(position=AuditStream.position)
                             .returning(AuditStream.position, AuditStream.served)).first()
    else:
        found = conn.execute(select(AuditStream.position, AuditStream.served).where(
            AuditStream.id == stream_id, AuditStream.voided_at.is_(None)).with_for_update()).first()
    return None if found is None else (int(found[0]), int(found[1]))


def next_documents(engine: Engine, topic: str, *, queue: str | None = None, count: int = 10,
                   policy: str = "latest") -> NextBatch:
    """The next ``count`` documents to judge: the queue's next unjudged documents in rank order, with the audit
    stream's documents interleaved at its pace (module docstring). Advances and stores the stream's position and
    served count in one transaction that holds the stream's lock."""
    if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_COUNT:
        raise Invalid(f"count: must be an integer from 1 to {MAX_COUNT:,}, not {count!r}")
    if policy not in POLICIES:
        raise Invalid(f"policy: unknown label policy {policy!r}; choose one of {', '.join(POLICIES)}")
    topic = validation.topic_name(topic)
    with engine.connect() as conn:
        topic_id, _ = topic_of(conn, topic)
        row = stream_queue(conn, topic_id, topic, queue)
        labels = load_queue_labels(conn, row.id, topic_id, int(row.size), policy)
        docs = queue_docs(conn, row.id)
        stream = active_stream(conn, topic_id)
        order = stream_population(conn, stream, topic, {row.id: docs})[0] if stream is not None else []
        reviewed = queue_evidence(conn, topic_id, row, labels, None).reviewed
        deferred = set(conn.execute(select(Judgment.doc_id).where(
            Judgment.topic_id == topic_id, text(SCREENING_FILTER), Judgment.decision.is_not(None))).scalars())

    judged_mask = labels.labels != UNJUDGED
    in_batch: dict[str, int] = {}  # doc id -> index in `out`
    out: list[ServedDocument] = []
    rank_of: dict[str, int] | None = None  # built only when an audit document needs its rank

    def rank(doc: str) -> int | None:
        nonlocal rank_of
        if rank_of is None:
            rank_of = {d: i + 1 for i, d in enumerate(docs)}
        return rank_of.get(doc)

    prefix = len(docs) if bool(judged_mask.all()) else int(judged_mask.argmin())
    reviewed_now = reviewed  # the reviewed prefix once everything served so far is judged

    def mark(where: int | None) -> None:
        """Count the document at rank ``where`` as judged for the rest of the batch (what is served gets judged),
        so the audit documents due later in the batch follow the prefix it makes."""
        nonlocal prefix, reviewed_now
        if where is None:
            return
        judged_mask[where - 1] = True
        if where - 1 == prefix:
            while prefix < len(docs) and judged_mask[prefix]:
                prefix += 1
            reviewed_now = max(reviewed_now, prefix)

    cursor = 0  # the next rank index to look at for a ranked document
    later = 0  # the same for the deferred ones (skipped or maybe), served once no other is left

    def next_ranked() -> ServedDocument | None:
        nonlocal cursor, later
        while cursor < len(docs) and (judged_mask[cursor] or docs[cursor] in in_batch or docs[cursor] in deferred):
            cursor += 1
        if cursor < len(docs):
            return ServedDocument(docs[cursor], REVIEW_ROLE, cursor + 1)
        while later < len(docs) and (judged_mask[later] or docs[later] in in_batch):
            later += 1
        return None if later == len(docs) else ServedDocument(docs[later], REVIEW_ROLE, later + 1)

    def add(item: ServedDocument) -> None:
        in_batch[item.doc_id] = len(out)
        out.append(item)
        mark(item.rank)

    if stream is None:
        while len(out) < count and (item := next_ranked()) is not None:
            add(item)
        return NextBatch(topic, row.name, reviewed, out)

    every, rate = stream.every_k, stream.rate

    def due(reviewed_count: int) -> int:
        # the pace counts from where it was last set (a changed pace: no burst of catch-up documents, no debt)
        since = max(0, reviewed_count - int(stream.pace_from_reviewed))
        return int(stream.pace_from_served) + audit_due(since, every=every, rate=rate)

    due_before = due(reviewed)
    with engine.begin() as conn:
        locked = _lock_stream(conn, int(stream.id))
        if locked is None:
            raise Conflict(f"audit stream {stream.id} of topic {topic!r} was voided meanwhile; ask again")
        position, served = locked
        decided = _decided_docs(conn, topic_id)
        for i in range(position):  # served earlier and still unjudged: first, again
            doc = order[i]
            if doc not in decided and len(out) < count:
                add(ServedDocument(doc, AUDIT_ROLE, rank(doc), i + 1, again=True))
        new_position, new_served = position, served
        while len(out) < count:
            if new_position < len(order) and due(reviewed_now) > new_served:
                while new_position < len(order) and order[new_position] in decided:
                    new_position += 1  # already judged: passed, costs nothing
                if new_position < len(order):
                    doc = order[new_position]
                    new_position += 1
                    new_served += 1
                    element = ServedDocument(doc, AUDIT_ROLE, rank(doc), new_position)
                    if doc in in_batch:  # already in this batch as a ranked document: one judgment serves both
                        out[in_batch[doc]] = element
                    else:
                        add(element)
                    continue
            item = next_ranked()
            if item is None:
                break
            add(item)
        if (new_position, new_served) != (position, served):
            conn.execute(update(AuditStream).where(AuditStream.id == stream.id)
                         .values(position=new_position, served=new_served))
    return NextBatch(topic, row.name, reviewed, out, int(stream.id), new_position, new_served, due_before,
                     int(stream.population_size))


# ----------------------------------------------------------------------------------------------------------------
# evidence


def load_audit(engine: Engine, topic: str, queue: str | None = None, *, policy: str = "latest",
               as_of: int | None = None) -> AuditEvidence | None:
    """`reviewdepth.services.evidence.audit.load_audit` in one read snapshot of its own."""
    with read_snapshot(engine) as conn:
        return evidence_audit.load_audit(conn, topic, queue, policy=policy, as_of=as_of)


def audit_doc_ids(engine: Engine, topic: str, count: int | None = None) -> Sequence[str]:
    """The first ``count`` documents of the topic's active stream in permutation order (all when None); for
    tests and tools that replay a stream."""
    with engine.connect() as conn:
        return evidence_audit.audit_doc_ids(conn, topic, count)
