"""The CSV judgments reader (formats/csv_judgments.py) without a database: dialect, mapping, per-row errors."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from reviewdepth.formats.csv_judgments import choose_delimiter, read_export, read_sheet
from reviewdepth.formats.errors import InputError


def test_export_sniffs_semicolons_maps_asreview_columns_and_names_the_bad_cell() -> None:
    export = read_export("Record_ID;asreview_label;t\n7;1;2024-01-02T03:04:05\n\n8;;x\n".encode("cp1252"),
                         "dir/T9.csv", None, None)
    assert export.columns == {"label": "asreview_label", "doc": "Record_ID"} and export.topic == "T9"
    export.columns["time"] = "t"
    export_rows = export.rows()
    first = next(export_rows)
    assert (first.line, first.ordinal, first.raw("doc"), first.time() is not None) == (2, 1, "7", True)
    second = next(export_rows)
    assert (second.line, second.ordinal) == (4, 2)
    with pytest.raises(InputError) as caught:
        second.time()
    assert str(caught.value) == ("dir/T9.csv:4: field t: time 'x' is neither an ISO 8601 date-time nor a "
                                 "day/month/year or month/day/year date; state its format with --date-format "
                                 "(strftime syntax, e.g. '%d.%m.%y %H:%M')")


def test_sheet_rows_must_be_as_wide_as_the_header(tmp_path: Path) -> None:
    sheet = tmp_path / "s.csv"
    sheet.write_text("DOC,label\nd1,1\nd2,0\nd3,1\nd4,0,x\n")
    header, rows = read_sheet(sheet.read_bytes(), str(sheet))
    assert header == ["doc", "label"] and next(rows) == (2, {"doc": "d1", "label": "1"})
    with pytest.raises(InputError, match=r"s.csv:5: expected 2 fields, found 3"):
        list(rows)


def semicolon_file(rows: int, stray_at: int) -> str:
    """A semicolon export with ``rows`` data rows whose row ``stray_at`` has an unquoted ';' in its note."""
    lines = ["doc;label;note"]
    for i in range(1, rows + 1):
        lines.append(f"d{i};{i % 2};{'see; d1' if i == stray_at else 'plain, text'}")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("stray_at", [1, 30])
def test_a_stray_semicolon_in_a_note_does_not_change_the_delimiter(stray_at: int) -> None:
    text = semicolon_file(60, stray_at)
    assert choose_delimiter(text) == ";"
    export = read_export(text.encode(), "T.csv", "doc=doc,label=label", None)
    rows = list(export.rows())
    assert [(r.raw("doc"), r.raw("label")) for r in rows] == [(f"d{i}", str(i % 2)) for i in range(1, 61)]
    assert rows[stray_at - 1].cells == [f"d{stray_at}", str(stray_at % 2), "see", "d1"]


def test_a_stray_semicolon_in_a_judge_file_names_its_line(tmp_path: Path) -> None:
    sheet = tmp_path / "s.csv"
    sheet.write_text(semicolon_file(5, 3))
    header, rows = read_sheet(sheet.read_bytes(), str(sheet))
    assert header == ["doc", "label", "note"] and next(rows) == (2, {"doc": "d1", "label": "1", "note": "plain, text"})
    with pytest.raises(InputError) as caught:
        list(rows)
    assert str(caught.value).endswith("s.csv:4: expected 3 fields, found 4 (a ';' inside a cell? quote that cell)")
    sheet.write_text('doc;label;note\nd1;1;"see; d2"\nd2;0;x\n')
    assert next(read_sheet(sheet.read_bytes(), str(sheet))[1]) == (2, {"doc": "d1", "label": "1", "note": "see; d2"})


@pytest.mark.parametrize(("text", "expected"), [
    ("doc,label\nd1,1\n", ","),
    ("doc\tlabel\tnote\nd1\t1\ta; b, c\n", "\t"),
    ("doc|label\nd1|1\n", "|"),
    ('doc,label,note\nd1,1,"a; b; c"\nd2,0,x;y\n', ","),  # the header decides: one ';'-field there
    ("label_included\n1\n0\n", ","),  # one column: no delimiter splits the header
    ("doc;score\nd1;0,5\nd2;0,7\n", ";"),  # decimal commas: ',' does not split the header in two
])
def test_delimiter_by_agreement_with_the_header(text: str, expected: str) -> None:
    assert choose_delimiter(text) == expected


def times(text: str, date_format: str | None = None) -> list[datetime | None]:
    export = read_export(text.encode(), "T.csv", "doc=doc,label=label,time=when", None, date_format=date_format)
    return [row.time() for row in export.rows()]


def refusal(text: str, date_format: str | None = None) -> str:
    with pytest.raises(InputError) as caught:
        times(text, date_format)
    return str(caught.value)


def test_a_stated_date_format_reads_us_dates() -> None:
    text = "doc,label,when\nd1,1,03/04/2024\nd2,0,12/31/2024\n"
    assert times(text, "%m/%d/%Y") == [datetime(2024, 3, 4, tzinfo=UTC), datetime(2024, 12, 31, tzinfo=UTC)]
    assert times("doc,label,when\nd1,1,03/04/2024 5:06 PM\n", "%d/%m/%Y %I:%M %p") == [
        datetime(2024, 4, 3, 17, 6, tzinfo=UTC)]
    assert refusal(text + "d3,1,2024-03-04\n", "%m/%d/%Y") == (
        "T.csv:4: field when: time '2024-03-04' does not match --date-format '%m/%d/%Y'")


def test_the_date_order_is_decided_by_any_date_of_the_file() -> None:
    # the decisive date (a day above 12) is on the last line; the first is read by it
    assert times("doc,label,when\nd1,1,03/04/2024\nd2,0,13/04/2024 09:30\n") == [
        datetime(2024, 4, 3, tzinfo=UTC), datetime(2024, 4, 13, 9, 30, tzinfo=UTC)]
    assert times("doc;label;when\nd1;1;03.04.2024\nd2;0;04.13.2024 5:06:07 pm\nd3;1;2024-05-06T07:08Z\n") == [
        datetime(2024, 3, 4, tzinfo=UTC), datetime(2024, 4, 13, 17, 6, 7, tzinfo=UTC),
        datetime(2024, 5, 6, 7, 8, tzinfo=UTC)]
    # day and month equal: both orders read the same date
    assert times("doc,label,when\nd1,1,03/03/2024\n") == [datetime(2024, 3, 3, tzinfo=UTC)]


def test_an_ambiguous_or_contradictory_date_is_refused_with_its_line() -> None:
    assert refusal("doc,label,when\nd1,1,2024-01-01\nd2,1,03/04/2024 10:11\nd3,0,05/06/2024\n") == (
        "T.csv:3: field when: date '03/04/2024 10:11' could be day-first or month-first and no date in the file "
        "has a day above 12; state the order with --date-format '%d/%m/%Y %H:%M' or '%m/%d/%Y %H:%M'")
    assert refusal("doc,label,when\nd1,1,13/04/2024\nd2,1,03/04/2024\nd3,0,04/13/2024\n") == (
        "T.csv:4: field when: date '04/13/2024' is not day-first, as line 2's '13/04/2024' shows this file's dates "
        "are; state the format with --date-format")


@pytest.mark.parametrize(("header", "columns"), [
    ("doc,label", {"doc": "doc", "label": "label"}),
    ("doc_id,label", {"doc": "doc_id", "label": "label"}),
    ("Doc ID;Relevance;title", {"doc": "Doc ID", "label": "Relevance"}),
    ("docno,rel", {"doc": "docno", "label": "rel"}),
    ("id,judgment,note", {"doc": "id", "label": "judgment"}),
    ("record_id,title,asreview_label", {"doc": "record_id", "label": "asreview_label"}),
    # ASReview's own record id and decision beside the dataset's id and label columns: ASReview's are read
    ("id,record_id,label_included,asreview_label", {"doc": "record_id", "label": "asreview_label"}),
    ("topic,doc_id,label", {"doc": "doc_id", "label": "label", "topic": "topic"}),  # `export labels --format csv`
    ("qid,docno,relevance", {"doc": "docno", "label": "relevance", "topic": "qid"}),
    ("Control Number,Responsiveness", {"doc": "Control Number", "label": "Responsiveness"}),  # the overlay
])
def test_a_recognised_header_maps_by_name(header: str, columns: dict[str, str]) -> None:
    delimiter = ";" if ";" in header else ","
    text = header + "\n" + delimiter.join("x" for _ in header.split(delimiter)) + "\n"
    assert read_export(text.encode(), "T.csv", None, None).columns == columns


@pytest.mark.parametrize(("header", "mapping", "message"), [
    # no column named like a document id: every other column is a candidate, none is guessed
    ("pmid,doi,label_included", None,
     "T.csv:1: field doc: no column of the header is named like a document id; use --map "
     "doc=pmid,label=label_included or --map doc=doi,label=label_included"),
    ("title,included", None,
     "T.csv:1: field doc: no column of the header is named like a document id; use --map "
     "doc=title,label=included"),
    ("included", None,
     "T.csv:1: field doc: no column of the header is named like a document id; add the column and use "
     "--map doc=COL,label=included"),
    # two columns named like a document id
    ("doc,id,label", None,
     "T.csv:1: field doc: 2 columns are named like a document id (doc, id); use --map "
     "doc=doc,label=label or --map doc=id,label=label"),
    ("doc,included,label", None,
     "T.csv:1: field label: 2 columns are named like a label (included, label); use --map "
     "doc=doc,label=included or --map doc=doc,label=label"),
    ("doc,label,topic,qid", None,
     "T.csv:1: field topic: 2 columns are named like a topic (topic, qid); use --map "
     "doc=doc,label=label,topic=topic or --map doc=doc,label=label,topic=qid"),
    ("pmid,title,abstract,coding", None,
     "T.csv:1: field doc: no column of the header is named like a document id; no column of the header is named "
     "like a label; use --map doc=pmid,label=title or --map doc=pmid,label=abstract or --map "
     "doc=pmid,label=coding or --map doc=title,label=pmid or … (12 candidates)"),
    # what --map names is used as given; the rest is still recognised
    ("control,coding,id", "label=coding", None),
])
def test_an_unknown_or_ambiguous_header_lists_the_candidate_mappings(header: str, mapping: str | None,
                                                                     message: str | None) -> None:
    text = (header + "\n" + ",".join("1" for _ in header.split(",")) + "\n").encode()
    if message is None:
        assert read_export(text, "T.csv", mapping, None).columns == {"label": "coding", "doc": "id"}
        return
    with pytest.raises(InputError) as caught:
        read_export(text, "T.csv", mapping, None)
    assert str(caught.value) == message
