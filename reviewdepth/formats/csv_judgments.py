"""CSV/TSV judgment files: review-platform exports (``import csv``) and reviewers' own sheets (``judge --file``).

This module owns the file format only: decoding, the delimiter, the header and its column mapping, and each
row's cells, with errors naming file:line:field. What a label means and the database's limits on values stay
with the services, which check each row as it is read, so the first bad line of a file is the one reported.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import islice
from pathlib import Path

from reviewdepth.formats.cells import restored
from reviewdepth.formats.errors import InputError

MAPPING_KEYS = ("doc", "label", "topic", "rank", "score", "reviewer", "time", "role")
# The header names `read_export` maps without --map (compared as `header_key` spells them), and what each key
# holds, for messages. A name in two lists would be a guess, so none is: pmid, doi and the like are left to --map
# (a file often holds several of them, and any could be the one a queue or a reviewer's sheet uses).
RECOGNISED_COLUMNS: dict[str, tuple[str, ...]] = {
    "doc": ("record_id", "doc", "doc_id", "docid", "document", "document_id", "docno", "id", "control_number"),
    # ASReview's label columns (its own `asreview_label`, then the names ASReview reads a dataset's labels from),
    # TREC's and review platforms' (an `export labels --format overlay` file's `Responsiveness`)
    "label": ("asreview_label", "final_included", "label", "label_included", "included_label", "included_final",
              "included", "included_flag", "include", "relevance", "relevant", "rel", "judgment", "judgement",
              "decision", "responsiveness"),
    "topic": ("topic", "topic_id", "topicid", "query", "query_id", "qid"),
}
RECOGNISED_AS = {"doc": "a document id", "label": "a label", "topic": "a topic"}
# An ASReview export keeps the dataset's own columns (its `id`, its `label_included`, …) beside ASReview's record
# id and decision: those are the export's document and label (`import asreview` stores the same record ids), so
# such a pair is no ambiguity.
PREFERRED_COLUMNS = {"doc": "record_id", "label": "asreview_label"}
CANDIDATES_SHOWN = 4  # candidate --map values a refusal lists
# a judge file's columns (`judge --file`)
SHEET_REQUIRED = ("doc", "label")
SHEET_OPTIONAL = ("reviewer", "role", "note", "queue", "reason", "stage")
# the columns the tool itself writes read back without an edit: ``doc_id`` (`next`, `sample`, `judgments` and
# `conflicts --format csv`, `export labels --format csv`) is ``doc``, as are the ``asreview`` and ``overlay``
# label exports' document columns, whose label columns are ``label`` (`reviewdepth.formats.exports`); the others
# describe a row and are not recorded (the log keeps its own)
SHEET_ALIASES = {"doc_id": "doc", "record_id": "doc", "control number": "doc", "asreview_label": "label",
                 "responsiveness": "label"}
SHEET_IGNORED = ("id", "topic", "rank", "relevant", "grade", "source", "recorded_at", "decision", "audit_position",
                 "judgment_id", "status")
# a column that makes a judge file a history (the judgments log written back): its lines were recorded one after
# another, so one reviewer's two different decisions on a document are a change of mind, not a contradiction
SHEET_HISTORY = "recorded_at"
DELIMITERS = ",;\t|"
DELIMITER_SAMPLE = 100  # non-blank lines the delimiter must agree with
# a day-first or month-first date with a four-digit year, optionally a time (what spreadsheets write)
NUMERIC_DATE = re.compile(r"(?P<first>\d{1,2})(?P<sep>[/.-])(?P<second>\d{1,2})(?P=sep)\d{4}"
                          r"(?:(?P<at>[ T])\d{1,2}:\d{2}(?P<seconds>:\d{2})?(?:(?P<gap>\s*)(?P<half>[AaPp][Mm]))?)?")


# byte-order marks of the encodings a spreadsheet's "Unicode text" export writes, which `decode_text` refuses: read
# as Windows-1252 they would give a header of garbled names and a NUL between letters (UTF-32 before UTF-16, whose
# little-endian mark begins UTF-32's)
WIDE_ENCODINGS = ((b"\xff\xfe\x00\x00", "UTF-32"), (b"\x00\x00\xfe\xff", "UTF-32"), (b"\xff\xfe", "UTF-16"),
                  (b"\xfe\xff", "UTF-16"))
WIDE_SAMPLE = 64  # leading bytes in which a NUL at every other byte says UTF-16 without a byte-order mark


def refuse_wide_encoding(data: bytes, path: str) -> None:
    """Refuse UTF-16 or UTF-32 text (a byte-order mark, or a NUL in every other leading byte) at line 1 with
    what to do, rather than read it as Windows-1252."""
    named = next((name for mark, name in WIDE_ENCODINGS if data.startswith(mark)), None)
    sample = data[:WIDE_SAMPLE]
    if named is None and len(sample) >= 4 and (sample[0::2].count(0) == len(sample[0::2])
                                               or sample[1::2].count(0) == len(sample[1::2])):
        named = "UTF-16 (no byte-order mark)"
    if named is not None:
        raise InputError(path, 1, None, f"the file is {named} text; save it as UTF-8 (Excel: Save As \"CSV "
                         "UTF-8\"; a text editor: save with the encoding UTF-8) and import that file")


def decode_text(data: bytes, path: str) -> str:
    """UTF-8 (with or without BOM), else Windows-1252, the encodings review platforms export; UTF-16 and UTF-32
    are refused (`refuse_wide_encoding`)."""
    refuse_wide_encoding(data, path)
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


def _numeric_date_format(match: re.Match[str], day_first: bool) -> str:
    """The strftime format of a `NUMERIC_DATE` match read day-first or month-first."""
    sep = match["sep"]
    stated = f"%d{sep}%m{sep}%Y" if day_first else f"%m{sep}%d{sep}%Y"
    if match["at"] is not None:
        stated += f"{match['at']}{'%I' if match['half'] else '%H'}:%M" + (":%S" if match["seconds"] else "")
        stated += f"{match['gap']}%p" if match["half"] else ""
    return stated


@dataclass(frozen=True)
class TimeReading:
    """How a file's time cells are read: with ``date_format`` (strftime syntax, stated with ``--date-format``)
    when given; else as ISO 8601, or as a day/month/year or month/day/year date (`NUMERIC_DATE`) in the order the
    file itself shows: ``decided_by`` is the first such date whose first or second number is above 12 (its line,
    its text, and whether it is day-first). Without one, a date whose day and month could swap is refused."""

    date_format: str | None = None
    decided_by: tuple[int, str, bool] | None = None

    @staticmethod
    def detect(cells: Iterable[tuple[int, str]]) -> TimeReading:
        """The reading of a file whose time cells are ``(line, text)``, with no stated format."""
        for line, text in cells:
            match = NUMERIC_DATE.fullmatch(text.strip())
            if match is not None and (int(match["first"]) > 12 or int(match["second"]) > 12):
                return TimeReading(None, (line, text.strip(), int(match["first"]) > 12))
        return TimeReading()

    def read(self, value: str, path: str, line: int, column: str) -> datetime | None:
        """A time cell as a UTC time (UTC when it carries no offset); empty = the import time."""
        text = value.strip()
        if not text:
            return None
        if self.date_format is not None:
            try:
                moment = datetime.strptime(text, self.date_format)
            except ValueError as exc:
                reason = f" ({exc})" if "directive" in str(exc) else ""
                raise InputError(path, line, column, f"time {text!r} does not match --date-format "
                                 f"{self.date_format!r}{reason}") from None
        else:
            try:
                moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
            except ValueError:
                moment = self._numeric(text, path, line, column)
        return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)

    def _numeric(self, text: str, path: str, line: int, column: str) -> datetime:
        match = NUMERIC_DATE.fullmatch(text)
        if match is None:
            raise InputError(path, line, column, f"time {text!r} is neither an ISO 8601 date-time nor a "
                             "day/month/year or month/day/year date; state its format with --date-format "
                             "(strftime syntax, e.g. '%d.%m.%y %H:%M')")
        day_first = self.decided_by[2] if self.decided_by is not None else None
        if day_first is None and int(match["first"]) != int(match["second"]):
            raise InputError(path, line, column, f"date {text!r} could be day-first or month-first and no date in "
                             "the file has a day above 12; state the order with --date-format "
                             f"{_numeric_date_format(match, True)!r} or {_numeric_date_format(match, False)!r}")
        stated = _numeric_date_format(match, bool(day_first))
        try:
            return datetime.strptime(text, stated)
        except ValueError:
            shown = "" if self.decided_by is None else (
                f", as line {self.decided_by[0]}'s {self.decided_by[1]!r} shows this file's dates are")
            raise InputError(path, line, column, f"date {text!r} is not {'day' if day_first else 'month'}-first"
                             f"{shown}; state the format with --date-format") from None


def read_time(value: str, path: str, line: int, column: str) -> datetime | None:
    """An ISO 8601 time cell (UTC when it carries no offset); empty = the import time."""
    return TimeReading().read(value, path, line, column)


def choose_delimiter(text: str, candidates: str = DELIMITERS) -> str:
    """The candidate that splits the first `DELIMITER_SAMPLE` non-blank rows of ``text`` (quotes respected)
    into the header's number of fields (at least two) on the most rows; ties go to more fields, then to the
    order of ``candidates``; comma when none splits the header.

    Agreement over many rows, not the first row alone or a sniffer's all-or-nothing guess: one stray delimiter in
    a note costs that row, not the file (Python's sniffer gave up on such a file and it was read as one column)."""
    best: tuple[int, int] = (0, 0)
    chosen = ","
    for delimiter in candidates:
        rows = csv.reader(io.StringIO(text, newline=""), _dialect(delimiter))
        widths = [len(row) for row in islice((r for r in rows if any(c.strip() for c in r)), DELIMITER_SAMPLE)]
        if not widths or widths[0] < 2:
            continue
        score = (sum(width == widths[0] for width in widths), widths[0])
        if score > best:
            best, chosen = score, delimiter
    return chosen


def _dialect(delimiter: str) -> type[csv.Dialect]:
    class Chosen(csv.excel):
        pass

    Chosen.delimiter = delimiter
    Chosen.skipinitialspace = True  # every cell is stripped; this lets `a, "b, c"` keep its quotes
    return Chosen


def _reader(text: str, delimiter: str) -> Iterator[list[str]]:
    """Rows of ``text`` split at ``delimiter`` (Excel's quoting)."""
    return csv.reader(io.StringIO(text, newline=""), _dialect(delimiter))


@dataclass(frozen=True)
class ExportRow:
    """One non-blank data row of an export; ``ordinal`` counts non-blank rows."""

    path: str
    line: int
    ordinal: int
    cells: list[str]
    index: dict[str, int]
    columns: dict[str, str]
    times: TimeReading = field(default_factory=TimeReading)

    def has(self, key: str) -> bool:
        return key in self.index

    def raw(self, key: str) -> str:
        # a cell the tool wrote with a leading apostrophe (a formula-like text, formats/cells.py) reads as written
        return restored(self.cells[self.index[key]])

    def field(self, key: str, default: str) -> str:
        """The header name mapped to ``key`` (for messages), else ``default``."""
        return self.columns.get(key, default)

    def time(self) -> datetime | None:
        return self.times.read(self.raw("time"), self.path, self.line, self.columns["time"]) if self.has("time") \
            else None

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
    topic of every row when no topic column is mapped; ``date_format`` (strftime) reads the time column, else
    `TimeReading.detect` decides it from the whole file; iterate ``rows()`` once."""

    path: str
    header: list[str]
    columns: dict[str, str]
    topic: str | None
    _reader: Iterator[list[str]]
    date_format: str | None = None

    def rows(self) -> Iterator[ExportRow]:
        index = {k: self.header.index(v) for k, v in self.columns.items()}
        ordinal = 0
        lines: Iterable[list[str]] = self._reader
        times = TimeReading(self.date_format)
        if "time" in index and self.date_format is None:
            # a date's order may be decided by a later row (its day above 12): the whole file first
            lines = list(self._reader)
            at = index["time"]
            times = TimeReading.detect((n, row[at]) for n, row in enumerate(lines, start=2) if len(row) > at)
        for line_no, row in enumerate(lines, start=2):
            if not any(cell.strip() for cell in row):
                continue
            ordinal += 1
            if len(row) < len(self.header):
                raise InputError(self.path, line_no, None, f"expected {len(self.header)} fields, found {len(row)}")
            yield ExportRow(self.path, line_no, ordinal, row, index, self.columns, times)


def header_key(name: str) -> str:
    """A header name as `RECOGNISED_COLUMNS` spells it: lower case, spaces and hyphens as underscores."""
    return "_".join(name.strip().lower().replace("-", " ").split())


def recognise_columns(path: str, header: list[str], mapped: dict[str, str]) -> dict[str, str]:
    """``mapped`` (key -> header name, from --map) with the document, label and topic columns it leaves out,
    each found by its name (`RECOGNISED_COLUMNS`). A document or label column that no header name or two header
    names could be, or two topic columns, refuse the file with the ``--map`` values that would read it."""
    columns = dict(mapped)
    unresolved: dict[str, list[str]] = {}  # key -> the columns it could be (ambiguous), or [] (none named so)
    for key, names in RECOGNISED_COLUMNS.items():
        if key in columns:
            continue
        taken = set(columns.values())
        found = [h for h in header if h not in taken and header_key(h) in names]
        found = [h for h in found if header_key(h) == PREFERRED_COLUMNS.get(key)] or found
        if len(found) == 1:
            columns[key] = found[0]
        elif found or key != "topic":  # no topic column: the rows take --topic
            unresolved[key] = found
    if unresolved:
        raise InputError(path, 1, next(iter(unresolved)), _unresolved_message(header, columns, unresolved))
    return columns


def _unresolved_message(header: list[str], columns: dict[str, str], unresolved: dict[str, list[str]]) -> str:
    """Why the header leaves ``unresolved`` keys open, and the --map values that would close them: a key named
    by several columns chooses among those; a key named by none, among the columns no other key took."""
    reasons = [f"{len(found)} columns are named like {RECOGNISED_AS[key]} ({', '.join(found)})" if found else
               f"no column of the header is named like {RECOGNISED_AS[key]}" for key, found in unresolved.items()]
    free = [h for h in header if h not in set(columns.values()) and not any(h in f for f in unresolved.values())]
    choices: list[dict[str, str]] = [{}]
    for key, found in unresolved.items():
        choices = [{**choice, key: column} for choice in choices for column in (found or free or ["COL"])
                   if column == "COL" or column not in choice.values()]
    maps = [",".join(f"{key}={chosen[key]}" for key in MAPPING_KEYS if key in chosen)
            for chosen in ({**columns, **choice} for choice in choices)]
    listed = " or ".join(f"--map {m}" for m in maps[:CANDIDATES_SHOWN])
    if len(maps) > CANDIDATES_SHOWN:
        listed += f" or … ({len(maps)} candidates)"
    return f"{'; '.join(reasons)}; {'add the column and use' if 'COL' in listed else 'use'} {listed}"


def read_export(data: bytes, path: str, mapping: str | None, topic: str | None, *,
                date_format: str | None = None) -> Export:
    """The header and column mapping of an export: ``mapping`` (``doc=COL,label=COL,…``) as given, and the
    document, label and topic columns it leaves out by their names (`recognise_columns`). Without a topic column
    the topic is ``topic``, else the file's stem; ``date_format`` (strftime syntax) reads the time column
    (`TimeReading`)."""
    text = decode_text(data, path)
    reader = _reader(text, choose_delimiter(text))
    header = next(reader, None)
    if not header:
        raise InputError(path, 1, None, "empty CSV file: no header row")
    header = [h.strip() for h in header]
    mapped = parse_mapping(mapping)
    for key, column in mapped.items():
        if column not in header:
            raise InputError(path, 1, column, f"column {column!r} (for {key}) is not in the header: {header}")
    cols = recognise_columns(path, header, mapped)
    if "topic" not in cols and not topic:
        topic = Path(path).stem if path != "-" else None
        if not topic:
            raise InputError(path, None, "topic", "name the topic with --topic or map a topic column")
    return Export(path, header, cols, topic, reader, date_format)


def check_sheet_header(header: list[str], path: str) -> list[str]:
    """A judge file's lower-cased header (CSV or workbook), refused at line 1 when it names a column that is not
    one of `SHEET_REQUIRED` and `SHEET_OPTIONAL`, lacks a required one, or names one twice."""
    if not any(header):
        raise InputError(path, 1, None, "empty file: a header row naming the columns doc and label comes first")
    header = [SHEET_ALIASES.get(column, column) for column in header]
    for column in header:
        if column not in SHEET_REQUIRED + SHEET_OPTIONAL + SHEET_IGNORED:
            raise InputError(path, 1, column or "(empty)", f"unknown column; the columns are "
                             f"{', '.join(SHEET_REQUIRED)} (required; doc_id, record_id or Control Number for "
                             f"doc, asreview_label or Responsiveness for label) and "
                             f"{', '.join(SHEET_OPTIONAL)} (and, not recorded, {', '.join(SHEET_IGNORED)})")
    for column in SHEET_REQUIRED:
        if column not in header:
            raise InputError(path, 1, column, f"no {column} column in the header {header}")
    if len(set(header)) < len(header):
        raise InputError(path, 1, None, f"a column is named twice in the header {header}")
    return header


def read_sheet(data: bytes, path: str) -> tuple[list[str], Iterator[tuple[int, dict[str, str]]]]:
    """A judge file's (``data``, read from ``path``) lower-cased header and its non-blank rows as
    ``(line, {column: stripped cell})`` (header row first; delimiter chosen by `choose_delimiter`; every row as
    wide as the header)."""
    text = decode_text(data, path)
    delimiter = choose_delimiter(text)
    reader = _reader(text, delimiter)
    header = check_sheet_header([h.strip().lower() for h in next(reader, [])], path)
    index = {name: header.index(name) for name in header}

    def rows() -> Iterator[tuple[int, dict[str, str]]]:
        for line, row in enumerate(reader, start=2):
            if not any(cell.strip() for cell in row):
                continue
            if len(row) != len(header):
                hint = f" (a {delimiter!r} inside a cell? quote that cell)" if len(row) > len(header) else ""
                raise InputError(path, line, None, f"expected {len(header)} fields, found {len(row)}{hint}")
            yield line, {name: restored(row[i].strip()) for name, i in index.items()}

    return header, rows()


def read_table(data: bytes, path: str) -> tuple[list[str], Iterator[tuple[int, list[str]]]]:
    """A CSV file's stripped header and its non-blank rows as ``(line, cells)``, ``line`` the row's first line in
    the file (a quoted cell may span lines, as abstracts in screening tools' exports do); delimiter chosen by
    `choose_delimiter`."""
    text = decode_text(data, path)
    reader = csv.reader(io.StringIO(text, newline=""), _dialect(choose_delimiter(text)))  # line_num: see rows()
    header = [h.strip() for h in next(reader, [])]
    if not any(header):
        raise InputError(path, 1, None, "empty CSV file: no header row")

    def rows() -> Iterator[tuple[int, list[str]]]:
        start = reader.line_num + 1
        for row in reader:
            if any(cell.strip() for cell in row):
                yield start, [restored(cell) for cell in row]
            start = reader.line_num + 1

    return header, rows()
