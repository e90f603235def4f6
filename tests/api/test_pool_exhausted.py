"""Every connection of the server's pool in use (issue 26: more concurrent requests than connections): a request
that waits the pool's timeout for one is answered 503 with ``Retry-After``, as for a database that is unavailable,
never a 500; the CLI prints one line and exits 3. SQLAlchemy reports it as its own ``TimeoutError``, no driver
error, which `reviewdepth.store.busy` did not recognise. On SQLite and PostgreSQL, with a pool of one connection
held by the test."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine, create_engine
from sqlalchemy.pool import QueuePool
from typer.testing import CliRunner

from reviewdepth.api import ApiSettings, create_app
from reviewdepth.cli.app import create_cli
from reviewdepth.services.admin import database
from reviewdepth.services.admin.keys import create_key
from reviewdepth.services.admin.topics import create_topic

from .test_auth_and_errors import problem
from .test_database_unavailable import UNAVAILABLE_RETRY_AFTER


@contextmanager
def exhausted_pool(url: str) -> Iterator[Engine]:
    """An engine whose pool holds one connection, taken: the next checkout waits 0.2 s and gives up."""
    tiny = create_engine(url, poolclass=QueuePool, pool_size=1, max_overflow=0, pool_timeout=0.2)
    held = tiny.connect()
    try:
        yield tiny
    finally:
        held.close()
        tiny.dispose()


def test_a_request_finding_no_free_connection_is_503_with_retry_after(engine: Engine, empty_db_url: str) -> None:
    create_topic(engine, "t")
    cached = {"Authorization": f"Bearer {create_key(engine, 'ana', 'read')[1]}"}
    fresh = {"Authorization": f"Bearer {create_key(engine, 'bob', 'read')[1]}"}
    app = create_app(ApiSettings(database_url=empty_db_url))
    with TestClient(app) as client:
        assert client.get("/topics", headers=cached).status_code == 200  # the key is now cached
        own = app.state.engine
        with exhausted_pool(empty_db_url) as tiny:
            app.state.engine = tiny
            try:
                for headers in (cached, fresh):  # in the endpoint; in the key lookup before it
                    response = client.get("/topics", headers=headers)
                    body = problem(response, 503, "database unavailable", "pool")
                    assert response.headers["retry-after"] == UNAVAILABLE_RETRY_AFTER
                    assert "TimeoutError" not in str(body) and "QueuePool" not in str(body)
                # issue 40: readiness is checked on a connection of its own, so a busy pool does not read as a
                # database that is down (100 concurrent reads made /health?database=true answer 503)
                assert client.get("/health", params={"database": "true"}).status_code == 200
            finally:
                app.state.engine = own
        assert client.get("/topics", headers=fresh).status_code == 200  # and back once a connection is free


def test_the_cli_says_so_in_one_line_and_exits_3(engine: Engine, empty_db_url: str,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    create_topic(engine, "t")
    with exhausted_pool(empty_db_url) as tiny:
        monkeypatch.setattr(database, "create_engine_for", lambda *_args, **_kwargs: tiny)
        result = CliRunner().invoke(create_cli(), ["judgments", "t", "--db", empty_db_url])
    assert result.exit_code == 3, (result.output, result.exception)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, lines
    assert lines[0].startswith("reviewdepth: error: database unavailable: reviewdepth judgments"), lines[0]
    assert "pool" in lines[0]
