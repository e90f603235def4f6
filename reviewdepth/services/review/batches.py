"""Recording a batch of judgments from one reviewer in one transaction, optionally under an idempotency key:
the same key again (same reviewer, same request) returns the first result and records nothing new, until the
record expires (``idempotency_ttl_seconds`` after it was made): an expired key is a new key."""

from __future__ import annotations

import hashlib
import json
from array import array
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from json.encoder import encode_basestring  # type: ignore[attr-defined]
from typing import overload

from sqlalchemy import Engine, delete, insert, select, update
from sqlalchemy.exc import IntegrityError

from reviewdepth.services.errors import Conflict, Invalid, NotFound
from reviewdepth.services.evidence.served_queues import API_HINT, ServedQueues
from reviewdepth.services.review.judgments import Decision, check_reasons, checked_decision, new_judgment
from reviewdepth.store import validation
from reviewdepth.store.chain import NewJudgment, SharedJudgments, append_judgments
from reviewdepth.store.ingest import as_utc, utc_now
from reviewdepth.store.models import ApiIdempotency
from reviewdepth.store.queue_membership import topic_and_queued

MAX_KEY_LENGTH = 200
IDEMPOTENCY_TTL_SECONDS = 24 * 3600.0  # default lifetime of an idempotency record (REVIEWDEPTH_IDEMPOTENCY_TTL_SECONDS)


@dataclass(frozen=True)
class BatchItem:
    doc_id: str
    label: str
    role: str = "review"
    note: str | None = None
    queue: str | None = None  # the queue it was served from (default: the batch's queue, else the newest)
    reason: str | None = None  # an exclude's reason, from the topic's list
    stage: str | None = None  # title-abstract (default) or full-text


Shape = tuple[str, str, str | None, str | None, str | None, str | None]  # label, role, note, queue, reason, stage


class BatchColumns(Sequence[BatchItem]):
    """A batch held as columns: each document id, and for each judgment the index of its *shape* (label, role,
    note, queue, reason, stage) in a list of the distinct shapes. A 300,000-judgment request holds a handful of
    shapes, so the batch costs its document ids and four bytes a judgment, not an object per judgment; the
    `BatchItem` at a position is made when asked for. `record_batch` reads the columns directly."""

    def __init__(self) -> None:
        self.doc_ids: list[str] = []
        self.shapes: list[Shape] = []
        self.shape_of = array("I")
        self._known: dict[Shape, int] = {}

    def add(self, item: BatchItem) -> None:
        shape = (item.label, item.role, item.note, item.queue, item.reason, item.stage)
        index = self._known.get(shape)
        if index is None:
            index = self._known[shape] = len(self.shapes)
            self.shapes.append(shape)
        self.doc_ids.append(item.doc_id)
        self.shape_of.append(index)

    def __len__(self) -> int:
        return len(self.doc_ids)

    @overload
    def __getitem__(self, position: int) -> BatchItem: ...

    @overload
    def __getitem__(self, position: slice) -> Sequence[BatchItem]: ...

    def __getitem__(self, position: int | slice) -> BatchItem | Sequence[BatchItem]:
        if isinstance(position, slice):
            return [self[i] for i in range(*position.indices(len(self)))]
        label, role, note, queue, reason, stage = self.shapes[self.shape_of[position]]
        return BatchItem(self.doc_ids[position], label, role, note, queue, reason, stage)

    def __iter__(self) -> Iterator[BatchItem]:
        for position in range(len(self.doc_ids)):
            yield self[position]

    def first_of_each_shape(self) -> list[int]:
        """The position of each shape's first judgment, in the order of ``shapes``."""
        first = [-1] * len(self.shapes)
        left = len(self.shapes)
        for position, index in enumerate(self.shape_of):
            if first[index] < 0:
                first[index] = position
                left -= 1
                if not left:
                    break
        return first


