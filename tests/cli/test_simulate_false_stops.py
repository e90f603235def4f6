"""Issue 38, item 5: `simulate` prints false stops per run with the interval the guarantee is about, in every
format: the 80-column table (which used to print the bare rate, and cut its figures at 80 columns), CSV, JSON and
HTML all carry the rate and its Clopper–Pearson bounds, and the table's figures are whole."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from typer.testing import CliRunner

from reviewdepth.cli.app import create_cli

DATA = Path(__file__).resolve().parents[1] / "data" / "clef2019"


def _simulate(fmt: str) -> str:
    args = ["simulate", "--qrels", str(DATA / "CD012551.abs.qrels"), "--run",
            str(DATA / "CD012551.sheffield-baseline.run"), "--design", "rest", "--sample-size", "100",
            "--replicates", "20", "--format", fmt]
    result = CliRunner().invoke(create_cli(), args, env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    return result.stdout


def test_false_stops_per_run_come_with_their_interval_in_every_format() -> None:
    rules = json.loads(_simulate("json"))["rules"]
    assert rules and all(r["false_stop_low"] is not None and r["false_stop_high"] is not None for r in rules)
    table = _simulate("table")
    assert max(len(line) for line in table.splitlines()) <= 80
    for rule in rules:
        interval = f"[{rule['false_stop_low']:.3f}–{rule['false_stop_high']:.3f}]"
        assert interval in table, (rule["rule"], table)
    rows = list(csv.DictReader(io.StringIO(_simulate("csv"))))
    assert [(r["rule"], float(r["false_stop_high"])) for r in rows] == [(r["rule"], r["false_stop_high"])
                                                                          for r in rules]
    html = _simulate("html")
    assert "False stops per run [interval]" in html
