"""A database that goes away (issue 26): every request that needs it is answered 503 with ``Retry-After`` and a
problem body that names no driver, never a 500; the CLI prints one line and exits with code 3; once the database
is back the same requests succeed, without restarting the server.

How it goes away: on PostgreSQL, the application reaches the server through a TCP relay that the test stops (its
connections are cut, as by a server restart, and new ones are refused) and starts again; or the server ends the
application's connections itself (``pg_terminate_backend``). On SQLite, the analogous case: the database's folder
is gone (unmounted, moved), so a new connection cannot open the file (``SQLITE_CANTOPEN``)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import Engine, func, select, text
from sqlalchemy.engine import make_url
from typer.testing import CliRunner

from reviewdepth.api import ApiSettings, create_app
from reviewdepth.cli.app import create_cli
from reviewdepth.services.admin.keys import create_key
from reviewdepth.store import engine as engine_module
from reviewdepth.store.models import Judgment

from .server import free_port
from .test_auth_and_errors import problem

UNAVAILABLE_RETRY_AFTER = "5"


class Relay:
    """A TCP relay from a local port to ``target``: `stop` cuts every relayed connection and refuses new ones
    (a database server that went away), `start` listens again on the same port."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.port = free_port()
        self._listener: socket.socket | None = None
        self._open: set[socket.socket] = set()
        self._lock = threading.Lock()

    def start(self) -> None:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def stop(self) -> None:
        listener, self._listener = self._listener, None
        if listener is not None:
            listener.shutdown(socket.SHUT_RDWR)  # wakes the accepting thread
            listener.close()
        with self._lock:
            connections, self._open = self._open, set()
        for connection in connections:
            try:
                connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            connection.close()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            server = socket.create_connection(self.target)
            with self._lock:
                self._open |= {client, server}
            for source, sink in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(source, sink), daemon=True).start()

    @staticmethod
    def _pump(source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        for end in (source, sink):
            try:
                end.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


@pytest.fixture
def relay(engine: Engine) -> Iterator[Relay | None]:
    """On PostgreSQL, a running relay to the test's server; None on SQLite."""
    if engine.dialect.name != "postgresql":
        yield None
        return
    running = Relay((engine.url.host or "127.0.0.1", engine.url.port or 5432))
    running.start()
    try:
        yield running
    finally:
        running.stop()


def app_url(empty_db_url: str, relay: Relay | None) -> str:
    if relay is None:
        return empty_db_url
    return make_url(empty_db_url).set(host="127.0.0.1", port=relay.port).render_as_string(hide_password=False)


@contextmanager
def database_away(app: FastAPI, empty_db_url: str, relay: Relay | None) -> Iterator[None]:
    """The application's database cannot be reached until the block ends (module docstring)."""
    if relay is not None:
        relay.stop()
        try:
            yield
        finally:
            relay.start()
        return
    folder = Path(str(make_url(empty_db_url).database)).parent
    moved = folder.with_name(folder.name + "-away")
    os.rename(folder, moved)
    app.state.engine.dispose()  # open connections keep the moved file; a new one cannot open it
    try:
        yield
    finally:
        os.rename(moved, folder)


def judgment_count(engine: Engine) -> int:
    with engine.connect() as conn:
        return int(conn.execute(select(func.count()).select_from(Judgment)).scalar_one())


def unavailable(response: object, operation: str) -> None:
    body = problem(response, 503, "database unavailable", operation, "idempotency_key")
    assert response.headers["retry-after"] == UNAVAILABLE_RETRY_AFTER  # type: ignore[attr-defined]
    for driver_word in ("Error", "psycopg", "sqlite", "SQLAlchemy", "5432", str(Path.cwd())):
        assert driver_word not in str(body["detail"]), body["detail"]


def test_a_database_that_goes_away_is_503_with_retry_after_and_back_without_a_restart(
        engine: Engine, empty_db_url: str, relay: Relay | None) -> None:
    app = create_app(ApiSettings(database_url=app_url(empty_db_url, relay)))
    cached = {"Authorization": f"Bearer {create_key(engine, 'ana', 'write')[1]}"}
    fresh_secret = create_key(engine, "bo", "read")[1]
    batch = {"judgments": [{"doc_id": "d1", "label": "1"}], "idempotency_key": "away-1"}
    with TestClient(app) as client:
        assert client.post("/topics", json={"name": "t"}, headers=cached).status_code == 201
        docs = [{"doc_id": f"d{i}"} for i in range(5)]
        assert client.put("/topics/t/queues/q", json={"documents": docs}, headers=cached).status_code == 201
        before = judgment_count(engine)
        with database_away(app, empty_db_url, relay):
            unavailable(client.get("/topics", headers=cached), "GET /topics")  # key cached: the route fails
            unavailable(client.post("/topics/t/judgments", json=batch, headers=cached), "POST /topics/t/judgments")
            # a key not cached yet: the gate's own lookup fails, before any route
            unavailable(client.get("/topics", headers={"Authorization": f"Bearer {fresh_secret}"}), "GET /topics")
            client.cookies.set("reviewdepth_key", fresh_secret)
            page = client.get("/", headers={"Accept": "text/html"})
            unavailable(page, "GET /")
            assert "set-cookie" not in page.headers  # the key in the cookie was not refused: kept
            client.cookies.clear()
            assert client.get("/health").status_code == 200  # liveness needs no database
            assert client.get("/health", params={"database": "true"}).status_code == 503
        assert client.get("/topics", headers=cached).status_code == 200
        assert client.get("/topics", headers={"Authorization": f"Bearer {fresh_secret}"}).status_code == 200
        assert client.post("/topics/t/judgments", json=batch, headers=cached).status_code == 201
        assert judgment_count(engine) == before + 1


def test_connections_the_server_ends_are_503_once_then_replaced(
        engine: Engine, empty_db_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    if engine.dialect.name != "postgresql":
        pytest.skip("PostgreSQL ends connections itself (pg_terminate_backend); SQLite has no server")
    # no ping of idle pooled connections: the next request meets the ended connection (as one checked out within
    # a second of its last use always does)
    monkeypatch.setattr(engine_module, "PING_AFTER_IDLE_SECONDS", float("inf"))
    app = create_app(ApiSettings(database_url=empty_db_url))
    key = {"Authorization": f"Bearer {create_key(engine, 'ana', 'write')[1]}"}
    with TestClient(app) as client:
        assert client.post("/topics", json={"name": "t"}, headers=key).status_code == 201
        assert client.get("/topics", headers=key).status_code == 200
        with engine.connect() as admin:
            ended = admin.execute(text("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                                       "WHERE datname = current_database() AND pid <> pg_backend_pid()")).scalar()
        assert ended
        unavailable(client.get("/topics", headers=key), "GET /topics")
        assert client.get("/topics", headers=key).status_code == 200  # the pool replaced its connections
        assert client.post("/topics", json={"name": "u"}, headers=key).status_code == 201


def closed_database_url() -> str:
    return f"postgresql://postgres@127.0.0.1:{free_port()}/nothing_listens_here"


def assert_unavailable_line(stderr: str, command: str) -> None:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in stderr, lines
    assert lines[0].startswith(f"reviewdepth: error: database unavailable: reviewdepth {command}"), lines[0]
    assert "no reviewdepth schema" not in lines[0]


@pytest.mark.parametrize("command", [["report", "t"], ["judge", "t", "d1", "1", "--reviewer", "ana"],
                                     ["judgments", "t"]])
def test_cli_says_unavailable_in_one_line_and_exits_3(command: list[str]) -> None:
    result = CliRunner().invoke(create_cli(), [*command, "--db", closed_database_url()])
    assert result.exit_code == 3, (result.output, result.exception)
    assert_unavailable_line(result.stderr, command[0])


def test_the_program_says_unavailable_for_any_command(tmp_path: Path) -> None:
    """The program's entry point answers so for commands that open the database outside the commands' error
    handling (``db current``)."""
    done = subprocess.run([sys.executable, "-m", "reviewdepth.cli.app", "db", "current", "--db",
                           closed_database_url()], capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert done.returncode == 3, done.stderr
    assert_unavailable_line(done.stderr, "db current")
