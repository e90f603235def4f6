"""Conflicts: documents whose reviewers disagree, until an adjudication recorded after the last vote settles them.

The rule (`reviewdepth.store.votes`): each reviewer's latest decision on a document is their vote (roles
``review``, ``sample`` and ``qc``); a reviewer's maybe counts only while they have no vote on it. Under the topic's
conflict rule (``reviewdepth topic conflict-rule``), ``rayyan`` (default): an include against an exclude or a maybe
is a conflict, an exclude against a maybe is not; ``strict``: any difference is. An ``adjudication`` judgment
recorded after the last vote resolves it; the votes stay in the log unchanged. A vote changed after the
adjudication re-opens the conflict.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

from sqlalchemy import Engine

from reviewdepth.services.errors import Invalid
from reviewdepth.services.evidence import topic as evidence_topic
from reviewdepth.services.evidence.screening import conflict_rule_of
from reviewdepth.store.ingest import as_utc
from reviewdepth.store.models import DEFAULT_CONFLICT_RULE, DEFAULT_STAGE
from reviewdepth.store.votes import DocumentVotes, Vote, load_votes

ConflictStatus = Literal["open", "resolved", "all"]
STATUSES: tuple[str, ...] = get_args(ConflictStatus)


def _vote_dict(vote: Vote) -> dict[str, object]:
    return {"reviewer": vote.reviewer, "label": vote.label, "relevant": vote.relevant,
            "decision": "maybe" if vote.relevant is None else "include" if vote.relevant else "exclude",
            "role": vote.role,
            "judgment_id": vote.judgment_id, "recorded_at": as_utc(vote.recorded_at).isoformat()}


@dataclass(frozen=True)
class ConflictRecord:
    doc_id: str
    status: str
    votes: list[Vote]  # the reviewers' votes, then the maybes of reviewers without a vote
    adjudication: Vote | None
    stage: str = DEFAULT_STAGE  # the screening stage the positions were taken at

    def as_dict(self) -> dict[str, object]:
        return {"doc_id": self.doc_id, "status": self.status, "votes": [_vote_dict(v) for v in self.votes],
                "relevant_votes": sum(v.relevant is True for v in self.votes),
                "not_relevant_votes": sum(v.relevant is False for v in self.votes),
                "maybe_votes": sum(v.relevant is None for v in self.votes),
                "adjudication": None if self.adjudication is None else _vote_dict(self.adjudication),
                "stage": self.stage}


def conflicts_of(documents: list[DocumentVotes], rule: str = DEFAULT_CONFLICT_RULE) -> list[ConflictRecord]:
    """The documents whose positions conflict under ``rule`` (`reviewdepth.store.votes.DocumentVotes.conflict`)."""
    return [ConflictRecord(d.doc_id, "resolved" if d.resolved else "open", [*d.votes, *d.maybes], d.adjudication,
                           d.stage) for d in documents if d.conflict(rule)]


def several_reviewer_votes(engine: Engine, topic: str, as_of: str | None, command: str) -> list[DocumentVotes]:
    """The documents of a topic with votes from two or more reviewers, up to a judgment id."""
    with engine.connect() as conn:
        topic_id = evidence_topic.topic_id(conn, topic)
        as_of_id = evidence_topic.judgment_id_as_of(conn, as_of, command)
        return load_votes(conn, topic_id, as_of_id, min_reviewers=2)


def list_conflicts(engine: Engine, topic: str, *, status: str = "all",
                   as_of: str | None = None) -> list[ConflictRecord]:
    """The topic's conflicts in the order their documents were first judged, optionally only open or resolved."""
    if status not in STATUSES:
        raise Invalid(f"status must be one of {', '.join(STATUSES)}, not {status!r}")
    documents = several_reviewer_votes(engine, topic, as_of, "conflicts")
    with engine.connect() as conn:
        rule = conflict_rule_of(conn, evidence_topic.topic_id(conn, topic))
    found = conflicts_of(documents, rule)
    return found if status == "all" else [c for c in found if c.status == status]
