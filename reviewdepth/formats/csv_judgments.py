"""CSV/TSV judgment files: review-platform exports (``import csv``) and reviewers' own sheets (``judge --file``).

This module owns the file format only: decoding, the delimiter, the header and its column mapping, and each
row's cells, with errors naming file:line:field. What a label means and the database's limits on values stay
with the services, which check each row as it is read, so the first bad line of a file is the one reported.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from reviewdepth.formats.errors import InputError
from reviewdepth.formats.source import read_bytes

ASREVIEW_LABEL_COLUMNS = ("asreview_label", "final_included", "label", "label_included", "included_label",
                          "included_final", "included", "included_flag", "include")
DOC_COLUMNS = ("record_id",)  # ASReview; other id columns (pmid, control number) are mapped explicitly
MAPPING_KEYS = ("doc", "label", "topic", "rank", "score", "reviewer", "time", "role")
# a judge file's columns (`judge --file`)
SHEET_REQUIRED = ("doc", "label")
SHEET_OPTIONAL = ("reviewer", "role", "note", "queue")


def decode_text(data: bytes, path: str) -> str:
    """UTF-8 (with or without BOM), else Windows-1252, the encodings review platforms export."""
    if data.startswith(b"\xef\xbb\xbf"):
        return data[3:].decode("utf-8")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        try:
            return data.decode("cp1252")
        except UnicodeDecodeError as exc:
            raise InputError(path, None, None, f"not UTF-8 or Windows-1252 text: {exc}") from None


def parse_mapping(spec: str | None) -> dict[str, str]:
    """``doc=COL,label=COL,...`` into a dict; keys: doc, label, topic, rank, score, reviewer, time, role."""
    mapping: dict[str, str] = {}
    if not spec:
        return mapping
    for part in spec.split(","):
        key, sep, column = part.partition("=")
        key = key.strip()
        if not sep or key not in MAPPING_KEYS:
            raise InputError("--map", None, key or part, f"bad mapping {part!r}; use doc=COL,label=COL[,topic=COL,"
                             "rank=COL,score=COL,reviewer=COL,time=COL,role=COL]")
        mapping[key] = column.strip()
    return mapping


def read_time(value: str, path: str, line: int, column: str) -> datetime | None:
    """An ISO 8601 time cell (UTC when it carries no offset); empty = the import time."""
    text = value.strip()
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise InputError(path, line, column, f"time {text!r} is not an ISO 8601 date-time") from None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def _reader(text: str, delimiters: str) -> Iterator[list[str]]:
    """Rows of ``text`` in the dialect sniffed from its first 64 KiB among ``delimiters`` (else Excel's)."""
    try:
        dialect: type[csv.Dialect] | csv.Dialect = csv.Sniffer().sniff(text[:65536], delimiters=delimiters)
    except csv.Error:
        dialect = csv.excel
    return csv.reader(io.StringIO(text, newline=""), dialect)


@dataclass(frozen=True)
class ExportRow:
    """One non-blank data row of an export; ``ordinal`` counts non-blank rows (the document id when unmapped)."""

    path: str
    line: int
    ordinal: int
    cells: list[str]
    index: dict[str, int]
    columns: dict[str, str]

    def has(self, key: str) -> bool:
        return key in self.index

    def raw(self, key: str) -> str:
        return self.cells[self.index[key]]

    def field(self, key: str, default: str) -> str:
        """The header name mapped to ``key`` (for messages), else ``default``."""
        return self.columns.get(key, default)

    def time(self) -> datetime | None:
        return read_time(self.raw("time"), self.path, self.line, self.columns["time"]) if self.has("time") else None

    def rank_score(self) -> tuple[float, float | None]:
        """The ``rank`` cell and the ``score`` cell (empty or unmapped = None) as numbers."""
        try:
            rank = float(self.raw("rank"))
            score = float(self.raw("score")) if self.has("score") and self.raw("score").strip() else None
        except ValueError:
            raise InputError(self.path, self.line, self.columns["rank"], "rank and score must be numbers") from None
        return rank, score


@dataclass
class Export:
    """A review-platform export: ``columns`` maps keys (doc, label, …) to header names; ``topic`` is the
    topic of every row when no topic column is mapped; iterate ``rows()`` once."""

    path: str
    header: list[str]
    columns: dict[str, str]
    topic: str | None
    _reader: Iterator[list[str]]

    def rows(self) -> Iterator[ExportRow]:
        index = {k: self.header.index(v) for k, v in self.columns.items()}
        ordinal = 0
        for line_no, row in enumerate(self._reader, start=2):
            if not any(cell.strip() for cell in row):
                continue
            ordinal += 1
            if len(row) < len(self.header):
                raise InputError(self.path, line_no, None, f"expected {len(self.header)} fields, found {len(row)}")
            yield ExportRow(self.path, line_no, ordinal, row, index, self.columns)


def read_export(data: bytes, path: str, mapping: str | None, topic: str | None) -> Export:
    """The header and column mapping of an export (``mapping`` as ``doc=COL,label=COL,…``; without it ASReview's
    label and ``record_id`` columns are recognised); the topic defaults to the file's stem."""
    reader = _reader(decode_text(data, path), ",;\t|")
    header = next(reader, None)
    if not header:
        raise InputError(path, 1, None, "empty CSV file: no header row")
    header = [h.strip() for h in header]
    cols = parse_mapping(mapping)
    lowered = {h.lower(): h for h in header}
    if "label" not in cols:
        found = next((lowered[c] for c in ASREVIEW_LABEL_COLUMNS if c in lowered), None)
        if found is None:
            raise InputError(path, 1, None, "no label column: name it with --map label=COL (recognised without "
                             f"--map: {', '.join(ASREVIEW_LABEL_COLUMNS)})")
        cols["label"] = found
    if "doc" not in cols:
        doc_col = next((lowered[c] for c in DOC_COLUMNS if c in lowered), None)
        if doc_col is not None:
            cols["doc"] = doc_col
    for key, column in cols.items():
        if column not in header:
            raise InputError(path, 1, column, f"column {column!r} (for {key}) is not in the header: {header}")
    if "topic" not in cols and not topic:
        topic = Path(path).stem if path != "-" else None
        if not topic:
            raise InputError(path, None, "topic", "name the topic with --topic or map a topic column")
    return Export(path, header, cols, topic, reader)


def read_sheet(path: str) -> tuple[list[str], Iterator[tuple[int, dict[str, str]]]]:
    """A judge file's lower-cased header and its non-blank rows as ``(line, {column: stripped cell})``
    (header row first; delimiter sniffed among comma, tab and semicolon; every row as wide as the header)."""
    reader = _reader(decode_text(read_bytes(path), path), ",\t;")
    header = [h.strip().lower() for h in next(reader, [])]
    if not any(header):
        raise InputError(path, 1, None, "empty file: a header row naming the columns doc and label comes first")
    for column in header:
        if column not in SHEET_REQUIRED + SHEET_OPTIONAL:
            raise InputError(path, 1, column or "(empty)", f"unknown column; the columns are "
                             f"{', '.join(SHEET_REQUIRED)} (required) and {', '.join(SHEET_OPTIONAL)}")
    for column in SHEET_REQUIRED:
        if column not in header:
            raise InputError(path, 1, column, f"no {column} column in the header {header}")
    if len(set(header)) < len(header):
        raise InputError(path, 1, None, f"a column is named twice in the header {header}")
    index = {name: header.index(name) for name in header}

    def rows() -> Iterator[tuple[int, dict[str, str]]]:
        for line, row in enumerate(reader, start=2):
            if not any(cell.strip() for cell in row):
                continue
            if len(row) != len(header):
                raise InputError(path, line, None, f"expected {len(header)} fields, found {len(row)}")
            yield line, {name: row[i].strip() for name, i in index.items()}

    return header, rows()
