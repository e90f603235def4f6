"""RIS reference files (reference managers, ASReview, PubMed/Embase exports) as a list of records, read with
``rispy`` (optional dependency: ``pip install 'reviewdepth[ris]'``).

A record's document id is its ``ID`` tag, else its accession number (``AN``), when every record has one and no two
repeat; else (a merged export of several searches repeats ``ID``s) every record is numbered by its 0-based position
in the file, as ASReview numbers records (its ``record_id``). ``--ids tag`` and ``--ids position`` force one rule
(`read_ris_records`).

Labels follow ASReview's convention: a note (``N1``) ``ASReview_relevant`` is the label 1, ``ASReview_irrelevant``
0, ``ASReview_not_seen`` no label (as is a record with none of the three). The word may stand inside a longer note
(ASReview searches each note for it); two different ones in one record refuse the file at that record's line.
Rayyan's RIS export writes its members' decisions in ``N1`` as in its CSV (``RAYYAN-INCLUSION: {"Alice"=>
"Included"}``, `reviewdepth.formats.rayyan`): they are read as ``members``.
`write_ris` writes the same notes, so a file it writes reads back with the same labels.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from reviewdepth.formats.csv_judgments import decode_text
from reviewdepth.formats.errors import InputError
from reviewdepth.formats.rayyan import inclusion_decisions
from reviewdepth.formats.record_ids import IDS_AUTO, IDS_POSITION, RecordIds

# a line that starts a field: its two-character tag, two spaces and a hyphen (the file's first may follow a BOM)
TAG_LINE = re.compile(rb"(?:\xef\xbb\xbf)?([A-Z][A-Z0-9])  -")
# ASReview's labels in a record's notes (N1): the word, and the label it stands for (None: not screened)
ASREVIEW_NOTES: dict[str, int | None] = {"ASReview_relevant": 1, "ASReview_irrelevant": 0, "ASReview_not_seen": None}
ASREVIEW_NOTE = re.compile(r"\bASReview_(?:relevant|irrelevant|not_seen)\b")
NOTE_OF_LABEL = {1: "ASReview_relevant", 0: "ASReview_irrelevant", None: "ASReview_not_seen"}
IDS_TAG = "tag"  # `read_ris_records`: each record's ID tag, else its AN


def tag_at(data: bytes, line_start: int) -> str | None:
    """The tag of the field that the line starting at ``line_start`` holds: its own, or, for a value continued on
    lines without a tag, the tag of the nearest line above that has one (None before the first)."""
    start = line_start
    while True:
        found = TAG_LINE.match(data, start)
        if found is not None:
            return found.group(1).decode("ascii")
        if start == 0:
            return None
        start = data.rfind(b"\n", 0, start - 1) + 1


@dataclass(frozen=True)
class RisRecord:
    doc_id: str
    title: str | None
    id_source: str  # "ID", "AN" or "position"
    label: int | None = None  # 1 / 0 from an ASReview note; None: no label
    line: int | None = None  # the line of its TY tag
    members: tuple[tuple[str, int | None], ...] = ()  # Rayyan's decisions: (member, 1 / 0 / None for Maybe)


def record_lines(data: bytes) -> list[int]:
    """The 1-based line of each record's ``TY`` tag, in file order."""
    return [number for number, line in enumerate(data.split(b"\n"), start=1)
            if (found := TAG_LINE.match(line)) is not None and found.group(1) == b"TY"]


def unended_record(data: bytes) -> int | None:
    """The 1-based line of the first ``TY`` whose record no ``ER`` ends before the next ``TY`` or the end of the
    file; None when every record ends."""
    open_at: int | None = None
    for number, line in enumerate(data.split(b"\n"), start=1):
        found = TAG_LINE.match(line)
        if found is None:
            continue
        if found.group(1) == b"TY":
            if open_at is not None:
                return open_at
            open_at = number
        elif found.group(1) == b"ER":
            open_at = None
    return open_at


def note_label(notes: Sequence[str], path: str, line: int | None) -> int | None:
    """The label ASReview's words in a record's ``notes`` give (module docstring)."""
    words = {word for note in notes for word in ASREVIEW_NOTE.findall(str(note))}
    if len(words) > 1:
        raise InputError(path, line, "N1", f"the record's notes hold {' and '.join(sorted(words))}: "
                         "one ASReview label per record")
    return ASREVIEW_NOTES[words.pop()] if words else None


def read_ris(data: bytes, path: str, ids: str = IDS_AUTO) -> list[RisRecord]:
    """A RIS file's records in file order, their ids by ``ids`` (`read_ris_records`)."""
    return read_ris_records(data, path, ids)[0]


