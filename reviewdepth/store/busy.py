"""A busy database: a write that could not get a lock within the busy timeout.

SQLite has one writer at a time: another connection holding the write lock makes a writer wait up to its busy
timeout (``PRAGMA busy_timeout``), then fail with ``SQLITE_BUSY`` ("database is locked"). On PostgreSQL a write
waits for the row locks of other transactions up to ``lock_timeout`` (``55P03 lock_not_available``), and a
transaction can lose a serialisation race (``40001``) or a deadlock (``40P01``). In every case the transaction is
rolled back and nothing was written, so the same request can simply be sent again.

`busy_error` recognises these errors (wrapped by SQLAlchemy or raised by the driver connection the bulk paths
use) and describes them as a `DatabaseBusy`, which each door turns into its answer (503 with ``Retry-After`` at
the API; one line and exit code 3 at the CLI). The timeout is set where engines are made
(`reviewdepth.store.engine.create_engine_for`, ``REVIEWDEPTH_BUSY_TIMEOUT_SECONDS``).
"""

from __future__ import annotations

import re
import sqlite3

DEFAULT_BUSY_TIMEOUT_SECONDS = 10.0
SQLITE_BUSY, SQLITE_LOCKED = 5, 6
# lock_not_available (lock_timeout), serialization_failure, deadlock_detected
POSTGRES_BUSY_STATES = {"55P03": "a lock", "40001": "a serialisable snapshot", "40P01": "a lock (deadlock)"}
_STATEMENT = re.compile(r"^\s*(INSERT\s+INTO|UPDATE|DELETE\s+FROM|SELECT\b.*?\bFROM|BEGIN|COMMIT)\s*\"?(\w*)",
                        re.IGNORECASE | re.DOTALL)


class DatabaseBusy(Exception):
    """``operation`` waited ``waited`` seconds for ``what`` held by another connection; nothing was written."""

    def __init__(self, what: str, statement: str | None, waited: float | None = None,
                 operation: str | None = None) -> None:
        self.what = what
        self.statement = statement
        self.waited = waited
        self.operation = operation
        super().__init__(self.describe())

    def during(self, operation: str, waited: float | None) -> DatabaseBusy:
        """The same error, naming the request or command that waited and for how long."""
        return DatabaseBusy(self.what, self.statement, waited, operation)

    def describe(self) -> str:
        step = f" ({self.statement})" if self.statement else ""
        who = self.operation or "the operation"
        how_long = f" {self.waited:g} s" if self.waited is not None else ""
        return (f"database busy: {who}{step} waited{how_long} for {self.what} held by another connection and "
                f"gave up; nothing was written, run it again")


def _step(statement: str | None) -> str | None:
    """What the failed statement was doing, in words (``writing judgments``, ``locking topics``)."""
    if not statement:
        return None
    found = _STATEMENT.match(statement)
    if found is None:
        return None
    verb, table = found.group(1).split()[0].upper(), found.group(2)
    if verb == "SELECT":
        return f"locking {table}" if re.search(r"\bFOR\s+(NO\s+KEY\s+)?UPDATE\b", statement, re.I) else None
    if verb in ("BEGIN", "COMMIT"):
        return "starting the write" if verb == "BEGIN" else "committing"
    return {"INSERT": "writing", "UPDATE": "updating", "DELETE": "deleting from"}[verb] + f" {table}"


def busy_error(exc: BaseException) -> DatabaseBusy | None:
    """``exc`` as a `DatabaseBusy` when it says a lock could not be had (see the module docstring), else None."""
    if isinstance(exc, DatabaseBusy):
        return exc
    statement = getattr(exc, "statement", None)
    original = getattr(exc, "orig", None) or exc  # SQLAlchemy's DBAPIError wraps the driver's error
    if isinstance(original, sqlite3.OperationalError):
        code = getattr(original, "sqlite_errorcode", None)
        locked = code & 0xFF in (SQLITE_BUSY, SQLITE_LOCKED) if code is not None else "locked" in str(original)
        return DatabaseBusy("the SQLite write lock", _step(statement)) if locked else None
    state = getattr(original, "sqlstate", None) or getattr(original, "pgcode", None)
    if isinstance(state, str) and state in POSTGRES_BUSY_STATES:
        return DatabaseBusy(POSTGRES_BUSY_STATES[state], _step(statement))
    return None


def driver_error_types() -> tuple[type[Exception], ...]:
    """The exception classes a busy error can arrive as: SQLAlchemy's wrapper and the drivers' own (the bulk
    paths use the driver connection directly)."""
    from sqlalchemy.exc import DBAPIError

    kinds: list[type[Exception]] = [DBAPIError, sqlite3.Error]
    try:
        import psycopg
    except ImportError:  # PostgreSQL support not installed
        pass
    else:
        kinds.append(psycopg.Error)
    return tuple(kinds)
