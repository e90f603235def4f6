"""Opening the store: engine from settings, schema checks, and the ``db`` commands' use cases."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from reviewdepth.store import schema
from reviewdepth.store.engine import DatabaseChoice, create_engine_for, normalise_url

if TYPE_CHECKING:
    from sqlalchemy import Engine

# the variable `reviewdepth.settings.Settings.database_url` is read from (prefix ``REVIEWDEPTH_``)
DATABASE_URL_VARIABLE = "REVIEWDEPTH_DATABASE_URL"


class StoreLocation(Protocol):
    """What `open_store` needs of a settings object (`reviewdepth.settings.Settings` or `StoreSettings`)."""

    @property
    def resolved_database_url(self) -> str: ...

    @property
    def uses_embedded_default(self) -> bool: ...


@dataclass(frozen=True)
class StoreSettings(DatabaseChoice):
    """The database choice of `reviewdepth.settings.Settings` without pydantic-settings (importing it costs
    ~0.15 s on every CLI command). Build it with `store_settings`, which reads the environment the same way."""

    database_url: str = ""


def store_settings(database_url: str | None = None, environ: Mapping[str, str] | None = None) -> StoreSettings:
    """``database_url`` if given, else ``$REVIEWDEPTH_DATABASE_URL``, else the embedded default: the rules of
    ``Settings(database_url=...)`` / ``Settings()`` (the variable's name is case-insensitive, the last spelling
    in the environment wins, an empty value means the default; the URL is normalised)."""
    if database_url is None:
        env = os.environ if environ is None else environ
        wanted = DATABASE_URL_VARIABLE.lower()
        value = ""
        for name, text in env.items():
            if name.lower() == wanted:
                value = text
        database_url = value
    return StoreSettings(normalise_url(database_url) if database_url else database_url)


def open_store(settings: StoreLocation, notify: Callable[[str], None] | None = None) -> Engine:
    """An engine on a database at the latest schema.

    The embedded default database is created and migrated on first use (and ``notify`` is told); any other
    database must have been migrated with ``reviewdepth db upgrade`` (`schema.SchemaNotReady` otherwise).
    """
    engine = create_engine_for(settings.resolved_database_url)
    if settings.uses_embedded_default and schema.stored_revision(engine) != schema.SCHEMA_HEAD:
        from reviewdepth.store import migrate

        migrate.upgrade(engine)
        if notify:
            notify(f"created/updated the embedded database at {engine.url.database} (reviewdepth db upgrade)")
    schema.require_current(engine)
    return engine
