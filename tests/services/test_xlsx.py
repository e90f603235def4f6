"""Excel workbooks in and out (issue 28 item 4): ``import xlsx`` reads the columns ``judge --file`` reads,
``export xlsx`` writes the judgment log in them; export → import gives the same judgments; a bad row names
the file, the row and the column, exits 2 and stores nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import Engine, func, select
from typer.testing import CliRunner

from reviewdepth.cli.app import create_cli
from reviewdepth.formats.errors import InputError
from reviewdepth.services.files.judgment_files import record_judgment_file
from reviewdepth.services.review.exports import export_xlsx
from reviewdepth.services.review.judgments import list_judgments, record_judgment
from reviewdepth.store.models import Judgment

pytest.importorskip("openpyxl", reason="xlsx needs the xlsx extra (openpyxl)")
pytest.importorskip("rispy", reason="the topics' populations are RIS files")
import openpyxl

from reviewdepth.services.files.ris_import import import_ris

DATA = Path(__file__).resolve().parents[1] / "data" / "screening"
IDS = ("pm1", "pm2", "pm3", "pm4", "555")


def _population(engine: Engine, tmp_path: Path, topic: str) -> None:
    path = tmp_path / f"{topic}.ris"
    path.write_text("".join(f"TY  - JOUR\nID  - {d}\nER  - \n\n" for d in IDS))
    import_ris(engine, str(path), topic=topic, again=True)


def _log(engine: Engine, topic: str) -> list[tuple[object, ...]]:
    return [(j.doc_id, j.label, j.relevant, j.grade, j.reviewer, j.role, j.note, j.queue)
            for j in list_judgments(engine, topic)]


def _count(engine: Engine) -> int:
    with engine.connect() as conn:
        return int(conn.execute(select(func.count()).select_from(Judgment)).scalar_one())


def test_workbook_reads_as_its_csv_twin(engine: Engine, tmp_path: Path) -> None:
    """The committed workbook (numbers as labels, mixed-case header, a blank row) records what the same sheet
    saved as CSV records through ``judge --file``."""
    for topic in ("X", "C"):
        _population(engine, tmp_path, topic)
    record_judgment_file(engine, "X", str(DATA / "judgments.xlsx"), reviewer="import")
    record_judgment_file(engine, "C", str(DATA / "judgments.csv"), reviewer="import")
    assert _log(engine, "X") == _log(engine, "C")
    assert [row[:3] for row in _log(engine, "X")] == [("pm1", "1", True), ("pm2", "0", False),
                                                       ("pm4", "exclude", False), ("555", "include", True)]


def test_export_then_import_gives_the_same_judgments(engine: Engine, tmp_path: Path) -> None:
    _population(engine, tmp_path, "A")
    record_judgment(engine, "A", "pm1", "1", reviewer="ana", note="=not a formula")
    record_judgment(engine, "A", "pm1", "0", reviewer="ben", role="qc")
    record_judgment(engine, "A", "007", "2", reviewer="ana", allow_unqueued=True)
    record_judgment(engine, "A", "pm4", "exclude", reviewer="ana", role="sample")
    exported = export_xlsx(engine, "A")
    assert (exported.rows, exported.relevant) == (4, 2)
    path = tmp_path / "A.xlsx"
    path.write_bytes(exported.data)
    sheet = openpyxl.load_workbook(path).worksheets[0]
    assert [c.value for c in sheet[1]] == ["doc", "label", "reviewer", "role", "note", "queue", "reason", "stage"]
    assert sheet["E2"].value == "=not a formula" and sheet["E2"].data_type == "s"
    _population(engine, tmp_path, "B")
    db = engine.url.render_as_string(hide_password=False)
    result = CliRunner().invoke(create_cli(), ["import", "xlsx", str(path), "--topic", "B", "--allow-unqueued",
                                               "--db", db])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("imported 4 judgments of topic 'B'")
    # 007 was in no queue: served from none in A, from the topic's newest queue in B (an empty queue cell)
    expected = [row if row[0] != "007" else (*row[:7], "records") for row in _log(engine, "A")]
    assert _log(engine, "B") == expected
    out = tmp_path / "B.xlsx"
    result = CliRunner().invoke(create_cli(), ["export", "xlsx", "B", "-o", str(out), "--db", db])
    assert result.exit_code == 0 and "wrote 4 judgments" in result.stdout


def _book(path: Path, rows: list[list[object]]) -> Path:
    book = openpyxl.Workbook()
    for row in rows:
        book.active.append(row)
    book.save(path)
    return path


BAD: list[tuple[list[list[object]], int, str]] = [  # (rows, line, field): one database for every case
    ([["doc", "label"], ["pm1", 1], ["pm2", "perhaps"]], 3, "label"),
    ([["doc", "label", "verdict"], ["pm1", 1]], 1, "verdict"),
    ([["doc", "label"], ["pm1", 1], [None, 0]], 3, "doc"),
    ([["doc", "label"], ["pm1", 1], ["pm2", 0, "stray"]], 3, "column 3"),
    ([["doc", "label", "role"], ["pm1", 1, "boss"]], 2, "role"),
]


def test_a_bad_row_is_refused_naming_row_and_column(engine: Engine, tmp_path: Path) -> None:
    _population(engine, tmp_path, "A")
    db = engine.url.render_as_string(hide_password=False)
    for number, (rows, line, field) in enumerate(BAD):
        path = _book(tmp_path / f"bad{number}.xlsx", rows)
        with pytest.raises(InputError) as caught:
            record_judgment_file(engine, "A", str(path), reviewer="ana")
        assert (caught.value.path, caught.value.line, caught.value.field) == (str(path), line, field)
        result = CliRunner().invoke(create_cli(), ["import", "xlsx", str(path), "--topic", "A", "--db", db])
        assert result.exit_code == 2 and result.stderr == f"reviewdepth: error: {caught.value}\n"
    path = tmp_path / "broken.xlsx"
    path.write_bytes(b"PK\x03\x04" + b"\x00" * 40)
    with pytest.raises(InputError) as caught:
        record_judgment_file(engine, "A", str(path), reviewer="ana")
    assert caught.value.path == str(path) and "not an Excel .xlsx workbook" in caught.value.message
    assert _count(engine) == 0


def test_import_xlsx_adds_the_reasons_the_topic_lacks_only_when_asked(engine: Engine, tmp_path: Path) -> None:
    """``--known-reasons`` (the default) refuses the row whose reason the topic lacks; ``--add-reasons`` adds the
    workbook's reasons to the topic's list, in file order, and records the exclusions with them."""
    from reviewdepth.formats.xlsx import write_xlsx
    from reviewdepth.store.models import TopicReason

    _population(engine, tmp_path, "X")
    book = tmp_path / "reasons.xlsx"
    book.write_bytes(write_xlsx(["doc", "label", "reason"], [["pm1", "0", "wrong population"], ["pm2", "1", None],
                                                             ["pm3", "0", "wrong design"]]))
    db = ("--db", engine.url.render_as_string(hide_password=False))
    result = CliRunner().invoke(create_cli(), ["import", "xlsx", str(book), "--topic", "X", "--reviewer", "ana",
                                               *db])
    assert result.exit_code == 2 and f"{book}:2: field reason:" in result.stderr, result.output
    assert _count(engine) == 0
    result = CliRunner().invoke(create_cli(), ["import", "xlsx", str(book), "--topic", "X", "--reviewer", "ana",
                                               "--add-reasons", *db])
    assert result.exit_code == 0, result.output
    with engine.connect() as conn:
        assert list(conn.execute(select(TopicReason.reason).order_by(TopicReason.id)).scalars()) == [
            "wrong population", "wrong design"]
    assert [(j.doc_id, j.reason) for j in list_judgments(engine, "X")] == [
        ("pm1", "wrong population"), ("pm2", None), ("pm3", "wrong design")]
