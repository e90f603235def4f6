"""Schema version checks without importing Alembic (every command pays for them; Alembic costs ~0.5 s)."""

from __future__ import annotations

from sqlalchemy import Engine, text
from sqlalchemy.exc import OperationalError, ProgrammingError

from reviewdepth.store.busy import unavailable_error

# The latest migration in migrations/versions; a test checks it against Alembic's head.
SCHEMA_HEAD = "0019"


class SchemaNotReady(RuntimeError):
    """The database is not at the latest schema revision."""


def stored_revision(engine: Engine) -> str | None:
    """The revision recorded in ``alembic_version``; None when the table is missing or empty. A database that
    does not answer raises (`reviewdepth.store.busy.unavailable_error` recognises it): it may well have a schema."""
    try:
        with engine.connect() as conn:
            row = conn.execute(text("SELECT version_num FROM alembic_version")).first()
    except (OperationalError, ProgrammingError) as exc:
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
