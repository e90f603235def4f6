"""Reviewers' votes: each reviewer's current decision on each document, and the adjudications that settle them.

A *vote* is a reviewer's latest judgment of a document that gives a decision (relevant or not) and is not an
adjudication (roles ``review``, ``sample``, ``qc`` and ``audit``): a reviewer who changes their mind replaces
their own vote, never anyone else's. An *adjudication* is a judgment with role ``adjudication`` and a decision.

A *maybe* (``judgments.decision = 'maybe'``) is a reviewer's position on a document only while that reviewer has no
vote on it: it never withdraws an include or an exclude (as in label resolution, `reviewdepth.store.labels`, where
a maybe decides nothing). Maybes are kept apart (`DocumentVotes.maybes`): agreement (κ, α) counts votes only, and
the conflict rules (`DocumentVotes.conflict`) see both:

- ``rayyan`` (the default, Rayyan's): a conflict is an include against an exclude or against a maybe; an exclude
  against a maybe is not;
- ``strict``: any two different positions (include, exclude, maybe) are a conflict.

Positions are compared within one screening stage: a document screened at title and abstract, then read in full
text, has one `DocumentVotes` per stage (``stage``), so a full-text exclusion of a record both reviewers passed at
title and abstract is no disagreement between them. Adjudications settle the stage they are recorded at.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np
import numpy.typing as npt
from sqlalchemy import Connection, Select, String, any_, bindparam, func, or_, select, text

from reviewdepth.store.loaders import number_by_hash
from reviewdepth.store.models import DEFAULT_STAGE, DISTINCT_DECISION, DUPLICATE_DECISION, SCREENING_FILTER, Judgment
from reviewdepth.store.ranking_blob import scan_doc_ids


@dataclass(frozen=True)
class Vote:
    doc_id: str
    reviewer: str
    relevant: bool | None  # None: a maybe (only in `DocumentVotes.maybes`)
    label: str
    role: str
    judgment_id: int
    recorded_at: datetime


@dataclass(frozen=True)
class DocumentVotes:
    """The current votes on one document (one per reviewer, in recording order), its latest adjudication, and the
    maybes of reviewers who have no vote on it (module docstring)."""

    doc_id: str
    votes: list[Vote]
    adjudication: Vote | None
    maybes: list[Vote] = field(default_factory=list)
    stage: str = DEFAULT_STAGE

    def conflict(self, rule: str = "rayyan") -> bool:
        """Whether the positions on the document conflict under ``rule`` (module docstring)."""
        positions = {"include" if v.relevant else "exclude" for v in self.votes} | ({"maybe"} if self.maybes else set())
        if rule == "strict":
            return len(positions) > 1
        return "include" in positions and len(positions) > 1

    @property
    def conflicting(self) -> bool:
        return self.conflict("rayyan")

    @property
    def resolved(self) -> bool:
        """An adjudication recorded after the last vote (or maybe) settles the disagreement."""
        return self.adjudication is not None and self.adjudication.judgment_id > max(
            v.judgment_id for v in (*self.votes, *self.maybes))


def _voted(topic_id: int, as_of: int | None, *, maybes: bool = False) -> Select[str]:
    position = or_(Judgment.relevant.is_not(None), Judgment.decision == "maybe") if maybes else \
        Judgment.relevant.is_not(None)
    stmt = (select(Judgment.doc_id).where(Judgment.topic_id == topic_id, position,
                                          Judgment.role != "adjudication").group_by(Judgment.doc_id))
    return stmt if as_of is None else stmt.where(Judgment.id <= as_of)


def flagged_duplicates(conn: Connection, topic_id: int, as_of: int | None = None) -> set[str]:
    """The topic's records flagged a duplicate of another (`reviewdepth.services.files.dedupe`) and not withdrawn, up to
    ``as_of``: read through the partial index ``ix_judgments_screening`` (markers are screening rows)."""
    stmt = (select(Judgment.doc_id, Judgment.decision)
            .where(Judgment.topic_id == topic_id, text(SCREENING_FILTER),
                   Judgment.decision.in_((DUPLICATE_DECISION, DISTINCT_DECISION))).order_by(Judgment.id))
    if as_of is not None:
        stmt = stmt.where(Judgment.id <= as_of)
    latest = {str(doc): str(decision) for doc, decision in conn.execute(stmt)}
    return {doc for doc, decision in latest.items() if decision == DUPLICATE_DECISION}


def has_maybes(conn: Connection, topic_id: int, as_of: int | None = None) -> bool:
    """Whether any judgment of the topic (up to ``as_of``) is a maybe: one probe of the partial index
    ``ix_judgments_screening``."""
    stmt = select(Judgment.id).where(Judgment.topic_id == topic_id, text(SCREENING_FILTER),
                                     Judgment.decision == "maybe")
    if as_of is not None:
        stmt = stmt.where(Judgment.id <= as_of)
    return conn.execute(stmt.limit(1)).first() is not None


def several_positions(conn: Connection, topic_id: int, as_of: int | None,
                      per_record: dict[int, int]) -> tuple[list[DocumentVotes], list[DocumentVotes]]:
    """(documents with two or more reviewers taking a position, a vote or a maybe: what conflicts are found in;
    those of them with two or more votes: what agreement is measured on), read only when there can be some
    (``per_record``: `reviewers_per_document`)."""
    if max(per_record, default=0) < 2 and not has_maybes(conn, topic_id, as_of):
        return [], []
    positions = load_votes(conn, topic_id, as_of, min_reviewers=2)
    return positions, [d for d in positions if len(d.votes) >= 2]


def reviewers_per_document(conn: Connection, topic_id: int, as_of: int | None = None) -> dict[int, int]:
    """How many documents have 1, 2, 3, … distinct reviewers taking a position on them: a vote, or a maybe (a
    reviewer who answered maybe has screened the record too). A record flagged a duplicate is not counted: its
    reviewers' decisions were copied to the record kept (`reviewdepth.services.files.dedupe`)."""
    packed = _packed_voter_counts(conn, topic_id, as_of)
    if packed is None:
        per_doc = _voted(topic_id, as_of, maybes=True).with_only_columns(
            func.count(func.distinct(Judgment.reviewer)).label("voters")).subquery()
        rows = conn.execute(select(per_doc.c.voters, func.count()).group_by(per_doc.c.voters)
                            .order_by(per_doc.c.voters)).all()
        packed = {int(n): int(c) for n, c in rows}
    flagged = sorted(flagged_duplicates(conn, topic_id, as_of))
    for start in range(0, len(flagged), 1000):  # take the flagged records' own counts back out
        part = flagged[start:start + 1000]
        per_doc = _voted(topic_id, as_of, maybes=True).where(Judgment.doc_id.in_(part)).with_only_columns(
            func.count(func.distinct(Judgment.reviewer)).label("voters")).subquery()
        for n, c in conn.execute(select(per_doc.c.voters, func.count()).group_by(per_doc.c.voters)):
            left = packed.get(int(n), 0) - int(c)
            if left > 0:
                packed[int(n)] = left
            else:
                packed.pop(int(n), None)
    return packed


