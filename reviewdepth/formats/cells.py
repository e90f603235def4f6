"""Spreadsheet-safe text cells (OWASP "CSV injection"): a cell that a spreadsheet would read as a formula is
written with a leading apostrophe, and read back without it, so the text round-trips exactly.

A spreadsheet (Excel, LibreOffice, Google Sheets) evaluates a cell that starts with ``=``, ``+``, ``-`` or ``@``
(and, through their import paths, a tab or carriage return before one) as a formula: a note such as
``=HYPERLINK("http://…")`` or ``=cmd|' /C calc'!A0`` becomes live when a colleague opens an export. The apostrophe
is the spreadsheets' own "text, not formula" mark, shown by none of them.

Round trip: :func:`neutralised` adds one apostrophe to a cell that starts with a trigger, or with apostrophes before
one (so a note that really starts with ``'=`` keeps its apostrophe); :func:`restored` removes exactly one from such
a cell and leaves every other cell alone. Numbers written as numbers (negative scores) are not text and are not
touched: only text cells are passed through :func:`neutralised`."""

from __future__ import annotations

import csv
from collections.abc import Iterable, Sequence
from typing import TextIO

FORMULA_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")
TEXT_MARK = "'"


def _formula_like(text: str) -> bool:
    """Whether ``text`` starts with a trigger, after any number of apostrophes."""
    stripped = text.lstrip(TEXT_MARK)
    return stripped.startswith(FORMULA_TRIGGERS)


def neutralised(text: str) -> str:
    """``text`` as a spreadsheet-safe cell: with one more leading apostrophe when a spreadsheet would read it as a
    formula (module docstring)."""
    return TEXT_MARK + text if _formula_like(text) else text


def restored(cell: str) -> str:
    """The text written as ``cell`` by :func:`neutralised` (a cell that needed no mark comes back as it is)."""
    return cell[1:] if cell.startswith(TEXT_MARK) and _formula_like(cell[1:]) else cell


def safe_row(values: Sequence[object]) -> list[object]:
    """A row for ``csv.writer`` with its text cells neutralised (numbers and None as they are)."""
    return [neutralised(v) if isinstance(v, str) else v for v in values]


class CsvRows:
    """A ``csv.writer`` for text that may hold a bare carriage return: Python's writer quotes a field holding its
    line terminator (``\\n``) but not a lone ``\\r``, which every reader takes as the end of the row, so such a row
    is written with every field quoted (valid CSV; the other rows stay minimal)."""

    def __init__(self, out: TextIO) -> None:
        self._minimal = csv.writer(out, lineterminator="\n")
        self._quoted = csv.writer(out, lineterminator="\n", quoting=csv.QUOTE_ALL)

    def writerow(self, row: Sequence[object]) -> None:
        carriage = any(isinstance(cell, str) and "\r" in cell for cell in row)
        (self._quoted if carriage else self._minimal).writerow(row)

    def writerows(self, rows: Iterable[Sequence[object]]) -> None:
        for row in rows:
            self.writerow(row)
