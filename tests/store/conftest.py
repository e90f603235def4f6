"""Database fixtures: every store test runs on a migrated SQLite file and, when REVIEWDEPTH_TEST_PG_URL is
set, on a throwaway PostgreSQL database created and dropped around the test."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine, create_engine, text
from sqlalchemy.engine import make_url

from reviewdepth.store import migrate
from reviewdepth.store.engine import create_engine_for, normalise_url

PG_ENV = "REVIEWDEPTH_TEST_PG_URL"


def postgres_server_url() -> str:
    url = os.environ.get(PG_ENV)
    if not url:
        pytest.skip(f"{PG_ENV} is not set: PostgreSQL store tests skipped (.ci/run sets it)")
    return normalise_url(url)


@pytest.fixture
def empty_db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A database URL with no schema yet (parametrised over the backends)."""
    backend = getattr(request, "param", "sqlite")
    if backend == "sqlite":
        yield f"sqlite:///{tmp_path / 'store.db'}"
        return
    server = postgres_server_url()
    name = f"rd_test_{uuid.uuid4().hex[:12]}"
    admin = create_engine(server, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield make_url(server).set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@pytest.fixture
def engine(empty_db_url: str) -> Iterator[Engine]:
    """A database migrated with the real Alembic migrations."""
    eng = create_engine_for(empty_db_url)
    migrate.upgrade(eng)
    try:
        yield eng
    finally:
        eng.dispose()


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Every test that needs a database runs once per backend."""
    if "empty_db_url" in metafunc.fixturenames:
        # @pytest.mark.sqlite_only: behaviour only SQLite has (no PostgreSQL case to skip)
        only_sqlite = metafunc.definition.get_closest_marker("sqlite_only") is not None
        metafunc.parametrize("empty_db_url", ["sqlite"] if only_sqlite else ["sqlite", "postgresql"], indirect=True)
