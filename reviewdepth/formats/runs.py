"""The one reader of run files: TREC runs and CLEF eHealth TAR runs (2017–2019) share it.

A run line is ``qid iter docno rank score run_id`` (TREC) or ``topic action docno rank score run_id`` (CLEF TAR);
at least 6 whitespace-separated fields, extra fields ignored unless ``exact_fields`` (the CLEF scripts crash on
any other count). What the second column means is read here and nowhere else:

- CLEF 2017 interaction codes (`ACTIONS_2017`): ``AF`` feedback asked, ``NF`` no feedback, ``NS`` not shown, and
  the cost variants ``AFN DFN DFS NFS NFN`` (mapped to AF, NF or NS by `COST_ACTION`, for the 2017 cost measures
  only). Every code but ``NS`` is a shown document.
- CLEF 2018/2019 threshold flags: ``0``/``1``, where ``1`` marks the run's threshold.
- Anything else (``Q0``): a TREC run; the second column means nothing.

The run tag is the run_id of the last result line (trec_eval reports that one); ``tags=True`` also reads every
line's run_id, from which `topic_run_tag` names a topic's queue: the tag most of the topic's lines carry (some
CLEF runs tag each topic with its own number, so the last line's tag names one topic only). The run's own stopping point
(`threshold_rank`) is the rank of the last shown line (2017 codes) or of the last line flagged ``1`` (flags).
Scores must be numbers (NaN refused) when read. Errors name the file, line and field.
"""

from __future__ import annotations

import mmap
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

import numpy as np
import numpy.typing as npt

from reviewdepth.formats.errors import InputError
from reviewdepth.formats.scan import Column, LineNumbers, Scanned, StringColumn, scan
from reviewdepth.formats.source import read_bytes
from reviewdepth.measures.ranking import factorize_queries, repeated_rows

RUN_FIELDS = ["qid", "iter", "docno", "rank", "score", "run_id"]
CLEF_FIELDS = ["topic", "action", "docno", "rank", "score", "run_id"]
ACTIONS_2017 = frozenset({b"AF", b"NF", b"NS", b"AFN", b"DFN", b"DFS", b"NFS", b"NFN"})
FLAG_ACTIONS = frozenset({b"0", b"1"})
NOT_SHOWN = b"NS"
FEEDBACK = b"AF"
THRESHOLD_FLAG = b"1"
# 2017 cost mapping (tar_eval.py's CostBasedMeasure only): to AF, NF or NS.
COST_ACTION = {b"AFN": b"AF", b"DFN": b"AF", b"DFS": b"AF", b"NFS": b"NF", b"NFN": b"NS"}

ActionKind = Literal["2017", "flags", "other"]


def action_kind(actions: npt.NDArray[np.bytes_]) -> ActionKind:
    """``"2017"`` when every action is a 2017 interaction code, ``"flags"`` when every action is 0 or 1,
    ``"other"`` otherwise (e.g. ``Q0``: a TREC run)."""
    values = set(np.unique(actions).tolist())
    if values <= ACTIONS_2017:
        return "2017"
    if values <= FLAG_ACTIONS:
        return "flags"
    return "other"


def shown(actions: npt.NDArray[np.bytes_]) -> npt.NDArray[np.bool_]:
    """Lines shown to the reviewer: every 2017 code but ``NS``."""
    out: npt.NDArray[np.bool_] = actions != NOT_SHOWN
    return out


def feedback(actions: npt.NDArray[np.bytes_]) -> npt.NDArray[np.bool_]:
    """Lines where feedback was asked (``AF``)."""
    out: npt.NDArray[np.bool_] = actions == FEEDBACK
    return out


def cost_actions(actions: npt.NDArray[np.bytes_]) -> npt.NDArray[np.bytes_]:
    """The actions after the 2017 cost mapping (`COST_ACTION`)."""
    out = actions.copy()
    for src, dst in COST_ACTION.items():
        out[actions == src] = dst
    return out


