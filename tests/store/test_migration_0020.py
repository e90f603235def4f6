"""Migration 0020 (topic protocols) on both databases, with data: the upgrade adds the table and chains nothing (no
topic has protocol fields yet, so every earlier event keeps its meaning); protocol fields entered afterwards are
chained with the topic, so a change behind the application's back is named; the downgrade chains each such topic
again without them (the chain still verifies on the 0019 schema) and drops the table; up again verifies clean."""

from __future__ import annotations

import json

from sqlalchemy import Engine, inspect, text

from reviewdepth.services.admin.topics import create_topic
from reviewdepth.services.answers.protocol import get_protocol, set_protocol
from reviewdepth.store import migrate
from reviewdepth.store.engine import create_engine_for
from reviewdepth.store.evidence import verify_evidence


def _events(engine: Engine) -> list[tuple[str, str, dict[str, object]]]:
    with engine.connect() as conn:
        return [(str(k), str(a), json.loads(s)) for k, a, s in conn.execute(text(
            "SELECT kind, action, state FROM evidence_events ORDER BY seq"))]


def test_0020_up_down_up_with_protocol_fields(empty_db_url: str) -> None:
    engine = create_engine_for(empty_db_url)
    try:
        migrate.upgrade(engine, "0019")
        migrate.upgrade(engine, "0020")
        before = _events(engine)
        assert before == []  # the upgrade chains nothing
        create_topic(engine, "T")
        record = set_protocol(engine, "T", {"workflow": "TAR 1.0", "acceptance": "elusion<=2%@95%",
                                            "reviewers": ["ana:senior reviewer"], "blind": True, "produced": 10},
                              recorded_by="counsel")
        assert record.fields.workflow == "TAR 1.0" and record.fields.acceptance is not None
        assert record.fields.acceptance.value == 0.02 and record.recorded_by == "counsel"
        assert get_protocol(engine, "T") == record
        events = _events(engine)
        assert [(k, a) for k, a, _ in events] == [("topic", "created"), ("topic", "protocol")]
        assert events[1][2]["protocol"]["fields"]["workflow"] == "TAR 1.0"  # type: ignore[index]
        # the same fields again record nothing
        assert set_protocol(engine, "T", record.fields.as_fields(), recorded_by="someone else") == record
        assert len(_events(engine)) == 2
        with engine.connect() as conn:
            assert verify_evidence(conn).intact
        with engine.begin() as conn:  # changed behind the application's back: named
            conn.execute(text("UPDATE topic_protocols SET fields = :f"), {"f": '{"workflow":"linear"}'})
        with engine.connect() as conn:
            assert [p.message for p in verify_evidence(conn).problems] == [
                "topic T: protocol differs from the chained topic (event 2)"]
        with engine.begin() as conn:
            conn.execute(text("DELETE FROM topic_protocols"))
        set_protocol(engine, "T", {"workflow": "TAR 2.0"}, recorded_by="counsel")
        with engine.connect() as conn:
            assert verify_evidence(conn).intact

        plan = migrate.downgrade_plan(engine, "0019")
        assert [(s.revision, s.tables) for s in plan] == [("0020", ("topic_protocols",))]
        assert plan[0].loses is not None and "protocol fields" in plan[0].loses
        migrate.downgrade(engine, "0019")
        assert "topic_protocols" not in set(inspect(engine).get_table_names())
        last = _events(engine)[-1]
        assert last[:2] == ("topic", "downgraded") and "protocol" not in last[2]
        with engine.connect() as conn:
            assert verify_evidence(conn).intact

        migrate.upgrade(engine)
        with engine.connect() as conn:
            assert verify_evidence(conn).intact
        assert get_protocol(engine, "T").recorded_at is None  # the fields went with the table
    finally:
        engine.dispose()
