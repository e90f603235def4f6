"""RIS reference files (reference managers, ASReview, PubMed/Embase exports) as a list of records, read with
``rispy`` (optional dependency: ``pip install 'reviewdepth[ris]'``).

A record's document id is its ``ID`` tag, else its accession number (``AN``), else its 1-based position in the
file (ASReview's and SYNERGY's rule when a file carries no id). Ids must be distinct within the file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from reviewdepth.formats.csv_judgments import decode_text
from reviewdepth.formats.errors import InputError

# a line that starts a field: its two-character tag, two spaces and a hyphen (the file's first may follow a BOM)
TAG_LINE = re.compile(rb"(?:\xef\xbb\xbf)?([A-Z][A-Z0-9])  -")


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
    for position, entry in enumerate(entries, start=1):
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
        records.append(RisRecord(doc_id, str(title) if title else None, source))
    return records
