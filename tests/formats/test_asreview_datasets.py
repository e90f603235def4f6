"""ASReview's own test datasets (``tests/data/asreview/demo_data``, copied from ASReview's repository) read as
ASReview reads them: the same number of records, in the same order, numbered from 0 as ASReview's ``record_id``,
with the same labels and titles. The expected readings were written by ASReview itself
(``tests/data/asreview/make_datasets.py``, ``asreview.load_dataset``); this test reads the files through
reviewdepth's readers only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reviewdepth.formats.errors import InputError
from reviewdepth.formats.records import read_screening_records

DEMO = Path(__file__).resolve().parents[1] / "data" / "asreview" / "demo_data"
EXPECTED = sorted(DEMO.glob("*.expected.json"))
TABLES = [p for p in EXPECTED if not p.name.endswith(".ris.expected.json")]
RIS = [p for p in EXPECTED if p.name.endswith(".ris.expected.json")]


def _expected(path: Path) -> tuple[Path, dict[str, object]]:
    return path.with_name(path.name.removesuffix(".expected.json")), json.loads(path.read_text())


def test_every_asreview_file_has_its_expected_reading() -> None:
    assert len(TABLES) >= 12 and len(RIS) >= 2
    assert all(_expected(p)[0].exists() for p in EXPECTED)


@pytest.mark.parametrize("expected_path", TABLES, ids=lambda p: p.name.removesuffix(".expected.json"))
def test_records_files_read_as_asreview_reads_them(expected_path: Path) -> None:
    if expected_path.name.startswith("generic_labels.xlsx"):
        pytest.importorskip("openpyxl")
    source, want = _expected(expected_path)
    read = read_screening_records(source.read_bytes(), str(source), "position")
    assert len(read.records) == want["records"]
    assert [r.doc_id for r in read.records] == [str(i) for i in want["record_ids"]]  # type: ignore[attr-defined]
    assert [r.label for r in read.records] == want["labels"]
    assert sum(r.title is not None for r in read.records) == want["titled"]
    # auto: the id column when present and distinct, else ASReview's positions, saying why
    auto = read_screening_records(source.read_bytes(), str(source))
    if auto.ids.source == "position":
        assert [r.doc_id for r in auto.records] == [r.doc_id for r in read.records]
        assert auto.ids.why and "0-based" in auto.ids.describe()
    else:
        assert auto.ids.column is not None and len({r.doc_id for r in auto.records}) == len(auto.records)


def test_auto_ids_say_why_they_are_positions() -> None:
    labels = DEMO / "generic_labels.csv"
    read = read_screening_records(labels.read_bytes(), str(labels))
    assert read.ids.describe() == ("ids: position, 0-based, as ASReview's record_id (the file's id column 'id' "
                                   "repeats '12345' at lines 2 and 3)")
    record_id = DEMO / "record_id.csv"
    read = read_screening_records(record_id.read_bytes(), str(record_id))
    assert read.ids.describe() == "ids: column 'record_id'"
    assert [r.doc_id for r in read.records] == [str(n) for n in range(12, 2, -1)]
    embase = DEMO / "embase.csv"
    assert read_screening_records(embase.read_bytes(), str(embase)).ids.why == "the file has no id column"


def test_a_named_id_column_that_repeats_is_refused_naming_both_lines() -> None:
    labels = DEMO / "generic_labels.csv"
    with pytest.raises(InputError) as caught:
        read_screening_records(labels.read_bytes(), str(labels), "id")
    assert (caught.value.line, caught.value.field) == (3, "id") and "also on line 2" in str(caught.value)
    with pytest.raises(InputError) as caught:
        read_screening_records(labels.read_bytes(), str(labels), "no_such_column")
    assert (caught.value.line, caught.value.field) == (1, "no_such_column")


@pytest.mark.parametrize("expected_path", RIS, ids=lambda p: p.name.removesuffix(".expected.json"))
def test_ris_files_read_as_asreview_reads_them(expected_path: Path) -> None:
    pytest.importorskip("rispy")
    from reviewdepth.formats.ris import read_ris_records

    source, want = _expected(expected_path)
    records, rule = read_ris_records(source.read_bytes(), str(source), "position")
    assert len(records) == want["records"] and rule.source == "position"
    assert [r.doc_id for r in records] == [str(i) for i in want["record_ids"]]  # type: ignore[attr-defined]
    assert [r.label for r in records] == want["labels"]


@pytest.mark.parametrize(("data", "named"), [
    ("title,label\nA,1\n".encode("utf-16"), "UTF-16"),  # Python writes the byte-order mark
    ("title,label\nA,1\n".encode("utf-16-le"), "UTF-16 (no byte-order mark)"),
    ("title,label\nA,1\n".encode("utf-32"), "UTF-32"),
])
def test_utf16_and_utf32_files_are_refused_naming_the_encoding(data: bytes, named: str) -> None:
    with pytest.raises(InputError) as caught:
        read_screening_records(data, "wide.csv")
    assert caught.value.line == 1 and f"is {named} text" in str(caught.value) and "UTF-8" in str(caught.value)
