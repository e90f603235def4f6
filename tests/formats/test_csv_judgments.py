"""The CSV judgments reader (formats/csv_judgments.py) without a database: dialect, mapping, per-row errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewdepth.formats.csv_judgments import read_export, read_sheet
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
    assert str(caught.value) == "dir/T9.csv:4: field t: time 'x' is not an ISO 8601 date-time"


def test_sheet_rows_must_be_as_wide_as_the_header(tmp_path: Path) -> None:
    sheet = tmp_path / "s.csv"
    sheet.write_text("DOC,label\nd1,1\nd2,0\nd3,1\nd4,0,x\n")
    header, rows = read_sheet(str(sheet))
    assert header == ["doc", "label"] and next(rows) == (2, {"doc": "d1", "label": "1"})
    with pytest.raises(InputError, match=r"s.csv:5: expected 2 fields, found 3"):
        list(rows)
