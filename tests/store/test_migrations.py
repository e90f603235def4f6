"""Real migrations on both databases: upgrade, a round trip, and models that agree with the migrations."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Engine, inspect, text

from reviewdepth.store import migrate
from reviewdepth.store.engine import create_engine_for
from reviewdepth.store.models import Base

TABLES = set(Base.metadata.tables) | {"alembic_version"}


def test_upgrade_downgrade_upgrade_round_trip(empty_db_url: str) -> None:
    engine = create_engine_for(empty_db_url)
    try:
        assert migrate.current_revision(engine) is None
        migrate.upgrade(engine)
        assert migrate.current_revision(engine) == migrate.head_revision()
        assert set(inspect(engine).get_table_names()) == TABLES
        migrate.downgrade(engine, "base")
        assert migrate.current_revision(engine) is None
        assert set(inspect(engine).get_table_names()) <= {"alembic_version"}
        migrate.upgrade(engine)
        assert set(inspect(engine).get_table_names()) == TABLES
    finally:
        engine.dispose()


def test_models_and_migrations_agree(engine: Engine) -> None:
    with engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn, opts={"compare_type": True}), Base.metadata)
    assert diff == []


def test_constraint_names_follow_the_convention(engine: Engine) -> None:
    inspector = inspect(engine)
    assert inspector.get_pk_constraint("judgments")["name"] == "pk_judgments"
    uniques = {u["name"] for u in inspector.get_unique_constraints("queue_entries")}
    assert "uq_queue_entries_queue_id_doc_id" in uniques
    fks = {f["name"] for f in inspector.get_foreign_keys("queues")}
    assert fks == {"fk_queues_topic_id_topics"}


def test_require_current_names_the_command(empty_db_url: str) -> None:
    engine = create_engine_for(empty_db_url)
    try:
        try:
            migrate.require_current(engine)
        except migrate.SchemaNotReady as exc:
            assert "reviewdepth db upgrade" in str(exc)
        else:
            raise AssertionError("an empty database must not pass the schema check")
    finally:
        engine.dispose()


def test_schema_head_constant_matches_the_migrations(engine: Engine) -> None:
    from reviewdepth.store import schema

    assert schema.SCHEMA_HEAD == migrate.head_revision()
    assert schema.stored_revision(engine) == schema.SCHEMA_HEAD


def test_migration_0005_backfills_the_queue_size_of_existing_samples(empty_db_url: str) -> None:
    engine = create_engine_for(empty_db_url)
    try:
        migrate.upgrade(engine, "0004")
        with engine.begin() as conn:
            conn.execute(text("INSERT INTO topics (name, created_at) VALUES ('t', '2026-01-01 00:00:00')"))
            topic_id = conn.execute(text("SELECT id FROM topics WHERE name = 't'")).scalar_one()
            for name, size in (("small", 7), ("big", 31)):
                conn.execute(text("INSERT INTO queues (topic_id, name, ordering, size, source, created_at) "
                                  "VALUES (:t, :n, 'given', :s, 'test', '2026-01-01 00:00:00')"),
                             {"t": topic_id, "n": name, "s": size})
            queue_ids = dict(conn.execute(text("SELECT name, id FROM queues")).all())
            for name in ("small", "big", "big"):
                conn.execute(text("INSERT INTO samples (topic_id, queue_id, frame, frame_size, size, seed, "
                                  "created_at) VALUES (:t, :q, 'all', 5, 2, 1, '2026-01-01 00:00:00')"),
                             {"t": topic_id, "q": queue_ids[name]})
        migrate.upgrade(engine, "0005")
        with engine.connect() as conn:
            sizes = conn.execute(text("SELECT q.name, s.queue_size, s.voided_at, s.void_judgment_id FROM samples s "
                                      "JOIN queues q ON q.id = s.queue_id ORDER BY s.id")).all()
        assert [tuple(r) for r in sizes] == [("small", 7, None, None), ("big", 31, None, None),
                                             ("big", 31, None, None)]
        migrate.downgrade(engine, "0004")
        assert "queue_size" not in {c["name"] for c in inspect(engine).get_columns("samples")}
        assert "queue_id" not in {c["name"] for c in inspect(engine).get_columns("judgments")}
        migrate.upgrade(engine, "0005")
        with engine.connect() as conn:
            assert conn.execute(text("SELECT count(*) FROM samples WHERE queue_size IS NULL")).scalar_one() == 0
    finally:
        engine.dispose()
