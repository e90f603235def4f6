"""docs/formats.md's three-search worked example ("Several searches into one topic"), run command by command on
SQLite and PostgreSQL from the checkout's root (its files are under tests/data): every line the page shows must be
what the commands print. A line ending in "…" is checked up to that character."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from sqlalchemy import Engine

from tests.services.test_worked_example_docs import run_session

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "formats.md"


def test_the_three_search_example_runs_as_documented(engine: Engine, empty_db_url: str,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    block = re.search(r"<!-- sources-example -->\n```console\n(.*?)```\n<!-- /sources-example -->", DOC.read_text(),
                      re.S)
    assert block is not None, "the sources-example block is missing from docs/formats.md"
    steps: list[tuple[str, list[str]]] = []
    for line in block.group(1).splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], []))
        else:
            steps[-1][1].append(line)
    assert [c.split()[1:3] for c, _ in steps[:3]] == [["import", "ris"], ["import", "ris"], ["import", "records"]]
    monkeypatch.chdir(ROOT)
    run_session(steps, empty_db_url)  # the database `engine` migrated
