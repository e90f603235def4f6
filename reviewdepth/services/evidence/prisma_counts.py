"""The PRISMA counts of a topic (`reviewdepth.services.answers.prisma` explains each), assembled from the figures the
report
and ``reviewdepth prisma`` both read, and the records judged outside the identified set, read through the caller's
connection."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from sqlalchemy import Connection, exists, select, text

from reviewdepth.report.prisma_model import NOT_RETRIEVED_REASON, PrismaCounts, identification_by_source
from reviewdepth.store.labels import DISTINCT_MARKER, DUPLICATE_MARKER, NO_MARKER, resolve_labels
from reviewdepth.store.loaders import QueueLabels
from reviewdepth.store.models import (
    DEFAULT_STAGE,
    DISTINCT_DECISION,
    DUPLICATE_DECISION,
    FULL_TEXT_STAGE,
    MARKER_DECISIONS,
    SCREENING_FILTER,
    VOID_ROLE,
    Judgment,
    Queue,
    QueueEntry,
    RecordFields,
)
from reviewdepth.store.queue_membership import topic_queues


def prisma_counts(*, population: int, population_stated: bool, included: int, excluded: int,
                  reviewed_prefix: int | None, reviewers_per_record: dict[int, int], conflicts: int,
                  conflicts_resolved: int, independent: bool | None, policy: str, outside_included: int = 0,
                  outside_excluded: int = 0, reviewed: int | None = None, relevant_in_reviewed: int = 0,
                  in_queue_order: bool = True, decisions: DecisionCounts | None = None,
                  sources: dict[str, int] | None = None) -> PrismaCounts:
    """``included``/``excluded``: every judged record of the topic; ``outside_*``: those of them outside the
    identified set (`outside_queue_counts`), taken out of screened and counted apart; ``decisions``: the
    screening decisions' counts (`decision_counts`): the records screened with only maybes join screened;
    ``sources``: the records each declared source brought (`reviewdepth.services.evidence.identification.
    records_per_source`), split into PRISMA 2020's identification boxes."""
    decisions = decisions or DecisionCounts()
    included -= outside_included
    # a record flagged a duplicate resolves as excluded (`reviewdepth.store.labels`): it is removed before
    # screening, not excluded by a person, whether it lies in the identified set or outside it
    excluded -= outside_excluded - decisions.duplicates_outside
    outside_excluded -= decisions.duplicates_outside
    excluded -= decisions.duplicates
    screened = included + excluded + decisions.undecided
    after_removal = population - (decisions.duplicates - decisions.duplicates_outside)
    # each exclusion goes to the box of its stage: before full text (records excluded), or at full text (reports
    # excluded); what passed title and abstract is the reports sought, and it flows on to full-text exclusions,
    # includes and the undecided, so every box is the sum of what flows out of it
    staged = decisions.excluded_full_text is not None
    # a full-text exclude with the reserved reason is a report not retrieved, not a report excluded
    not_retrieved_key = f"{FULL_TEXT_STAGE}: {NOT_RETRIEVED_REASON}"
    not_retrieved = decisions.per_reason.get(not_retrieved_key, 0)
    per_reason = {k: v for k, v in decisions.per_reason.items() if k != not_retrieved_key}
    excluded_full_text = decisions.excluded_full_text or 0
    excluded_before = excluded - excluded_full_text
    with_reason_full_text = sum(n for key, n in per_reason.items() if _stage_of(key) == FULL_TEXT_STAGE)
    with_reason_before = sum(per_reason.values()) - with_reason_full_text
    return PrismaCounts(
        identified=population, identified_source="topic population" if population_stated else "queue size",
        screened=screened, included=included, excluded_by_reviewers=excluded,
        not_screened_review_stopped=max(after_removal - screened, 0),
        judged_outside_queue=outside_included + outside_excluded, included_outside_queue=outside_included,
        stopped_at_rank=reviewed_prefix if in_queue_order else None,
        reviewed=reviewed_prefix or 0 if reviewed is None else reviewed, relevant_in_reviewed=relevant_in_reviewed,
        reviewers_per_record=reviewers_per_record, conflicts=conflicts, conflicts_resolved=conflicts_resolved,
        independent=independent, label_policy=policy, screened_undecided=decisions.undecided,
        stages_recorded=decisions.stages_recorded, full_text_assessed=None if decisions.full_text_assessed is None else
        decisions.full_text_assessed - not_retrieved,
        excluded_full_text=excluded_full_text - not_retrieved if staged else None, excluded_per_reason=per_reason,
        duplicates_removed=decisions.duplicates - decisions.duplicates_outside if decisions.dedupe_recorded else None,
        after_duplicates_removed=after_removal,
        excluded_before_full_text=excluded_before if staged else None,
        reports_sought=screened - excluded_before if staged else None,
        reports_assessed=screened - excluded_before - not_retrieved if staged else None,
        excluded_without_reason=excluded_before - with_reason_before,
        excluded_full_text_without_reason=excluded_full_text - not_retrieved - with_reason_full_text if staged else
        None, reports_not_retrieved=not_retrieved if staged else None,
        **identification_by_source(population, sources or {}))


