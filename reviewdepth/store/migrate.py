"""Run the Alembic migrations shipped inside the package."""

from __future__ import annotations

import ast
import inspect
import textwrap
from dataclasses import dataclass
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine

from reviewdepth.store.schema import SchemaNotReady, require_current

__all__ = ["DowngradeStep", "SchemaNotReady", "current_revision", "downgrade", "downgrade_plan", "head_revision",
           "require_current", "upgrade"]


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


@dataclass(frozen=True)
class DowngradeStep:
    """One migration a downgrade reverts, and what its ``downgrade()`` drops (with the data in it)."""

    revision: str
    title: str
    tables: tuple[str, ...]
    columns: tuple[str, ...]  # table.column
    loses: str | None = None  # what the data left behind no longer means (the migration module's ``LOSES``)

    def describe(self) -> str:
        drops = [f"table {t}" for t in self.tables] + [f"column {c}" for c in self.columns]
        listed = ", ".join(drops) if drops else "no tables or columns"
        lost = "" if self.loses is None else f"; LOSES MEANING: {self.loses}"
        return f"{self.revision} ({self.title}): drops {listed}{lost}"


def _drops(module: object) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The tables and columns the ``downgrade()`` function of a migration module drops, read from its source:
    ``op.drop_table('t')``, ``op.drop_column('t', 'c')`` and ``drop_column('c')`` inside
    ``with op.batch_alter_table('t')`` (the forms Alembic writes)."""
    source = textwrap.dedent(inspect.getsource(module.downgrade))  # type: ignore[attr-defined]
    tables: list[str] = []
    columns: list[str] = []

    def text_args(call: ast.Call) -> list[str]:
        return [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]

    def visit(node: ast.AST, table: str | None) -> None:
        if isinstance(node, ast.With):
            for item in node.items:
                call = item.context_expr
                if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and \
                        call.func.attr == "batch_alter_table" and text_args(call):
                    table = text_args(call)[0]
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            args = text_args(node)
            if node.func.attr == "drop_table" and args:
                tables.append(args[0])
            elif node.func.attr == "drop_column" and args:
                columns.append(f"{args[0]}.{args[1]}" if len(args) > 1 else f"{table}.{args[0]}")
        for child in ast.iter_child_nodes(node):
            visit(child, table)

    visit(ast.parse(source), None)
    return tuple(tables), tuple(columns)


def downgrade_plan(engine: Engine, revision: str) -> list[DowngradeStep]:
    """The migrations ``downgrade(engine, revision)`` would revert, newest first, with what each drops."""
    current = current_revision(engine)
    if current is None:
        return []
    script = ScriptDirectory(str(migrations_dir()))
    target = None if revision == "base" else script.get_revision(revision).revision
    steps = []
    for found in script.iterate_revisions(current, target or "base"):
        if found.revision == target:
            continue
        tables, columns = _drops(found.module)
        title = (found.doc or "").strip().splitlines()[0] if found.doc else found.revision
        loses = getattr(found.module, "LOSES", None)
        steps.append(DowngradeStep(found.revision, title, tables, columns, loses))
    return steps
