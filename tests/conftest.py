"""Shared fixtures: paths to the test data shipped in tests/data and to ../shared/data when present, and the
database fixtures every layer's tests use."""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import typer.main
import typer.testing
from hypothesis import settings
from sqlalchemy import Engine, create_engine, text
from sqlalchemy.engine import make_url

TESTS = Path(__file__).resolve().parent
DATA = TESTS / "data"
REPO = TESTS.parent
SHARED_DATA = REPO.parent / "shared" / "data"

# Bounded property-test profile: the whole suite must stay fast on 2 cores.
settings.register_profile("ci", max_examples=150, deadline=None, derandomize=True)
settings.register_profile("dev", max_examples=60, deadline=None)
settings.load_profile("ci")


# One Click command tree per distinct Typer application, per test process. Typer converts the whole application to
# Click commands on every `CliRunner().invoke(create_cli(), …)` (about 65 ms of CPU for this CLI's hundred
# commands, some 2,000 times in the suite: a sixth of its CPU). Every `create_cli()` builds the same tree, so the
# conversion is kept, keyed by what the tree is made of: each command's and group's name and callback (the objects
# themselves, held alive by the kept application, so a test that swaps a callback gets a tree of its own). Click
# commands hold no state between invocations: each `invoke` makes its own context.
_convert_to_click = typer.main.get_command
_kept_trees: dict[tuple[Any, ...], tuple[typer.Typer, Any]] = {}


def _tree_shape(app: typer.Typer) -> tuple[Any, ...]:
    callback = app.registered_callback.callback if app.registered_callback else None
    return (app.info.name, id(callback), tuple((c.name, id(c.callback)) for c in app.registered_commands),
            tuple((g.name, _tree_shape(g.typer_instance)) for g in app.registered_groups if g.typer_instance))


def _kept_click_tree(app: typer.Typer) -> Any:
    key = _tree_shape(app)
    if key not in _kept_trees:
        _kept_trees[key] = (app, _convert_to_click(app))
    return _kept_trees[key][1]


typer.testing._get_command = _kept_click_tree  # type: ignore[attr-defined,assignment]


@pytest.fixture
def trec_data() -> Path:
    return DATA / "trec_eval"


@pytest.fixture
def seed_data() -> Path:
    return DATA / "seed"


@pytest.fixture
def shared() -> object:
    """``shared("clef-tar-2017", "qrels", ...)``: a path under ../shared/data, or skip clearly when absent."""
    return shared_data


REQUIRE_SHARED_ENV = "REVIEWDEPTH_REQUIRE_SHARED"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """With REVIEWDEPTH_REQUIRE_SHARED=1 (set by .ci/run, where ../shared is always beside the clone), a test
    skipped because shared data is missing fails instead: CI must never pass by skipping the real-data tests."""
    outcome = yield
    report = outcome.get_result()  # type: ignore[attr-defined]
    if not (report.skipped and os.environ.get(REQUIRE_SHARED_ENV) == "1"):
        return
    reason = str(report.longrepr[2]) if isinstance(report.longrepr, tuple) else str(report.longrepr)
    if "shared" in reason and "not found" in reason:
        report.outcome = "failed"
        report.longrepr = f"{reason} ({REQUIRE_SHARED_ENV}=1: the shared data must be present here)"


def shared_data(*parts: str) -> Path:
    """A path under ../shared/data, or skip with a clear reason when that folder is absent."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"shared data not found at {path} (clone the repo beside ../shared to run this test)")
    return path


# ---------------------------------------------------------------------------------------------------------------
# Database fixtures. Every test that asks for ``engine`` (or ``empty_db_url``) runs once per backend: a SQLite file
# and, when REVIEWDEPTH_TEST_PG_URL is set, a throwaway PostgreSQL database. The Alembic migrations run once per
# test session into a template (a SQLite file; a PostgreSQL template database); each test gets a copy (file copy;
# ``CREATE DATABASE … TEMPLATE``), so per-test set-up no longer pays for the migrations.

PG_ENV = "REVIEWDEPTH_TEST_PG_URL"


def postgres_server_url() -> str:
    from reviewdepth.store.engine import normalise_url

    url = os.environ.get(PG_ENV)
    if not url:
        pytest.skip(f"{PG_ENV} is not set: PostgreSQL store tests skipped (.ci/run sets it)")
    return normalise_url(url)


def _admin(server: str) -> Engine:
    return create_engine(server, isolation_level="AUTOCOMMIT")


@contextmanager
def _throwaway_database(prefix: str) -> Iterator[tuple[str, str]]:
    """A new empty PostgreSQL database: yields (server URL, its name); dropped afterwards."""
    server = postgres_server_url()
    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    admin = _admin(server)
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield server, name
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A SQLite file migrated to the latest revision, once per session."""
    from reviewdepth.store import migrate
    from reviewdepth.store.engine import create_engine_for

    path = tmp_path_factory.mktemp("template") / "template.db"
    eng = create_engine_for(f"sqlite:///{path}")
    migrate.upgrade(eng)
    eng.dispose()  # the last connection closing checkpoints the WAL into the file
    return path


@pytest.fixture(scope="session")
def postgres_template() -> Iterator[str]:
    """The name of a PostgreSQL database migrated to the latest revision, once per session (dropped after)."""
    from reviewdepth.store import migrate
    from reviewdepth.store.engine import create_engine_for

    with _throwaway_database("rd_template") as (server, name):
        eng = create_engine_for(make_url(server).set(database=name).render_as_string(hide_password=False))
        try:
            migrate.upgrade(eng)
        finally:
            eng.dispose()
        yield name


@pytest.fixture
def empty_db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A database URL with no schema yet (parametrised over the backends)."""
    backend = getattr(request, "param", "sqlite")
    if backend == "sqlite":
        yield f"sqlite:///{tmp_path / 'store.db'}"
        return
    with _throwaway_database("rd_test") as (server, name):
        yield make_url(server).set(database=name).render_as_string(hide_password=False)


@pytest.fixture
def engine(request: pytest.FixtureRequest, empty_db_url: str) -> Iterator[Engine]:
    """The database of ``empty_db_url``, at the latest revision: a copy of the session's migrated template."""
    from reviewdepth.store.engine import create_engine_for

    url = make_url(empty_db_url)
    if url.get_backend_name() == "sqlite":
        assert url.database is not None
        shutil.copyfile(request.getfixturevalue("sqlite_template"), url.database)
    else:
        template = request.getfixturevalue("postgres_template")
        admin = _admin(postgres_server_url())
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE "{url.database}"'))
            conn.execute(text(f'CREATE DATABASE "{url.database}" TEMPLATE "{template}"'))
        admin.dispose()
    eng = create_engine_for(empty_db_url)
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
