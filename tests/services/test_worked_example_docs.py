"""docs/review-quality.md's worked example, run command by command (SQLite and PostgreSQL): every output shown
in the page must be what the commands print. A line ending in "…" is checked up to that character."""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

import pytest
from sqlalchemy import text
from typer.testing import CliRunner

from reviewdepth.cli.app import create_cli
from reviewdepth.store.engine import create_engine_for

DOC = Path(__file__).parents[2] / "docs" / "review-quality.md"


def session(marker: str) -> list[tuple[str, list[str]]]:
    """(command, expected output lines) pairs of the console block between the marker comments."""
    block = re.search(rf"<!-- {marker} -->\n```console\n(.*?)```\n<!-- /{marker} -->", DOC.read_text(), re.S)
    assert block is not None, f"{marker} block missing from {DOC}"
    steps: list[tuple[str, list[str]]] = []
    for line in block.group(1).splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], []))
        else:
            steps[-1][1].append(line)
    return steps


def matches(expected: list[str], actual: list[str]) -> bool:
    if len(expected) != len(actual):
        return False
    return all(a.startswith(e[:-1]) if e.endswith("…") else a == e for e, a in zip(expected, actual, strict=True))


def run_session(steps: list[tuple[str, list[str]]], url: str) -> None:
    assert len(steps) >= 2
    runner = CliRunner()
    for command, expected in steps:
        if command.startswith("export "):
            continue  # the test's database URL is set instead
        words = shlex.split(command)
        if words[0] == "sqlite3":  # an edit behind the application's back, on whichever backend
            engine = create_engine_for(url)
            with engine.begin() as conn:
                conn.execute(text(words[2]))
            engine.dispose()
            continue
        assert words[0] == "reviewdepth"
        result = runner.invoke(create_cli(), words[1:], env={"REVIEWDEPTH_DATABASE_URL": url})
        actual = result.output.splitlines()
        assert matches(expected, actual), f"$ {command}\nexpected:\n" + "\n".join(expected) + "\ngot:\n" + \
            result.output
        if "BROKEN" not in result.output:
            assert result.exit_code == 0, result.output
        else:
            assert result.exit_code == 1


def test_worked_example_runs_as_documented(empty_db_url: str, tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copytree(DOC.parent / "examples", tmp_path / "docs" / "examples")
    monkeypatch.chdir(tmp_path)
    run_session(session("worked-example"), empty_db_url)
    assert "Review quality and PRISMA 2020 counts" in (tmp_path / "dual-report.html").read_text()
    run_session(session("tamper-example"), empty_db_url)
