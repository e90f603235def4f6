"""Bibliographic records of a screening set, read for finding duplicates (`reviewdepth.formats.duplicates`).

Two kinds of file, chosen by the caller (by extension):

- **RIS** (``.ris``, ``.txt``): one record per ``TY`` … ``ER``, its document id as ``import ris`` gives it (``ID``,
  else ``AN``, else its position: `reviewdepth.formats.ris`); title ``TI``/``T1``, year ``PY``/``Y1`` (its first
  four digits), ``DO``, first author ``AU``/``A1``; a PubMed id from an ``AN`` that is all digits.
- **CSV** (ASReview's, Rayyan's, Covidence's and reference managers' exports, SYNERGY's files): a header row; the
  document id column as ``import covidence`` (``Covidence #``), ``import rayyan`` (``key``) or ``import csv``
  (``record_id``, ``id``, ``doc_id`` …) names it, and any of ``title``, ``year`` (``publication_year``,
  ``Published Year``, ``py``), ``doi``, ``pmid`` (``pubmed_id``), ``first_author`` (else the first of
  ``authors``/``author``). A file without a document id column, or whose id column repeats a value or lacks one,
  is numbered by data row from 0 (0, 1, …), as ASReview numbers a dataset's records (its ``record_id``) and
  ``import records`` stores them (`choose_ids`). An ``.xlsx`` workbook is read from its first sheet.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from reviewdepth.formats.csv_judgments import RECOGNISED_COLUMNS, header_key, read_table
from reviewdepth.formats.duplicates import BibRecord
from reviewdepth.formats.errors import InputError
from reviewdepth.formats.record_ids import IDS_AUTO, IDS_POSITION, RecordIds
from reviewdepth.formats.xlsx import ZIP_MAGIC, read_table_xlsx

FIELD_COLUMNS: dict[str, tuple[str, ...]] = {
    "title": ("title", "primary_title", "ti", "article_title"),
    "year": ("year", "publication_year", "published_year", "py", "pubyear", "date"),
    "doi": ("doi",),
    "pmid": ("pmid", "pubmed_id", "pubmed"),
    "first_author": ("first_author", "firstauthor"),
    "authors": ("authors", "author", "au"),
}
_YEAR = re.compile(r"(?<!\d)(1[5-9]\d\d|2\d\d\d)(?!\d)")


def year_of(text: str | None) -> int | None:
    """The first plausible four-digit year in ``text`` (``2019``, ``2019/05/01/``, ``May 2019``)."""
    if not text:
        return None
    found = _YEAR.search(text)
    return int(found.group(1)) if found else None


def _first(values: Iterable[str]) -> str | None:
    return next((v.strip() for v in values if v and v.strip()), None)


def read_records_csv(data: bytes, path: str, ids: str = "auto") -> list[BibRecord]:
    """A CSV file's (or an ``.xlsx`` workbook's first sheet's) records (module docstring), their document ids by
    `choose_ids` (``ids``; under ``auto`` an id column that repeats a value refuses the file, for these ids must
    be documents the topic holds); labels are not read."""
    fields = _read_rows(data, path, ids, labels=False, fallback=False).fields
    if fields is None:
        header, _ = _table(data, path)
        raise InputError(path, 1, None, "no column of the header holds a title, year, doi, pmid or author "
                         f"(the header: {', '.join(header)})")
    return fields


def _field_columns(keys: list[str]) -> dict[str, int]:
    """The columns of `FIELD_COLUMNS` a header holds (its `header_key` names), by field."""
    column: dict[str, int] = {}
    for field, names in FIELD_COLUMNS.items():
        found = next((i for i, k in enumerate(keys) if k in names), None)
        if found is not None:
            column[field] = found
    return column


def read_records_ris(data: bytes, path: str, ids: str = "auto") -> list[BibRecord]:
    """A RIS file's records (module docstring), under the document ids ``import ris --ids`` gives them."""
    from reviewdepth.formats.ris import read_ris_entries

    records: list[BibRecord] = []
    for doc, entry in read_ris_entries(data, path, ids).items():
        title = entry.get("title") or entry.get("primary_title")
        year_text = entry.get("year") or entry.get("publication_year") or entry.get("date")
        authors = entry.get("authors") or entry.get("first_authors") or []
        accession = entry.get("accession_number")
        pmid = accession if isinstance(accession, str) and accession.strip().isdigit() else None
        records.append(BibRecord(doc, str(title) if title else None, year_of(str(year_text) if year_text else None),
                                 str(entry["doi"]) if entry.get("doi") else None, pmid,
                                 str(authors[0]) if authors else None))
    return records


