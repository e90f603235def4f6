"""Migrations 0009 (the job status ``interrupted``) and 0010 (the key that posted a job) on both databases: what
they allow, what their downgrades do to existing rows (an interrupted job becomes failed with its reason kept; the
owner column is dropped, as ``db downgrade`` lists), and that upgrading again restores them."""

from __future__ import annotations

import pytest
from sqlalchemy import inspect, text
from sqlalchemy.exc import IntegrityError

from reviewdepth.store import migrate
from reviewdepth.store.engine import create_engine_for

JOB = ("INSERT INTO simulation_jobs (status, request, error, created_by, created_at) "
       "VALUES (:status, '{}', :error, 'ana', '2026-01-01 00:00:00')")


def test_0009_and_0010_up_and_down(empty_db_url: str) -> None:
    engine = create_engine_for(empty_db_url)
    try:
        migrate.upgrade(engine, "0008")
        with pytest.raises(IntegrityError), engine.begin() as conn:
            conn.execute(text(JOB), {"status": "interrupted", "error": None})
        migrate.upgrade(engine, "0010")
        with engine.begin() as conn:
            conn.execute(text(JOB), {"status": "interrupted", "error": "interrupted: the server stopped"})
            conn.execute(text("INSERT INTO api_keys (reviewer, scope, prefix, digest, created_at) "
                              "VALUES ('ana', 'write', 'rd_x', 'd', '2026-01-01 00:00:00')"))
            key_id = conn.execute(text("SELECT id FROM api_keys")).scalar_one()
            conn.execute(text("UPDATE simulation_jobs SET created_by_key_id = :k"), {"k": key_id})
        with pytest.raises(IntegrityError), engine.begin() as conn:  # the status check is still there
            conn.execute(text(JOB), {"status": "lost", "error": None})
        plan = migrate.downgrade_plan(engine, "0008")
        assert [(s.revision, s.tables, s.columns) for s in plan] == [
            ("0010", (), ("simulation_jobs.created_by_key_id",)), ("0009", (), ())]
        migrate.downgrade(engine, "0008")
        columns = {c["name"] for c in inspect(engine).get_columns("simulation_jobs")}
        assert "created_by_key_id" not in columns
        with engine.connect() as conn:
            assert conn.execute(text("SELECT status, error FROM simulation_jobs")).one() == \
                ("failed", "interrupted: the server stopped")
        with pytest.raises(IntegrityError), engine.begin() as conn:
            conn.execute(text(JOB), {"status": "interrupted", "error": None})
        migrate.upgrade(engine)
        with engine.connect() as conn:
            assert conn.execute(text("SELECT created_by_key_id FROM simulation_jobs")).scalar_one() is None
    finally:
        engine.dispose()
