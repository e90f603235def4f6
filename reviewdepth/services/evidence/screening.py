"""The screening vocabulary every use case checks against, in the caller's connection: a topic's exclusion
reasons (the list a judgment's reason must belong to, and adding a tool's own reasons on import) and its conflict
rule. The settings use case that changes them is `reviewdepth.services.review.screening`."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import Connection, insert, select

from reviewdepth.store.ingest import utc_now
from reviewdepth.store.models import DEFAULT_CONFLICT_RULE, Topic, TopicReason


def topic_reasons(conn: Connection, topic_id: int) -> list[str]:
    """The topic's exclusion reasons in the order they were added."""
    return list(conn.execute(select(TopicReason.reason).where(TopicReason.topic_id == topic_id)
                             .order_by(TopicReason.id)).scalars())


def first_unknown_reason(conn: Connection, topic_id: int, reasons: Sequence[str | None]) -> int | None:
    """The position of the first reason (None: no reason) not in the topic's list, or None when all are."""
    if all(r is None for r in reasons):
        return None
    known = set(topic_reasons(conn, topic_id))
    return next((i for i, r in enumerate(reasons) if r is not None and r not in known), None)


def add_missing_reasons(conn: Connection, topic_id: int, reasons: Sequence[str | None]) -> list[str]:
    """Add to the topic's list the ``reasons`` (None: no reason) it lacks, in their order of first appearance,
    in the caller's transaction; the reasons added. For an import of a tool that keeps its own list of reasons
    (Rayyan), whose reasons are the review's list."""
    known = set(topic_reasons(conn, topic_id))
    added = [r for r in dict.fromkeys(r for r in reasons if r is not None) if r not in known]
    if added:
        now = utc_now()
        conn.execute(insert(TopicReason), [{"topic_id": topic_id, "reason": r, "created_at": now} for r in added])
    return added


def unknown_reason_message(topic: str, reason: str) -> str:
    return (f"{reason!r} is not an exclusion reason of topic {topic!r} (add it first: reviewdepth topic reasons "
            f"{topic} --add {reason!r})")


def conflict_rule_of(conn: Connection, topic_id: int) -> str:
    rule = conn.execute(select(Topic.conflict_rule).where(Topic.id == topic_id)).scalar_one_or_none()
    return rule or DEFAULT_CONFLICT_RULE
