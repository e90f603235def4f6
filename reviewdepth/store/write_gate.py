"""SQLite mechanics for writes that must not wait: a file lock beside the database that orders the writers of
several processes (`WriteGate`), and connections that fail at once when another process holds SQLite's write
lock instead of waiting out the busy timeout (`FailFastWrites`). The API runs short writes on its event loop
with both (`reviewdepth.api.calls`); nothing else needs them."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from types import TracebackType
from typing import Any

from sqlalchemy import Engine, event
from sqlalchemy.exc import OperationalError

SQLITE_BUSY, SQLITE_LOCKED = 5, 6


class WriteGate:
    """An exclusive ``flock`` on a file beside a SQLite database (``<database>.api-write.lock``), held around
    each write that runs with `FailFastWrites` (no-op for other databases, in-memory SQLite, a read-only
    folder, or where ``fcntl`` is missing)."""

    def __init__(self, engine: Engine) -> None:
        self.path: str | None = None
        self._fd: int | None = None
        database = engine.url.database
        if engine.dialect.name != "sqlite" or not database or database == ":memory:" or database.startswith(
                "file:"):
            return
        try:
            import fcntl  # noqa: F401  (POSIX only)
        except ImportError:
            return
        path = f"{database}.api-write.lock"
        try:
            self._fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError:  # SQLite's own locking still applies
            return
        self.path = path

    def __enter__(self) -> None:
        if self._fd is not None:
            import fcntl

            fcntl.flock(self._fd, fcntl.LOCK_EX)

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        if self._fd is not None:
            import fcntl

            fcntl.flock(self._fd, fcntl.LOCK_UN)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def is_busy(exc: OperationalError | sqlite3.OperationalError) -> bool:
    """SQLite said the database is locked by another connection (nothing was written). Services reach SQLite
    both through SQLAlchemy (which wraps the error) and through the raw driver connection (bulk loads)."""
    original = exc.orig if isinstance(exc, OperationalError) else exc
    if not isinstance(original, sqlite3.OperationalError):
        return False
    code = getattr(original, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (SQLITE_BUSY, SQLITE_LOCKED)
    return "locked" in str(original)


_FAIL_FAST: ContextVar[bool] = ContextVar("reviewdepth_fail_fast_write", default=False)
_FLAG = "reviewdepth.inline_write"


class FailFastWrites:
    """On a SQLite engine: inside `fail_fast`, a connection checked out runs with busy timeout 0 (a write that
    finds the database locked fails at once, before anything is written: `is_busy`), under the engine's
    `WriteGate`; it gets the engine's own timeout back when it returns to the pool. ``enabled`` is False (and
    `fail_fast` does nothing but run the body) on other databases."""

    def __init__(self, engine: Engine) -> None:
        self.enabled = engine.dialect.name == "sqlite"
        self.gate = WriteGate(engine)
        self._engine = engine
        self._busy_ms = 0
        if self.enabled:
            with engine.connect() as conn:
                self._busy_ms = int(conn.exec_driver_sql("PRAGMA busy_timeout").scalar_one())
            event.listen(engine, "checkout", self._checkout)
            event.listen(engine, "checkin", self._checkin)

    def _checkout(self, dbapi_connection: Any, record: Any, _proxy: Any) -> None:
        if _FAIL_FAST.get():
            dbapi_connection.execute("PRAGMA busy_timeout = 0")
            record.info[_FLAG] = True

    def _checkin(self, dbapi_connection: Any, record: Any) -> None:
        if record is not None and record.info.pop(_FLAG, False) and dbapi_connection is not None:
            dbapi_connection.execute(f"PRAGMA busy_timeout = {self._busy_ms}")

    @contextmanager
    def fail_fast(self) -> Iterator[None]:
        token = _FAIL_FAST.set(True)
        try:
            with self.gate:
                yield
        finally:
            _FAIL_FAST.reset(token)

    def close(self) -> None:
        if self.enabled:
            event.remove(self._engine, "checkout", self._checkout)
            event.remove(self._engine, "checkin", self._checkin)
        self.gate.close()
