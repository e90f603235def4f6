"""The PRISMA counts of a topic (`reviewdepth.services.prisma` explains each), assembled from the figures the report
and ``reviewdepth prisma`` both read, and the records judged outside the identified set, read through the caller's
connection."""

from __future__ import annotations

import numpy as np
from sqlalchemy import Connection, exists, select

from reviewdepth.report.prisma_model import PrismaCounts
from reviewdepth.store.labels import resolve_labels
from reviewdepth.store.loaders import QueueLabels
from reviewdepth.store.models import VOID_ROLE, Judgment, Queue, QueueEntry
from reviewdepth.store.queue_membership import topic_queues


def prisma_counts(*, population: int, population_stated: bool, included: int, excluded: int,
                  reviewed_prefix: int | None, reviewers_per_record: dict[int, int], conflicts: int,
                  conflicts_resolved: int, independent: bool | None, policy: str, outside_included: int = 0,
                  outside_excluded: int = 0, reviewed: int | None = None, relevant_in_reviewed: int = 0,
                  in_queue_order: bool = True) -> PrismaCounts:
    """``included``/``excluded``: every judged record of the topic; ``outside_*``: those of them outside the
    identified set (`outside_queue_counts`), taken out of screened and counted apart."""
    included -= outside_included
    excluded -= outside_excluded
    screened = included + excluded
    return PrismaCounts(
        identified=population, identified_source="topic population" if population_stated else "queue size",
        screened=screened, included=included, excluded_by_reviewers=excluded,
        not_screened_review_stopped=max(population - screened, 0),
        judged_outside_queue=outside_included + outside_excluded, included_outside_queue=outside_included,
        stopped_at_rank=reviewed_prefix if in_queue_order else None,
        reviewed=reviewed_prefix or 0 if reviewed is None else reviewed, relevant_in_reviewed=relevant_in_reviewed,
        reviewers_per_record=reviewers_per_record, conflicts=conflicts, conflicts_resolved=conflicts_resolved,
        independent=independent, label_policy=policy)


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
    stmt = (select(Judgment.doc_id, Judgment.id, Judgment.relevant, Judgment.role)
            .where(Judgment.topic_id == topic_id, Judgment.doc_id.in_(docs), Judgment.role != VOID_ROLE)
            .order_by(Judgment.id))
    if as_of is not None:
        stmt = stmt.where(Judgment.id <= as_of)
    rows = conn.execute(stmt).all()
    resolved = resolve_labels([r[0] for r in rows], np.array([r[1] for r in rows], dtype=np.int64),
                              np.array([-1 if r[2] is None else int(bool(r[2])) for r in rows], dtype=np.int8),
                              np.array([r[3] == "adjudication" for r in rows], dtype=bool), labels.policy)
    return int(np.count_nonzero(resolved.labels == 1)), int(np.count_nonzero(resolved.labels == 0))
