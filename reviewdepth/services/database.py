"""Opening the store: engine from settings, schema checks, and the ``db`` commands' use cases."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from reviewdepth.store import schema
from reviewdepth.store.busy import DEFAULT_BUSY_TIMEOUT_SECONDS
from reviewdepth.store.engine import DatabaseChoice, create_engine_for, normalise_url

if TYPE_CHECKING:
    from sqlalchemy import Engine

    from reviewdepth.store.migrate import DowngradeStep

# the variables `reviewdepth.settings.Settings` reads its fields from (prefix ``REVIEWDEPTH_``)
DATABASE_URL_VARIABLE = "REVIEWDEPTH_DATABASE_URL"
BUSY_TIMEOUT_VARIABLE = "REVIEWDEPTH_BUSY_TIMEOUT_SECONDS"


class StoreLocation(Protocol):
    """What `open_store` needs of a settings object (`reviewdepth.settings.Settings` or `StoreSettings`)."""

    @property
    def resolved_database_url(self) -> str: ...

    @property
    def uses_embedded_default(self) -> bool: ...

    @property
    def busy_timeout_seconds(self) -> float: ...


@dataclass(frozen=True)
class StoreSettings(DatabaseChoice):
    """The database choice of `reviewdepth.settings.Settings` without pydantic-settings (importing it costs
    ~0.15 s on every CLI command). Build it with `store_settings`, which reads the environment the same way."""

    database_url: str = ""
    busy_timeout_seconds: float = DEFAULT_BUSY_TIMEOUT_SECONDS


def store_settings(database_url: str | None = None, environ: Mapping[str, str] | None = None) -> StoreSettings:
    """``database_url`` if given, else ``$REVIEWDEPTH_DATABASE_URL``, else the embedded default: the rules of
    ``Settings(database_url=...)`` / ``Settings()`` (the variable's name is case-insensitive, the last spelling
    in the environment wins, an empty value means the default; the URL is normalised)."""
    env = os.environ if environ is None else environ
    if database_url is None:
        database_url = _variable(env, DATABASE_URL_VARIABLE) or ""
    busy = _variable(env, BUSY_TIMEOUT_VARIABLE)
    try:
        busy_timeout = float(busy) if busy else DEFAULT_BUSY_TIMEOUT_SECONDS
    except ValueError:
        raise ValueError(f"{BUSY_TIMEOUT_VARIABLE} must be a number of seconds, not {busy!r}") from None
    return StoreSettings(normalise_url(database_url) if database_url else database_url, busy_timeout)


def _variable(env: Mapping[str, str], variable: str) -> str | None:
    """The environment variable ``variable`` as pydantic-settings reads it (any case, the last spelling wins)."""
    wanted = variable.lower()
    value = None
    for name, text in env.items():
        if name.lower() == wanted:
            value = text
    return value


def open_store(settings: StoreLocation, notify: Callable[[str], None] | None = None) -> Engine:
    """An engine on a database at the latest schema.

    The embedded default database is created and migrated on first use (and ``notify`` is told); any other
    database must have been migrated with ``reviewdepth db upgrade`` (`schema.SchemaNotReady` otherwise).
    """
    engine = create_engine_for(settings.resolved_database_url, settings.busy_timeout_seconds)
    if settings.uses_embedded_default and schema.stored_revision(engine) != schema.SCHEMA_HEAD:
        from reviewdepth.store import migrate

        migrate.upgrade(engine)
        if notify:
            notify(f"created/updated the embedded database at {engine.url.database} (reviewdepth db upgrade)")
    schema.require_current(engine)
    return engine


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


def upgrade_database(settings: StoreLocation, revision: str = "head") -> str | None:
    """Apply migrations up to ``revision``; the revision the database is at afterwards."""
    from reviewdepth.store import migrate

    engine = create_engine_for(settings.resolved_database_url, settings.busy_timeout_seconds)
    try:
        migrate.upgrade(engine, revision)
        return migrate.current_revision(engine)
    finally:
        engine.dispose()


def downgrade_plan(settings: StoreLocation, revision: str) -> list[DowngradeStep]:
    """What reverting to ``revision`` would drop, migration by migration (`Invalid` for an unknown revision)."""
    from alembic.util.exc import CommandError

    from reviewdepth.services.errors import Invalid
    from reviewdepth.store import migrate

    engine = create_engine_for(settings.resolved_database_url, settings.busy_timeout_seconds)
    try:
        return migrate.downgrade_plan(engine, revision)
    except CommandError as exc:
        raise Invalid(f"revision {revision!r}: {exc}") from None
    finally:
        engine.dispose()


def downgrade_database(settings: StoreLocation, revision: str) -> str | None:
    """Revert migrations down to ``revision``; the revision the database is at afterwards (None: empty)."""
    from reviewdepth.store import migrate

    engine = create_engine_for(settings.resolved_database_url, settings.busy_timeout_seconds)
    try:
        migrate.downgrade(engine, revision)
        return migrate.current_revision(engine)
    finally:
        engine.dispose()


def database_revisions(settings: StoreLocation) -> tuple[str | None, str]:
    """The database's schema revision (None before the first migration) and the latest one."""
    from reviewdepth.store import migrate

    engine = create_engine_for(settings.resolved_database_url, settings.busy_timeout_seconds)
    try:
        return migrate.current_revision(engine), migrate.head_revision()
    finally:
        engine.dispose()
