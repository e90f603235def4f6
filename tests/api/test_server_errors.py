"""Issue 40, item 3: an unclassified server error answers a problem body with a request id and logs one line with
the same id; a full database answers 507 with ``Retry-After`` (SQLite's ``SQLITE_FULL``, made real here with
``PRAGMA max_page_count``), and leaves the store as it was."""

from __future__ import annotations

import logging
import sqlite3
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine, event, func, select

from reviewdepth.services.admin.topics import create_topic
from reviewdepth.services.files.rankings import RankedDocument, store_ranking
from reviewdepth.store.busy import DatabaseFull, full_error, transient_error
from reviewdepth.store.models import Judgment

from .conftest import Api


def test_an_unclassified_error_logs_one_line_and_names_its_request(api: Api, monkeypatch: pytest.MonkeyPatch,
                                                                   caplog: pytest.LogCaptureFixture) -> None:
    import reviewdepth.services.admin.topics as topics_service

    def broken(*_args: Any, **_kwargs: Any) -> None:
        raise RuntimeError("something nobody classified\nsecond line of detail")

    monkeypatch.setattr(topics_service, "list_topics", broken)
    reader = api.new_key("rita", "read")
    with caplog.at_level(logging.ERROR, logger="reviewdepth.api"), TestClient(
            api.client.app, raise_server_exceptions=False) as client:
        answer = client.get("/topics?status=false", headers=reader)
    assert answer.status_code == 500
    body = answer.json()
    request_id = body["request_id"]
    assert answer.headers["X-Request-ID"] == request_id and request_id in body["detail"]
    assert "RuntimeError" not in body["detail"]  # the body names nothing of the server's insides
    lines = [r.getMessage() for r in caplog.records if r.name == "reviewdepth.api"]
    assert len(lines) == 1 and request_id in lines[0] and "GET /topics" in lines[0]
    assert "RuntimeError: something nobody classified" in lines[0] and "second line" not in lines[0]


@pytest.mark.sqlite_only
def test_a_full_sqlite_database_answers_507_and_stores_nothing(api: Api) -> None:
    create_topic(api.engine, "t")
    store_ranking(api.engine, "t", "q", [RankedDocument(f"d{i}") for i in range(2000)])
    writer = api.new_key("ana", "write")
    app_engine = api.client.app.state.engine  # type: ignore[attr-defined]

    # every connection the server opens from now on may not grow the file: a write that needs a page fails
    # with SQLITE_FULL, as on a full volume
    @event.listens_for(app_engine, "connect")
    def _cap(dbapi_connection: Any, _record: Any) -> None:
        pages = dbapi_connection.execute("PRAGMA page_count").fetchone()[0]
        dbapi_connection.execute(f"PRAGMA max_page_count = {pages}")

    app_engine.dispose()
    before = _judgments(api)
    notes = "n" * 900
    answer = api.client.post("/topics/t/judgments", headers=writer, json={"judgments": [
        {"doc_id": f"d{i}", "label": "1", "note": notes} for i in range(200)]})
    assert answer.status_code == 507, answer.text
    assert answer.headers["Retry-After"] and "database full" in answer.json()["detail"]
    assert _judgments(api) == before  # nothing written


def _judgments(api: Api) -> int:
    with api.engine.connect() as conn:
        return int(conn.execute(select(func.count()).select_from(Judgment)).scalar_one())


def test_full_storage_is_recognised_from_each_database() -> None:
    error = sqlite3.OperationalError("database or disk is full")
    assert isinstance(full_error(error), DatabaseFull) and isinstance(transient_error(error), DatabaseFull)

    class PostgresError(Exception):
        def __init__(self, sqlstate: str) -> None:
            super().__init__("could not extend file")
            self.sqlstate = sqlstate

    assert isinstance(full_error(PostgresError("53100")), DatabaseFull)
    assert full_error(PostgresError("22003")) is None  # out of range: the request's fault, not the store's
    assert full_error(sqlite3.OperationalError("database is locked")) is None


def test_a_client_that_disconnects_logs_one_line_and_stores_nothing(api: Api,
                                                                    caplog: pytest.LogCaptureFixture) -> None:
    import asyncio
    import json

    create_topic(api.engine, "t")
    store_ranking(api.engine, "t", "q", [RankedDocument(f"d{i}") for i in range(10)])
    writer = api.new_key("ana", "write")
    app = api.client.app
    body = json.dumps({"judgments": [{"doc_id": "d1", "label": "1"}]}).encode()
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        # the first part of the body, then the client is gone
        if not sent:
            sent.append({})
            return {"type": "http.request", "body": body[:10], "more_body": True}
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    headers = [(b"host", b"testserver"), (b"content-type", b"application/json"),
               (b"content-length", str(len(body)).encode()),
               (b"authorization", writer["Authorization"].encode())]
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
             "scheme": "http", "path": "/topics/t/judgments", "raw_path": b"/topics/t/judgments",
             "query_string": b"", "headers": headers, "client": ("127.0.0.1", 1), "server": ("testserver", 80),
             "root_path": "", "state": dict(api.client.app_state) if hasattr(api.client, "app_state") else {}}
    before = _judgments(api)
    with caplog.at_level(logging.INFO):
        asyncio.run(app(scope, receive, send))  # type: ignore[operator]
    assert _judgments(api) == before
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert errors == [], [r.getMessage() for r in errors]
    assert any("client disconnected: POST /topics/t/judgments" in r.getMessage() for r in caplog.records)


def test_a_number_beyond_the_store_is_the_requests_fault(engine: Engine) -> None:
    """Issue 40: PostgreSQL's "bigint out of range" (SQLSTATE 22003) and SQLite's int64 refusal are recognised as
    a number the request carried beyond the store (answered 422), not as an unclassified 500."""
    import sqlite3

    from sqlalchemy import text
    from sqlalchemy.exc import DBAPIError

    from reviewdepth.api.problems import out_of_store_range

    with pytest.raises(Exception) as caught:
        with engine.connect() as conn:
            if engine.dialect.name == "postgresql":
                conn.execute(text("SELECT CAST(:n AS bigint) + 1"), {"n": 2**63 - 1})
            else:
                conn.execute(text("SELECT :n"), {"n": 2**63})
    assert out_of_store_range(caught.value), repr(caught.value)
    assert not out_of_store_range(ValueError("something else"))
    assert not out_of_store_range(DBAPIError("SELECT 1", {}, sqlite3.OperationalError("no such table: x")))
