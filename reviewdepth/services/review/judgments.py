"""Recording judgments one by one, and reading the log."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Connection, Engine, insert, select

from reviewdepth.formats.errors import InputError
from reviewdepth.services.errors import Conflict, Invalid, NotFound
from reviewdepth.services.evidence import topic as evidence_topic
from reviewdepth.services.evidence.decision_words import checked_stage, decision_name, read_decision
from reviewdepth.services.evidence.screening import first_unknown_reason, unknown_reason_message
from reviewdepth.services.evidence.served_queues import ServedQueues
from reviewdepth.store import validation
from reviewdepth.store.chain import NewJudgment, append_judgments
from reviewdepth.store.evidence import chain_object
from reviewdepth.store.ingest import as_utc, db_time, utc_now
from reviewdepth.store.models import DEFAULT_STAGE, USER_ROLES, Judgment, Queue, Topic


@dataclass(frozen=True)
class JudgmentRecord:
    id: int
    topic: str
    doc_id: str
    label: str
    relevant: bool | None
    grade: int | None
    reviewer: str
    role: str
    source: str
    note: str | None
    recorded_at: datetime
    queue: str | None = None  # the queue it was served from (None: unknown, or the topic had no queue)
    decision: str = "include"  # include, exclude, maybe, skip, or graded (`decision_name`)
    reason: str | None = None
    stage: str = DEFAULT_STAGE

    def as_dict(self) -> dict[str, object]:
        out = dict(self.__dict__)
        out["recorded_at"] = as_utc(self.recorded_at).isoformat()
        return out


@dataclass(frozen=True)
class Decision:
    """One judgment as checked before it is recorded: the document, the label as given (stripped) and what it
    means (relevant, grade), the role and the note."""

    doc_id: str
    label: str
    relevant: bool | None
    grade: int | None
    role: str
    note: str | None
    kind: str | None = None  # ``maybe`` / ``skip`` (judgments.decision); None: ``relevant`` decides
    reason: str | None = None  # an exclude's reason (checked against the topic's list by `check_reasons`)
    stage: str | None = None  # ``full-text``; None: the default stage (title-abstract)


def checked_decision(doc_id: str, label: str, *, role: str, note: str | None, level: int,
                     field: Callable[[str], str], reason: str | None = None,
                     stage: str | None = None) -> Decision:
    """One judgment checked as every door records it: the document id, the role, the label (its text, then its
    meaning at ``level``: relevant when its grade reaches it; or a maybe or a skip, `read_decision`), the note,
    the reason (only an exclude may carry one; whether the topic lists it is checked where the judgment is
    recorded, `check_reasons`) and the stage. ``field`` names a field for the message (``"label"`` →
    ``"judgments[2].label"``); the message is "<field>: <why>", `Invalid`."""
    if not doc_id.strip():
        raise Invalid(f"{field('doc_id')}: must not be empty")
    doc_id = validation.doc_id(doc_id, field("doc_id"))
    if role not in USER_ROLES:
        raise Invalid(f"{field('role')}: must be one of {', '.join(USER_ROLES)}, not {role!r}")
    label = validation.label_text(label.strip(), field("label"))
    note = None if note is None else validation.free_text(note, field("note"))
    try:
        kind, relevant, grade = read_decision(label, "label", 0, "label", level)
    except InputError as exc:
        raise Invalid(f"{field('label')}: {exc.message}") from None
    if kind is None and relevant is None and grade is None:
        raise Invalid(f"{field('label')}: must not be empty")
    if reason is not None and not reason.strip():
        reason = None
    if reason is not None:
        reason = validation.reason_text(reason.strip(), field("reason"))
        if kind is not None or relevant is not False:
            raise Invalid(f"{field('reason')}: only an exclude carries a reason, and label {label!r} is "
                          f"{decision_name(kind, relevant, grade)!r}")
    return Decision(doc_id, label, relevant, grade, role, note, kind, reason, checked_stage(stage, field("stage")))


def check_reasons(conn: Connection, topic_id: int, topic: str, decisions: Sequence[Decision],
                  field: Callable[[int], Callable[[str], str]]) -> None:
    """Refuse (`Invalid`, naming ``field(i)("reason")``) the first decision whose reason is not in the topic's
    list of exclusion reasons (`reviewdepth.services.review.screening`)."""
    unknown = first_unknown_reason(conn, topic_id, [d.reason for d in decisions])
    if unknown is not None:
        reason = decisions[unknown].reason
        assert reason is not None
        raise Invalid(f"{field(unknown)('reason')}: {unknown_reason_message(topic, reason)}")


def new_judgment(topic_id: int, d: Decision, reviewer: str, source: str, now: datetime,
                 import_id: int | None = None) -> NewJudgment:
    """The log row of a checked decision."""
    return NewJudgment(topic_id, d.doc_id, d.label, d.relevant, d.grade, reviewer, d.role, source, d.note, now,
                       import_id, d.kind, d.reason, d.stage)


def _said(field: str) -> str:
    """A field as the CLI's messages name it."""
    return "document id" if field == "doc_id" else field


