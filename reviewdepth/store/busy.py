"""A database that cannot serve a request now, through no fault of the request: busy or unavailable.

**Busy**: a write that could not get a lock within the busy timeout. SQLite has one writer at a time: another
connection holding the write lock makes a writer wait up to its busy timeout (``PRAGMA busy_timeout``), then fail
with ``SQLITE_BUSY`` ("database is locked"). On PostgreSQL a write waits for the row locks of other transactions up
to ``lock_timeout`` (``55P03 lock_not_available``), and a transaction can lose a serialisation race (``40001``) or
a deadlock (``40P01``). In every case the transaction is rolled back and nothing was written, so the same request
can simply be sent again.

**Unavailable**: the database cannot be reached or dropped the connection: PostgreSQL refusing connections (down,
restarting, starting up, out of connection slots), closing them (a restart: ``57P01 admin_shutdown``,
``pg_terminate_backend``; a crash; any ``08`` connection exception; a connection lost on the way, which the driver
reports without a state); a SQLite file that cannot be opened (its folder or volume gone: ``SQLITE_CANTOPEN``) or
read (``SQLITE_IOERR``); every connection of the process's pool in use past the pool's timeout (SQLAlchemy's
``TimeoutError``: more concurrent requests than connections; nothing was sent to the database). The transaction
did not complete; one cut off while committing may have been recorded,
which a judgment batch's ``idempotency_key`` makes safe to resend.

**Full**: the database's storage ran out (``SQLITE_FULL``; PostgreSQL ``53100 disk_full`` and the server out of
resources or memory): the write was rolled back, and the same request succeeds once space is freed (507 with
``Retry-After`` at the API).

`transient_error` recognises both (wrapped by SQLAlchemy or raised by the driver connection the bulk paths use)
and describes them as a `DatabaseBusy` or a `DatabaseUnavailable`, which each door turns into its answer (503 with
``Retry-After`` at the API; one line and exit code 3 at the CLI). The busy timeout is set where engines are made
(`reviewdepth.store.engine.create_engine_for`, ``REVIEWDEPTH_BUSY_TIMEOUT_SECONDS``).
"""

from __future__ import annotations

import re
import sqlite3

DEFAULT_BUSY_TIMEOUT_SECONDS = 10.0
SQLITE_BUSY, SQLITE_LOCKED = 5, 6
SQLITE_FULL = 13
# disk_full, insufficient_resources, out_of_memory (class 53 but for the connection slots, which are "unavailable")
POSTGRES_FULL_STATES = {"53100": "the server's disk is full", "53000": "the server ran out of resources",
                        "53200": "the server ran out of memory"}
SQLITE_UNAVAILABLE = {10: "the SQLite file could not be read or written", 14: "the SQLite file could not be opened"}
# lock_not_available (lock_timeout), serialization_failure, deadlock_detected
POSTGRES_BUSY_STATES = {"55P03": "a lock", "40001": "a serialisable snapshot", "40P01": "a lock (deadlock)"}
# connection_exception (class 08), admin_shutdown, crash_shutdown, cannot_connect_now, too_many_connections
POSTGRES_CONNECTION_CLASS = "08"
POSTGRES_UNAVAILABLE_STATES = {"57P01": "the server ended the connection: shutdown or administrator",
                               "57P02": "the server ended the connection: crash recovery",
                               "57P03": "the server is starting up or shutting down",
                               "53300": "the server has no connection slot free"}
CONNECTION_LOST = "the connection was refused or lost"
# invalid_catalog_name: the server answered, and has no database of that name. Not transient (it will not appear by
# itself): a usage error, told apart so that it is not "run it again" (`missing_database_name`). libpq reports it
# while connecting, as a message without a state, so the server's words are matched too.
POSTGRES_NO_SUCH_DATABASE = "3D000"
_NO_SUCH_DATABASE = re.compile(r'database "(?P<name>(?:[^"]|"")*)" does not exist')
POOL_EXHAUSTED = "every connection of the server's pool was in use until the pool's timeout"
_STATEMENT = re.compile(r"^\s*(INSERT\s+INTO|UPDATE|DELETE\s+FROM|SELECT\b.*?\bFROM|BEGIN|COMMIT)\s*\"?(\w*)",
                        re.IGNORECASE | re.DOTALL)


class TransientDatabaseError(Exception):
    """The database could not serve ``operation`` now (module docstring): the same request may succeed later."""

    def during(self, operation: str, waited: float | None) -> TransientDatabaseError:
        """The same error, naming the request or command and how long it waited for a lock."""
        raise NotImplementedError

    def describe(self) -> str:
        raise NotImplementedError


class DatabaseBusy(TransientDatabaseError):
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


class DatabaseUnavailable(TransientDatabaseError):
    """``operation`` could not use the database: ``what`` (in words that name no driver, host or file)."""

    def __init__(self, what: str, operation: str | None = None) -> None:
        self.what = what
        self.operation = operation
        super().__init__(self.describe())

    def during(self, operation: str, waited: float | None = None) -> DatabaseUnavailable:
        return DatabaseUnavailable(self.what, operation)

    def describe(self) -> str:
        who = self.operation or "the operation"
        return (f"database unavailable: {who} could not use the database ({self.what}); it did not complete (a "
                f"write cut off while committing may have been recorded); run it again once the database is back")