def _stage_of(reason_key: str) -> str:
    """The stage of an ``excluded_per_reason`` key, ``"<stage>: <reason>"`` (a stage holds no ``": "``)."""
    return reason_key.partition(": ")[0]


@dataclass(frozen=True)
class DecisionCounts:
    """What the screening decisions add to the PRISMA counts (`PrismaCounts` names each)."""

    undecided: int = 0
    stages_recorded: bool = False
    full_text_assessed: int | None = None
    excluded_full_text: int | None = None
    per_reason: dict[str, int] = field(default_factory=dict)
    # records flagged a duplicate (`reviewdepth.services.files.dedupe`), and those of them in no queue of the topic;
    # whether the topic's records were checked for duplicates at all (bibliographic fields imported, or a flag)
    duplicates: int = 0
    duplicates_outside: int = 0
    dedupe_recorded: bool = False


def _markers(rows: list[tuple[str, int, bool | None, str, str | None, str | None, str | None]]) -> np.ndarray:
    return np.array([DUPLICATE_MARKER if r[4] == DUPLICATE_DECISION else DISTINCT_MARKER
                     if r[4] == DISTINCT_DECISION else NO_MARKER for r in rows], dtype=np.int8)


def identified_queue(conn: Connection, topic_id: int, queue_id: int, *, population_stated: bool) -> int | None:
    """The queue whose documents are the identified set (None: every queue of the topic), by the rule of
    `outside_queue_counts`: the counted queue when identified is its size or the topic has one queue."""
    return None if population_stated and len(topic_queues(conn, topic_id)) > 1 else queue_id