def _numbered(position: int) -> Callable[[str], str]:
    """The fields of the ``position``-th judgment of a list, as the CLI's messages name them."""
    return lambda field: f"judgment {position}: {_said(field)}"


def topic_id_of(engine: Engine, topic: str) -> int:
    with engine.connect() as conn:
        return evidence_topic.topic_id(conn, topic)


def record_judgment(engine: Engine, topic: str, doc_id: str, label: str, *, reviewer: str, role: str = "review",
                    note: str | None = None, source: str = "cli", level: int = 1,
                    create_topic: bool = False, queue: str | None = None,
                    allow_unqueued: bool = False, reason: str | None = None,
                    stage: str | None = None) -> JudgmentRecord:
    """Append one judgment (its own transaction). ``label``: 1/0, yes/no, relevant/irrelevant, include/exclude,
    an integer grade (relevant when >= ``level``), maybe or skip. ``reason``: an exclude's reason, from the
    topic's list; ``stage``: title-abstract (default) or full-text. ``queue``: the queue it was served from
    (default: the topic's newest); a document in no queue of the topic is refused unless ``allow_unqueued``
    (`reviewdepth.services.evidence.served_queues`)."""
    topic = validation.topic_name(topic)
    reviewer = validation.reviewer_name(reviewer)
    decision = checked_decision(doc_id, label, role=role, note=note, level=level, field=_said, reason=reason,
                                stage=stage)
    doc_id, label, relevant, grade, note = (decision.doc_id, decision.label, decision.relevant, decision.grade,
                                            decision.note)
    with engine.begin() as conn:
        topic_row = conn.execute(select(Topic.id).where(Topic.name == topic)).scalar_one_or_none()
        if topic_row is None:
            if not create_topic:
                raise NotFound(f"unknown topic {topic!r}")
            topic_row = conn.execute(insert(Topic).values(name=topic, created_at=utc_now())
                                     .returning(Topic.id)).scalar_one()
            chain_object(conn, "topic", int(topic_row))
        check_reasons(conn, int(topic_row), topic, [decision], lambda _: _said)
        served = ServedQueues(conn, int(topic_row), topic)
        queue_id = served.queue_id(queue)
        served.require_queued([doc_id], allow_unqueued=allow_unqueued)
        now = utc_now()
        [new_id] = append_judgments(conn, [new_judgment(int(topic_row), decision, reviewer, source, now)],
                                    return_ids=True, queue_ids=[queue_id])
    queue_name = next((n for i, n in served.queues if i == queue_id), None)
    return JudgmentRecord(new_id, topic, doc_id, label, relevant, grade, reviewer, role, source, note,
                          now, queue_name, decision_name(decision.kind, relevant, grade), decision.reason,
                          decision.stage or DEFAULT_STAGE)


def parse_as_of(engine: Engine, value: str | None) -> tuple[int | None, datetime | None]:
    """``--as-of`` (`reviewdepth.services.evidence.topic.parse_as_of`) in a connection of its own."""
    with engine.connect() as conn:
        return evidence_topic.parse_as_of(conn, value)


