"""CLEF eHealth TAR run files (2017–2019): the run reader of `reviewdepth.formats.runs` under CLEF names.

Six whitespace-separated fields ``topic action docno rank score run_id``; **the order of the lines is the
review order** (rank and score are ignored). ``action`` is the 2017 interaction type (``AF`` feedback asked,
``NF`` no feedback, ``NS`` not shown; the cost variants ``AFN DFN DFS NFS NFN``) or, in 2018/2019, an integer
``0``/``1`` where ``1`` marks the run's threshold (that line is read, later ones are not). Lines of one topic
must be contiguous. Files may be gzip-compressed (any separator, CRLF line ends and trailing spaces are fine).
"""

from __future__ import annotations

from pathlib import Path

from reviewdepth.formats.runs import ACTIONS_2017, CLEF_FIELDS, COST_ACTION, FLAG_ACTIONS, Run, parse_run
from reviewdepth.formats.source import read_bytes

__all__ = ["ACTIONS_2017", "CLEF_FIELDS", "COST_ACTION", "FLAG_ACTIONS", "ClefRun", "parse_clef_run",
           "read_clef_run"]

# A CLEF run is a `Run` read with its action column and without scores.
ClefRun = Run


def parse_clef_run(data: bytes, path: str = "<run>", *, exact_fields: bool = True) -> Run:
    """Parse CLEF TAR run text. ``exact_fields`` requires exactly 6 fields, as the official scripts do (they
    crash on any other count); otherwise extra fields are ignored, as in TREC runs."""
    return parse_run(data, path, actions=True, scores=False, exact_fields=exact_fields, names=CLEF_FIELDS)


def read_clef_run(path: str | Path, *, exact_fields: bool = True) -> Run:
    return parse_clef_run(read_bytes(path), str(path), exact_fields=exact_fields)
