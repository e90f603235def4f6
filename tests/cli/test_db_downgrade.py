"""``reviewdepth db downgrade`` lists what each reverted migration drops and changes nothing without ``--yes``.
The listed tables and columns are checked against the schema a real downgrade leaves (SQLAlchemy's inspector)."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import Engine, inspect
from typer.testing import CliRunner

from reviewdepth.cli.app import create_cli
from reviewdepth.services.topics import create_topic
from reviewdepth.store import migrate
from reviewdepth.store.engine import create_engine_for


def schema(engine: Engine) -> dict[str, set[str]]:
    found = inspect(engine)
    return {t: {c["name"] for c in found.get_columns(t)} for t in found.get_table_names() if t != "alembic_version"}


def migrated(path: Path) -> tuple[str, Engine]:
    url = f"sqlite:///{path}"
    engine = create_engine_for(url)
    migrate.upgrade(engine)
    return url, engine


@pytest.mark.parametrize("target", ["0004", "0003", "0001", "base"])
def test_listed_drops_are_what_the_downgrade_drops(tmp_path: Path, target: str) -> None:
    _, engine = migrated(tmp_path / "db.sqlite3")
    before = schema(engine)
    plan = migrate.downgrade_plan(engine, target)
    assert [s.revision for s in plan] == sorted((s.revision for s in plan), reverse=True) and plan
    migrate.downgrade(engine, target)
    after = schema(engine)
    dropped_tables = {t for s in plan for t in s.tables}
    assert dropped_tables == set(before) - set(after)
    # columns of the tables that remain (a step may drop columns of a table an older step then drops)
    listed = {c for s in plan for c in s.columns if c.split(".")[0] not in dropped_tables}
    assert listed == {f"{t}.{c}" for t in after for c in before[t] - after[t]}
    assert migrate.downgrade_plan(engine, target) == []  # nothing left to revert


def test_downgrade_needs_yes_and_says_what_it_drops(tmp_path: Path) -> None:
    url, engine = migrated(tmp_path / "db.sqlite3")
    create_topic(engine, "kept")
    head = migrate.head_revision()
    runner = CliRunner()
    refused = runner.invoke(create_cli(), ["db", "downgrade", "0003", "--db", url])
    assert refused.exit_code == 2, refused.output
    assert "0004 (judgment hash chain): drops" in refused.stderr and "column topics.chain_head" in refused.stderr
    assert refused.stderr.strip().splitlines()[-1].endswith("run again with --yes to downgrade")
    assert migrate.current_revision(engine) == head and "chain_head" in schema(engine)["topics"]

    unknown = runner.invoke(create_cli(), ["db", "downgrade", "0999", "--yes", "--db", url])
    assert unknown.exit_code == 2 and "0999" in unknown.stderr and "Traceback" not in unknown.output

    done = runner.invoke(create_cli(), ["db", "downgrade", "0003", "--yes", "--db", url])
    assert done.exit_code == 0, done.output
    assert "column judgments.seq" in done.stderr and "database at revision 0003" in done.stdout
    assert migrate.current_revision(engine) == "0003" and "chain_head" not in schema(engine)["topics"]
    again = runner.invoke(create_cli(), ["db", "downgrade", "0003", "--db", url])  # nothing to drop: no --yes
    assert again.exit_code == 0, again.output
