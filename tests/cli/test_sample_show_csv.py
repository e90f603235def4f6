"""``sample show --format csv`` writes the drawn documents as CSV (it printed the JSON), which ``sample draw
--format csv`` also writes, with whether each is coded; a coded file of them comes back through ``import csv``."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from typer.testing import CliRunner

from reviewdepth.cli.app import create_cli


def _run(*args: str) -> str:
    result = CliRunner().invoke(create_cli(), list(args))
    assert result.exit_code == 0, result.output
    return result.output


def test_sample_show_csv_lists_the_drawn_documents_and_which_are_coded(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 's.sqlite3'}"
    _run("db", "upgrade", "--db", db)
    run = tmp_path / "run.txt"
    run.write_text("".join(f"T Q0 =d{i} {i + 1} {100 - i} sys\n" for i in range(40)))
    _run("import", "run", str(run), "--db", db)
    _run("sample", "draw", "T", "--size", "10", "--seed", "4", "--db", db)
    drawn = json.loads(_run("sample", "show", "T", "1", "--format", "json", "--db", db))["documents"]
    coded = tmp_path / "coded.csv"
    coded.write_text("doc,label\n" + "".join(f"'{d['doc_id']},1\n" for d in drawn[:3]))
    _run("import", "csv", str(coded), "--topic", "T", "--db", db)
    rows = list(csv.DictReader(io.StringIO(_run("sample", "show", "T", "1", "--format", "csv", "--db", db))))
    # the ids begin with "=": written neutralised, as every CSV the tool writes (docs/formats.md)
    assert [(r["doc_id"], int(r["rank"])) for r in rows] == [(f"'{d['doc_id']}", d["rank"]) for d in drawn]
    assert [r["coded"] for r in rows] == ["yes"] * 3 + ["no"] * 7
