"""CONTRIBUTING's "Add an import format", step 4: every ``reviewdepth import`` format has its section in
docs/formats.md (a heading naming ``import NAME``), or, for the trec_eval files, in the README."""

from __future__ import annotations

from pathlib import Path

import typer

from reviewdepth.cli.app import create_cli

ROOT = Path(__file__).resolve().parents[2]


def _import_formats() -> list[str]:
    command = typer.main.get_command(create_cli())
    group = command.commands["import"]  # type: ignore[attr-defined]
    return sorted(group.commands)


def test_every_import_format_is_documented() -> None:
    formats = _import_formats()
    assert {"run", "qrels", "csv", "asreview", "ris"} <= set(formats)
    headings = [line for line in (ROOT / "docs" / "formats.md").read_text().splitlines() if line.startswith("#")]
    readme = (ROOT / "README.md").read_text()
    missing = [name for name in formats
               if not any(f"`import {name}" in h for h in headings) and f"reviewdepth import {name}" not in readme]
    assert not missing, f"import formats without a section in docs/formats.md: {missing}"
