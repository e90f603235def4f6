"""Migration 0011 (an audit stream's pace may change) on both databases: the two columns come with 0 for a stream
created before it, so its due count is unchanged, and its downgrade drops exactly them."""

from __future__ import annotations

from sqlalchemy import inspect, text

from reviewdepth.store import migrate
from reviewdepth.store.engine import create_engine_for


def test_0011_up_and_down(empty_db_url: str) -> None:
    engine = create_engine_for(empty_db_url)
    try:
        migrate.upgrade(engine, "0010")
        with engine.begin() as conn:
            conn.execute(text("INSERT INTO topics (name, created_at) VALUES ('T', '2026-01-01 00:00:00')"))
            conn.execute(text(
                "INSERT INTO audit_streams (topic_id, seed, population_size, population_digest, every_k, position, "
                "served, created_at, created_by) SELECT id, 1, 10, 'd', 5, 3, 2, '2026-01-01 00:00:00', 'ana' "
                "FROM topics"))
        migrate.upgrade(engine, "0011")
        with engine.connect() as conn:
            assert conn.execute(text("SELECT pace_from_reviewed, pace_from_served FROM audit_streams")).one() == \
                (0, 0)
        plan = migrate.downgrade_plan(engine, "0010")
        assert [(s.revision, s.tables, s.columns) for s in plan] == [
            ("0011", (), ("audit_streams.pace_from_served", "audit_streams.pace_from_reviewed"))]
        migrate.downgrade(engine, "0010")
        columns = {c["name"] for c in inspect(engine).get_columns("audit_streams")}
        assert not columns & {"pace_from_reviewed", "pace_from_served"}
    finally:
        engine.dispose()