class _ColumnDecisions(Sequence[Decision]):
    """The checked decisions of a `BatchColumns` whose shapes each checked once: the decision of a judgment is
    its shape's, with the judgment's document (made when asked for)."""

    def __init__(self, items: BatchColumns, decisions: list[Decision]) -> None:
        self.items = items
        self.decisions = decisions

    def __len__(self) -> int:
        return len(self.items)

    @overload
    def __getitem__(self, position: int) -> Decision: ...

    @overload
    def __getitem__(self, position: slice) -> Sequence[Decision]: ...

    def __getitem__(self, position: int | slice) -> Decision | Sequence[Decision]:
        if isinstance(position, slice):
            return [self[i] for i in range(*position.indices(len(self)))]
        d = self.decisions[self.items.shape_of[position]]
        return Decision(self.items.doc_ids[position], d.label, d.relevant, d.grade, d.role, d.note, d.kind, d.reason,
                        d.stage)

    def __iter__(self) -> Iterator[Decision]:
        for position in range(len(self.items)):
            yield self[position]

    def columns(self) -> tuple[list[str], list[bool | None], list[int | None]]:
        """The label, relevance and grade of every decision (a reference a judgment, no object)."""
        shape_of = self.items.shape_of
        labels = [d.label for d in self.decisions]
        relevant = [d.relevant for d in self.decisions]
        grades = [d.grade for d in self.decisions]
        return ([labels[i] for i in shape_of], [relevant[i] for i in shape_of], [grades[i] for i in shape_of])


@dataclass(frozen=True)
class BatchResult:
    ids: list[int]
    replayed: bool


def _validated(items: Sequence[BatchItem], level: int) -> tuple[Sequence[Decision], list[Decision]]:
    """The checked decision of every item, and decisions that between them hold every (role, note, kind,
    reason, stage) of the batch (all of them, or one per distinct shape: `_validated_plain`), for the checks
    of the whole batch that need no document."""
    if not items:
        raise Invalid("judgments: send at least one judgment")
    plain = _validated_columns(items, level) if isinstance(items, BatchColumns) else _validated_plain(items, level)
    if plain is not None:
        return plain
    parsed = [checked_decision(item.doc_id, item.label, role=item.role, note=item.note, level=level,
                               field=_item(i), reason=item.reason, stage=item.stage) for i, item in enumerate(items)]
    return parsed, parsed


def _validated_plain(items: Sequence[BatchItem], level: int) -> tuple[list[Decision], list[Decision]] | None:
    """What `_validated` returns, for a batch whose documents are plain identifiers (`validation.all_plain`):
    each distinct (label, role, note, reason, stage) is checked once, by `checked_decision` as every door
    checks it, not once per judgment (a 1,000-judgment batch has a handful). None when any check fails: the
    caller then checks judgment by judgment, so the error names the first bad one."""
    if not validation.all_plain([item.doc_id for item in items], validation.DOC_ID_LENGTH):
        return None
    checked: dict[tuple[str, str, str | None, str | None, str | None], Decision] = {}
    out = []
    for position, item in enumerate(items):
        shape = (item.label, item.role, item.note, item.reason, item.stage)
        known = checked.get(shape)
        if known is None:
            try:
                known = checked[shape] = checked_decision(item.doc_id, item.label, role=item.role, note=item.note,
                                                          level=level, field=_item(position), reason=item.reason,
                                                          stage=item.stage)
            except (Invalid, validation.InvalidValue):
                return None
        out.append(known if known.doc_id == item.doc_id else Decision(
            item.doc_id, known.label, known.relevant, known.grade, known.role, known.note, known.kind, known.reason,
            known.stage))
    return out, list(checked.values())


def _validated_columns(items: BatchColumns, level: int) -> tuple[Sequence[Decision], list[Decision]] | None:
    """`_validated_plain` for columns: each shape checked once, as its first judgment (with that judgment's
    document); None when a check fails, for the judgment-by-judgment check that names the first bad one."""
    if not validation.all_plain(items.doc_ids, validation.DOC_ID_LENGTH):
        return None
    decisions = []
    for position, (label, role, note, _queue, reason, stage) in zip(items.first_of_each_shape(), items.shapes,
                                                                    strict=True):
        try:
            decisions.append(checked_decision(items.doc_ids[position], label, role=role, note=note, level=level,
                                              field=_item(position), reason=reason, stage=stage))
        except (Invalid, validation.InvalidValue):
            return None
    return _ColumnDecisions(items, decisions), decisions


def _item(i: int) -> Callable[[str], str]:
    """The fields of the request's ``i``-th judgment, as the API names them (``judgments[i].label``)."""
    return lambda field: f"judgments[{i}].{field}"


