"""`reviewdepth import csv --date-format`, the CSV refusals of issue 15 item 5 and the header rule of issue 26 item
1 through the command, on both databases: exit 2, one line naming file:line:field, nothing stored."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from reviewdepth.cli.app import create_cli


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(create_cli(), list(args))
    return result.exit_code, result.stdout, result.stderr


def test_import_csv_date_format_and_refusals(empty_db_url: str, tmp_path: Path) -> None:
    db = ("--db", empty_db_url)
    assert invoke("db", "upgrade", *db)[0] == 0
    export = tmp_path / "T.csv"
    export.write_text("doc;label;when;note\nd1;Responsive;03/04/2024;fine\nd2;Not Responsive;04/05/2024;a; b\n")
    command = ("import", "csv", str(export), "--map", "doc=doc,label=label,time=when", "--allow-unqueued", *db)
    code, _, err = invoke(*command)
    assert code == 2 and err.count("\n") == 1 and err.startswith("reviewdepth: error: ")
    assert f"{export}:2: field when: date '03/04/2024' could be day-first or month-first" in err
    assert "--date-format '%d/%m/%Y' or '%m/%d/%Y'" in err
    code, _, err = invoke("judgments", "T", *db)
    assert code == 2 and "unknown topic" in err  # nothing stored
    code, _, _ = invoke(*command, "--date-format", "%m/%d/%Y")
    assert code == 0
    code, out, _ = invoke("judgments", "T", "--format", "json", *db)
    stored = {j["doc_id"]: (j["relevant"], j["recorded_at"][:10]) for j in json.loads(out)}
    assert stored == {"d1": (True, "2024-03-04"), "d2": (False, "2024-04-05")}


def test_import_qrels_level_above_every_grade(empty_db_url: str, tmp_path: Path) -> None:
    db = ("--db", empty_db_url)
    assert invoke("db", "upgrade", *db)[0] == 0
    qrels = tmp_path / "binary.qrels"
    qrels.write_text("1 0 a 1\n1 0 b 0\n")
    code, _, err = invoke("import", "qrels", str(qrels), "--level", "2", *db)
    assert code == 2 and err == (f"reviewdepth: error: {qrels}: field --level: no judgment reaches --level 2: the "
                                 "highest grade in the file is 1 (line 1), so no graded judgment would be relevant; "
                                 "use --level 1 or lower\n")
    code, _, err = invoke("judgments", "1", *db)
    assert code == 2 and "unknown topic" in err  # nothing stored
    assert invoke("import", "qrels", str(qrels), *db)[0] == 0


def test_import_csv_reads_the_document_column_by_its_name(empty_db_url: str, tmp_path: Path) -> None:
    """Issue 26 item 1: a `doc,label` or `doc_id,label` file stored the row numbers 1, 2, 3 as document ids."""
    db = ("--db", empty_db_url)
    assert invoke("db", "upgrade", *db)[0] == 0
    for number, header in enumerate(("doc,label", "doc_id,label", "DocNo;Relevance")):
        export = tmp_path / f"a{number}.csv"
        delimiter = ";" if ";" in header else ","
        export.write_text(header + "\n" + "".join(f"d{i}{delimiter}{i % 2}\n" for i in (1, 2, 3)))
        code, _, err = invoke("import", "csv", str(export), "--topic", f"T{number}", "--allow-unqueued", *db)
        assert code == 0, err
        code, out, _ = invoke("judgments", f"T{number}", "--format", "json", *db)
        assert [(j["doc_id"], j["relevant"]) for j in json.loads(out)] == [("d1", True), ("d2", False), ("d3", True)]


def test_import_csv_refuses_a_header_without_a_document_column(empty_db_url: str, tmp_path: Path) -> None:
    db = ("--db", empty_db_url)
    assert invoke("db", "upgrade", *db)[0] == 0
    export = tmp_path / "synergy.csv"
    export.write_text("pmid,doi,label_included\n101,10.1/a,1\n102,10.1/b,0\n")
    code, _, err = invoke("import", "csv", str(export), "--topic", "S", "--allow-unqueued", *db)
    assert code == 2 and err == (
        f"reviewdepth: error: {export}:1: field doc: no column of the header is named like a document id; use --map "
        "doc=pmid,label=label_included or --map doc=doi,label=label_included\n")
    assert "unknown topic" in invoke("judgments", "S", *db)[2]  # nothing stored
    assert invoke("import", "csv", str(export), "--topic", "S", "--allow-unqueued", "--map", "doc=pmid", *db)[0] == 0
    code, out, _ = invoke("judgments", "S", "--format", "json", *db)
    assert [j["doc_id"] for j in json.loads(out)] == ["101", "102"]
