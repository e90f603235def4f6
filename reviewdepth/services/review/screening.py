"""Screening settings of a topic: its list of exclusion reasons and its conflict rule.

- Exclusion reasons: the reasons an exclude of the topic may carry (``reviewdepth topic reasons TOPIC --add R``,
  ``POST /topics/{topic}/reasons``). A reason is added once and never removed while a judgment carries it (the log
  is append-only, and a reason in the log must stay in the list that explains it); one no judgment carries yet may
  be removed. Every door checks a judgment's reason against the list in the transaction that records it.
- Conflict rule (`reviewdepth.store.votes`): ``rayyan`` (the default, Rayyan's) — include against exclude, and
  include against maybe, are conflicts, exclude against maybe is not; ``strict`` — any two different votes
  (include, exclude, maybe) are a conflict.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import Connection, Engine, delete, func, insert, select, update

from reviewdepth.estimation.plural import counted
from reviewdepth.services.errors import Conflict, Invalid, NotFound
from reviewdepth.services.evidence.screening import conflict_rule_of, topic_reasons
from reviewdepth.store import validation
from reviewdepth.store.ingest import utc_now
from reviewdepth.store.models import CONFLICT_RULES, DEFAULT_CONFLICT_RULE, Judgment, Topic, TopicReason


@dataclass(frozen=True)
class ScreeningSettings:
    topic: str
    reasons: list[str]
    conflict_rule: str

    def as_dict(self) -> dict[str, object]:
        return {"topic": self.topic, "reasons": self.reasons, "conflict_rule": self.conflict_rule}


def _topic_id(conn: Connection, topic: str) -> int:
    found = conn.execute(select(Topic.id).where(Topic.name == topic)).scalar_one_or_none()
    if found is None:
        raise NotFound(f"unknown topic {topic!r}")
    return int(found)


def screening_settings(engine: Engine, topic: str, *, add: Sequence[str] = (), remove: Sequence[str] = (),
                       conflict_rule: str | None = None) -> ScreeningSettings:
    """Change (in one transaction, all or nothing) and show a topic's exclusion reasons and conflict rule.
    Adding a reason already listed is refused, as is removing one not listed or one a judgment carries."""
    topic = validation.topic_name(topic)
    added = [validation.reason_text(r.strip() if isinstance(r, str) else r, "reason") for r in add]
    removed = [validation.reason_text(r.strip() if isinstance(r, str) else r, "reason") for r in remove]
    if len(set(added)) != len(added):
        raise Invalid("reason: the same reason is added twice")
    if conflict_rule is not None and conflict_rule not in CONFLICT_RULES:
        raise Invalid(f"conflict_rule: must be one of {', '.join(CONFLICT_RULES)}, not {conflict_rule!r}")
    with engine.begin() as conn:
        topic_id = _topic_id(conn, topic)
        known = topic_reasons(conn, topic_id)
        for reason in added:
            if reason in known:
                raise Conflict(f"reason: {reason!r} is already an exclusion reason of topic {topic!r}")
        for reason in removed:
            if reason not in known:
                raise Conflict(f"reason: {reason!r} is not an exclusion reason of topic {topic!r}")
            used = conn.execute(select(func.count()).select_from(Judgment).where(
                Judgment.topic_id == topic_id, Judgment.reason == reason)).scalar_one()
            if used:
                raise Conflict(f"reason: {reason!r} is carried by {counted(used, 'judgment')} of topic {topic!r}; a "
                               "reason in the log stays in the list")
        if removed:
            conn.execute(delete(TopicReason).where(TopicReason.topic_id == topic_id,
                                                   TopicReason.reason.in_(removed)))
        if added:
            now = utc_now()
            conn.execute(insert(TopicReason), [{"topic_id": topic_id, "reason": r, "created_at": now}
                                               for r in added])
        if conflict_rule is not None:
            conn.execute(update(Topic).where(Topic.id == topic_id).values(
                conflict_rule=None if conflict_rule == DEFAULT_CONFLICT_RULE else conflict_rule))
        return ScreeningSettings(topic, topic_reasons(conn, topic_id), conflict_rule_of(conn, topic_id))
