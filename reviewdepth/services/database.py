"""Opening the store: engine from settings, schema checks, and the ``db`` commands' use cases."""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy import Engine

from reviewdepth.settings import Settings
from reviewdepth.store import schema
from reviewdepth.store.engine import create_engine_for


def open_store(settings: Settings, notify: Callable[[str], None] | None = None) -> Engine:
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
