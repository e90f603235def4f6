"""Readers for TREC run and qrels files (columnar, exact trec_eval field rules).

Run: ``qid iter docno rank score run_id``, at least 6 whitespace-separated fields (extra fields ignored); only
qid, docno and score are used. Qrels: exactly 4 fields ``qid iter docno rel``. Scores must be numbers (NaN
refused) and rel an integer; trec_eval's ``atof``/``atol`` would silently read garbage as 0, reviewdepth
refuses it with the file, line and field. Files may be gzip-compressed; ``-`` is standard input.
"""

from __future__ import annotations

import gzip
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from reviewdepth.formats.errors import InputError
from reviewdepth.formats.scan import StringColumn, scan

RUN_FIELDS = ["qid", "iter", "docno", "rank", "score", "run_id"]
QRELS_FIELDS = ["qid", "iter", "docno", "rel"]


def read_bytes(path: str | Path) -> bytes:
    """Whole file as bytes; ``-`` reads standard input; gzip is detected by its magic number."""
    name = str(path)
    try:
        if name == "-":
            data = sys.stdin.buffer.read()
        else:
            data = Path(name).read_bytes()
    except OSError as exc:
        raise InputError(name, None, None, f"cannot read file: {exc.strerror or exc}") from None
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as exc:
            raise InputError(name, None, None, f"corrupt gzip data: {exc}") from None
    return data


@dataclass(frozen=True)
class RunColumns:
    """A TREC run as columns, one row per non-blank line (in file order)."""

    path: str
    qid: npt.NDArray[np.bytes_]
    docno: StringColumn
    score: npt.NDArray[np.float64]
    line: npt.NDArray[np.int64]
    run_id: str


@dataclass(frozen=True)
class QrelsColumns:
    """TREC qrels as columns, one row per non-blank line (in file order)."""

    path: str
    qid: npt.NDArray[np.bytes_]
    docno: StringColumn
    rel: npt.NDArray[np.int64]
    line: npt.NDArray[np.int64]


def parse_run(data: bytes, path: str = "<run>", *, allow_comments: bool = False) -> RunColumns:
    """Parse TREC run text. ``allow_comments`` skips ``#`` lines (trec_eval 10.0); 9.0.8 rejects them."""
    scanned = scan(data, "s.s.f", min_fields=6, skip_comments=allow_comments, path=path, names=RUN_FIELDS)
    if len(scanned) == 0:
        raise InputError(path, None, None, "empty run file: no result lines")
    qid, docno, score = scanned.columns
    assert isinstance(qid, StringColumn) and isinstance(docno, StringColumn)
    run_id = _last_run_id(data, allow_comments)
    return RunColumns(path, qid.values, docno, np.asarray(score, dtype=np.float64), scanned.line_numbers, run_id)


def _last_run_id(data: bytes, allow_comments: bool) -> str:
    """run_id of the last result line (trec_eval reports that one)."""
    end = len(data)
    while end > 0:
        start = data.rfind(b"\n", 0, end) + 1
        fields = data[start:end].split()
        if len(fields) >= 6 and not (allow_comments and fields[0].startswith(b"#")):
            return fields[5].decode("utf-8", "replace")
        end = start - 1
    return ""


def parse_qrels(data: bytes, path: str = "<qrels>", *, allow_comments: bool = False) -> QrelsColumns:
    """Parse TREC qrels text (exactly 4 fields per line)."""
    scanned = scan(data, "s.si", min_fields=4, max_fields=4, skip_comments=allow_comments, path=path,
                   names=QRELS_FIELDS)
    if len(scanned) == 0:
        raise InputError(path, None, None, "empty qrels file: no judgment lines")
    qid, docno, rel = scanned.columns
    assert isinstance(qid, StringColumn) and isinstance(docno, StringColumn)
    return QrelsColumns(path, qid.values, docno, np.asarray(rel, dtype=np.int64), scanned.line_numbers)


def read_run(path: str | Path, *, allow_comments: bool = False) -> RunColumns:
    return parse_run(read_bytes(path), str(path), allow_comments=allow_comments)


def read_qrels(path: str | Path, *, allow_comments: bool = False) -> QrelsColumns:
    return parse_qrels(read_bytes(path), str(path), allow_comments=allow_comments)
