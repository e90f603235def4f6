"""Engine factory and database URL rules. No module-level engine: callers build and dispose their own."""

from __future__ import annotations

import os
import time
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.pool import StaticPool

from reviewdepth.store.busy import DEFAULT_BUSY_TIMEOUT_SECONDS
from reviewdepth.store.ingest import analyze_bulk_loads, forget_bulk_loads

# the monotonic time by which a write must have its locks (set by the API around a write it runs; None: the
# engine's busy timeout for each wait). A request that queued for its turn has only what is left of its busy
# timeout to wait for the topic's lock, so the whole wait keeps the documented bound (it took 39 s, 10 s promised)
WRITE_DEADLINE: ContextVar[float | None] = ContextVar("reviewdepth_write_deadline", default=None)


def _lock_wait_left(conn: Connection) -> None:
    """At a PostgreSQL transaction's start, its lock waits bounded by what is left before `WRITE_DEADLINE`."""
    deadline = WRITE_DEADLINE.get()
    if deadline is not None:
        left = max(1, round((deadline - time.monotonic()) * 1000))
        conn.exec_driver_sql(f"SET LOCAL lock_timeout = {left}")


def default_database_path() -> Path:
    """The embedded default: ``$XDG_DATA_HOME/reviewdepth/reviewdepth.sqlite3`` (``~/.local/share/...``)."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "reviewdepth" / "reviewdepth.sqlite3"


def default_database_url() -> str:
    return f"sqlite:///{default_database_path()}"


class DatabaseChoice:
    """What every settings object derives from its ``database_url`` (empty = the embedded default), and how
    long a write waits for a lock (``busy_timeout_seconds``: see `create_engine_for`)."""

    database_url: str
    busy_timeout_seconds: float

    @property
    def resolved_database_url(self) -> str:
        return self.database_url or default_database_url()

    @property
    def uses_embedded_default(self) -> bool:
        return not self.database_url


def normalise_url(url: str) -> str:
    """``postgres://`` and ``postgresql://`` become ``postgresql+psycopg://`` (psycopg 3)."""
    for prefix in ("postgres://", "postgresql://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix):]
    return url


# the URL forms each database reviewdepth stores in is named by, for messages
URL_FORMS = {"sqlite": "sqlite:///PATH", "postgresql": "postgresql://USER@HOST/DATABASE"}


def database_url_problem(url: str) -> str | None:
    """Why ``url`` names no database reviewdepth can open, or None: it must be a SQLAlchemy URL of SQLite or
    PostgreSQL whose driver is installed. Settings check it before anything connects: SQLAlchemy's own error, from
    deep in its dialect loader, reached the user as a traceback. A password in the URL is never shown."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError, NoSuchModuleError

    forms = " or ".join(URL_FORMS.values())
    try:
        parsed = make_url(normalise_url(url))
    except ArgumentError:
        return f"{url!r} is not a database URL; use {forms}"
    backend = parsed.get_backend_name()
    if backend not in URL_FORMS:
        return f"reviewdepth stores its data in SQLite or PostgreSQL, not {backend!r}; use {forms}"
    shown = parsed.render_as_string(hide_password=True)
    try:
        parsed.get_dialect().import_dbapi()
    except NoSuchModuleError:
        return (f"{shown!r}: SQLAlchemy has no driver {parsed.get_driver_name()!r} for {backend}; leave the driver "
                f"out ({URL_FORMS[backend]})")
    except ImportError as exc:
        return f"{shown!r}: its driver is not installed ({exc}); leave the driver out ({URL_FORMS[backend]})"
    return None


def create_engine_for(url: str, busy_timeout_seconds: float = DEFAULT_BUSY_TIMEOUT_SECONDS, *,
                      create_directory: bool = True) -> Engine:
    """An engine with the SQLite pragmas reviewdepth relies on (foreign keys, WAL, busy timeout).

    ``create_directory``: a SQLite file's missing directory is created (the embedded default, ``db upgrade``);
    without it, a missing directory is `reviewdepth.store.schema.DatabaseMissing` (a command reading a store must
    not make a directory tree out of a mistyped path), as is a directory that cannot be created.

    ``busy_timeout_seconds`` bounds how long a statement waits for a lock another connection holds: SQLite's
    busy timeout, PostgreSQL's ``lock_timeout``. Past it the statement fails and the transaction is rolled back
    (`reviewdepth.store.busy.busy_error` recognises the error)."""
    url = normalise_url(url)
    busy_ms = max(0, round(busy_timeout_seconds * 1000))
    if url.startswith("sqlite"):
        memory = url in ("sqlite://", "sqlite:///:memory:")
        if not memory:
            path = url.split("///", 1)[1] if "///" in url else ""
            if path:
                _sqlite_directory(url, Path(path).expanduser().parent, create_directory)
        engine = create_engine(
            url,
            connect_args={"check_same_thread": False, "timeout": busy_ms / 1000},
            poolclass=StaticPool if memory else None,
        )

        @event.listens_for(engine, "connect")
        def _pragmas(dbapi_connection: object, _record: object) -> None:
            cursor = dbapi_connection.cursor()  # type: ignore[attr-defined]
            cursor.execute("PRAGMA foreign_keys=ON")
            if not memory:
                cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.execute(f"PRAGMA busy_timeout={busy_ms}")
            cursor.close()

        return engine
    from reviewdepth.store.models import postgresql_options

    postgresql_options()  # the models' PostgreSQL-only index options, left out of a SQLite process
    # lock_timeout 0 would mean "wait for ever" to PostgreSQL: 1 ms is the shortest wait
    engine = create_engine(url, connect_args={"options": f"-c lock_timeout={max(1, busy_ms)}"})
    _ping_when_idle(engine)
    event.listen(engine, "begin", _lock_wait_left)
    event.listen(engine, "commit", analyze_bulk_loads)
    event.listen(engine, "rollback", forget_bulk_loads)
    return engine


def _sqlite_directory(url: str, directory: Path, create: bool) -> None:
    """Make sure ``directory`` (of the SQLite file ``url`` names) exists, creating it when ``create``."""
    from sqlalchemy.engine import make_url

    from reviewdepth.store.schema import DatabaseMissing

    if directory.is_dir():
        return
    if not create:
        raise DatabaseMissing.sqlite_directory(make_url(url), directory)
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DatabaseMissing.sqlite_directory(
            make_url(url), directory, f"does not exist and could not be created ({exc.strerror})") from None


PING_AFTER_IDLE_SECONDS = 1.0
_IDLE_SINCE = "reviewdepth_idle_since"


def _ping_when_idle(engine: Engine) -> None:
    """SQLAlchemy's ``pool_pre_ping``, for connections idle in the pool for a second or more: a connection handed
    back a moment ago is alive (a ping of every checkout was a round trip per request, a tenth of a judgment
    post's cost). A connection that fails its ping is replaced before the caller gets it, as with pre-ping; one
    that breaks while in use fails that transaction, as it always could."""
    from sqlalchemy.exc import DisconnectionError

    dialect = engine.dialect

    @event.listens_for(engine, "checkin")
    def _checked_in(_dbapi_connection: object, record: Any) -> None:
        if record is not None:
            record.info[_IDLE_SINCE] = time.monotonic()

    @event.listens_for(engine, "checkout")
    def _checked_out(dbapi_connection: Any, record: Any, _proxy: object) -> None:
        since = record.info.get(_IDLE_SINCE)
        if since is None or time.monotonic() - since < PING_AFTER_IDLE_SECONDS:
            return
        try:
            dialect.do_ping(dbapi_connection)
        except dialect.loaded_dbapi.Error as exc:
            record.info.pop(_IDLE_SINCE, None)
            raise DisconnectionError(f"the pooled connection failed its ping: {exc}") from exc
