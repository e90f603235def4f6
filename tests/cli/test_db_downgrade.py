"""``reviewdepth db downgrade`` lists what each reverted migration drops and changes nothing without ``--yes``.
The listed tables and columns are checked against the schema a real downgrade leaves (SQLAlchemy's inspector)."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import Engine, inspect
from typer.testing import CliRunner

from reviewdepth.cli.app import create_cli
from reviewdepth.services.admin.topics import create_topic
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
    refused = runner.invoke(create_cli(), ["db", "downgrade", "0003", "--force", "--db", url])
    assert refused.exit_code == 2, refused.output
    assert "0004 (judgment hash chain): drops" in refused.stderr and "column topics.chain_head" in refused.stderr
    assert refused.stderr.strip().splitlines()[-1].endswith("run again with --yes to downgrade")
    assert migrate.current_revision(engine) == head and "chain_head" in schema(engine)["topics"]

    unknown = runner.invoke(create_cli(), ["db", "downgrade", "0999", "--yes", "--db", url])
    assert unknown.exit_code == 2 and "0999" in unknown.stderr and "Traceback" not in unknown.output

    done = runner.invoke(create_cli(), ["db", "downgrade", "0003", "--yes", "--force", "--db", url])
    assert done.exit_code == 0, done.output
    assert "column judgments.seq" in done.stderr and "database at revision 0003" in done.stdout
    assert migrate.current_revision(engine) == "0003" and "chain_head" not in schema(engine)["topics"]
    again = runner.invoke(create_cli(), ["db", "downgrade", "0003", "--db", url])  # nothing to drop: no --yes
    assert again.exit_code == 0, again.output


@pytest.mark.parametrize(("target", "lossy"), [("0018", ["0020", "0019"]), ("0016", ["0020", "0019"]),
                                               ("0014", ["0020", "0019", "0015"])])
def test_downgrade_that_loses_meaning_needs_force_and_says_what_is_lost(tmp_path: Path, target: str,
                                                                         lossy: list[str]) -> None:
    url, engine = migrated(tmp_path / "db.sqlite3")
    create_topic(engine, "kept")
    head = migrate.head_revision()
    runner = CliRunner()
    refused = runner.invoke(create_cli(), ["db", "downgrade", target, "--yes", "--db", url])
    assert refused.exit_code == 2, refused.output
    listing = [line for line in refused.stderr.splitlines() if "LOSES MEANING" in line]
    assert [line.split()[0] for line in listing] == lossy  # each lossy step says so in the listing, newest first
    last = refused.stderr.strip().splitlines()[-1]
    assert "loses meaning" in last and last.endswith("run again with --yes --force to downgrade anyway")
    assert ("0019: the evidence chain" in last) and (("0015: every maybe and skip decision turns into undecided"
                                                      in last) == ("0015" in lossy))
    assert migrate.current_revision(engine) == head and "evidence_events" in schema(engine)
    done = runner.invoke(create_cli(), ["db", "downgrade", target, "--yes", "--force", "--db", url])
    assert done.exit_code == 0, done.output
    assert migrate.current_revision(engine) == target and "evidence_events" not in schema(engine)


def test_downgrade_that_loses_nothing_needs_no_force(tmp_path: Path) -> None:
    url, engine = migrated(tmp_path / "db.sqlite3")
    runner = CliRunner()
    assert runner.invoke(create_cli(), ["db", "downgrade", "0018", "--yes", "--force", "--db", url]).exit_code == 0
    done = runner.invoke(create_cli(), ["db", "downgrade", "0017", "--yes", "--db", url])
    assert done.exit_code == 0, done.output
    assert "LOSES MEANING" not in done.stderr and migrate.current_revision(engine) == "0017"


def test_downgrade_to_base_needs_no_force(tmp_path: Path) -> None:
    """Nothing is left whose meaning could change: every table is listed as dropped."""
    url, engine = migrated(tmp_path / "db.sqlite3")
    done = CliRunner().invoke(create_cli(), ["db", "downgrade", "base", "--yes", "--db", url])
    assert done.exit_code == 0, done.output
    assert "LOSES MEANING" in done.stderr and migrate.current_revision(engine) is None
