"""How a file's records get their document ids: the ``--ids`` choices and the answer `RecordIds`.

Shared by the records files (`reviewdepth.formats.records`) and RIS (`reviewdepth.formats.ris`), which read
each other's records, so neither has to import the other for these.
"""

from __future__ import annotations

from dataclasses import dataclass

IDS_AUTO, IDS_POSITION = "auto", "position"


@dataclass(frozen=True)
class RecordIds:
    """How a file's records got their document ids: ``source`` ``position`` (the 0-based row among the data rows,
    ASReview's ``record_id``), ``column`` (``column`` its header name) or, in RIS, ``tag`` (``column`` the tags);
    ``why`` the reason positions were chosen (no id column, or the column's first repeat or empty cell)."""

    source: str
    column: str | None = None
    why: str | None = None

    def describe(self) -> str:
        """``ids: column 'record_id'`` or ``ids: position, 0-based, as ASReview's record_id — …``."""
        if self.source == "column":
            return f"ids: column {self.column!r}"
        if self.source == "tag":
            return f"ids: the records' {self.column} tags"
        return "ids: position, 0-based, as ASReview's record_id" + (f" ({self.why})" if self.why else "")