def threshold_rank(actions: Sequence[bytes], kind: ActionKind) -> int | None:
    """The run's own stopping point in one topic's lines (review order): the rank of the last shown line (2017
    codes; 0 when none is shown) or of the last line flagged ``1`` (flags; None when none is); None for other
    runs."""
    if kind == "2017":
        ranks = [i for i, a in enumerate(actions, start=1) if a != NOT_SHOWN]
        return ranks[-1] if ranks else 0
    if kind == "flags":
        marked = [i for i, a in enumerate(actions, start=1) if a == THRESHOLD_FLAG]
        return marked[-1] if marked else None
    return None


@dataclass(frozen=True)
class Run:
    """A run as columns, one row per non-blank line, in file order. ``score`` is None when it was not read
    (CLEF runs are ranked by line order); ``action`` (the second column) is None when it was not read."""

    path: str
    qid: npt.NDArray[np.bytes_]
    docno: StringColumn
    lines: LineNumbers
    run_id: str
    score: npt.NDArray[np.float64] | None = None
    action: npt.NDArray[np.bytes_] | None = None
    tag: npt.NDArray[np.bytes_] | None = None  # every line's run_id (``parse_run(tags=True)``)

    def __len__(self) -> int:
        return self.lines.count

    @property
    def line(self) -> npt.NDArray[np.int32]:
        """Every row's file line (`LineNumbers.array`; ``lines.of(row)`` names one without making it)."""
        return self.lines.array

    @property
    def topic(self) -> npt.NDArray[np.bytes_]:
        """The first column under its CLEF name."""
        return self.qid

    def scores(self) -> npt.NDArray[np.float64]:
        if self.score is None:
            raise ValueError("the run was read without its score column")
        return self.score

    def actions(self) -> npt.NDArray[np.bytes_]:
        if self.action is None:
            raise ValueError("the run was read without its action column")
        return self.action

    def kind(self) -> ActionKind:
        """What the second column holds (`action_kind`)."""
        return action_kind(self.actions())

    def subset(self, rows: npt.NDArray[np.int64]) -> Run:
        """The given rows, in the given order."""
        return replace(self, qid=self.qid[rows], docno=self.docno_subset(rows),
                       lines=LineNumbers(len(rows), self.line[rows]),
                       score=None if self.score is None else self.score[rows],
                       action=None if self.action is None else self.action[rows],
                       tag=None if self.tag is None else self.tag[rows])

    def docno_subset(self, rows: npt.NDArray[np.int64]) -> StringColumn:
        hashes = self.docno.hashes
        return StringColumn(self.docno.values[rows], None if hashes is None else hashes[rows])

    def topic_blocks(self) -> tuple[npt.NDArray[np.int64], list[bytes]]:
        """Start rows of the topic blocks and their topics, in file order. Raises `InputError` at the first line
        of a topic that reappears after another topic (the CLEF scripts would evaluate it twice)."""
        n = len(self.qid)
        if n == 0:
            return np.zeros(0, dtype=np.int64), []
        starts = np.concatenate(([0], np.flatnonzero(self.qid[1:] != self.qid[:-1]) + 1)).astype(np.int64)
        topics = self.qid[starts].tolist()
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
        values, inverse = np.unique(self.actions(), return_inverse=True)
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

    def repeated(self) -> npt.NDArray[np.bool_]:
        """True for every line whose (qid, docno) pair is on an earlier line (`repeated_rows`)."""
        codes = factorize_queries(self.qid, self.qid[:0]).run
        return repeated_rows(codes, self.docno.hashed(), self.docno.values)


def last_run_id(data: bytes | mmap.mmap, allow_comments: bool = False) -> str:
    """run_id of the last result line (trec_eval reports that one)."""
    end = len(data)
    while end > 0:
        start = data.rfind(b"\n", 0, end) + 1
        fields = data[start:end].split()
        if len(fields) >= 6 and not (allow_comments and fields[0].startswith(b"#")):
            return fields[5].decode("utf-8", "replace")
        end = start - 1
    return ""