def _packed_voter_counts(conn: Connection, topic_id: int, as_of: int | None) -> dict[int, int] | None:
    """`reviewers_per_document` from two packed columns counted in numpy: a grouped count in SQL costs ~0.3 s on
    250,000 votes on SQLite, 0.8 s on PostgreSQL (an index scan in doc id order, then a distinct count per
    document). None when this path cannot be taken (the caller then counts in SQL)."""
    raw = conn.connection.driver_connection
    where = "topic_id = ? AND (relevant IS NOT NULL OR decision = 'maybe') AND role != 'adjudication'"
    params: tuple[int, ...] = (topic_id,) if as_of is None else (topic_id, as_of)
    if as_of is not None:
        where += " AND id <= ?"
    if isinstance(raw, sqlite3.Connection):
        cursor = raw.cursor()
        try:
            cursor.execute(f"SELECT count(*), group_concat(doc_id, char(10)), group_concat(reviewer, char(10)) "
                           f"FROM judgments WHERE {where}", params)
            count, doc_text, reviewer_text = cursor.fetchone()
        except sqlite3.Error:  # e.g. longer than SQLite's string limit
            return None
        finally:
            cursor.close()
    elif conn.dialect.name == "postgresql" and raw is not None:
        # both aggregates read the rows in the one order of the scan: the i-th doc id and reviewer are one vote's
        with raw.cursor() as pg_cursor:
            pg_cursor.execute(f"SELECT count(*), string_agg(doc_id, E'\\n'), string_agg(reviewer, E'\\n') "
                              f"FROM judgments WHERE {where.replace('?', '%s')}", params)
            found = pg_cursor.fetchone()
        assert found is not None
        count, doc_text, reviewer_text = found
    else:
        return None
    if not count:
        return {}
    column = scan_doc_ids(doc_text.encode("utf-8", "surrogateescape"), count)
    reviewers = reviewer_text.split("\n")
    numbered = number_by_hash(column) if column is not None else None
    if numbered is None or len(reviewers) != count:
        return None  # doc ids with whitespace, a hash collision, or a newline in a reviewer's name
    doc_codes = numbered[0]
    names: dict[str, int] = {}
    reviewer_codes = np.fromiter((names.setdefault(r, len(names)) for r in reviewers), dtype=np.int64, count=count)
    voters = _distinct_reviewers_per_document(doc_codes, len(numbered[1]), reviewer_codes, len(names))
    sizes = np.bincount(voters[voters > 0])
    return {int(n): int(c) for n, c in enumerate(sizes) if n and c}


