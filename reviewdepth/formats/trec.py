"""TREC files: the qrels reader, and the run reader of `reviewdepth.formats.runs` under its TREC names.

Run: ``qid iter docno rank score run_id``, at least 6 whitespace-separated fields (extra fields ignored); only
qid, docno and score are used. Qrels: exactly 4 fields ``qid iter docno rel``. Scores must be numbers (NaN
refused) and rel an integer; trec_eval's ``atof``/``atol`` would silently read garbage as 0, reviewdepth
refuses it with the file, line and field. Files may be gzip-compressed; ``-`` is standard input.
"""

from __future__ import annotations

import mmap
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from reviewdepth.formats.errors import InputError
from reviewdepth.formats.prescan import QRELS_LAYOUT
from reviewdepth.formats.runs import RUN_FIELDS, Run, parse_run, read_run
from reviewdepth.formats.scan import IntColumn, LineNumbers, StringColumn, scan
from reviewdepth.formats.source import read_bytes

__all__ = ["QRELS_FIELDS", "RUN_FIELDS", "QrelsColumns", "RunColumns", "parse_qrels", "parse_run", "read_bytes",
           "read_qrels", "read_run"]

QRELS_FIELDS = ["qid", "iter", "docno", "rel"]

# A TREC run is a `Run` read with its scores (the default of `parse_run`).
RunColumns = Run


@dataclass(frozen=True)
class QrelsColumns:
    """TREC qrels as columns, one row per non-blank line (in file order). ``rel`` is int64 unless the qrels were
    parsed with ``narrow_rel`` (then the scanner's narrowest type that holds them)."""

    path: str
    qid: npt.NDArray[np.bytes_]
    docno: StringColumn
    rel: IntColumn
    lines: LineNumbers

    @property
    def line(self) -> npt.NDArray[np.int32]:
        """Every row's file line (`LineNumbers.array`; ``lines.of(row)`` names one without making it)."""
        return self.lines.array


def parse_qrels(data: bytes | mmap.mmap, path: str = "<qrels>", *, allow_comments: bool = False,
                hashes: bool = True, narrow_rel: bool = False) -> QrelsColumns:
    """Parse TREC qrels text (exactly 4 fields per line); ``hashes`` False leaves the docnos' hashes out (`scan`).
    ``narrow_rel`` keeps the relevance values in the scanner's narrowest integer type that holds them (int8 for
    the usual one-digit values: 7 bytes a line less than int64, which the other callers get)."""
    spec, min_fields, max_fields = QRELS_LAYOUT
    scanned = scan(data, spec, min_fields=min_fields, max_fields=max_fields, skip_comments=allow_comments, path=path,
                   names=QRELS_FIELDS, hashes=hashes)
    if len(scanned) == 0:
        raise InputError(path, None, None, "empty qrels file: no judgment lines")
    qid, docno, rel = scanned.columns
    assert isinstance(qid, StringColumn) and isinstance(docno, StringColumn)
    assert not isinstance(rel, StringColumn) and np.issubdtype(rel.dtype, np.signedinteger)
    values: IntColumn = rel if narrow_rel else rel.astype(np.int64, copy=False)  # type: ignore[assignment]
    return QrelsColumns(path, qid.values, docno, values, scanned.lines)


def read_qrels(path: str | Path, *, allow_comments: bool = False) -> QrelsColumns:
    return parse_qrels(read_bytes(path), str(path), allow_comments=allow_comments)