def _request_digest(topic: str, items: Sequence[BatchItem], queue: str | None = None,
                    allow_unqueued: bool = False) -> str:
    if isinstance(items, BatchColumns):
        return _columns_digest(topic, items, queue, allow_unqueued)
    return _listed_digest(topic, items, queue, allow_unqueued)


def _columns_digest(topic: str, items: BatchColumns, queue: str | None, allow_unqueued: bool) -> str:
    """`_listed_digest` of the same judgments, hashed as the canonical text is made: the same text, a block
    of judgments at a time, with no list per judgment (``json.dumps`` of a list is ``[`` + its items' texts
    joined by ``, `` + ``]``)."""
    def dumped(value: object) -> str:
        return json.dumps(value, ensure_ascii=False)

    shapes = items.shapes
    queued = queue is not None or allow_unqueued or any(shape[3] is not None for shape in shapes)
    screened = any(shape[4] is not None or shape[5] is not None for shape in shapes)
    digest = hashlib.sha256()

    def listed(texts: list[str], with_document: bool) -> None:
        # each judgment's text: its shape's (`texts`), after ``["<doc_id>", `` when ``with_document``
        digest.update(b"[")
        doc_ids, shape_of = items.doc_ids, items.shape_of
        for start in range(0, len(doc_ids), 4096):
            block = range(start, min(len(doc_ids), start + 4096))
            text = ", ".join(f"[{encode_basestring(doc_ids[i])}, {texts[shape_of[i]]}" for i in block) \
                if with_document else ", ".join(texts[shape_of[i]] for i in block)
            digest.update(((", " if start else "") + text).encode("utf-8"))
        digest.update(b"]")

    digest.update(f"[{dumped(topic)}, ".encode())
    listed([dumped(list(shape[:3]))[1:] for shape in shapes], True)  # (the shape's list without its "[")
    if queued or screened:
        digest.update(b", ")
        listed([dumped(shape[3]) for shape in shapes], False)
        digest.update(f", {dumped(queue)}, {dumped(allow_unqueued)}".encode())
    if screened:
        digest.update(b", ")
        listed([dumped([shape[4], shape[5]]) for shape in shapes], False)
    digest.update(b"]")
    return digest.hexdigest()


