"""Reader for CLEF eHealth TAR run files (2017–2019).

Six whitespace-separated fields ``topic action docno rank score run_id``; **the order of the lines is the
review order** (rank and score are ignored). ``action`` is the 2017 interaction type (``AF`` feedback asked,
``NF`` no feedback, ``NS`` not shown; the cost variants ``AFN DFN DFS NFS NFN``) or, in 2018/2019, an integer
``0``/``1`` where ``1`` marks the run's threshold (that line is read, later ones are not). Lines of one topic
must be contiguous. Files may be gzip-compressed (any separator, CRLF line ends and trailing spaces are fine).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from reviewdepth.formats.errors import InputError
from reviewdepth.formats.scan import StringColumn, scan
from reviewdepth.formats.trec import _last_run_id, read_bytes

CLEF_FIELDS = ["topic", "action", "docno", "rank", "score", "run_id"]
ACTIONS_2017 = frozenset({b"AF", b"NF", b"NS", b"AFN", b"DFN", b"DFS", b"NFS", b"NFN"})
FLAG_ACTIONS = frozenset({b"0", b"1"})
# 2017 cost mapping (tar_eval.py's CostBasedMeasure only): to AF, NF or NS.
COST_ACTION = {b"AFN": b"AF", b"DFN": b"AF", b"DFS": b"AF", b"NFS": b"NF", b"NFN": b"NS"}


@dataclass(frozen=True)
class ClefRun:
    """A CLEF TAR run as columns, one row per non-blank line, in file order."""

    path: str
    topic: npt.NDArray[np.bytes_]
    action: npt.NDArray[np.bytes_]
    docno: StringColumn
    line: npt.NDArray[np.int64]
    run_id: str

    def __len__(self) -> int:
        return len(self.line)

    def kind(self) -> str:
        """``"2017"`` when every action is a 2017 interaction code, ``"flags"`` when every action is 0 or 1,
        ``"other"`` otherwise (e.g. ``Q0``: a TREC run)."""
        values = set(np.unique(self.action).tolist())
        if values <= ACTIONS_2017:
            return "2017"
        if values <= FLAG_ACTIONS:
            return "flags"
        return "other"

    def topic_blocks(self) -> tuple[npt.NDArray[np.int64], list[bytes]]:
        """Start rows of the topic blocks and their topics, in file order. Raises `InputError` at the first line
        of a topic that reappears after another topic (the CLEF scripts would evaluate it twice)."""
        n = len(self.topic)
        if n == 0:
            return np.zeros(0, dtype=np.int64), []
        starts = np.concatenate(([0], np.flatnonzero(self.topic[1:] != self.topic[:-1]) + 1)).astype(np.int64)
        topics = self.topic[starts].tolist()
        seen: set[bytes] = set()
        for start, topic in zip(starts.tolist(), topics, strict=True):
            if topic in seen:
                raise InputError(self.path, int(self.line[start]), "topic",
                                 f"topic {topic.decode('utf-8', 'replace')!r} reappears after other topics; "
                                 "group each topic's lines together (the CLEF scripts would count it twice)")
            seen.add(topic)
        return starts, topics

    def flags(self) -> npt.NDArray[np.bool_]:
        """The 2018/2019 threshold flag of every line: ``int(action) == 1``. Raises `InputError` naming the
        first line whose action is not an integer (tar_eval_2018.py crashes there)."""
        values, inverse = np.unique(self.action, return_inverse=True)
        flag_of = np.zeros(len(values), dtype=bool)
        for i, token in enumerate(values.tolist()):
            try:
                flag_of[i] = int(token) == 1
            except ValueError:
                row = int(np.flatnonzero(inverse == i)[0])
                raise InputError(self.path, int(self.line[row]), "action",
                                 f"action must be an integer (0, or 1 on the threshold line) in a CLEF 2018/2019 "
                                 f"run, found {token.decode('utf-8', 'replace')!r}") from None
        out: npt.NDArray[np.bool_] = flag_of[inverse.reshape(-1)]
        return out


def parse_clef_run(data: bytes, path: str = "<run>", *, exact_fields: bool = True) -> ClefRun:
    """Parse CLEF TAR run text. ``exact_fields`` requires exactly 6 fields, as the official scripts do (they
    crash on any other count); otherwise extra fields are ignored, as in TREC runs."""
    scanned = scan(data, "sss", min_fields=6, max_fields=6 if exact_fields else -1, path=path, names=CLEF_FIELDS)
    if len(scanned) == 0:
        raise InputError(path, None, None, "empty run file: no result lines")
    topic, action, docno = scanned.columns
    assert isinstance(topic, StringColumn) and isinstance(action, StringColumn) and isinstance(docno, StringColumn)
    return ClefRun(path, topic.values, action.values, docno, scanned.line_numbers,
                   _last_run_id(data, allow_comments=False))


def read_clef_run(path: str | Path, *, exact_fields: bool = True) -> ClefRun:
    return parse_clef_run(read_bytes(path), str(path), exact_fields=exact_fields)
