"""A topic's protocol fields (`reviewdepth.report.protocol_model`): read, and entered or changed in one transaction
that also chains the topic's new state (`reviewdepth.store.evidence`, action ``protocol``), so that ``audit
verify`` names a protocol changed behind the application's back. ``reviewdepth topic protocol`` and
``GET``/``PUT /topics/{t}/protocol`` call these."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from sqlalchemy import Connection, Engine, delete, insert, select

from reviewdepth.report.protocol_model import ProtocolError, RecordedProtocol, TopicProtocol
from reviewdepth.services.errors import Invalid, NotFound
from reviewdepth.store import validation
from reviewdepth.store.chain import canonical_time
from reviewdepth.store.evidence import chain_object
from reviewdepth.store.ingest import utc_now
from reviewdepth.store.models import Topic, TopicProtocolRow


def _topic_id(conn: Connection, topic: str) -> int:
    found = conn.execute(select(Topic.id).where(Topic.name == topic)).scalar_one_or_none()
    if found is None:
        raise NotFound(f"unknown topic {topic!r}")
    return int(found)


def protocol_in(conn: Connection, topic: str, topic_id: int) -> RecordedProtocol:
    """The topic's protocol fields through the caller's connection (all "not recorded" when none were entered)."""
    row = conn.execute(select(TopicProtocolRow.fields, TopicProtocolRow.recorded_at, TopicProtocolRow.recorded_by)
                       .where(TopicProtocolRow.topic_id == topic_id)).first()
    if row is None:
        return RecordedProtocol(topic, TopicProtocol(), None, None)
    return RecordedProtocol(topic, TopicProtocol.from_fields(json.loads(row[0])), canonical_time(row[1]),
                            str(row[2]))


def get_protocol(engine: Engine, topic: str) -> RecordedProtocol:
    topic = validation.topic_name(topic)
    with engine.connect() as conn:
        return protocol_in(conn, topic, _topic_id(conn, topic))


def set_protocol(engine: Engine, topic: str, given: Mapping[str, Any], *, recorded_by: str,
                 merge: bool = False, clear: tuple[str, ...] = ()) -> RecordedProtocol:
    """Enter the topic's protocol fields: ``given`` replaces them all (``merge``: only the fields it names, and
    ``clear`` names fields to drop). Unchanged fields record nothing; a change is chained with the topic."""
    topic = validation.topic_name(topic)
    recorded_by = validation.reviewer_name(recorded_by, "recorded_by")
    with engine.begin() as conn:
        topic_id = _topic_id(conn, topic)
        current = protocol_in(conn, topic, topic_id)
        fields: dict[str, Any] = dict(current.fields.as_fields()) if merge else {}
        fields.update({k: v for k, v in given.items() if v is not None})
        for name in clear:
            if name not in TopicProtocol.__dataclass_fields__:
                raise Invalid(f"clear: {name!r} is not a protocol field")
            fields.pop(name, None)
        try:
            protocol = TopicProtocol.from_fields(fields)
        except ProtocolError as exc:
            raise Invalid(str(exc)) from None
        if protocol == current.fields:
            return current
        conn.execute(delete(TopicProtocolRow).where(TopicProtocolRow.topic_id == topic_id))
        now = utc_now()
        if protocol.as_fields():
            text = json.dumps(protocol.as_fields(), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
            conn.execute(insert(TopicProtocolRow).values(topic_id=topic_id, fields=text, recorded_at=now,
                                                         recorded_by=recorded_by))
        chain_object(conn, "topic", topic_id, "protocol")
        return protocol_in(conn, topic, topic_id)