def recorded_judgment(engine: Engine, judgment_id: int) -> int:
    """`reviewdepth.services.evidence.topic.recorded_judgment` in a connection of its own."""
    with engine.connect() as conn:
        return evidence_topic.recorded_judgment(conn, judgment_id)


def judgment_id_as_of(engine: Engine, value: str | None, command: str) -> int | None:
    """``--as-of`` for commands that take only a judgment id."""
    with engine.connect() as conn:
        return evidence_topic.judgment_id_as_of(conn, value, command)


def list_judgments(engine: Engine, topic: str, *, as_of: str | None = None, reviewer: str | None = None,
                   offset: int = 0, limit: int | None = None) -> list[JudgmentRecord]:
    """The log of a topic in recording order, up to ``as_of`` (judgment id or time)."""
    with engine.connect() as conn:
        topic_id = evidence_topic.topic_id(conn, topic)
        as_of_id, as_of_time = evidence_topic.parse_as_of(conn, as_of)
        stmt = select(Judgment.id, Judgment.doc_id, Judgment.label, Judgment.relevant, Judgment.grade,
                      Judgment.reviewer, Judgment.role, Judgment.source, Judgment.note, Judgment.recorded_at,
                      Judgment.queue_id, Judgment.decision, Judgment.reason, Judgment.stage
                      ).where(Judgment.topic_id == topic_id).order_by(Judgment.id)
        if as_of_id is not None:
            stmt = stmt.where(Judgment.id <= as_of_id)
        if as_of_time is not None:
            stmt = stmt.where(Judgment.recorded_at <= db_time(conn, as_of_time))
        if reviewer:
            stmt = stmt.where(Judgment.reviewer == validation.reviewer_name(reviewer))
        stmt = stmt.offset(offset)
        if limit is not None:
            stmt = stmt.limit(limit)
        rows = conn.execute(stmt).all()
        names = dict(conn.execute(select(Queue.id, Queue.name).where(Queue.topic_id == topic_id)).all())
    return [JudgmentRecord(int(r[0]), topic, r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], as_utc(r[9]),
                           names.get(r[10]), decision_name(r[11], r[3], r[4]), r[12], r[13] or DEFAULT_STAGE)
            for r in rows]


def record_judgments(engine: Engine, topic: str, items: list[tuple[str, str]], *, reviewer: str,
                     role: str = "review", source: str = "cli", level: int = 1,
                     notes: list[str | None] | None = None, queue: str | None = None,
                     allow_unqueued: bool = False, reasons: list[str | None] | None = None,
                     stages: list[str | None] | None = None) -> list[int]:
    """Append many judgments ``(doc_id, label)`` in one transaction (all or nothing); returns their ids.
    ``queue`` and ``allow_unqueued`` as in `record_judgment`."""
    topic = validation.topic_name(topic)
    reviewer = validation.reviewer_name(reviewer)
    notes = notes or [None] * len(items)
    reasons = reasons or [None] * len(items)
    stages = stages or [None] * len(items)
    parsed = [checked_decision(doc_id, label, role=role, note=note, level=level, field=_numbered(position),
                               reason=reason, stage=stage)
              for position, ((doc_id, label), note, reason, stage) in enumerate(
                  zip(items, notes, reasons, stages, strict=True), start=1)]
    with engine.begin() as conn:
        topic_row = conn.execute(select(Topic.id).where(Topic.name == topic)).scalar_one_or_none()
        if topic_row is None:
            raise NotFound(f"unknown topic {topic!r}")
        check_reasons(conn, int(topic_row), topic, parsed, lambda i: _numbered(i + 1))
        served = ServedQueues(conn, int(topic_row), topic)
        queue_id = served.queue_id(queue)
        served.require_queued([p.doc_id for p in parsed], allow_unqueued=allow_unqueued,
                              refuse=lambda i, message: Conflict(f"judgment {i + 1}: {message}"))
        now = utc_now()
        return append_judgments(conn, [new_judgment(int(topic_row), p, reviewer, source, now) for p in parsed],
                                return_ids=True, queue_ids=[queue_id] * len(parsed))
