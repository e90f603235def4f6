"""Voiding a sample: kept for the record, used by no estimate from then on, and logged in the judgment chain.

A sample drawn by mistake (wrong frame, wrong size, a test) must not be able to displace a real one, and it must
not disappear either: voiding it appends one row to the topic's tamper-evident log (`reviewdepth.store.chain`)
with role ``void``, doc_id ``sample:<id>``, label ``void``, no decision (``relevant`` NULL) and the reason as
its note, and stores that row's id with the time, reviewer and reason on the sample. That row is not a
judgment of a document: label resolution, votes, conflicts, QC and PRISMA leave role ``void`` out.

A report as of a judgment id before the void still sees the sample (`SampleRecord.voided` is False there).
"""

from __future__ import annotations

from sqlalchemy import Engine, select, update

from reviewdepth.services.errors import Conflict, Invalid, NotFound
from reviewdepth.services.review.samples import SampleRecord, load_samples
from reviewdepth.store import validation
from reviewdepth.store.chain import NewJudgment, append_judgments
from reviewdepth.store.evidence import chain_object, lock_evidence
from reviewdepth.store.ingest import utc_now
from reviewdepth.store.models import VOID_ROLE, Queue, Sample, Topic

MAX_REASON_LENGTH = 10_000


def void_doc_id(sample_id: int) -> str:
    """The doc_id of the log row that records the void of sample ``sample_id``."""
    return f"sample:{sample_id}"


def checked_void(reason: str, reviewer: str, missing: str) -> tuple[str, str]:
    """The reason and reviewer of a void, validated (`Invalid` naming the field; ``missing`` is the message for an
    empty reason)."""
    reason = validation.free_text(reason.strip(), "reason")
    if not reason:
        raise Invalid(f"reason: {missing}")
    if len(reason) > MAX_REASON_LENGTH:
        raise Invalid(f"reason: at most {MAX_REASON_LENGTH:,} characters")
    if not reviewer.strip():
        raise Invalid("reviewer must not be empty")
    return reason, validation.reviewer_name(reviewer)


def void_sample(engine: Engine, topic: str, sample_id: int, *, reason: str, reviewer: str,
                source: str = "cli") -> SampleRecord:
    """Void sample ``sample_id`` of ``topic`` (one transaction) and return it as now stored.

    Refused: an empty reason or reviewer (`Invalid`), an unknown topic or sample (`NotFound`), a sample already
    voided (`Conflict`, also when two voids race: the second finds the sample voided after the chain lock)."""
    reason, reviewer = checked_void(reason, reviewer, "say why the sample is voided (it is kept in the judgment log)")
    with engine.begin() as conn:
        topic_id = conn.execute(select(Topic.id).where(Topic.name == topic)).scalar_one_or_none()
        if topic_id is None:
            raise NotFound(f"unknown topic {topic!r}")
        found = conn.execute(select(Sample.voided_at, Sample.voided_by, Queue.name)
                             .join(Queue, Queue.id == Sample.queue_id)
                             .where(Sample.id == sample_id, Sample.topic_id == topic_id)).first()
        if found is None:
            raise NotFound(f"topic {topic!r} has no sample {sample_id}")
        if found[0] is not None:
            raise Conflict(f"sample {sample_id} of topic {topic!r} was already voided by {found[1]!r} "
                           f"at {found[0]:%Y-%m-%d %H:%M} UTC")
        queue_name = found[2]
        now = utc_now()
        # every writer takes the evidence chain's lock before a topic's chain lock (PostgreSQL: no deadlock
        # with an import that chains a queue and then judges this topic)
        lock_evidence(conn)
        [log_id] = append_judgments(conn, [NewJudgment(int(topic_id), void_doc_id(sample_id), "void", None, None,
                                                       reviewer, VOID_ROLE, source, reason, now)], return_ids=True)
        # the chain lock is held now: a concurrent void of the same sample that got here first has committed
        done = conn.execute(update(Sample).where(Sample.id == sample_id, Sample.void_judgment_id.is_(None))
                            .values(voided_at=now, void_reason=reason, voided_by=reviewer,
                                    void_judgment_id=log_id))
        if done.rowcount != 1:
            raise Conflict(f"sample {sample_id} of topic {topic!r} was already voided")
        chain_object(conn, "sample", int(sample_id), "voided")
    return load_samples(engine, topic, queue_name, sample_id=sample_id)[0]
