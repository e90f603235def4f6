"""Excel workbooks (``.xlsx``) of judgments, read and written with openpyxl (optional dependency:
``pip install 'reviewdepth[xlsx]'``).

Read: the first worksheet is a judge file (`reviewdepth.formats.csv_judgments.read_sheet`'s contract): row 1 the
header, with ``doc`` and ``label`` required and ``reviewer``, ``role``, ``note``, ``queue`` optional (any case);
each later non-blank row a judgment. A row's number is its "line" in messages (``file.xlsx:4: field label: …``).
A cell holds text, a number (``1`` and ``1.0`` both read ``1``) or a date (read as ISO 8601). Written: the same
columns, so a workbook written here reads back as the judgments it lists.
"""

from __future__ import annotations

import io
from collections.abc import Iterator, Sequence
from datetime import date, datetime, time
from typing import Any

from reviewdepth.formats.csv_judgments import check_sheet_header
from reviewdepth.formats.errors import InputError

ZIP_MAGIC = b"PK\x03\x04"  # every .xlsx is a zip archive


def _openpyxl(path: str):  # type: ignore[no-untyped-def]
    try:
        import openpyxl  # type: ignore[import-untyped, import-not-found, unused-ignore]
    except ImportError:
        raise InputError(path, None, None, "reading or writing .xlsx needs openpyxl: pip install 'reviewdepth[xlsx]'"
                         ) from None
    return openpyxl


def cell_text(value: object) -> str:
    """A cell's value as the text a CSV cell would hold: empty for none, whole floats without ``.0``."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    return str(value).strip()


def _first_sheet(data: bytes, path: str) -> tuple[Any, Iterator[tuple[object, ...]]]:
    """The open workbook (read-only, values) and its first worksheet's rows; a damaged file refused in one line."""
    openpyxl = _openpyxl(path)
    try:
        book = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    except Exception as exc:  # zipfile.BadZipFile, KeyError, lxml/ElementTree errors on a damaged workbook
        reason = str(exc).splitlines()[0] if str(exc) else repr(exc)
        raise InputError(path, None, None, f"not an Excel .xlsx workbook: {reason}") from None
    rows = iter(book.worksheets[0].iter_rows(values_only=True)) if book.worksheets else iter(())
    return book, rows


def read_sheet_xlsx(data: bytes, path: str) -> tuple[list[str], Iterator[tuple[int, dict[str, str]]]]:
    """The first worksheet's lower-cased header and its non-blank rows as ``(row number, {column: cell text})``."""
    book, rows = _first_sheet(data, path)
    first = next(rows, None)
    names = [cell_text(c).lower() for c in (first or ())]
    while names and names[-1] == "":  # trailing empty header cells of a sheet formatted further right
        names.pop()
    header = check_sheet_header(names, path)
    index = {name: header.index(name) for name in header}

    def cells() -> Iterator[tuple[int, dict[str, str]]]:
        for number, texts in _rows_within(rows, len(header), path, book):
            yield number, {name: texts[i] for name, i in index.items()}

    return header, cells()


def _rows_within(rows: Iterator[tuple[object, ...]], width: int, path: str,
                 book: Any) -> Iterator[tuple[int, list[str]]]:
    """The sheet's non-blank rows after the header as ``(row number, cells)``, each ``width`` cells wide; a value
    beyond the header's columns refuses its row. Closes ``book`` when the rows are read."""
    for number, row in enumerate(rows, start=2):
        texts = [cell_text(c) for c in row]
        if not any(texts):
            continue
        beyond = next((i for i in range(width, len(texts)) if texts[i]), None)
        if beyond is not None:
            raise InputError(path, number, f"column {beyond + 1}", f"a value beyond the header's {width} columns")
        yield number, (texts + [""] * width)[:width]
    book.close()


def read_table_xlsx(data: bytes, path: str) -> tuple[list[str], Iterator[tuple[int, list[str]]]]:
    """The first worksheet as `reviewdepth.formats.csv_judgments.read_table` gives a CSV file: its stripped
    header (trailing empty cells dropped) and its non-blank rows as ``(row number, cells)``, each as wide as the
    header; a value beyond the header's columns refuses the row."""
    book, rows = _first_sheet(data, path)
    header = [cell_text(c) for c in (next(rows, None) or ())]
    while header and header[-1] == "":
        header.pop()
    if not header:
        book.close()
        raise InputError(path, 1, None, "empty worksheet: no header row")

    return header, _rows_within(rows, len(header), path, book)


def _text_cell(sheet: object, value: str) -> object:
    """A cell that holds ``value`` as text: openpyxl would store a string starting with ``=`` as a formula."""
    from openpyxl.cell import WriteOnlyCell  # type: ignore[import-untyped, import-not-found, unused-ignore]

    cell = WriteOnlyCell(sheet, value)
    cell.data_type = "s"
    return cell


def write_xlsx(header: Sequence[str], rows: Sequence[Sequence[str | int | None]], title: str = "judgments") -> bytes:
    """A one-sheet workbook: ``header`` in row 1, then ``rows`` (None: an empty cell). Text cells are written as
    text (a doc id like ``007`` stays ``007``)."""
    openpyxl = _openpyxl("-")
    book = openpyxl.Workbook(write_only=True)
    sheet = book.create_sheet(title)
    sheet.append(list(header))
    for row in rows:
        sheet.append([_text_cell(sheet, v) if isinstance(v, str) and v.startswith("=") else v for v in row])
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()
