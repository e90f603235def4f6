"""Migration 0008 (portfolio and simulations) on both databases: its downgrade drops exactly its three tables, as
``db downgrade`` lists them, and keeps every other table's rows; upgrading again restores them empty."""

from __future__ import annotations

import pytest
from sqlalchemy import inspect, text
from sqlalchemy.exc import IntegrityError

from reviewdepth.store import migrate
from reviewdepth.store.engine import create_engine_for

NEW_TABLES = {"portfolio_topics", "calibrations", "simulation_jobs"}


def test_0008_up_and_down(empty_db_url: str) -> None:
    engine = create_engine_for(empty_db_url)
    try:
        migrate.upgrade(engine, "0008")
        assert migrate.current_revision(engine) == "0008"
        with engine.begin() as conn:
            conn.execute(text("INSERT INTO topics (name, created_at) VALUES ('t', '2026-01-01 00:00:00')"))
            topic_id = conn.execute(text("SELECT id FROM topics")).scalar_one()
            conn.execute(text("INSERT INTO portfolio_topics (topic_id, added_at, added_by) "
                              "VALUES (:t, '2026-01-01 00:00:00', 'ana')"), {"t": topic_id})
            conn.execute(text("INSERT INTO simulation_jobs (status, request, created_by, created_at) "
                              "VALUES ('queued', '{}', 'ana', '2026-01-01 00:00:00')"))
        before = set(inspect(engine).get_table_names())
        assert NEW_TABLES <= before
        plan = migrate.downgrade_plan(engine, "0007")
        assert [(s.revision, set(s.tables), s.columns) for s in plan] == [("0008", NEW_TABLES, ())]
        migrate.downgrade(engine, "0007")
        assert set(inspect(engine).get_table_names()) == before - NEW_TABLES
        with engine.connect() as conn:
            assert conn.execute(text("SELECT name FROM topics")).scalars().all() == ["t"]
        migrate.upgrade(engine, "0008")
        with engine.connect() as conn:
            assert conn.execute(text("SELECT count(*) FROM portfolio_topics")).scalar_one() == 0
        with pytest.raises(IntegrityError), engine.begin() as conn:  # the status check constraint
            conn.execute(text("INSERT INTO simulation_jobs (status, request, created_by, created_at) "
                              "VALUES ('lost', '{}', 'ana', '2026-01-01 00:00:00')"))
    finally:
        engine.dispose()
