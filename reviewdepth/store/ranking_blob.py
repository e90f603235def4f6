"""A queue's doc ids in rank order as one compressed value (derived from the entries, written with them)."""

from __future__ import annotations

import zlib

from reviewdepth.formats.scan import StringColumn, scan


def encode_ranking(doc_ids: list[str]) -> bytes | None:
    """zlib-compressed newline-separated doc ids; None when an id contains whitespace (kept row by row only)."""
    text = "\n".join(doc_ids)
    if len(text.split()) != len(doc_ids):
        return None
    return zlib.compress(text.encode("utf-8", "surrogateescape"), 1)


def decode_ranking(blob: bytes) -> StringColumn:
    """Doc ids (numpy byte strings) and their 64-bit hashes, in rank order."""
    return strings_with_hashes(zlib.decompress(blob))


def strings_with_hashes(newline_separated: bytes) -> StringColumn:
    scanned = scan(newline_separated, "s", min_fields=1, max_fields=1, skip_comments=False, path="<ranking>")
    column = scanned.columns[0]
    assert isinstance(column, StringColumn)
    return column
