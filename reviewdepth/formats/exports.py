"""Writers of exported files: a topic's labels (ASReview CSV, plain CSV, a review-platform overlay) and a queue as a
run (TREC, CLEF TAR). Pure: rows in, text out.

- ``asreview``: ``record_id,asreview_label`` (1, 0, empty = not screened), the columns ASReview reads as labels
  and that ``reviewdepth import csv`` recognises without ``--map``.
- ``csv``: ``topic,doc_id,label`` (1, 0, empty = unjudged).
- ``overlay``: ``Control Number,Responsiveness`` with ``Responsive`` / ``Not Responsive``, judged documents only
  (an overlay load writes every cell it is given, so unjudged documents are left out rather than blanked): the
  identifier and single-choice coding field a review platform such as Relativity overlays onto its documents.
- ``trec``: ``topic Q0 doc rank score tag``; ``clef``: ``topic flag doc rank score tag`` (flag ``1`` on the
  queue's threshold rank, ``0`` elsewhere, or the run's own stored action codes). Scores: the stored ones when
  every entry has one and they strictly decrease along the ranks, else ``size - rank + 1``, so trec_eval's order
  (score descending) is the queue's order.
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from itertools import pairwise
from typing import Literal, get_args

from reviewdepth.formats.cells import CsvRows, safe_row

LabelFormat = Literal["asreview", "csv", "overlay"]
LABEL_FORMATS: tuple[str, ...] = get_args(LabelFormat)
RunFormat = Literal["trec", "clef"]
RUN_FORMATS: tuple[str, ...] = get_args(RunFormat)
OVERLAY_ID = "Control Number"
OVERLAY_FIELD = "Responsiveness"
OVERLAY_VALUES = {1: "Responsive", 0: "Not Responsive"}


def write_labels(topic: str, docs: Sequence[str], labels: Sequence[int], fmt: str) -> tuple[str, int]:
    """``labels`` per document: 1 relevant, 0 not, -1 unjudged. The text and its number of rows (documents)
    below the header: every document, or the judged ones only (``overlay``)."""
    out = io.StringIO()
    writer = CsvRows(out)
    rows: list[tuple[str | int, ...]]
    if fmt == "asreview":
        header = ["record_id", "asreview_label"]
        rows = [(d, "" if v < 0 else v) for d, v in zip(docs, labels, strict=True)]
    elif fmt == "csv":
        header = ["topic", "doc_id", "label"]
        rows = [(topic, d, "" if v < 0 else v) for d, v in zip(docs, labels, strict=True)]
    elif fmt == "overlay":
        header = [OVERLAY_ID, OVERLAY_FIELD]
        rows = [(d, OVERLAY_VALUES[v]) for d, v in zip(docs, labels, strict=True) if v >= 0]
    else:
        raise ValueError(f"unknown label format {fmt!r}; choose one of {', '.join(LABEL_FORMATS)}")
    writer.writerow(header)
    # document ids and topic names are text: one that starts like a formula is marked as text (formats/cells.py)
    writer.writerows(safe_row(row) for row in rows)
    return out.getvalue(), len(rows)


def run_scores(scores: Sequence[float | None]) -> list[float]:
    """The stored scores when complete, finite and strictly decreasing, else ``n, n-1, …, 1``."""
    known = [s for s in scores if s is not None and math.isfinite(s)]
    if len(known) == len(scores) and all(a > b for a, b in pairwise(known)):
        return known
    return [float(len(scores) - i) for i in range(len(scores))]


def _number(value: float) -> str:
    return str(int(value)) if value.is_integer() and abs(value) < 2**53 else repr(value)


def write_run(topic: str, docs: Sequence[str], scores: Sequence[float | None], tag: str, fmt: str,
              flags: Sequence[str] | None = None) -> str:
    """One topic's run lines in rank order (``flags``: the second column of a CLEF run)."""
    if fmt not in RUN_FORMATS:
        raise ValueError(f"unknown run format {fmt!r}; choose one of {', '.join(RUN_FORMATS)}")
    values = run_scores(scores)
    second = flags if fmt == "clef" and flags is not None else ["Q0"] * len(docs)
    return "".join(f"{topic} {f} {d} {rank} {_number(s)} {tag}\n"
                   for rank, (f, d, s) in enumerate(zip(second, docs, values, strict=True), start=1))