class DatabaseFull(TransientDatabaseError):
    """``operation`` could not write: the database's storage is full (``what``); nothing was written. The same
    request succeeds once space is freed (the API answers 507 with ``Retry-After``)."""

    def __init__(self, what: str, operation: str | None = None) -> None:
        self.what = what
        self.operation = operation
        super().__init__(self.describe())

    def during(self, operation: str, waited: float | None = None) -> DatabaseFull:
        return DatabaseFull(self.what, operation)

    def describe(self) -> str:
        who = self.operation or "the operation"
        return (f"database full: {who} could not write ({self.what}); nothing was written; free space on the "
                f"database's volume and run it again")


def full_error(exc: BaseException) -> DatabaseFull | None:
    """``exc`` as a `DatabaseFull` when it says the database's storage (or the server's memory) ran out."""
    if isinstance(exc, DatabaseFull):
        return exc
    original = getattr(exc, "orig", None) or exc
    if isinstance(original, sqlite3.Error):
        code = getattr(original, "sqlite_errorcode", None)
        full = code & 0xFF == SQLITE_FULL if code is not None else "disk is full" in str(original)
        return DatabaseFull("the SQLite file's volume is full") if full else None
    state = getattr(original, "sqlstate", None) or getattr(original, "pgcode", None)
    if isinstance(state, str) and state in POSTGRES_FULL_STATES:
        return DatabaseFull(POSTGRES_FULL_STATES[state])
    return None


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


def missing_database_name(exc: BaseException) -> str | None:
    """The name of the PostgreSQL database ``exc`` says does not exist on its server (``3D000``, or the server's
    ``database "NAME" does not exist`` when connecting), else None. Such a database is no transient trouble:
    `unavailable_error` leaves it out, and the store's openers say to create it (`reviewdepth.store.schema`)."""
    original = getattr(exc, "orig", None) or exc
    if isinstance(original, sqlite3.Error):
        return None
    state = getattr(original, "sqlstate", None) or getattr(original, "pgcode", None)
    found = _NO_SUCH_DATABASE.search(str(original))
    if state == POSTGRES_NO_SUCH_DATABASE or (state is None and found is not None):
        return found.group("name").replace('""', '"') if found is not None else ""
    return None


def unavailable_error(exc: BaseException) -> DatabaseUnavailable | None:
    """``exc`` as a `DatabaseUnavailable` when it says the database cannot be reached or dropped the connection
    (module docstring), else None; a database that does not exist is not unavailable (`missing_database_name`)."""
    from sqlalchemy.exc import DBAPIError, DisconnectionError
    from sqlalchemy.exc import TimeoutError as PoolTimeout

    if isinstance(exc, DatabaseUnavailable):
        return exc
    if missing_database_name(exc) is not None:
        return None
    if isinstance(exc, PoolTimeout):
        return DatabaseUnavailable(POOL_EXHAUSTED)
    if isinstance(exc, DisconnectionError) or (isinstance(exc, DBAPIError) and exc.connection_invalidated):
        return DatabaseUnavailable(CONNECTION_LOST)
    original = getattr(exc, "orig", None) or exc
    if isinstance(original, sqlite3.Error):
        code = getattr(original, "sqlite_errorcode", None)
        what = SQLITE_UNAVAILABLE.get(code & 0xFF) if code is not None else None
        return DatabaseUnavailable(what) if what else None
    state = getattr(original, "sqlstate", None) or getattr(original, "pgcode", None)
    if isinstance(state, str):
        if state.startswith(POSTGRES_CONNECTION_CLASS):
            return DatabaseUnavailable(CONNECTION_LOST)
        return DatabaseUnavailable(POSTGRES_UNAVAILABLE_STATES[state]) if state in POSTGRES_UNAVAILABLE_STATES \
            else None
    # no state: the driver's own report that it could not connect, or lost the connection on the way
    try:
        import psycopg
    except ImportError:  # PostgreSQL support not installed
        return None
    if isinstance(original, (psycopg.OperationalError, psycopg.InterfaceError)):
        return DatabaseUnavailable(CONNECTION_LOST)
    return None


def transient_error(exc: BaseException) -> TransientDatabaseError | None:
    """``exc`` as a `DatabaseBusy`, `DatabaseUnavailable` or `DatabaseFull` (module docstring), else None."""
    return busy_error(exc) or unavailable_error(exc) or full_error(exc)


def driver_error_types() -> tuple[type[Exception], ...]:
    """The exception classes a transient error can arrive as: SQLAlchemy's wrapper, the pool's report of a dead
    connection or of no free connection, and the drivers' own (the bulk paths use the driver connection
    directly)."""
    from sqlalchemy.exc import DBAPIError, DisconnectionError
    from sqlalchemy.exc import TimeoutError as PoolTimeout

    kinds: list[type[Exception]] = [DBAPIError, DisconnectionError, PoolTimeout, sqlite3.Error]
    try:
        import psycopg
    except ImportError:  # PostgreSQL support not installed
        pass
    else:
        kinds.append(psycopg.Error)
    return tuple(kinds)