def decision_counts(conn: Connection, topic_id: int, policy: str, as_of: int | None, *,
                    identified_in: int | None) -> DecisionCounts:
    """The records touched by a maybe, a skip, a reason or a screening stage (none for a log without them: one
    read of a partial index), their labels resolved under ``policy`` as every figure resolves them (`resolve_labels`):

    - undecided: records with a maybe and no decision under the policy (screened, undecided);
    - full-text assessed: records with a decision or a maybe at stage full-text (a skip is no screening), less
      those the policy finally excludes at title-abstract (they are counted in the box before the reports);
    - excluded at full text, and per "<stage>: <reason>": records excluded under the policy, by the stage and
      reason of the exclude that decided them (the latest; under ``adjudicated``, the latest adjudication when
      there is one).

    Records outside the identified set (``identified_in``: a queue id, or None for every queue of the topic, as
    `identified_queue` gives it) take no part in these counts: they are counted apart
    (`outside_queue_counts`) and are in no other box."""
    # the partial index's own predicate (ix_judgments_screening): both databases then read only those rows
    touched = select(Judgment.doc_id).where(Judgment.topic_id == topic_id, text(SCREENING_FILTER),
                                            Judgment.role != VOID_ROLE)
    if as_of is not None:
        touched = touched.where(Judgment.id <= as_of)
    docs = list(dict.fromkeys(conn.execute(touched).scalars()))  # no DISTINCT: SQLite would take another index
    fields_imported = conn.execute(select(RecordFields.doc_id).where(RecordFields.topic_id == topic_id).limit(1)
                                   ).first() is not None
    if not docs:
        return DecisionCounts(dedupe_recorded=fields_imported)
    rows: list[tuple[str, int, bool | None, str, str | None, str | None, str | None]] = []
    for start in range(0, len(docs), 10_000):
        stmt = (select(Judgment.doc_id, Judgment.id, Judgment.relevant, Judgment.role, Judgment.decision,
                       Judgment.reason, Judgment.stage)
                .where(Judgment.topic_id == topic_id, Judgment.doc_id.in_(docs[start:start + 10_000]),
                       Judgment.role != VOID_ROLE).order_by(Judgment.id))
        if as_of is not None:
            stmt = stmt.where(Judgment.id <= as_of)
        rows += [(r[0], int(r[1]), r[2], r[3], r[4], r[5], r[6]) for r in conn.execute(stmt)]
    rows.sort(key=lambda r: r[1])
    markers = _markers(rows)
    resolved = resolve_labels([r[0] for r in rows], np.array([r[1] for r in rows], dtype=np.int64),
                              np.array([-1 if r[2] is None else int(bool(r[2])) for r in rows], dtype=np.int8),
                              np.array([r[3] == "adjudication" for r in rows], dtype=bool), policy, markers)
    label = dict(zip(resolved.doc_ids, resolved.labels.tolist(), strict=True))
    latest_marker: dict[str, str] = {r[0]: str(r[4]) for r in rows if r[4] in MARKER_DECISIONS}
    flagged = {doc for doc, decision in latest_marker.items() if decision == DUPLICATE_DECISION}
    rows = [r for r in rows if r[0] not in flagged]  # removed before screening: in no screening count
    inside = _in_identified(conn, topic_id, identified_in, sorted({r[0] for r in rows}))
    rows = [r for r in rows if r[0] in inside]
    maybe: set[str] = set()
    full_text: set[str] = set()
    deciding: dict[str, tuple[str | None, str | None]] = {}  # doc: (stage, reason) of its latest exclude
    adjudicated: set[str] = set()
    for doc, _, relevant, role, decision, reason, stage in rows:
        if decision == "maybe":
            maybe.add(doc)
        if stage == FULL_TEXT_STAGE and decision != "skip":
            full_text.add(doc)
        if relevant is False and decision is None:
            if policy == "adjudicated" and doc in adjudicated and role != "adjudication":
                continue
            deciding[doc] = (stage, reason)
            if role == "adjudication":
                adjudicated.add(doc)
    per_reason: dict[str, int] = {}
    excluded_full_text = 0
    excluded_before: set[str] = set()  # records excluded before full text: they are no report, whatever they met
    for doc, (stage, reason) in deciding.items():
        if label.get(doc) != 0:
            continue
        excluded_full_text += stage == FULL_TEXT_STAGE
        if stage != FULL_TEXT_STAGE:
            excluded_before.add(doc)
        if reason is not None:
            key = f"{stage or DEFAULT_STAGE}: {reason}"
            per_reason[key] = per_reason.get(key, 0) + 1
    stages = any(r[6] is not None for r in rows)
    queued = _queued(conn, topic_id, sorted(flagged))
    return DecisionCounts(
        duplicates=len(flagged), duplicates_outside=len(flagged) - queued,
        dedupe_recorded=fields_imported or bool(latest_marker),
        undecided=sum(label.get(doc) == -1 for doc in maybe), stages_recorded=stages,
        full_text_assessed=len(full_text - excluded_before) if stages else None,
        excluded_full_text=excluded_full_text if stages else None,
        per_reason=dict(sorted(per_reason.items())))


