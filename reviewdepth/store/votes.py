"""Reviewers' votes: each reviewer's current decision on each document, and the adjudications that settle them.

A *vote* is a reviewer's latest judgment of a document that gives a decision (relevant or not) and is not an
adjudication (roles ``review``, ``sample`` and ``qc``): a reviewer who changes their mind replaces their own
vote, never anyone else's. An *adjudication* is a judgment with role ``adjudication`` and a decision.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Connection, Select, func, select

from reviewdepth.store.models import Judgment


@dataclass(frozen=True)
class Vote:
    doc_id: str
    reviewer: str
    relevant: bool
    label: str
    role: str
    judgment_id: int
    recorded_at: datetime


@dataclass(frozen=True)
class DocumentVotes:
    """The current votes on one document (one per reviewer, in recording order) and its latest adjudication."""

    doc_id: str
    votes: list[Vote]
    adjudication: Vote | None

    @property
    def conflicting(self) -> bool:
        return len({v.relevant for v in self.votes}) > 1

    @property
    def resolved(self) -> bool:
        """An adjudication recorded after the last vote settles the disagreement."""
        return self.adjudication is not None and self.adjudication.judgment_id > max(
            v.judgment_id for v in self.votes)


def _voted(topic_id: int, as_of: int | None) -> Select[str]:
    stmt = (select(Judgment.doc_id).where(Judgment.topic_id == topic_id, Judgment.relevant.is_not(None),
                                          Judgment.role != "adjudication").group_by(Judgment.doc_id))
    return stmt if as_of is None else stmt.where(Judgment.id <= as_of)


def reviewers_per_document(conn: Connection, topic_id: int, as_of: int | None = None) -> dict[int, int]:
    """How many documents have 1, 2, 3, … distinct voters."""
    per_doc = _voted(topic_id, as_of).with_only_columns(
        func.count(func.distinct(Judgment.reviewer)).label("voters")).subquery()
    rows = conn.execute(select(per_doc.c.voters, func.count()).group_by(per_doc.c.voters)
                        .order_by(per_doc.c.voters)).all()
    return {int(n): int(c) for n, c in rows}


def load_votes(conn: Connection, topic_id: int, as_of: int | None = None, *,
               min_reviewers: int = 1) -> list[DocumentVotes]:
    """Every document of a topic with its current votes, in first-vote order; ``min_reviewers`` keeps only the
    documents with at least that many distinct voters (2 for conflicts and agreement)."""
    stmt = (select(Judgment.id, Judgment.doc_id, Judgment.reviewer, Judgment.relevant, Judgment.label,
                   Judgment.role, Judgment.recorded_at)
            .where(Judgment.topic_id == topic_id, Judgment.relevant.is_not(None)).order_by(Judgment.id))
    if as_of is not None:
        stmt = stmt.where(Judgment.id <= as_of)
    if min_reviewers > 1:  # only documents with several voters: skip the bulk of a single-reviewer log in SQL
        stmt = stmt.where(Judgment.doc_id.in_(_voted(topic_id, as_of).having(
            func.count(func.distinct(Judgment.reviewer)) >= min_reviewers)))
    votes: dict[str, dict[str, Vote]] = {}
    adjudications: dict[str, Vote] = {}
    for jid, doc_id, reviewer, relevant, label, role, recorded_at in conn.execute(stmt):
        vote = Vote(doc_id, reviewer, bool(relevant), label, role, int(jid), recorded_at)
        if role == "adjudication":
            adjudications[doc_id] = vote
            continue
        by_reviewer = votes.setdefault(doc_id, {})
        by_reviewer.pop(reviewer, None)  # keep insertion order = order of current votes
        by_reviewer[reviewer] = vote
    return [DocumentVotes(doc, list(by_reviewer.values()), adjudications.get(doc))
            for doc, by_reviewer in votes.items() if len(by_reviewer) >= min_reviewers]
