"""Run the Alembic migrations shipped inside the package."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine

from reviewdepth.store.schema import SchemaNotReady, require_current

__all__ = ["SchemaNotReady", "current_revision", "downgrade", "head_revision", "require_current", "upgrade"]


def migrations_dir() -> Path:
    import reviewdepth.migrations as package

    return Path(package.__file__).resolve().parent


def alembic_config(engine: Engine) -> Config:
    config = Config()
    config.set_main_option("script_location", str(migrations_dir()))
    config.set_main_option("sqlalchemy.url", engine.url.render_as_string(hide_password=False).replace("%", "%%"))
    return config


def head_revision() -> str:
    script = ScriptDirectory(str(migrations_dir()))
    head = script.get_current_head()
    assert head is not None
    return head


def current_revision(engine: Engine) -> str | None:
    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def _run(engine: Engine, action: str, revision: str) -> None:
    config = alembic_config(engine)
    with engine.begin() as conn:
        if engine.dialect.name == "sqlite":
            # batch mode recreates tables; the pragma must be off before the migration transaction begins
            conn.exec_driver_sql("PRAGMA foreign_keys=OFF")
        config.attributes["connection"] = conn
        getattr(command, action)(config, revision)
        if engine.dialect.name == "sqlite":
            conn.exec_driver_sql("PRAGMA foreign_keys=ON")


def upgrade(engine: Engine, revision: str = "head") -> None:
    _run(engine, "upgrade", revision)


def downgrade(engine: Engine, revision: str) -> None:
    _run(engine, "downgrade", revision)
