"""Rayyan's CSV export (``articles.csv``): one row per article, the decisions in its ``notes`` column.

Rayyan appends its own data to an article's notes as `` | ``-separated parts, each led by a prefix:
``RAYYAN-INCLUSION: {"Alice"=>"Included", "Bob"=>"Excluded"}`` (each member's decision: ``Included``,
``Excluded`` or ``Maybe``), ``RAYYAN-LABELS: …``, ``RAYYAN-EXCLUSION-REASONS: a,b`` and ``USER-NOTES: …``; notes
the article had before Rayyan come first. The article's id is its ``key`` column (Rayyan's key; ids must be
distinct). An article with no ``RAYYAN-INCLUSION`` part was not decided by anyone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from reviewdepth.formats.csv_judgments import header_key, read_table
from reviewdepth.formats.errors import InputError

ID_COLUMN = "key"
NOTES_COLUMN = "notes"
DECISIONS = {"Included": 1, "Excluded": 0, "Maybe": None}  # None: a maybe (not stored until maybe lands)
INCLUSION = re.compile(r"RAYYAN-INCLUSION:\s*\{(?P<body>[^}]*)\}")
PAIR = re.compile(r'\s*"(?P<who>(?:[^"\\]|\\.)*)"\s*=>\s*"(?P<what>[^"]*)"\s*(?:,|$)')
REASONS = re.compile(r"RAYYAN-EXCLUSION-REASONS:\s*(?P<reasons>[^|]*)")


@dataclass(frozen=True)
class RayyanArticle:
    doc_id: str
    line: int
    decisions: tuple[tuple[str, int | None], ...]  # (member, 1 / 0 / None for Maybe), in the file's order
    reasons: tuple[str, ...]  # RAYYAN-EXCLUSION-REASONS, comma-separated in the file


def inclusion_decisions(notes: str, path: str, line: int | None,
                        field: str = NOTES_COLUMN) -> tuple[tuple[str, int | None], ...]:
    """The members' decisions of one ``notes`` cell (module docstring; Rayyan's RIS export writes the same text
    in ``N1``); refused at ``line``, ``field``, when the ``RAYYAN-INCLUSION`` part is not a list of
    ``"name"=>"Included|Excluded|Maybe"``."""
    found = INCLUSION.search(notes)
    if found is None:
        if "RAYYAN-INCLUSION" in notes:
            raise InputError(path, line, field, "RAYYAN-INCLUSION is not followed by {\"name\"=>\"decision\"}")
        return ()
    body = found["body"]
    out: list[tuple[str, int | None]] = []
    position = 0
    while position < len(body.rstrip()):
        pair = PAIR.match(body, position)
        if pair is None:
            raise InputError(path, line, field, f"cannot read RAYYAN-INCLUSION's {body[position:].strip()!r}: "
                             "expected \"name\"=>\"Included\", \"Excluded\" or \"Maybe\"")
        who, what = pair["who"].replace('\\"', '"'), pair["what"]
        if what not in DECISIONS:
            raise InputError(path, line, field, f"decision {what!r} of {who!r} is not Included, Excluded or "
                             "Maybe")
        if any(who == earlier for earlier, _ in out):
            raise InputError(path, line, field, f"{who!r} decides twice in RAYYAN-INCLUSION")
        out.append((who, DECISIONS[what]))
        position = pair.end()
    return tuple(out)


def read_rayyan(data: bytes, path: str) -> list[RayyanArticle]:
    """The articles of a Rayyan CSV export in file order (module docstring)."""
    header, rows = read_table(data, path)
    keys = [header_key(h) for h in header]
    for column in (ID_COLUMN, NOTES_COLUMN):
        if column not in keys:
            raise InputError(path, 1, column, f"no {column!r} column: a Rayyan export (articles.csv) has key and "
                             f"notes columns; the header is {header}")
    at_id, at_notes = keys.index(ID_COLUMN), keys.index(NOTES_COLUMN)
    articles: list[RayyanArticle] = []
    first: dict[str, int] = {}
    for line, cells in rows:
        if len(cells) < len(header):
            raise InputError(path, line, None, f"expected {len(header)} fields, found {len(cells)}")
        doc = cells[at_id].strip()
        if not doc:
            raise InputError(path, line, header[at_id], "empty article key")
        if doc in first:
            raise InputError(path, line, header[at_id], f"duplicate key {doc!r} (first on line {first[doc]})")
        first[doc] = line
        notes = cells[at_notes]
        reasons = REASONS.search(notes)
        articles.append(RayyanArticle(
            doc, line, inclusion_decisions(notes, path, line),
            tuple(r.strip() for r in reasons["reasons"].split(",") if r.strip()) if reasons else ()))
    if not articles:
        raise InputError(path, None, None, "no articles: the file has a header and no rows")
    return articles
