"""Schema version checks without importing Alembic (every command pays for them; Alembic costs ~0.5 s)."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import URL, Engine, text
from sqlalchemy.exc import OperationalError, ProgrammingError

from reviewdepth.store.busy import missing_database_name, unavailable_error

# The latest migration in migrations/versions; a test checks it against Alembic's head.
SCHEMA_HEAD = "0020"


class SchemaNotReady(RuntimeError):
    """The database is not at the latest schema revision."""


class DatabaseMissing(SchemaNotReady):
    """The database the URL names does not exist, so it has no schema either: a PostgreSQL database the server does
    not have, or a SQLite file in a directory that does not exist. A usage error (exit code 2 at the CLI), not a
    transient one: running the command again cannot help, and neither can ``db upgrade`` alone (PostgreSQL creates
    no database on connecting; a read command creates no directory for a mistyped path). The message says what
    to create, and the command that then gives it its schema."""

    @classmethod
    def postgres(cls, url: URL, name: str | None = None) -> DatabaseMissing:
        name = name or url.database or ""
        server = f"{url.host or 'localhost'}:{url.port or 5432}"
        flags = " ".join(f for f in (f"-h {url.host}" if url.host else "", f"-p {url.port}" if url.port else "",
                                     f"-U {url.username}" if url.username else "") if f)
        createdb = " ".join(p for p in ("createdb", flags, _shell_word(name)) if p)
        return cls(f"the PostgreSQL database {name!r} does not exist on the server {server}; create it "
                   f"(`{createdb}`, or `CREATE DATABASE {_sql_name(name)};` in psql), then give it the schema: "
                   f"`reviewdepth db upgrade --db {_as_typed(url)}`")

    @classmethod
    def sqlite_directory(cls, url: URL, directory: Path, why: str = "does not exist") -> DatabaseMissing:
        return cls(f"the SQLite database {url.database} cannot be opened: its directory {directory} {why}; create "
                   f"the directory (`mkdir -p {_shell_word(str(directory))}`) or choose another path, then give the "
                   f"database its schema: `reviewdepth db upgrade --db {url.render_as_string(hide_password=True)}`")


def _as_typed(url: URL) -> str:
    """``url`` as a user writes it: the driver psycopg 3 is implied (`reviewdepth.store.engine.normalise_url`),
    the password hidden."""
    shown = url.set(drivername="postgresql") if url.drivername == "postgresql+psycopg" else url
    return shown.render_as_string(hide_password=True)


def _shell_word(word: str) -> str:
    import shlex

    return shlex.quote(word)


def _sql_name(name: str) -> str:
    """``name`` as a SQL identifier: bare when PostgreSQL would keep it as written, else double-quoted."""
    plain = name.isidentifier() and name == name.lower() and name.isascii()
    return name if plain else '"' + name.replace('"', '""') + '"'


def missing_database(exc: BaseException, url: URL) -> DatabaseMissing | None:
    """``exc`` (raised connecting to ``url``) as a `DatabaseMissing` when the server says the database does not
    exist, else None."""
    name = missing_database_name(exc)
    return None if name is None else DatabaseMissing.postgres(url, name or None)


def stored_revision(engine: Engine) -> str | None:
    """The revision recorded in ``alembic_version``; None when the table is missing or empty. A database that
    does not answer raises (`reviewdepth.store.busy.unavailable_error` recognises it): it may well have a schema."""
    try:
        with engine.connect() as conn:
            row = conn.execute(text("SELECT version_num FROM alembic_version")).first()
    except (OperationalError, ProgrammingError) as exc:
        missing = missing_database(exc, engine.url)
        if missing is not None:
            raise missing from None
        if unavailable_error(exc) is not None:
            raise
        return None
    return None if row is None else str(row[0])


def require_current(engine: Engine) -> None:
    """Raise `SchemaNotReady` with the command to run when the schema is missing or old."""
    current = stored_revision(engine)
    if current != SCHEMA_HEAD:
        state = "has no reviewdepth schema" if current is None else f"is at revision {current}"
        raise SchemaNotReady(
            f"the database {engine.url.render_as_string(hide_password=True)} {state}; "
            f"run `reviewdepth db upgrade --db URL` first (latest revision {SCHEMA_HEAD})")
