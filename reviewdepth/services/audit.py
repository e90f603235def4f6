"""``audit verify``: recompute each topic's judgment hash chain and name the first broken row."""

from __future__ import annotations

from sqlalchemy import Engine, select

from reviewdepth.services.judgments import topic_id_of
from reviewdepth.store.chain import ChainCheck, verify_topic
from reviewdepth.store.models import Topic


def verify_chains(engine: Engine, topic: str | None = None) -> list[ChainCheck]:
    """One check per topic (every topic when ``topic`` is None), in name order."""
    with engine.connect() as conn:
        if topic is not None:
            ids = [topic_id_of(engine, topic)]
        else:
            ids = [int(i) for i in conn.execute(select(Topic.id).order_by(Topic.name)).scalars()]
        return [verify_topic(conn, topic_id) for topic_id in ids]