def _listed_digest(topic: str, items: Sequence[BatchItem], queue: str | None = None,
                   allow_unqueued: bool = False) -> str:
    # the fields added with revision 0005 enter only when used, so digests stored before it still match
    extra: list[object] = [[i.queue for i in items], queue, allow_unqueued] if queue is not None or \
        allow_unqueued or any(i.queue is not None for i in items) else []
    # and so do those of revision 0015
    if any(i.reason is not None or i.stage is not None for i in items):
        extra = [*(extra or [[i.queue for i in items], queue, allow_unqueued]), [[i.reason, i.stage] for i in items]]
    canonical = json.dumps([topic, [[i.doc_id, i.label, i.role, i.note] for i in items], *extra],
                           ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _replay(engine: Engine, reviewer: str, key: str, digest: str, cutoff: datetime | None) -> BatchResult | None:
    """The stored result of ``key``, or None when there is none or it was made before ``cutoff`` (expired)."""
    with engine.connect() as conn:
        row = conn.execute(select(ApiIdempotency.request_digest, ApiIdempotency.response,
                                  ApiIdempotency.created_at).where(
            ApiIdempotency.reviewer == reviewer, ApiIdempotency.key == key)).first()
    if row is None or (cutoff is not None and as_utc(row[2]) < cutoff):
        return None
    if row[0] != digest:
        raise Conflict(f"idempotency_key {key!r} was already used by {reviewer!r} for a different request")
    return BatchResult([int(i) for i in json.loads(row[1])], replayed=True)


def record_batch(engine: Engine, topic: str, items: Sequence[BatchItem], *, reviewer: str, source: str = "api",
                 idempotency_key: str | None = None, level: int = 1, queue: str | None = None,
                 allow_unqueued: bool = False, unqueued_hint: str = API_HINT,
                 idempotency_ttl_seconds: float | None = IDEMPOTENCY_TTL_SECONDS) -> BatchResult:
    """Append ``items`` as ``reviewer``'s judgments (all or nothing) and return their ids in request order.

    Each is recorded as served from its item's queue, else ``queue``, else the topic's newest queue; a document
    in no queue of the topic refuses the batch (naming ``judgments[i]``) unless ``allow_unqueued``."""
    parsed, distinct = _validated(items, level)
    topic = validation.topic_name(topic)
    reviewer = validation.reviewer_name(reviewer)
    key = None if idempotency_key is None else validation.key_name(idempotency_key)
    digest = ""
    cutoff = None  # records made before it have expired
    if idempotency_ttl_seconds is not None and idempotency_ttl_seconds > 0:
        cutoff = utc_now() - timedelta(seconds=idempotency_ttl_seconds)
    if key is not None:  # the request digest is only needed to recognise a retry
        digest = _request_digest(topic, items, queue, allow_unqueued)
        earlier = _replay(engine, reviewer, key, digest, cutoff)
        if earlier is not None:
            return earlier
    now = utc_now()
    try:
        with engine.begin() as conn:
            # the topic, its queues and which documents they hold: one statement (a round trip each cost more
            # than any of them on PostgreSQL)
            doc_ids = items.doc_ids if isinstance(items, BatchColumns) else [item.doc_id for item in items]
            found = topic_and_queued(conn, topic, [] if allow_unqueued else doc_ids)
            if found is None:
                raise NotFound(f"unknown topic {topic!r}")
            topic_id, queues, queued = found
            if any(d.reason is not None for d in distinct):  # (no reason: nothing to look up)
                check_reasons(conn, topic_id, topic, parsed, _item)
            served = ServedQueues(conn, topic_id, topic, queues, queued)
            default_queue = served.queue_id(queue, "queue")
            if isinstance(items, BatchColumns):  # a queue named once per shape, at its first judgment
                per_shape = [default_queue if shape[3] is None else served.queue_id(shape[3], f"judgments[{i}].queue")
                             for i, shape in zip(items.first_of_each_shape(), items.shapes, strict=True)]
                queue_ids = [per_shape[index] for index in items.shape_of]
            else:
                queue_ids = [default_queue if item.queue is None else
                             served.queue_id(item.queue, f"judgments[{i}].queue") for i, item in enumerate(items)]
            served.require_queued(doc_ids, allow_unqueued=allow_unqueued, hint=unqueued_hint,
                                  refuse=lambda i, message: Conflict(f"judgments[{i}].doc_id: {message}"))
            marker = None
            if key is not None and cutoff is not None:  # an expired record is forgotten: its key is new again
                conn.execute(delete(ApiIdempotency).where(
                    ApiIdempotency.reviewer == reviewer, ApiIdempotency.key == key,
                    ApiIdempotency.created_at < cutoff))
            if key is not None:  # claimed first: a concurrent duplicate waits here, then fails on the unique key
                marker = conn.execute(insert(ApiIdempotency).values(
                    reviewer=reviewer, key=key, topic_id=topic_id, request_digest=digest, response="[]",
                    created_at=now).returning(ApiIdempotency.id)).scalar_one()
            shared = {(d.role, d.note) for d in distinct}
            # the usual batch (one role, no note, plain decisions) linked as columns: the topic is locked meanwhile
            if len(shared) == 1 and not any(d.kind or d.reason or d.stage for d in distinct):
                [(role, note)] = shared
                if isinstance(parsed, _ColumnDecisions):  # the columns as they are: no decision per judgment
                    documents = parsed.items.doc_ids
                    labels, relevant, grades = parsed.columns()
                else:
                    documents = [p.doc_id for p in parsed]
                    labels, relevant, grades = ([p.label for p in parsed], [p.relevant for p in parsed],
                                                [p.grade for p in parsed])
                rows: Sequence[NewJudgment] | SharedJudgments = SharedJudgments(
                    [topic_id] * len(parsed), documents, labels, relevant, grades, reviewer, role, source, note, now,
                    None)
            else:
                rows = [new_judgment(topic_id, p, reviewer, source, now) for p in parsed]
            ids = append_judgments(conn, rows, return_ids=True, queue_ids=queue_ids)
            if marker is not None:
                conn.execute(update(ApiIdempotency).where(ApiIdempotency.id == marker)
                             .values(response=json.dumps(ids)))
    except IntegrityError:
        if key is None:
            raise
        earlier = _replay(engine, reviewer, key, digest, cutoff)
        if earlier is None:
            raise
        return earlier
    return BatchResult(ids, replayed=False)