def _distinct_reviewers_per_document(doc_codes: npt.NDArray[np.int64], documents: int,
                                     reviewer_codes: npt.NDArray[np.int64], reviewers: int) -> npt.NDArray[np.int64]:
    """How many distinct reviewers voted on each document (codes 0..documents-1): a documents × reviewers table of
    who voted where when it is small beside the votes (a review has a handful of reviewers; sorting 250,000 pairs
    costs 0.07 s, filling the table 2 ms), else the distinct (document, reviewer) pairs sorted out."""
    if documents * reviewers <= 8 * len(doc_codes) + 1024:
        voted = np.zeros(documents * reviewers, dtype=np.bool_)
        voted[doc_codes * reviewers + reviewer_codes] = True
        return np.asarray(voted.reshape(documents, reviewers).sum(axis=1, dtype=np.int64), dtype=np.int64)
    pairs = np.unique(doc_codes * reviewers + reviewer_codes)
    return np.bincount(pairs // reviewers, minlength=documents)


def load_votes(conn: Connection, topic_id: int, as_of: int | None = None, *,
               min_reviewers: int = 1) -> list[DocumentVotes]:
    """Every document of a topic with its current votes (and the maybes of reviewers without a vote on it), in
    first-position order; ``min_reviewers`` keeps only the documents with at least that many distinct reviewers
    taking a position, a vote or a maybe (2 for conflicts and agreement: agreement then counts votes only)."""
    stmt = (select(Judgment.id, Judgment.doc_id, Judgment.reviewer, Judgment.relevant, Judgment.label,
                   Judgment.role, Judgment.recorded_at, Judgment.decision, Judgment.stage)
            .where(Judgment.topic_id == topic_id, or_(Judgment.relevant.is_not(None), Judgment.decision == "maybe"))
            .order_by(Judgment.id))
    if as_of is not None:
        stmt = stmt.where(Judgment.id <= as_of)
    if min_reviewers > 1:  # only documents with several voters: skip the bulk of a single-reviewer log in SQL
        several = _voted(topic_id, as_of, maybes=True).having(
            func.count(func.distinct(Judgment.reviewer)) >= min_reviewers)
        if conn.dialect.name == "postgresql":
            # The documents first, then their rows through one hashed array (`= ANY`): as a join, PostgreSQL's
            # statistics of a table just written to (before autovacuum analyses it) estimate one row each side and
            # it re-runs the grouping once per judgment: 18 s at 5,900 judgments, against milliseconds.
            # imported here: a status command on SQLite loads no PostgreSQL dialect
            from sqlalchemy.dialects import postgresql

            doc_ids = list(conn.execute(several).scalars())
            if not doc_ids:
                return []
            stmt = stmt.where(Judgment.doc_id == any_(bindparam("several_doc_ids", doc_ids,
                                                                 type_=postgresql.ARRAY(String))))
        else:  # SQLite builds an IN subquery's list once
            stmt = stmt.where(Judgment.doc_id.in_(several))
    # keyed by (document, stage): positions are compared within a stage (module docstring)
    votes: dict[tuple[str, str], dict[str, Vote]] = {}
    maybes: dict[tuple[str, str], dict[str, Vote]] = {}
    adjudications: dict[tuple[str, str], Vote] = {}
    for jid, doc_id, reviewer, relevant, label, role, recorded_at, decision, stage in conn.execute(stmt):
        key = (doc_id, stage or DEFAULT_STAGE)
        if decision == "maybe":
            if role != "adjudication":
                by_reviewer = maybes.setdefault(key, {})
                by_reviewer.pop(reviewer, None)
                by_reviewer[reviewer] = Vote(doc_id, reviewer, None, label, role, int(jid), recorded_at)
                votes.setdefault(key, {})  # the document's place in first-position order
            continue
        vote = Vote(doc_id, reviewer, bool(relevant), label, role, int(jid), recorded_at)
        if role == "adjudication":
            adjudications[key] = vote
            continue
        by_reviewer = votes.setdefault(key, {})
        by_reviewer.pop(reviewer, None)  # keep insertion order = order of current votes
        by_reviewer[reviewer] = vote
    out = []
    flagged = flagged_duplicates(conn, topic_id, as_of) if votes else set()
    for key, by_reviewer in votes.items():
        if key[0] in flagged:  # its decisions were copied to the record kept (`reviewdepth.services.files.dedupe`)
            continue
        undecided = [m for who, m in maybes.get(key, {}).items() if who not in by_reviewer]
        if len(by_reviewer) + len(undecided) >= min_reviewers:
            out.append(DocumentVotes(key[0], list(by_reviewer.values()), adjudications.get(key), undecided, key[1]))
    return out
