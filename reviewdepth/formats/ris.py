"""RIS reference files (reference managers, ASReview, PubMed/Embase exports) as a list of records, read with
``rispy`` (optional dependency: ``pip install 'reviewdepth[ris]'``).

A record's document id is its ``ID`` tag, else its accession number (``AN``), else its 1-based position in the
file (ASReview's and SYNERGY's rule when a file carries no id). Ids must be distinct within the file.

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

# a line that starts a field: its two-character tag, two spaces and a hyphen (the file's first may follow a BOM)
TAG_LINE = re.compile(rb"(?:\xef\xbb\xbf)?([A-Z][A-Z0-9])  -")
# ASReview's labels in a record's notes (N1): the word, and the label it stands for (None: not screened)
ASREVIEW_NOTES: dict[str, int | None] = {"ASReview_relevant": 1, "ASReview_irrelevant": 0, "ASReview_not_seen": None}
ASREVIEW_NOTE = re.compile(r"\bASReview_(?:relevant|irrelevant|not_seen)\b")
NOTE_OF_LABEL = {1: "ASReview_relevant", 0: "ASReview_irrelevant", None: "ASReview_not_seen"}


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


def note_label(notes: Sequence[str], path: str, line: int | None) -> int | None:
    """The label ASReview's words in a record's ``notes`` give (module docstring)."""
    words = {word for note in notes for word in ASREVIEW_NOTE.findall(str(note))}
    if len(words) > 1:
        raise InputError(path, line, "N1", f"the record's notes hold {' and '.join(sorted(words))}: "
                         "one ASReview label per record")
    return ASREVIEW_NOTES[words.pop()] if words else None


def read_ris(data: bytes, path: str) -> list[RisRecord]:
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
    records: list[RisRecord] = []
    first: dict[str, int] = {}
    starts = record_lines(data)
    for position, entry in enumerate(entries, start=1):
        line = starts[position - 1] if len(starts) == len(entries) else None
        for key, tag in (("id", "ID"), ("accession_number", "AN")):
            value = str(entry.get(key) or "").strip()
            if value:
                doc_id, source = value, tag
                break
        else:
            doc_id, source = str(position), "position"
        if doc_id in first:
            raise InputError(path, None, source, f"record {position} has the id {doc_id!r} of record {first[doc_id]}")
        first[doc_id] = position
        title = entry.get("title") or entry.get("primary_title")
        notes = entry.get("notes") or []
        notes = notes if isinstance(notes, list) else [notes]
        label = note_label(notes, path, line)
        members = tuple(d for note in notes for d in inclusion_decisions(str(note), path, line, "N1"))
        records.append(RisRecord(doc_id, str(title) if title else None, source, label, line, members))
    return records


def read_ris_entries(data: bytes, path: str) -> dict[str, dict[str, Any]]:
    """rispy's entries of a RIS file (every tag kept, unknown ones under ``unknown_tag``) by document id, in file
    order, for `write_ris`; refused as `read_ris` refuses."""
    import rispy  # type: ignore[import-untyped, import-not-found, unused-ignore]

    records = read_ris(data, path)
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
