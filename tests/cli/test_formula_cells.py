"""Issue 40, item 2: no CSV the tool writes carries a live spreadsheet formula (OWASP CSV injection), and reading
the tool's own files back restores every text exactly.

Notes and document ids that start with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return (the classic payloads
``=HYPERLINK(…)``, ``+1+1``, ``=cmd|' /C calc'!A0``) go through ``judgments --format csv``, the labels CSV and the
ASReview CSV export; every text cell of those files must not start with a trigger, and ``judge --file`` of the
labels CSV must record the same ids."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import Engine
from typer.testing import CliRunner

from reviewdepth.cli.app import create_cli
from reviewdepth.formats.cells import FORMULA_TRIGGERS, neutralised, restored
from reviewdepth.services.admin.topics import create_topic
from reviewdepth.services.files.rankings import RankedDocument, store_ranking
from reviewdepth.services.review.judgments import list_judgments, record_judgments

PAYLOADS = ['=HYPERLINK("http://example.invalid/x","click")', "+1+1", "-2+3", "@SUM(1,2)", "\t=1+1", "\r=1+1",
            "=cmd|' /C calc'!A0", "'=already marked", "''+twice", "plain note", "'just an apostrophe"]


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(create_cli(), list(args))
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


@given(st.text(alphabet=st.sampled_from(["=", "+", "-", "@", "\t", "\r", "'", "a", " ", "1"]), max_size=8))
def test_a_cell_round_trips_and_never_starts_like_a_formula(text: str) -> None:
    cell = neutralised(text)
    assert restored(cell) == text
    assert not cell.startswith(FORMULA_TRIGGERS)


def _text_cells(text: str) -> list[str]:
    return [cell for row in csv.reader(io.StringIO(text, newline="")) for cell in row]


def test_exports_carry_no_formula_and_read_back_exactly(engine: Engine, empty_db_url: str, tmp_path: Path) -> None:
    db = ("--db", empty_db_url)
    create_topic(engine, "t")
    docs = [f"d{i}" for i in range(len(PAYLOADS))] + ["=evil-doc", "-minus-doc", "@at-doc"]
    store_ranking(engine, "t", "q", [RankedDocument(d) for d in docs])
    record_judgments(engine, "t", [(d, "1") for d in docs[:len(PAYLOADS)]], reviewer="ana",
                     notes=list(PAYLOADS))
    record_judgments(engine, "t", [(d, "0") for d in docs[len(PAYLOADS):]], reviewer="ana")

    code, out, err = invoke("judgments", "t", "--format", "csv", *db)
    assert code == 0, err
    cells = _text_cells(out)
    assert not [c for c in cells if c.startswith(FORMULA_TRIGGERS)], out
    rows = list(csv.DictReader(io.StringIO(out, newline="")))
    assert [restored(r["note"]) for r in rows if r["note"]] == PAYLOADS  # the log's notes, exactly

    for fmt in ("csv", "asreview"):
        target = tmp_path / f"labels.{fmt}.csv"
        code, _, err = invoke("export", "labels", "t", "--format", fmt, "-o", str(target), *db)
        assert code == 0, err
        written = target.read_text()
        assert not [c for c in _text_cells(written) if c.startswith(FORMULA_TRIGGERS)], written
        assert "'=evil-doc" in written and "'-minus-doc" in written and "'@at-doc" in written

    # the tool reads its own labels file back: the ids are the documents', not the marked cells
    export = (tmp_path / "labels.csv.csv").read_text().splitlines()
    judge_file = tmp_path / "again.csv"
    judge_file.write_text("doc,label\n" + "\n".join(
        ",".join(line.split(",")[1:]) for line in export[1:]) + "\n")
    code, _, err = invoke("judge", "t", "--file", str(judge_file), "--reviewer", "bo", *db)
    assert code == 0, err
    recorded = {j.doc_id for j in list_judgments(engine, "t", reviewer="bo")}
    assert recorded == set(docs)
