"""Who coded a set of documents and when: for each document, the latest judgment that gives a decision
(``relevant`` not NULL) recorded at or before a judgment id, with its id, label, reviewer, role and time, read
through the caller's connection. The validation packet lists the audit stream's evidence with it and dates each
sample's test by it (`reviewdepth.services.answers.validation`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from sqlalchemy import Connection, func, select

from reviewdepth.store.chain import canonical_time
from reviewdepth.store.models import Judgment

_CHUNK = 5000


class Coding(NamedTuple):
    judgment_id: int
    label: str
    relevant: bool
    reviewer: str
    role: str
    recorded_at: str


def latest_coding(conn: Connection, topic_id: int, doc_ids: Sequence[str], as_of: int | None) -> dict[str, Coding]:
    """Each of ``doc_ids`` that has a decision at or before judgment ``as_of`` (None: now), with its latest one."""
    docs = sorted(set(doc_ids))
    latest: dict[str, Coding] = {}
    for start in range(0, len(docs), _CHUNK):
        stmt = (select(Judgment.doc_id, Judgment.id, Judgment.label, Judgment.relevant, Judgment.reviewer,
                       Judgment.role, Judgment.recorded_at)
                .where(Judgment.topic_id == topic_id, Judgment.doc_id.in_(docs[start:start + _CHUNK]),
                       Judgment.relevant.is_not(None)).order_by(Judgment.id))
        if as_of is not None:
            stmt = stmt.where(Judgment.id <= as_of)
        for doc_id, judgment_id, label, relevant, reviewer, role, moment in conn.execute(stmt):
            latest[str(doc_id)] = Coding(int(judgment_id), str(label), bool(relevant), str(reviewer), str(role),
                                         canonical_time(moment))
    return latest


def first_decisions(conn: Connection, topic_id: int, doc_ids: Sequence[str], as_of: int | None) -> dict[str, int]:
    """Each of ``doc_ids`` that has a decision at or before judgment ``as_of`` (None: now), with the id of its first
    one: the moment it was first coded (a later recoding, e.g. a QC pass, does not move it)."""
    docs = sorted(set(doc_ids))
    first: dict[str, int] = {}
    for start in range(0, len(docs), _CHUNK):
        stmt = (select(Judgment.doc_id, func.min(Judgment.id))
                .where(Judgment.topic_id == topic_id, Judgment.doc_id.in_(docs[start:start + _CHUNK]),
                       Judgment.relevant.is_not(None)).group_by(Judgment.doc_id))
        if as_of is not None:
            stmt = stmt.where(Judgment.id <= as_of)
        first.update({str(d): int(i) for d, i in conn.execute(stmt)})
    return first
