"""SQLAlchemy 2 typed models of the review store.

Judgments are append-only: a document's current label is derived from its judgments by a named
resolution policy (`reviewdepth.store.labels`), never stored over.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

# the column lengths are the validators' (one declaration: what `validation` accepts is what a column holds)
from reviewdepth.store.validation import (
    DOC_ID_LENGTH,
    KEY_LENGTH,
    LABEL_LENGTH,
    QUEUE_LENGTH,
    REASON_LENGTH,
    REVIEWER_LENGTH,
    RUN_TAG_LENGTH,
    TOPIC_LENGTH,
)

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

# 64-bit keys; SQLite only auto-increments INTEGER PRIMARY KEY.
BigId = BigInteger().with_variant(Integer, "sqlite")

ORDERING_POLICIES = ("given", "trec_eval")
# Roles a user may give a judgment; ``void`` is written only by `reviewdepth.services.review.sample_void` and logs
# the voiding of a sample in the chain (doc_id ``sample:<id>``), never a judgment of a document. ``audit``: a
# document served from the topic's audit stream (`reviewdepth.services.review.audit_stream`).
USER_ROLES = ("review", "sample", "qc", "adjudication", "audit")
VOID_ROLE = "void"
ROLES = (*USER_ROLES, VOID_ROLE)
# What ``judgments.decision`` may hold (null: the decision is ``relevant``'s, include / exclude / a grade):
# ``maybe`` is recorded but decides no label (``relevant`` NULL); ``skip`` is logged and leaves the document
# unscreened. Screening stages: null is the default, ``title-abstract``. Conflict rules: null is ``rayyan``.
DECISION_KINDS = ("maybe", "skip")
# Written only by `reviewdepth dedupe --apply` (`reviewdepth.services.files.dedupe`): the record is a duplicate of
# another
# record of its topic, excluded as such under every label policy (`reviewdepth.store.labels`), never a vote.
DUPLICATE_DECISION = "duplicate"
# ... and its withdrawal (`reviewdepth dedupe --not-duplicate`): the record counts in its own right again.
DISTINCT_DECISION = "distinct"
MARKER_DECISIONS = (DUPLICATE_DECISION, DISTINCT_DECISION)
STAGES = ("title-abstract", "full-text")
DEFAULT_STAGE = "title-abstract"
FULL_TEXT_STAGE = "full-text"
CONFLICT_RULES = ("rayyan", "strict")
SCREENING_ROWS = "decision IS NOT NULL OR reason IS NOT NULL OR stage IS NOT NULL"
# ... as a term of a query's WHERE: in parentheses, or AND binds it to its neighbours (a bare ``topic_id = ? AND
# decision IS NOT NULL OR reason IS NOT NULL …`` reads every topic's rows that carry a reason)
SCREENING_FILTER = f"({SCREENING_ROWS})"
DEFAULT_CONFLICT_RULE = "rayyan"



# The partial indexes' predicate on PostgreSQL is attached by `postgresql_options`, which the engine factory calls
# for a PostgreSQL URL: a ``postgresql_where`` argument here would make SQLAlchemy load its PostgreSQL dialect
# (every driver module of it) on each import of the models, 60-100 ms of every SQLite command's start.
_POSTGRESQL_WHERE: list[tuple[Index, str]] = []


def _partial_index(name: str, *columns: str, where: str, unique: bool = False) -> Index:
    index = Index(name, *columns, unique=unique, sqlite_where=text(where))
    _POSTGRESQL_WHERE.append((index, where))
    return index


def postgresql_options() -> None:
    """Give the partial indexes their PostgreSQL predicate (idempotent; loads the PostgreSQL dialect)."""
    for index, where in _POSTGRESQL_WHERE:
        options = index.dialect_options["postgresql"]
        if options["where"] is None:
            options["where"] = text(where)


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)


class Topic(Base):
    """An information need; ``population_size`` is N, the documents in its collection, when known."""

    __tablename__ = "topics"

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    name: Mapped[str] = mapped_column(String(TOPIC_LENGTH), unique=True)
    population_size: Mapped[int | None] = mapped_column(BigInteger)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    # The judgment hash chain (`reviewdepth.store.chain`): how many judgments it links and the last hash.
    chain_length: Mapped[int] = mapped_column(BigInteger, server_default="0")
    chain_head: Mapped[str | None] = mapped_column(String(64))
    # Why the chain was found broken (by `audit verify`); writes are refused until an acknowledgement clears it.
    chain_broken: Mapped[str | None] = mapped_column(Text)
    # "random" when the team declared that it screened in a uniformly random order fixed in advance (then the
    # screened set is a random sample of the queue); null otherwise. Declared, never guessed.
    screening_order: Mapped[str | None] = mapped_column(String(20))
    # Which differing votes are a conflict (`reviewdepth.store.votes`): null = ``rayyan`` (exclude vs maybe is
    # not), ``strict`` (any difference is).
    conflict_rule: Mapped[str | None] = mapped_column(String(10))


class TopicReason(Base):
    """One reason a topic's excludes may carry (``reviewdepth topic reasons``); a judgment's ``reason`` is one."""

    __tablename__ = "exclusion_reasons"
    __table_args__ = (UniqueConstraint("topic_id", "reason", name="uq_exclusion_reasons_topic_id_reason"),)

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    topic_id: Mapped[int] = mapped_column(ForeignKey("topics.id", ondelete="CASCADE"))
    reason: Mapped[str] = mapped_column(String(REASON_LENGTH))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class TopicProtocolRow(Base):
    """A topic's protocol fields (``reviewdepth topic protocol``, ``PUT /topics/{t}/protocol``): what a TAR
    protocol or order asks the producing party to disclose, entered once per topic, as canonical JSON
    (`reviewdepth.report.protocol_model.TopicProtocol`). Chained with the topic (`reviewdepth.store.evidence`)."""

    __tablename__ = "topic_protocols"

    topic_id: Mapped[int] = mapped_column(ForeignKey("topics.id", ondelete="CASCADE"), primary_key=True)
    fields: Mapped[str] = mapped_column(Text)
    recorded_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    recorded_by: Mapped[str] = mapped_column(String(REVIEWER_LENGTH))


class RecordFields(Base):
    """The bibliographic fields of one of a topic's records (``reviewdepth import records``), kept only to find
    duplicates (`reviewdepth.formats.duplicates`): as given in the file, normalised when compared."""

    __tablename__ = "record_fields"

    topic_id: Mapped[int] = mapped_column(ForeignKey("topics.id", ondelete="CASCADE"), primary_key=True)
    doc_id: Mapped[str] = mapped_column(String(DOC_ID_LENGTH), primary_key=True)
    title: Mapped[str | None] = mapped_column(Text)
    year: Mapped[int | None] = mapped_column(Integer)
    doi: Mapped[str | None] = mapped_column(Text)
    pmid: Mapped[str | None] = mapped_column(String(40))
    first_author: Mapped[str | None] = mapped_column(Text)
    import_id: Mapped[int | None] = mapped_column(ForeignKey("imports.id"))


class TopicSummary(Base):
    """A topic's dashboard monitor as last built (`reviewdepth.services.answers.monitor`), for a new process to read
    instead
    of recomputing the queue: the report as JSON, under the settings it was built with, the topic's change marker
    then and the software that built it. Derived data: used only while all three still match, rebuilt otherwise."""

    __tablename__ = "topic_summaries"

    topic_id: Mapped[int] = mapped_column(ForeignKey("topics.id", ondelete="CASCADE"), primary_key=True)
    settings: Mapped[str] = mapped_column(String(100), primary_key=True)
    marker: Mapped[str] = mapped_column(Text)
    software: Mapped[str] = mapped_column(String(40))
    body: Mapped[str] = mapped_column(Text)
    recorded_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class ImportRecord(Base):
    """One imported file: kind, name, SHA-256 digest, row counts, time."""

    __tablename__ = "imports"

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    kind: Mapped[str] = mapped_column(String(20))
    file_name: Mapped[str] = mapped_column(Text)
    digest: Mapped[str] = mapped_column(String(64), index=True)
    rows: Mapped[int] = mapped_column(BigInteger)
    topics: Mapped[int] = mapped_column(Integer)
    options: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class ChainAcknowledgement(Base):
    """An admin's acknowledgement of a broken judgment chain: the log is accepted as it is up to ``seq`` and the
    chain goes on from ``chain_hash``, itself linked to the stored hash of judgment ``seq`` (``previous_head``),
    so the acknowledgement is part of the chain (`reviewdepth.store.chain.acknowledge`)."""

    __tablename__ = "chain_acknowledgements"

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    topic_id: Mapped[int] = mapped_column(ForeignKey("topics.id", ondelete="CASCADE"), index=True)
    seq: Mapped[int] = mapped_column(BigInteger)
    previous_head: Mapped[str] = mapped_column(String(64))
    broken: Mapped[str] = mapped_column(Text)
    reason: Mapped[str] = mapped_column(Text)
    reviewer: Mapped[str] = mapped_column(String(REVIEWER_LENGTH))
    recorded_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    chain_hash: Mapped[str] = mapped_column(String(64))


class Queue(Base):
    """A named ranking of a topic's documents (one per system or re-ranking round).

    ``ordering`` records how ranks were assigned: ``given`` (file or request order) or ``trec_eval`` (score
    descending, ties by docno descending, scores as float32). ``threshold_rank`` is the run's own stopping
    point when it declares one (CLEF TAR threshold flag, or the last shown document before NS entries).
    """

    __tablename__ = "queues"
    __table_args__ = (UniqueConstraint("topic_id", "name", name="uq_queues_topic_id_name"),)

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    topic_id: Mapped[int] = mapped_column(ForeignKey("topics.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(QUEUE_LENGTH))
    ordering: Mapped[str] = mapped_column(String(20))
    run_tag: Mapped[str | None] = mapped_column(String(RUN_TAG_LENGTH))
    threshold_rank: Mapped[int | None] = mapped_column(BigInteger)
    size: Mapped[int] = mapped_column(BigInteger)
    source: Mapped[str] = mapped_column(String(100))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    # Derived, written with the entries: zlib-compressed doc ids in rank order, one per line, so a queue of
    # millions loads in one read. NULL when a doc id contains whitespace (then entries are read row by row).
    ranking_blob: Mapped[bytes | None] = mapped_column(LargeBinary, deferred=True)


class QueueEntry(Base):
    """One ranked document of a queue. ``flag`` keeps a run's per-line action (CLEF AF/NF/NS or 0/1)."""

    __tablename__ = "queue_entries"
    __table_args__ = (UniqueConstraint("queue_id", "doc_id", name="uq_queue_entries_queue_id_doc_id"),)

    queue_id: Mapped[int] = mapped_column(ForeignKey("queues.id", ondelete="CASCADE"), primary_key=True)
    rank: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    doc_id: Mapped[str] = mapped_column(String(DOC_ID_LENGTH))
    score: Mapped[float | None] = mapped_column(Float)
    flag: Mapped[str | None] = mapped_column(String(10))


