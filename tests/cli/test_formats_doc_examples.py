"""docs/formats.md's console examples that import a file shipped in tests/data: each run on an empty database
prints what the page shows ("…" in a line stands for any text: a digest, the rest of a long message)."""

from __future__ import annotations

import glob
import os
import re
import shlex
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from reviewdepth.cli.app import create_cli

ROOT = Path(__file__).resolve().parents[2]
BLOCK = re.compile(r"```\n\$ (reviewdepth import [^\n]*tests/data/[^\n]*)\n(.*?)```", re.S)


def _examples() -> list[tuple[str, list[str]]]:
    return [(command, output.splitlines()) for command, output in BLOCK.findall((ROOT / "docs" / "formats.md")
                                                                                  .read_text())]


def test_the_page_has_examples() -> None:
    assert {shlex.split(c)[2] for c, _ in _examples()} >= {"ris", "rayyan", "covidence"}


@pytest.mark.parametrize(("command", "expected"), _examples(), ids=lambda v: v if isinstance(v, str) else "")
def test_example_prints_what_the_page_shows(command: str, expected: list[str], tmp_path: Path,
                                            sqlite_template: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copyfile(sqlite_template, tmp_path / "store.db")
    monkeypatch.chdir(ROOT)
    words = [m for w in shlex.split(command)[1:] for m in (sorted(glob.glob(w)) if "*" in w else [w])]
    result = CliRunner().invoke(create_cli(), words, env={**os.environ,
                                                          "REVIEWDEPTH_DATABASE_URL": f"sqlite:///{tmp_path}/store.db"})
    assert result.exit_code == 0, result.output
    actual = result.output.splitlines()
    assert len(actual) == len(expected)
    for want, got in zip(expected, actual, strict=True):
        assert re.fullmatch(".*".join(re.escape(part) for part in want.split("…")), got), (want, got)