def _in_identified(conn: Connection, topic_id: int, queue_id: int | None, docs: list[str]) -> set[str]:
    """Those of ``docs`` in the identified set: queue ``queue_id``, or (None) any queue of the topic."""
    found: set[str] = set()
    for start in range(0, len(docs), 1000):
        part = docs[start:start + 1000]
        stmt = select(QueueEntry.doc_id).where(QueueEntry.doc_id.in_(part))
        stmt = stmt.where(QueueEntry.queue_id == queue_id) if queue_id is not None else \
            stmt.join(Queue, Queue.id == QueueEntry.queue_id).where(Queue.topic_id == topic_id)
        found.update(conn.execute(stmt).scalars())
    return found


def _queued(conn: Connection, topic_id: int, docs: list[str]) -> int:
    """How many of ``docs`` some queue of the topic holds."""
    found: set[str] = set()
    for start in range(0, len(docs), 1000):
        found.update(conn.execute(select(QueueEntry.doc_id).join(Queue, Queue.id == QueueEntry.queue_id).where(
            Queue.topic_id == topic_id, QueueEntry.doc_id.in_(docs[start:start + 1000]))).scalars())
    return len(found)


def outside_queue_counts(conn: Connection, topic_id: int, labels: QueueLabels, *, population_stated: bool,
                         as_of: int | None) -> tuple[int, int]:
    """(relevant, not relevant) judged records outside the identified set, under ``labels``' policy: outside
    the queue of ``labels`` when identified is its size or the topic has one queue (free: topic totals minus the
    queue's), else in no queue of the topic (found in SQL, their labels resolved as `load_queue_labels` does)."""
    in_queue_relevant = int(np.count_nonzero(labels.labels == 1))
    in_queue_nonrelevant = int(np.count_nonzero(labels.labels == 0))
    several = population_stated and len(topic_queues(conn, topic_id)) > 1
    if not several:
        return labels.relevant_total - in_queue_relevant, labels.nonrelevant_total - in_queue_nonrelevant
    unqueued = select(Judgment.doc_id).where(
        Judgment.topic_id == topic_id, Judgment.relevant.is_not(None), Judgment.role != VOID_ROLE,
        ~exists().where(QueueEntry.doc_id == Judgment.doc_id, QueueEntry.queue_id == Queue.id,
                        Queue.topic_id == topic_id))
    if as_of is not None:
        unqueued = unqueued.where(Judgment.id <= as_of)
    docs = list(conn.execute(unqueued.distinct()).scalars())
    if not docs:
        return 0, 0
    stmt = (select(Judgment.doc_id, Judgment.id, Judgment.relevant, Judgment.role, Judgment.decision)
            .where(Judgment.topic_id == topic_id, Judgment.doc_id.in_(docs), Judgment.role != VOID_ROLE)
            .order_by(Judgment.id))
    if as_of is not None:
        stmt = stmt.where(Judgment.id <= as_of)
    rows = conn.execute(stmt).all()
    resolved = resolve_labels([r[0] for r in rows], np.array([r[1] for r in rows], dtype=np.int64),
                              np.array([-1 if r[2] is None else int(bool(r[2])) for r in rows], dtype=np.int8),
                              np.array([r[3] == "adjudication" for r in rows], dtype=bool), labels.policy,
                              np.array([DUPLICATE_MARKER if r[4] == DUPLICATE_DECISION else DISTINCT_MARKER
                                        if r[4] == DISTINCT_DECISION else NO_MARKER for r in rows], dtype=np.int8))
    return int(np.count_nonzero(resolved.labels == 1)), int(np.count_nonzero(resolved.labels == 0))