class Judgment(Base):
    """Append-only log entry: one reviewer's label for one document of a topic.

    ``label`` is the value as given; ``relevant`` its binary reading (NULL = seen but not judged, e.g. a
    negative qrels value); ``grade`` the integer level when the label is numeric. ``source`` is ``cli``,
    ``api`` or ``import:<sha256>``. ``seq`` numbers the topic's judgments 1, 2, … and ``chain_hash`` links each
    to the previous one (`reviewdepth.store.chain`).
    """

    __tablename__ = "judgments"
    __table_args__ = (
        Index("ix_judgments_topic_id_doc_id", "topic_id", "doc_id"),
        # the log of a topic in recording order: sequential reads for label resolution
        Index("ix_judgments_topic_id_id", "topic_id", "id"),
        UniqueConstraint("topic_id", "seq", name="uq_judgments_topic_id_seq"),
        # the few judgments with a maybe/skip, a reason or a stage (PRISMA's decision counts read only these)
        _partial_index("ix_judgments_screening", "topic_id", where=SCREENING_ROWS),
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    topic_id: Mapped[int] = mapped_column(ForeignKey("topics.id", ondelete="CASCADE"))
    doc_id: Mapped[str] = mapped_column(String(DOC_ID_LENGTH))
    label: Mapped[str] = mapped_column(String(LABEL_LENGTH))
    relevant: Mapped[bool | None] = mapped_column(Boolean)
    grade: Mapped[int | None] = mapped_column(Integer)
    reviewer: Mapped[str] = mapped_column(String(REVIEWER_LENGTH))
    role: Mapped[str] = mapped_column(String(20))
    source: Mapped[str] = mapped_column(String(100))
    note: Mapped[str | None] = mapped_column(Text)
    recorded_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    import_id: Mapped[int | None] = mapped_column(ForeignKey("imports.id"), index=True)
    seq: Mapped[int] = mapped_column(BigInteger)
    chain_hash: Mapped[str] = mapped_column(String(64))
    # The queue the judgment was served from (not part of the chain hash); NULL when unknown or no queue. Not
    # indexed (revision 0017): no query looks judgments up by queue, and queues are never deleted.
    queue_id: Mapped[int | None] = mapped_column(ForeignKey("queues.id", ondelete="SET NULL"))
    # Screening decisions (revision 0015; in the chain hash only when set): ``decision`` ``maybe``/``skip``
    # (`DECISION_KINDS`; null: include/exclude/grade as ``relevant`` says), ``reason`` an exclude's reason from
    # its topic's list, ``stage`` ``full-text`` (null: ``title-abstract``).
    decision: Mapped[str | None] = mapped_column(String(10))
    reason: Mapped[str | None] = mapped_column(String(REASON_LENGTH))
    stage: Mapped[str | None] = mapped_column(String(20))


class Sample(Base):
    """A random sample drawn without replacement from a stated frame, kept so estimates can be reproduced.

    ``frame`` is ``all`` (every entry of the queue), ``unreviewed`` (entries below the reviewed prefix at draw
    time; ``below_rank`` records that prefix), ``below-rank`` (entries deeper than ``below_rank``), ``ranks``
    (a rank band ``from_rank``..``to_rank``, a stratum) or ``judged`` (already-judged documents, for QC).
    """

    __tablename__ = "samples"

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    topic_id: Mapped[int] = mapped_column(ForeignKey("topics.id", ondelete="CASCADE"), index=True)
    queue_id: Mapped[int] = mapped_column(ForeignKey("queues.id", ondelete="CASCADE"), index=True)
    frame: Mapped[str] = mapped_column(String(20))
    below_rank: Mapped[int | None] = mapped_column(BigInteger)
    from_rank: Mapped[int | None] = mapped_column(BigInteger)
    to_rank: Mapped[int | None] = mapped_column(BigInteger)
    frame_size: Mapped[int] = mapped_column(BigInteger)
    size: Mapped[int] = mapped_column(BigInteger)
    seed: Mapped[int] = mapped_column(BigInteger)
    as_of: Mapped[int | None] = mapped_column(BigInteger)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    # The queue's size at draw time (queues never change once stored, so queue_id + queue_size fix the frame).
    queue_size: Mapped[int | None] = mapped_column(BigInteger)
    # A voided sample is kept for the record but used by no estimate; ``void_judgment_id`` is the chain row
    # (role ``void``) that logs the void.
    voided_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    void_reason: Mapped[str | None] = mapped_column(Text)
    voided_by: Mapped[str | None] = mapped_column(String(REVIEWER_LENGTH))
    void_judgment_id: Mapped[int | None] = mapped_column(ForeignKey("judgments.id"))


class SampleItem(Base):
    """One drawn document, in draw order."""

    __tablename__ = "sample_items"
    __table_args__ = (UniqueConstraint("sample_id", "doc_id", name="uq_sample_items_sample_id_doc_id"),)

    sample_id: Mapped[int] = mapped_column(ForeignKey("samples.id", ondelete="CASCADE"), primary_key=True)
    position: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    doc_id: Mapped[str] = mapped_column(String(DOC_ID_LENGTH))
    rank: Mapped[int | None] = mapped_column(BigInteger)


class AuditStream(Base):
    """A seeded random permutation of a queue's distinct documents, served to reviewers beside the ranked queue
    (`reviewdepth.services.review.audit_stream`). Nothing is stored per document: the order is recomputed from ``seed``
    and the sorted doc ids (checked against ``population_digest``), so a re-ranking does not change it.

    ``every_k`` (one audit document after every k ranked documents reviewed) or ``rate`` (the audit share of all
    documents served), exactly one set; the pace may change mid-review (``pace_from_reviewed``/``pace_from_served``).
    ``position``: permutation elements passed so far; ``served``: how many of
    them were served because they still needed a judgment (the others were already judged). ``as_of``: the
    topic's last judgment id when the stream was created. At most one stream per topic is not voided.
    """

    __tablename__ = "audit_streams"
    __table_args__ = (
        CheckConstraint("(every_k IS NULL) <> (rate IS NULL)", name="one_pace"),
        _partial_index("uq_audit_streams_active_topic", "topic_id", unique=True, where="voided_at IS NULL"),
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    topic_id: Mapped[int] = mapped_column(ForeignKey("topics.id", ondelete="CASCADE"), index=True)
    queue_id: Mapped[int | None] = mapped_column(ForeignKey("queues.id", ondelete="SET NULL"), index=True)
    seed: Mapped[int] = mapped_column(BigInteger)
    population_size: Mapped[int] = mapped_column(BigInteger)
    population_digest: Mapped[str] = mapped_column(String(64))
    every_k: Mapped[int | None] = mapped_column(Integer)
    rate: Mapped[float | None] = mapped_column(Float)
    position: Mapped[int] = mapped_column(BigInteger, server_default="0")
    served: Mapped[int] = mapped_column(BigInteger, server_default="0")
    as_of: Mapped[int | None] = mapped_column(BigInteger)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    created_by: Mapped[str] = mapped_column(String(REVIEWER_LENGTH))
    voided_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    void_reason: Mapped[str | None] = mapped_column(Text)
    voided_by: Mapped[str | None] = mapped_column(String(REVIEWER_LENGTH))
    # the reviewed and served counts when the pace was last set: due = pace_from_served + the pace's count over the
    # documents reviewed since (0 and 0 for a pace set at creation)
    pace_from_reviewed: Mapped[int] = mapped_column(BigInteger, server_default="0")
    pace_from_served: Mapped[int] = mapped_column(BigInteger, server_default="0")


class ApiKey(Base):
    """A bearer key of the HTTP API: only the SHA-256 digest of the secret is stored, never the key itself.

    ``scope`` is ``read``, ``write`` (read + record) or ``admin`` (everything); ``prefix`` is the key's first
    characters so people can tell their keys apart in ``keys list``. A revoked key stays for the record.
    """

    __tablename__ = "api_keys"

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    reviewer: Mapped[str] = mapped_column(String(REVIEWER_LENGTH))
    scope: Mapped[str] = mapped_column(String(20))
    prefix: Mapped[str] = mapped_column(String(20))
    digest: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    revoked_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class ApiIdempotency(Base):
    """The first result of a write sent with an idempotency key, per reviewer: a retry returns it unchanged.

    ``request_digest`` is the SHA-256 of the canonical request, so the same key with a different body is refused.
    """

    __tablename__ = "api_idempotency"
    __table_args__ = (UniqueConstraint("reviewer", "key", name="uq_api_idempotency_reviewer_key"),)

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    reviewer: Mapped[str] = mapped_column(String(REVIEWER_LENGTH))
    key: Mapped[str] = mapped_column(String(KEY_LENGTH))
    topic_id: Mapped[int] = mapped_column(ForeignKey("topics.id", ondelete="CASCADE"), index=True)
    request_digest: Mapped[str] = mapped_column(String(64))
    response: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


JOB_STATUSES = ("queued", "running", "done", "failed", "cancelled")


class PortfolioTopic(Base):
    """A completed (fully judged) topic marked as part of the team's reference set: the heuristic stopping rules
    are calibrated by replaying these reviews (`reviewdepth.services.simulation.portfolio`)."""

    __tablename__ = "portfolio_topics"

    topic_id: Mapped[int] = mapped_column(ForeignKey("topics.id", ondelete="CASCADE"), primary_key=True)
    added_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    added_by: Mapped[str] = mapped_column(String(REVIEWER_LENGTH))


class Calibration(Base):
    """One replay of the heuristic stopping rules over the portfolio: the settings it ran with and the per-rule
    summary (failure rate with its interval, cost), both as JSON. ``target`` is the exact decimal the rules aimed
    at, so a report shows the calibration only beside rules evaluated for the same target."""

    __tablename__ = "calibrations"

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    target: Mapped[str] = mapped_column(String(40))
    confidence: Mapped[float] = mapped_column(Float)
    topic_count: Mapped[int] = mapped_column(Integer)
    settings: Mapped[str] = mapped_column(Text)
    summary: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    created_by: Mapped[str] = mapped_column(String(REVIEWER_LENGTH))


class SimulationJob(Base):
    """A simulation run in the background for the API (`reviewdepth.services.simulation.simulation_jobs`): ``request``
    and
    ``result`` are JSON; ``error`` the one-line reason of a failed job; progress counts replayed topics;
    ``created_by_key_id`` the API key that posted it (only it and admin keys see the job)."""

    __tablename__ = "simulation_jobs"
    __table_args__ = (
        CheckConstraint("status IN ('queued', 'running', 'done', 'failed', 'cancelled', 'interrupted')",
                        name="status"),
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    status: Mapped[str] = mapped_column(String(20))
    request: Mapped[str] = mapped_column(Text)
    result: Mapped[str | None] = mapped_column(Text)
    error: Mapped[str | None] = mapped_column(Text)
    created_by: Mapped[str] = mapped_column(String(REVIEWER_LENGTH))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    started_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    progress_done: Mapped[int] = mapped_column(BigInteger, server_default="0")
    progress_total: Mapped[int | None] = mapped_column(BigInteger)
    created_by_key_id: Mapped[int | None] = mapped_column(ForeignKey("api_keys.id", ondelete="SET NULL"))
    # renewed every few seconds by the server holding the job while it is queued or running; a stale one means that
    # server died without marking it (`reviewdepth.services.simulation.simulation_jobs.expire_stale_jobs`)
    heartbeat_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class EvidenceEvent(Base):
    """One event of the evidence chain (`reviewdepth.store.evidence`): a topic, queue, sample or audit stream as
    the application stored or changed it. No foreign key: the event outlives the object it proves."""

    __tablename__ = "evidence_events"

    seq: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    kind: Mapped[str] = mapped_column(String(10))
    object_id: Mapped[int] = mapped_column(BigInteger)
    topic: Mapped[str] = mapped_column(String(TOPIC_LENGTH))
    action: Mapped[str] = mapped_column(String(10))
    state: Mapped[str] = mapped_column(Text)
    recorded_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    chain_hash: Mapped[str] = mapped_column(String(64))


class EvidenceChain(Base):
    """The evidence chain's length and head: one row (id 1), also the lock its writers take."""

    __tablename__ = "evidence_chain"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    length: Mapped[int] = mapped_column(BigInteger)
    head: Mapped[str] = mapped_column(String(64))