def parse_run(data: bytes | mmap.mmap, path: str = "<run>", *, allow_comments: bool = False, actions: bool = False,
              scores: bool = True, exact_fields: bool = False, names: list[str] | None = None,
              hashes: bool = True, tags: bool = False) -> Run:
    """Parse run text. ``allow_comments`` skips ``#`` lines (trec_eval 10.0; 9.0.8 rejects them); ``actions``
    reads the second column; ``scores`` reads (and checks) the score column; ``exact_fields`` requires exactly 6
    fields. ``names`` are the field names errors use (`RUN_FIELDS`, or `CLEF_FIELDS` for CLEF runs). ``hashes``
    False leaves the docnos' hashes out (`scan`). ``tags`` reads every line's run_id (`Run.tag`)."""
    spec = _run_spec(actions, scores, tags)
    scanned = scan(data, spec, min_fields=6, max_fields=6 if exact_fields else -1, skip_comments=allow_comments,
                   path=path, names=names or RUN_FIELDS, hashes=hashes)
    return _run_of(scanned, path, last_run_id(data, allow_comments), actions=actions, scores=scores, tags=tags)


def _run_spec(actions: bool, scores: bool, tags: bool) -> str:
    return ("ss" if actions else "s.") + "s" + ("." + ("f" if scores else ".") + "s" if tags else
                                                ".f" if scores else "")


def parse_run_blocks(blocks: Iterable[tuple[bytes, int]], path: str = "<run>", *, records_at_most: int,
                     allow_comments: bool = False, actions: bool = False, exact_fields: bool = False,
                     names: list[str] | None = None, tags: bool = False) -> Run:
    """`parse_run` (scores and hashes read) of a file given in pieces cut after a newline, each with the number of
    lines before it (`reviewdepth.formats.source.line_blocks`); ``records_at_most``: the file's number of lines or
    more. Each piece is scanned on its own and its columns copied into arrays of ``records_at_most`` rows at once
    (`_ColumnFill`), so neither the file's bytes nor its columns are ever held twice. The same run as `parse_run`
    of the joined bytes, and the same errors: a piece's first bad line is the file's first (the pieces before it
    had none), named by its line in the file."""
    spec = _run_spec(actions, True, tags)
    fill = _ColumnFill(records_at_most)
    run_id = ""
    for piece, before in blocks:
        try:
            scanned = scan(piece, spec, min_fields=6, max_fields=6 if exact_fields else -1,
                           skip_comments=allow_comments, path=path, names=names or RUN_FIELDS)
        except InputError as exc:
            raise InputError(exc.path, None if exc.line is None else exc.line + before, exc.field,
                             exc.message) from None
        run_id = last_run_id(piece, allow_comments) or run_id
        fill.add(scanned, before)
        del scanned
    return _run_of(fill.scanned(), path, run_id, actions=actions, scores=True, tags=tags)


