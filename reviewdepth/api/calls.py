"""Where the endpoints run the services' blocking database writes (`write_call`).

On SQLite a write runs **inline on the event loop**: SQLite has a single writer, a write takes well under a
millisecond, and handing it to a worker thread costs more than the write (a thread switch each way, and GIL
hand-offs between the busy event loop and the thread, which gives the GIL up in every SQLite call; several such
threads also wait for each other's write lock in SQLite's busy handler, which polls with sleeps of 1 to 100 ms).
One process thus writes one request at a time, in arrival order. Two guards keep the loop from waiting on others:

* API workers of one database take an advisory file lock (`WriteGate`, ``<database>.api-write.lock``) around
  each inline write, so they queue in the kernel (woken at once) rather than in SQLite's busy handler;
* an inline write runs with SQLite's busy timeout at 0: when another process (a CLI import, say) holds the write
  lock, it fails at once, before anything is written, and is run again in the threadpool, which waits for the
  lock with the engine's usual timeout while the loop serves other requests.

A write runs inline only when it is known to be short (`write_call` with ``inline=True``; the judgment endpoint
passes batches up to `INLINE_JUDGMENTS`: a 1,000-judgment batch takes ~15 ms); a longer one runs in the
threadpool like any write that found the database locked, so the loop goes on serving reads meanwhile.

On PostgreSQL (concurrent writers, network round trips) writes run in the threadpool, at most as many at once
as the engine's pool keeps connections (5 by default): more would only wait for the topic's row lock (the
hash chain serialises the writers of a topic) while making the pool open and close overflow connections, and
each new PostgreSQL connection costs a backend process.
"""

from __future__ import annotations

import functools
import os
import sqlite3
from collections.abc import Callable
from contextvars import ContextVar
from types import TracebackType
from typing import Any, ParamSpec, TypeVar

import anyio.to_thread
from anyio import CapacityLimiter
from fastapi import Request
from sqlalchemy import Engine, event
from sqlalchemy.exc import OperationalError

P = ParamSpec("P")
T = TypeVar("T")

INLINE_JUDGMENTS = 5_000  # judgments in one request recorded on the event loop at most (~75 ms)

_INLINE: ContextVar[bool] = ContextVar("reviewdepth_inline_write", default=False)
_FLAG = "reviewdepth.inline_write"
SQLITE_BUSY, SQLITE_LOCKED = 5, 6


class WriteGate:
    """An exclusive ``flock`` on a file beside a SQLite database, held around each inline write (no-op for
    other databases, in-memory SQLite, a read-only folder, or where ``fcntl`` is missing)."""

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


class Writes:
    """How one application runs its writes (see the module docstring); ``fallbacks`` counts inline writes that
    found the database locked and went to the threadpool."""

    def __init__(self, engine: Engine) -> None:
        self.inline = engine.dialect.name == "sqlite"
        self.gate = WriteGate(engine)
        self.fallbacks = 0
        size = getattr(engine.pool, "size", None)
        self.limiter = CapacityLimiter(max(1, size() if callable(size) else 5))
        self._engine = engine
        self._busy_ms = 0
        if self.inline:
            with engine.connect() as conn:
                self._busy_ms = int(conn.exec_driver_sql("PRAGMA busy_timeout").scalar_one())
            event.listen(engine, "checkout", self._checkout)
            event.listen(engine, "checkin", self._checkin)

    def _checkout(self, dbapi_connection: Any, record: Any, _proxy: Any) -> None:
        if _INLINE.get():
            dbapi_connection.execute("PRAGMA busy_timeout = 0")
            record.info[_FLAG] = True

    def _checkin(self, dbapi_connection: Any, record: Any) -> None:
        if record is not None and record.info.pop(_FLAG, False) and dbapi_connection is not None:
            dbapi_connection.execute(f"PRAGMA busy_timeout = {self._busy_ms}")

    def close(self) -> None:
        if self.inline:
            event.remove(self._engine, "checkout", self._checkout)
            event.remove(self._engine, "checkin", self._checkin)
        self.gate.close()


async def write_call(request: Request, inline: bool, function: Callable[P, T], *args: P.args,
                     **kwargs: P.kwargs) -> T:
    """``function(*args, **kwargs)``, a database write that is all or nothing (it may run a second time when
    the first attempt found SQLite locked), run as the app's `Writes` say; ``inline=False`` (a long write) always
    runs it in the threadpool."""
    writes: Writes = request.app.state.writes
    if inline and writes.inline:
        token = _INLINE.set(True)
        try:
            with writes.gate:
                return function(*args, **kwargs)
        except (OperationalError, sqlite3.OperationalError) as exc:
            if not is_busy(exc):
                raise
            writes.fallbacks += 1
        finally:
            _INLINE.reset(token)
    return await anyio.to_thread.run_sync(functools.partial(function, *args, **kwargs), limiter=writes.limiter)
