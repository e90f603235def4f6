"""Issue 39, item 1: the demo's advice is not a dead end. ``demo --db`` on a new SQLite file creates the schema
(it refused with "run db upgrade first"), and the commands it says to run next find the demo's topic with the
``--db`` it prints (they answered "unknown topic 'CD008803'")."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from typer.testing import CliRunner

from reviewdepth.cli.app import create_cli


def _run(args: list[str]) -> tuple[int, str, str]:
    result = CliRunner().invoke(create_cli(), args, env={"COLUMNS": "200"})
    return result.exit_code, result.stdout, result.stderr


def test_the_demo_on_a_new_file_and_the_commands_it_prints(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'new.sqlite3'}"
    code, out, err = _run(["demo", "--db", url])
    assert code == 0, err
    assert "95% recall" in out
    advice = next(line for line in err.splitlines() if "to go on with CD008803" in line)
    assert f"--db {url}" in advice
    example = re.search(r"e\.g\. (reviewdepth .+?)(?:;|$)", advice)
    assert example is not None
    code, out, err = _run(shlex.split(example.group(1))[1:])
    assert code == 0 and "CD008803" in out, err
    # every command the report's answer names runs with the printed --db
    commands = set(re.findall(r"reviewdepth ((?:plan|sample plan|report|watch) CD008803)", _run(
        ["report", "CD008803", "--db", url])[1]))
    assert commands
    for command in commands:
        code, _, err = _run([*command.split(), "--db", url])
        assert code in (0, 1) and "unknown topic" not in err, (command, err)


def test_an_existing_older_database_is_still_refused(tmp_path: Path) -> None:
    import sqlite3

    path = tmp_path / "other.sqlite3"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE unrelated (x INTEGER)")
    code, _, err = _run(["demo", "--db", f"sqlite:///{path}"])
    assert code == 2 and "db upgrade" in err and err.count("\n") == 1, err