# ---------------------------------------------------------------------------------------------------------------
# A records file as a topic's population (`import records`): ids by `RecordIds`, labels as ASReview reads them.

# the label columns ASReview reads a dataset's labels from, in the order it prefers them when a file has several
# (its readers' alternative names for ``included``); compared as `header_key` spells header names
ASREVIEW_LABEL_COLUMNS = ("asreview_label", "included", "label", "final_included", "label_included",
                          "included_label", "included_final", "included_flag", "include")
# the cell texts ASReview reads as a label (its `standardize_included_label`, and a spreadsheet's 1.0), any case;
# an empty cell is no label
LABEL_WORDS: dict[str, int] = {"1": 1, "1.0": 1, "yes": 1, "y": 1, "0": 0, "0.0": 0, "no": 0, "n": 0}
# the id columns `choose_ids` looks for, first found first: the review platforms' own (Covidence's study number,
# Rayyan's key, as `import covidence` and `import rayyan` store them), then record_id and the other names
# `import csv` recognises
ID_COLUMNS = ("covidence_#", "key", "record_id", *(n for n in RECOGNISED_COLUMNS["doc"] if n != "record_id"))


@dataclass(frozen=True)
class ScreeningRecord:
    doc_id: str
    line: int  # the row's first line (a worksheet's row number)
    label: int | None  # 1 / 0 from a label column; None: none
    title: str | None


@dataclass(frozen=True)
class ScreeningRecords:
    records: list[ScreeningRecord]
    ids: RecordIds
    label_column: str | None
    fields: list[BibRecord] | None = None  # None: the header holds no bibliographic field (`FIELD_COLUMNS`)


def _id_cells(rows: list[tuple[int, list[str]]], index: int) -> tuple[dict[str, int], tuple[int, int, str] | None,
                                                                      int | None]:
    """The column's values by their first line; its first repeat (line, earlier line, value); its first empty
    cell's line."""
    first: dict[str, int] = {}
    for line, cells in rows:
        value = cells[index].strip()
        if not value:
            return first, None, line
        if value in first:
            return first, (line, first[value], value), None
        first[value] = line
    return first, None, None


def choose_ids(path: str, header: list[str], rows: list[tuple[int, list[str]]], ids: str, *,
               fallback: bool = True) -> tuple[list[str], RecordIds]:
    """The document id of each row and the rule that gave them (``ids``: ``auto``, ``position`` or a column's
    header name). ``auto`` takes the id column (`RECOGNISED_COLUMNS`' document names, ``record_id`` first) when
    every cell holds a value and no value repeats, else numbers the rows from 0 and says why; a named column
    that lacks a value or repeats one refuses the file at that line (a repeat names both lines), as the id
    column found under ``auto`` does when not ``fallback`` (the ids must then be documents a topic holds)."""
    keys = [header_key(h) for h in header]
    if ids == IDS_POSITION:
        return [str(i) for i in range(len(rows))], RecordIds("position", None, "--ids position")
    candidates = [i for name in ID_COLUMNS for i, k in enumerate(keys) if k == name]
    if ids == IDS_AUTO and candidates and not fallback:
        ids = header[candidates[0]]
    if ids != IDS_AUTO:
        named = [i for i, h in enumerate(header) if h == ids] or [i for i, k in enumerate(keys)
                                                                   if k == header_key(ids)]
        if not named:
            raise InputError(path, 1, ids, f"--ids names no column of the header ({', '.join(header)}); use "
                             "auto, position or a column's name")
        index = named[0]
        _, repeat, empty = _id_cells(rows, index)
        if empty is not None:
            raise InputError(path, empty, header[index], "empty document id (--ids position numbers the records "
                             "by their row instead)")
        if repeat is not None:
            raise InputError(path, repeat[0], header[index], f"document id {repeat[2]!r} is also on line "
                             f"{repeat[1]} (--ids position numbers the records by their row instead)")
        return [cells[index].strip() for _, cells in rows], RecordIds("column", header[index])
    if not candidates:
        return [str(i) for i in range(len(rows))], RecordIds("position", None, "the file has no id column")
    index = candidates[0]
    _, repeat, empty = _id_cells(rows, index)
    if repeat is not None:
        why = f"the file's id column {header[index]!r} repeats {repeat[2]!r} at lines {repeat[1]} and {repeat[0]}"
    elif empty is not None:
        why = f"the file's id column {header[index]!r} is empty at line {empty}"
    else:
        return [cells[index].strip() for _, cells in rows], RecordIds("column", header[index])
    return [str(i) for i in range(len(rows))], RecordIds("position", None, why)