class _ColumnFill:
    """The scans of consecutive pieces of one file written into one array per column (a string column's values
    and hashes: two arrays) of ``capacity`` rows, allocated at the first piece: a piece's arrays are released once
    copied, and the rows past the last record are never written, so they take no memory. A string column (or
    integer column) wider in a later piece is widened then: the same width (type) as the file scanned whole,
    since that is the widest of its pieces'."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.arrays: list[np.ndarray] = []
        self.strings: list[bool] = []  # per column: a string column (values and hashes) or not
        self.filled = 0
        self.lines: list[npt.NDArray[np.int32]] | None = None  # None while every record is on line row + 1

    def add(self, scanned: Scanned, before: int) -> None:
        count = len(scanned)
        if count == 0:
            return
        if self.filled + count > self.capacity:
            raise OverflowError(f"more than {self.capacity} records")
        if self.lines is None and not (scanned.lines.stored is None and self.filled == before):
            self.lines = [np.arange(1, self.filled + 1, dtype=np.int32)]
        if self.lines is not None:
            self.lines.append((scanned.lines.array + before).astype(np.int32))
        flat: list[np.ndarray] = []
        for column in scanned.columns:
            if isinstance(column, StringColumn):
                flat += [column.values, column.hashed()]
            else:
                flat.append(column)
        if not self.arrays:
            self.strings = [isinstance(c, StringColumn) for c in scanned.columns]
            self.arrays = [np.empty(self.capacity, dtype=a.dtype) for a in flat]
        for k, values in enumerate(flat):
            wider = np.result_type(self.arrays[k].dtype, values.dtype)
            if wider != self.arrays[k].dtype:
                grown = np.empty(self.capacity, dtype=wider)
                grown[:self.filled] = self.arrays[k][:self.filled]
                self.arrays[k] = grown
            self.arrays[k][self.filled:self.filled + count] = values
        self.filled += count

    def scanned(self) -> Scanned:
        arrays = [a[:self.filled] for a in self.arrays]
        self.arrays = []
        columns: list[Column] = []
        for is_string in self.strings:
            if is_string:
                columns.append(StringColumn(arrays.pop(0), arrays.pop(0)))
            else:
                columns.append(arrays.pop(0))
        lines = LineNumbers(self.filled) if self.lines is None else LineNumbers(self.filled,
                                                                                np.concatenate(self.lines))
        return Scanned(lines, columns)


def _run_of(scanned: Scanned, path: str, run_id: str, *, actions: bool, scores: bool, tags: bool) -> Run:
    if len(scanned) == 0:
        raise InputError(path, None, None, "empty run file: no result lines")
    columns = list(scanned.columns)
    qid = columns.pop(0)
    action = columns.pop(0) if actions else None
    docno = columns.pop(0)
    score = columns.pop(0) if scores else None
    tag = columns.pop(0) if tags else None
    assert isinstance(qid, StringColumn) and isinstance(docno, StringColumn)
    assert action is None or isinstance(action, StringColumn)
    assert tag is None or isinstance(tag, StringColumn)
    assert not isinstance(score, StringColumn)
    return Run(path, qid.values, docno, scanned.lines, run_id,
               None if score is None else np.asarray(score, dtype=np.float64),
               None if action is None else action.values, None if tag is None else tag.values)


@dataclass(frozen=True)
class TopicRunTag:
    """The run tag a topic's queue is named after (`topic_run_tag`), and every tag its lines carry, with its
    number of lines, in order of first appearance (one entry when the lines agree)."""

    tag: str
    counts: tuple[tuple[str, int], ...]

    @property
    def mixed(self) -> bool:
        return len(self.counts) > 1


def topic_run_tag(tags: npt.NDArray[np.bytes_]) -> TopicRunTag:
    """The tag most of ``tags`` (one topic's lines' run_ids, in file order) are; a tie goes to the tag seen first.
    One stray line (or a tag changed at the last line) does not rename the queue, as the last line's tag did."""
    values, first, counts = np.unique(tags, return_index=True, return_counts=True)
    by_appearance = np.argsort(first, kind="stable")
    ordered = [(bytes(values[i]).decode("utf-8", "surrogateescape"), int(counts[i])) for i in by_appearance]
    most = max(int(c) for c in counts)
    return TopicRunTag(next(t for t, c in ordered if c == most), tuple(ordered))


def read_run(path: str | Path, *, allow_comments: bool = False, actions: bool = False, scores: bool = True,
             exact_fields: bool = False, names: list[str] | None = None) -> Run:
    """`parse_run` of a file (gzip ok, ``-`` for standard input)."""
    return parse_run(read_bytes(path), str(path), allow_comments=allow_comments, actions=actions, scores=scores,
                     exact_fields=exact_fields, names=names)
