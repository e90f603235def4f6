"""Real migrations on both databases: upgrade, a round trip, and models that agree with the migrations."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Engine, inspect

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
