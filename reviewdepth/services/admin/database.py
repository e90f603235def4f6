"""Opening the store: engine from settings, schema checks, and the ``db`` commands' use cases."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Protocol

from reviewdepth.store import schema
from reviewdepth.store.engine import create_engine_for

if TYPE_CHECKING:
    from sqlalchemy import Engine

    from reviewdepth.settings import Settings
    from reviewdepth.store.migrate import DowngradeStep


class StoreLocation(Protocol):
    """What `open_store` needs of a settings object (`reviewdepth.settings.Settings` or a subclass)."""

    @property
    def resolved_database_url(self) -> str: ...

    @property
    def uses_embedded_default(self) -> bool: ...

    @property
    def busy_timeout_seconds(self) -> float: ...


def store_settings(database_url: str | None = None, *, given_as: str = "database_url") -> Settings:
    """The store's settings: ``database_url`` if given, else ``$REVIEWDEPTH_DATABASE_URL``, else the embedded
    default, read by the one reader of the environment, `reviewdepth.settings.Settings`. A bad value is `Invalid`
    with a message naming the variable, or ``given_as`` (the caller's name for ``database_url``, e.g. ``--db``)."""
    # imported here, not at module level: pydantic-settings costs ~0.15 s, which `reviewdepth --help` must not pay
    from pydantic import ValidationError

    from reviewdepth.services.errors import Invalid
    from reviewdepth.settings import Settings, settings_problem

    try:
        return Settings() if database_url is None else Settings(database_url=database_url)
    except ValidationError as exc:
        raise Invalid(settings_problem(exc, None if database_url is None else {"database_url": given_as})) from None


def open_store(settings: StoreLocation, notify: Callable[[str], None] | None = None, *,
               create_empty: bool = False) -> Engine:
    """An engine on a database at the latest schema.

    The embedded default database is created and migrated on first use (and ``notify`` is told), and so is any
    database with no schema at all when ``create_empty`` (the demo on a new file); any other database must have
    been migrated with ``reviewdepth db upgrade`` (`schema.SchemaNotReady` otherwise: an older schema is never
    upgraded behind the user's back).
    """
    # a missing SQLite directory is created only for a database this call may create: `schema.DatabaseMissing`
    engine = create_engine_for(settings.resolved_database_url, settings.busy_timeout_seconds,
                               create_directory=settings.uses_embedded_default or create_empty)
    revision = schema.stored_revision(engine) if (settings.uses_embedded_default or create_empty) else None
    empty = create_empty and revision is None and not _has_tables(engine)
    if (settings.uses_embedded_default and revision != schema.SCHEMA_HEAD) or empty:
        from reviewdepth.store import migrate

        migrate.upgrade(engine)
        if notify:
            which = "the embedded database" if settings.uses_embedded_default else "the schema of the new database"
            where = (engine.url.database if engine.url.get_backend_name() == "sqlite"
                     else engine.url.render_as_string(hide_password=True))
            notify(f"created/updated {which} at {where} (reviewdepth db upgrade)")
    schema.require_current(engine)
    return engine


def _has_tables(engine: Engine) -> bool:
    from sqlalchemy import inspect

    with engine.connect() as conn:
        return bool(inspect(conn).get_table_names())


def database_problem(engine: Engine) -> str | None:
    """Why ``engine``'s database cannot serve requests (unreachable, or not at the latest schema), or None."""
    from reviewdepth.store.busy import driver_error_types

    try:
        schema.require_current(engine)
    except schema.SchemaNotReady as exc:
        return str(exc)
    except driver_error_types():
        # the driver's message may carry host names or credentials: the health check says only this much
        return f"the database {engine.url.render_as_string(hide_password=True)} does not answer"
    return None


# the ``db`` commands: they open the database whatever its schema (migrating it is their purpose), with the
# settings `open_store` takes, and dispose of the engine before they return


@contextmanager
def _any_schema(settings: StoreLocation, *, creating: bool = False) -> Iterator[Engine]:
    """An engine whatever the schema; ``creating`` (``db upgrade``): a SQLite file's missing directory is made.
    A PostgreSQL database that does not exist is `schema.DatabaseMissing` (no database is created on connecting,
    so "unavailable, run it again" would send the user round in a circle)."""
    from reviewdepth.store.busy import driver_error_types

    engine = create_engine_for(settings.resolved_database_url, settings.busy_timeout_seconds,
                               create_directory=creating)
    try:
        yield engine
    except driver_error_types() as exc:
        missing = schema.missing_database(exc, engine.url)
        if missing is not None:
            raise missing from None
        raise
    finally:
        engine.dispose()


def upgrade_database(settings: StoreLocation, revision: str = "head") -> str | None:
    """Apply migrations up to ``revision``; the revision the database is at afterwards."""
    from reviewdepth.store import migrate

    with _any_schema(settings, creating=True) as engine:
        migrate.upgrade(engine, revision)
        return migrate.current_revision(engine)


def downgrade_plan(settings: StoreLocation, revision: str) -> list[DowngradeStep]:
    """What reverting to ``revision`` would drop, migration by migration (`Invalid` for an unknown revision)."""
    from alembic.util.exc import CommandError

    from reviewdepth.services.errors import Invalid
    from reviewdepth.store import migrate

    with _any_schema(settings) as engine:
        try:
            return migrate.downgrade_plan(engine, revision)
        except CommandError as exc:
            raise Invalid(f"revision {revision!r}: {exc}") from None


def downgrade_database(settings: StoreLocation, revision: str) -> str | None:
    """Revert migrations down to ``revision``; the revision the database is at afterwards (None: empty)."""
    from reviewdepth.store import migrate

    with _any_schema(settings) as engine:
        migrate.downgrade(engine, revision)
        return migrate.current_revision(engine)


def database_revisions(settings: StoreLocation) -> tuple[str | None, str]:
    """The database's schema revision (None before the first migration) and the latest one."""
    from reviewdepth.store import migrate

    with _any_schema(settings) as engine:
        return migrate.current_revision(engine), migrate.head_revision()
