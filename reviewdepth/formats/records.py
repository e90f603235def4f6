"""Bibliographic records of a screening set, read for finding duplicates (`reviewdepth.formats.duplicates`).

Two kinds of file, chosen by the caller (by extension):

- **RIS** (``.ris``, ``.txt``): one record per ``TY`` … ``ER``, its document id as ``import ris`` gives it (``ID``,
  else ``AN``, else its position: `reviewdepth.formats.ris`); title ``TI``/``T1``, year ``PY``/``Y1`` (its first
  four digits), ``DO``, first author ``AU``/``A1``; a PubMed id from an ``AN`` that is all digits.
- **CSV** (ASReview's, Rayyan's, Covidence's and reference managers' exports, SYNERGY's files): a header row; the
  document id column as ``import covidence`` (``Covidence #``), ``import rayyan`` (``key``) or ``import csv``
  (``record_id``, ``id``, ``doc_id`` …) names it, and any of ``title``, ``year`` (``publication_year``,
  ``Published Year``, ``py``), ``doi``, ``pmid`` (``pubmed_id``), ``first_author`` (else the first of
  ``authors``/``author``). A file without a document id column is numbered by data row (1, 2, …), as SYNERGY's
  files are read elsewhere in reviewdepth.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from reviewdepth.formats.csv_judgments import RECOGNISED_COLUMNS, header_key, read_table
from reviewdepth.formats.duplicates import BibRecord
from reviewdepth.formats.errors import InputError

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


def read_records_csv(data: bytes, path: str) -> list[BibRecord]:
    """A CSV file's records (module docstring); a repeated document id is refused with both lines."""
    header, rows = read_table(data, path)
    keys = [header_key(h) for h in header]
    # the id columns of the review platforms' own exports first: Covidence's study number, Rayyan's key (as
    # `import covidence` and `import rayyan` store them), then those `import csv` recognises
    doc_names = ("covidence_#", "key", *RECOGNISED_COLUMNS["doc"])
    doc_columns = [i for i, k in enumerate(keys) if k in doc_names]
    preferred = [i for name in ("covidence_#", "key", "record_id") for i in doc_columns if keys[i] == name]
    doc_column: int | None = (preferred or doc_columns)[0] if doc_columns else None
    column: dict[str, int] = {}
    for field, names in FIELD_COLUMNS.items():
        found = next((i for i, k in enumerate(keys) if k in names), None)
        if found is not None:
            column[field] = found
    if not set(column) - {"authors"} and "authors" not in column:
        raise InputError(path, 1, None, "no column of the header holds a title, year, doi, pmid or author "
                         f"(the header: {', '.join(header)})")
    records: list[BibRecord] = []
    seen: dict[str, int] = {}
    for position, (line, cells) in enumerate(rows, start=1):
        if len(cells) != len(header):
            raise InputError(path, line, None, f"expected {len(header)} fields, found {len(cells)}")

        def cell(field: str, cells: list[str] = cells) -> str | None:
            i = column.get(field)
            return cells[i].strip() or None if i is not None else None

        doc = cells[doc_column].strip() if doc_column is not None else str(position)
        if not doc:
            raise InputError(path, line, header[doc_column] if doc_column is not None else None,
                             "empty document id")
        if doc in seen:
            raise InputError(path, line, header[doc_column] if doc_column is not None else None,
                             f"document id {doc!r} is also on line {seen[doc]}")
        seen[doc] = line
        year_text = cell("year")
        year = year_of(year_text)
        if year_text and year is None:
            raise InputError(path, line, header[column["year"]], f"{year_text!r} holds no four-digit year")
        author = cell("first_author") or _first((cell("authors") or "").split(";"))
        records.append(BibRecord(doc, cell("title"), year, cell("doi"), cell("pmid"), author))
    return records


def read_records_ris(data: bytes, path: str) -> list[BibRecord]:
    """A RIS file's records (module docstring), under the document ids ``import ris`` gives them."""
    from reviewdepth.formats.ris import read_ris_entries

    records: list[BibRecord] = []
    for doc, entry in read_ris_entries(data, path).items():
        title = entry.get("title") or entry.get("primary_title")
        year_text = entry.get("year") or entry.get("publication_year") or entry.get("date")
        authors = entry.get("authors") or entry.get("first_authors") or []
        accession = entry.get("accession_number")
        pmid = accession if isinstance(accession, str) and accession.strip().isdigit() else None
        records.append(BibRecord(doc, str(title) if title else None, year_of(str(year_text) if year_text else None),
                                 str(entry["doi"]) if entry.get("doi") else None, pmid,
                                 str(authors[0]) if authors else None))
    return records
