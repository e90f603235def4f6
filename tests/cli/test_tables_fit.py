"""Issue 39, item 5: tables a reviewer can read at 80 columns (any pipe): ``reviewdepth topics`` keeps each topic
id and its last judgment's time on one line (it printed "CD0088 / 03" and a timestamp with microseconds over six
lines, so ``grep CD008803`` found nothing), counts carry separators, and no listing prints Python's True, False or
None."""

from __future__ import annotations

import re

from sqlalchemy import Engine
from typer.testing import CliRunner

from reviewdepth.cli.app import create_cli
from reviewdepth.services.admin.topics import create_topic
from reviewdepth.services.demo import DEMO_TOPIC, run_demo


def _run(*args: str) -> str:
    result = CliRunner().invoke(create_cli(), list(args), env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    return result.stdout


def test_topics_at_80_columns_keep_ids_and_times_whole(engine: Engine, empty_db_url: str) -> None:
    run_demo(engine)
    out = _run("topics", "--db", empty_db_url)
    assert max(len(line) for line in out.splitlines()) <= 80
    row = next(line for line in out.splitlines() if DEMO_TOPIC in line)
    assert re.search(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\s*$", row), row  # to the second, one line
    assert "5,220" in row and "1,000" in row  # size and reviewed, with separators
    # a long name beside it: the id and the date stay whole on the topic's line, the time under the date
    create_topic(engine, "another-topic-with-a-long-name")
    out = _run("topics", "--db", empty_db_url)
    assert max(len(line) for line in out.splitlines()) <= 80
    lines = out.splitlines()
    at = next(i for i, line in enumerate(lines) if DEMO_TOPIC in line)
    assert re.search(r"\b\d{4}-\d{2}-\d{2}\b", lines[at]), lines[at]
    assert re.search(r"\b\d{2}:\d{2}:\d{2}\b", lines[at] + lines[at + 1])
    for listing in (("topics",), ("queue", "list", DEMO_TOPIC), ("judgments", DEMO_TOPIC)):
        text = _run(*listing, "--db", empty_db_url)
        assert not re.search(r"\b(True|False|None)\b", text), (listing, text[:500])
