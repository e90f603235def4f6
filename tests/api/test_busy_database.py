"""A write that cannot get the database's lock within REVIEWDEPTH_BUSY_TIMEOUT_SECONDS: 503 with Retry-After at the
API, one line and exit code 3 at the CLI, naming what waited; nothing is written, and the same request succeeds
once the lock is released. The lock is really held by another connection: SQLite's write lock (BEGIN IMMEDIATE on
the same file), PostgreSQL's row lock on the topic (with lock_timeout)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine, func, select, text
from typer.testing import CliRunner

from reviewdepth.api import ApiSettings, create_app
from reviewdepth.cli.app import create_cli
from reviewdepth.services.admin.keys import create_key
from reviewdepth.store.models import Judgment

from .test_auth_and_errors import problem

BUSY_SECONDS = 0.2


@contextmanager
def lock_held(engine: Engine, topic: str) -> Iterator[None]:
    """Another connection holds the lock every judgment write of ``topic`` needs, until the block ends."""
    if engine.dialect.name == "sqlite":
        other = sqlite3.connect(str(engine.url.database), isolation_level=None)
        try:
            other.execute("BEGIN IMMEDIATE")  # the write lock: readers go on, writers wait
            yield
            other.execute("ROLLBACK")
        finally:
            other.close()
        return
    with engine.connect() as other:
        other.execute(text("SELECT id FROM topics WHERE name = :name FOR UPDATE"), {"name": topic})
        yield
        other.rollback()


def judgment_count(engine: Engine) -> int:
    with engine.connect() as conn:
        return int(conn.execute(select(func.count()).select_from(Judgment)).scalar_one())


@pytest.fixture
def client(engine: Engine, empty_db_url: str) -> Iterator[TestClient]:
    app = create_app(ApiSettings(database_url=empty_db_url, busy_timeout_seconds=BUSY_SECONDS))
    with TestClient(app) as test_client:
        test_client.headers["Authorization"] = f"Bearer {create_key(engine, 'ana', 'write')[1]}"
        assert test_client.post("/topics", json={"name": "t"}).status_code == 201
        docs = [{"doc_id": f"d{i}"} for i in range(5)]
        assert test_client.put("/topics/t/queues/q", json={"documents": docs}).status_code == 201
        yield test_client


def test_api_answers_503_with_retry_after_and_a_retry_records_once(engine: Engine, client: TestClient) -> None:
    batch = {"judgments": [{"doc_id": "d1", "label": "1"}, {"doc_id": "d2", "label": "0"}],
             "idempotency_key": "batch-1"}
    before = judgment_count(engine)
    with lock_held(engine, "t"):
        response = client.post("/topics/t/judgments", json=batch)
        body = problem(response, 503, "database busy", "POST /topics/t/judgments", f"waited {BUSY_SECONDS:g} s",
                       "nothing was written")
        assert response.headers["retry-after"] == "1"
        assert "Error" not in str(body["detail"])  # no driver exception class in the body
        if engine.dialect.name == "sqlite":  # any write waits for SQLite's one write lock
            problem(client.post("/topics", json={"name": "u"}), 503, "POST /topics")
        assert judgment_count(engine) == before
        assert client.get("/topics/t/judgments").status_code == 200  # reads go on meanwhile
    retried = client.post("/topics/t/judgments", json=batch)
    assert retried.status_code == 201, retried.text
    assert judgment_count(engine) == before + 2
    again = client.post("/topics/t/judgments", json=batch)
    assert again.headers.get("idempotent-replayed") == "true" and judgment_count(engine) == before + 2


def test_cli_prints_one_line_and_exits_3(engine: Engine, client: TestClient, empty_db_url: str) -> None:
    runner = CliRunner()
    env = {"REVIEWDEPTH_BUSY_TIMEOUT_SECONDS": str(BUSY_SECONDS)}
    before = judgment_count(engine)
    with lock_held(engine, "t"):
        result = runner.invoke(create_cli(), ["judge", "t", "d1", "1", "--reviewer", "bo", "--db", empty_db_url],
                               env=env)
        assert result.exit_code == 3, (result.output, result.exception)
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("reviewdepth: error: database busy: reviewdepth judge")
        assert f"waited {BUSY_SECONDS:g} s" in lines[0] and "Traceback" not in result.output
        assert judgment_count(engine) == before
    result = runner.invoke(create_cli(), ["judge", "t", "d1", "1", "--reviewer", "bo", "--db", empty_db_url],
                           env=env)
    assert result.exit_code == 0, result.output
    assert judgment_count(engine) == before + 1


def test_a_writes_lock_wait_gets_only_what_is_left_of_its_bound(engine: Engine) -> None:
    """Issue 40: on PostgreSQL a write's lock waits are bounded by what is left of its busy timeout when its
    transaction starts (`store.engine.WRITE_DEADLINE`, set by the API around each write it runs), so a write that
    queued for its turn does not wait the whole timeout again for the topic's lock (39 s were seen, 10 s
    promised); without a deadline the engine's own timeout holds."""
    import time

    from reviewdepth.store.engine import WRITE_DEADLINE

    if engine.dialect.name != "postgresql":
        pytest.skip("a lock timeout per transaction is PostgreSQL's (SQLite writers queue on one write lock)")

    def lock_timeout_ms() -> float:
        with engine.begin() as conn:
            shown = str(conn.execute(text("SHOW lock_timeout")).scalar_one())
        return float(shown[:-2]) if shown.endswith("ms") else float(shown[:-1]) * 1000

    token = WRITE_DEADLINE.set(time.monotonic() + 0.25)
    try:
        assert 0 < lock_timeout_ms() <= 250
    finally:
        WRITE_DEADLINE.reset(token)
    token = WRITE_DEADLINE.set(time.monotonic() - 5)  # the bound already spent: the shortest wait PostgreSQL has
    try:
        assert lock_timeout_ms() == 1
    finally:
        WRITE_DEADLINE.reset(token)
    assert lock_timeout_ms() > 250  # the engine's own timeout, outside an API write