def _table(data: bytes, path: str) -> tuple[list[str], Iterator[tuple[int, list[str]]]]:
    return read_table_xlsx(data, path) if data.startswith(ZIP_MAGIC) else read_table(data, path)


def read_screening_records(data: bytes, path: str, ids: str = IDS_AUTO) -> ScreeningRecords:
    """A records file (CSV, TSV or any delimiter `choose_delimiter` finds; an ``.xlsx`` workbook's first sheet,
    known by its zip signature) as records in file order: ids by `choose_ids`, a label from the first of
    `ASREVIEW_LABEL_COLUMNS` the header holds (`LABEL_WORDS`; empty: none; anything else refuses its line), a
    title from ``title``/``primary_title``, and the bibliographic fields (`FIELD_COLUMNS`) when the header holds
    any. Every row must be as wide as the header."""
    return _read_rows(data, path, ids, labels=True)


def _read_rows(data: bytes, path: str, ids: str, *, labels: bool, fallback: bool = True) -> ScreeningRecords:
    header, row_iter = _table(data, path)
    rows = list(row_iter)
    for line, cells in rows:
        if len(cells) != len(header):
            raise InputError(path, line, None, f"expected {len(header)} fields, found {len(cells)} (a delimiter "
                             "inside a cell? quote that cell)")
    if not rows:
        raise InputError(path, None, None, "no records: the file has a header and no rows")
    keys = [header_key(h) for h in header]
    label_index = next((keys.index(name) for name in ASREVIEW_LABEL_COLUMNS if name in keys), None) \
        if labels else None
    title_index = next((keys.index(name) for name in ("title", "primary_title") if name in keys), None)
    column = _field_columns(keys)
    has_fields = bool(column)
    docs, rule = choose_ids(path, header, rows, ids, fallback=fallback)
    records: list[ScreeningRecord] = []
    fields: list[BibRecord] = []
    for doc, (line, cells) in zip(docs, rows, strict=True):

        def cell(field: str, cells: list[str] = cells) -> str | None:
            i = column.get(field)
            return cells[i].strip() or None if i is not None else None

        if has_fields:
            year_text = cell("year")
            year = year_of(year_text)
            if year_text and year is None:
                raise InputError(path, line, header[column["year"]], f"{year_text!r} holds no four-digit year")
            author = cell("first_author") or _first((cell("authors") or "").split(";"))
            fields.append(BibRecord(doc, cell("title"), year, cell("doi"), cell("pmid"), author))
        label = None
        if label_index is not None:
            text = cells[label_index].strip()
            if text:
                label = LABEL_WORDS.get(text.lower())
                if label is None:
                    raise InputError(path, line, header[label_index], f"label {text!r} is not one ASReview reads: "
                                     "1, 0, yes, no, y, n, or an empty cell for none")
        title = cells[title_index].strip() or None if title_index is not None else None
        records.append(ScreeningRecord(doc, line, label, title))
    return ScreeningRecords(records, rule, header[label_index] if label_index is not None else None,
                            fields if has_fields else None)