def read_ris_records(data: bytes, path: str, ids: str = IDS_AUTO) -> tuple[list[RisRecord], RecordIds]:
    """A RIS file's records in file order and how they got their ids. ``ids``: ``tag`` gives each record its
    ``ID`` tag, else its ``AN``, and refuses a record with neither or whose id repeats another's (naming both
    lines); ``position`` numbers the records from 0 in file order (ASReview's ``record_id``); ``auto`` (the
    default) takes the tags when every record has one and none repeats, else numbers all by position and says
    why (a merged export of several searches repeats ``ID``s)."""
    if ids not in (IDS_AUTO, IDS_POSITION, IDS_TAG):
        raise InputError("--ids", None, "ids", f"use auto, position or tag, not {ids!r}")
    try:
        import rispy  # type: ignore[import-untyped, import-not-found, unused-ignore]
    except ImportError:
        raise InputError(path, None, None, "reading RIS needs rispy: pip install 'reviewdepth[ris]'") from None
    text = decode_text(data, path)
    try:
        entries = rispy.loads(text)
    except Exception as exc:  # rispy raises its ParseError and plain ValueErrors/KeyErrors on malformed tags
        raise InputError(path, None, None, f"not a RIS file: {str(exc).splitlines()[0] if str(exc) else exc!r}"
                         ) from None
    if not entries:
        raise InputError(path, None, None, "no RIS records (each starts with a TY tag and ends with ER)")
    starts = record_lines(data)
    unended = unended_record(data)
    if unended is not None:  # rispy drops a record that has no ER line: a file cut short would lose it silently
        raise InputError(path, unended, "ER", "this record has no ER line before the next TY or the end of the "
                         "file (a file cut short?); every record ends with 'ER  - '")
    lines: list[int | None] = list(starts) if len(starts) == len(entries) else [None] * len(entries)
    tagged: list[tuple[str, str] | None] = []
    for entry in entries:
        found = None
        for key, tag in (("id", "ID"), ("accession_number", "AN")):
            value = str(entry.get(key) or "").strip()
            if value:
                found = (value, tag)
                break
        tagged.append(found)
    missing = next((i for i, t in enumerate(tagged) if t is None), None)
    first: dict[str, int] = {}
    repeat: tuple[int, int] | None = None  # (record, earlier record), 0-based
    for i, t in enumerate(tagged):
        if t is not None and t[0] in first and repeat is None:
            repeat = (i, first[t[0]])
        elif t is not None:
            first.setdefault(t[0], i)

    def where(i: int) -> str:
        return f"line {lines[i]}" if lines[i] is not None else f"record {i + 1}"

    why: str | None = None
    if ids == IDS_TAG:  # the first fault in file order is the one reported
        if missing is not None and (repeat is None or missing < repeat[0]):
            raise InputError(path, lines[missing], "ID", f"record {missing + 1} has no ID or AN tag (--ids auto "
                             "or position numbers the records by position instead)")
        if repeat is not None:
            t = tagged[repeat[0]]
            raise InputError(path, lines[repeat[0]], t[1] if t else "ID", f"id {t[0] if t else ''!r} is also the "
                             f"id of the record at {where(repeat[1])} (--ids auto or position numbers the records "
                             "by position instead)")
    elif ids == IDS_AUTO and missing is not None and (repeat is None or missing < repeat[0]):
        why = f"the record at {where(missing)} has no ID or AN tag"
    elif ids == IDS_AUTO and repeat is not None:
        t = tagged[repeat[0]]
        both = (f"lines {lines[repeat[1]]} and {lines[repeat[0]]}" if lines[repeat[0]] is not None else
                f"records {repeat[1] + 1} and {repeat[0] + 1}")
        why = f"the file's {t[1] if t else 'ID'} tags repeat {t[0] if t else ''!r} at {both}"
    else:
        why = "--ids position" if ids == IDS_POSITION else None
    by_tag = ids == IDS_TAG or (ids == IDS_AUTO and why is None)
    used = {t[1] for t in tagged if t is not None}
    rule = (RecordIds("tag", " and ".join(sorted(used))) if by_tag else RecordIds("position", None, why))
    records: list[RisRecord] = []
    for i, entry in enumerate(entries):
        line = lines[i]
        t = tagged[i]
        doc_id, source = (t if by_tag and t is not None else (str(i), "position"))
        title = entry.get("title") or entry.get("primary_title")
        notes = entry.get("notes") or []
        notes = notes if isinstance(notes, list) else [notes]
        label = note_label(notes, path, line)
        members = tuple(d for note in notes for d in inclusion_decisions(str(note), path, line, "N1"))
        records.append(RisRecord(doc_id, str(title) if title else None, source, label, line, members))
    return records, rule


def read_ris_entries(data: bytes, path: str, ids: str = IDS_AUTO) -> dict[str, dict[str, Any]]:
    """rispy's entries of a RIS file (every tag kept, unknown ones under ``unknown_tag``) by document id, in file
    order, for `write_ris`; refused as `read_ris` refuses."""
    import rispy  # type: ignore[import-untyped, import-not-found, unused-ignore]

    records = read_ris(data, path, ids)
    return {r.doc_id: dict(e) for r, e in zip(records, rispy.loads(decode_text(data, path)), strict=True)}


def write_ris(docs: Sequence[str], labels: Sequence[int], originals: Mapping[str, dict[str, Any]] | None = None,
              ) -> str:
    """One record per document with its label as ASReview writes it: a note ``ASReview_relevant`` (1),
    ``ASReview_irrelevant`` (0) or ``ASReview_not_seen`` (-1, unjudged). A document in ``originals`` (doc id →
    rispy entry, `read_ris_entries`) is written as that record, every tag kept, its earlier ASReview notes replaced;
    others as a ``GEN`` record with an ``ID`` tag, which `read_ris` reads back as the same id."""
    import rispy  # type: ignore[import-untyped, import-not-found, unused-ignore]

    class Writer(rispy.RisWriter):  # type: ignore[misc, unused-ignore]
        def set_header(self, count: int) -> str:  # no "1." counter line before each record
            return ""

    entries: list[dict[str, Any]] = []
    for doc, label in zip(docs, labels, strict=True):
        entry: dict[str, Any] = dict(originals[doc]) if originals is not None and doc in originals else {
            "type_of_reference": "GEN", "id": doc}
        notes = entry.get("notes") or []
        kept = [n for n in (notes if isinstance(notes, list) else [notes]) if not ASREVIEW_NOTE.search(str(n))]
        entry["notes"] = [*kept, NOTE_OF_LABEL[label if label >= 0 else None]]
        entries.append(entry)
    return str(rispy.dumps(entries, implementation=Writer))
