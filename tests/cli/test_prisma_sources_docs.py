"""docs/formats.md's three-search worked example ("Several searches into one topic"), run command by command on
SQLite and PostgreSQL from the checkout's root (its files are under tests/data): every line the page shows must be
what the commands print (a line ending in "…" is checked up to that character); and the text of its flow diagram's
boxes that docs/review-quality.md shows ("Identification per source") must be the SVG's."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from sqlalchemy import Engine
from typer.testing import CliRunner

from reviewdepth.cli.app import create_cli
from reviewdepth.report.prisma_diagram import MUTED
from tests.services.test_worked_example_docs import run_session

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "formats.md"
QUALITY = ROOT / "docs" / "review-quality.md"
SVG = "{http://www.w3.org/2000/svg}"


def box_text(svg: str) -> list[str]:
    """Each box's lines in drawing order, its grey notes left out, an indented line two spaces further in."""
    out = []
    for group in ET.fromstring(svg).iter(f"{SVG}g"):
        if group.get("class") != "box":
            continue
        out.append(f"[{group.get('data-box')}]")
        rect = group.find(f"{SVG}rect")
        assert rect is not None
        for text in group.iter(f"{SVG}text"):
            if text.get("fill") != MUTED:
                indent = "    " if float(text.get("x") or 0) > float(rect.get("x") or 0) + 8 else "  "
                out.append(indent + "".join(text.itertext()))
    return out


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
    result = CliRunner().invoke(create_cli(), ["prisma", "lbp", "--queue", "MEDLINE", "--format", "svg"],
                                env={"REVIEWDEPTH_DATABASE_URL": empty_db_url})
    assert result.exit_code == 0, result.output
    # the CLI's choice (an enum) reaches the diagram as its word, never as the enum's repr
    assert "Policy." not in result.stdout and "label policy" in result.stdout
    shown = re.search(r"### Identification per source\n.*?```text\n(.*?)```", QUALITY.read_text(), re.S)
    assert shown is not None
    assert box_text(result.stdout) == shown.group(1).splitlines()
