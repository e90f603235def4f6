"""A one-topic run file stored as a queue in memory bounded by a chunk, not by the file (issue 26).

`reviewdepth.services.files.imports.import_run` reads a whole file into columns, then into Python lists: a
6,000,000-line
upload (244 MB of text) took the server to 2.3 GB on SQLite and 2.6 GB on PostgreSQL. This reads the same file in
line-aligned chunks of `CHUNK_BYTES`, twice:

1. **check**: every chunk is checked and parsed as `import_run` would (bytes, fields, qid, finite scores, doc ids
   with their NFC normalisation, the action column's kind) and only each line's 64-bit doc-id hash and the widest
   doc id are kept (8 bytes a line). Duplicates are found by sorting the hashes; a pair of equal hashes is
   confirmed on the doc ids' bytes (a third read of the chunks that hold them), so a hash collision is never
   mistaken for a duplicate.
2. **store**, in one transaction: each chunk is parsed again and its entries inserted (ranks continue from the
   chunk before); the queue's ranking index (`reviewdepth.store.ranking_blob`, the same bytes `encode_ranking`
   builds) is written in pieces: on SQLite into a zero-filled blob through the driver's incremental blob I/O, on
   PostgreSQL as parts of a temporary table joined by the server.

What it holds at once: one chunk's text and columns, the hashes and their sort order (24 bytes a line: 144 MB for
6,000,000 lines, about 170 MB at the 256 MiB cap of the shortest lines). Same rules, same stored rows, same errors
(file, line, field) as `import_run`, except that a file with several faults reports the first in line order
(`import_run` checks the whole file for one kind of fault before the next). Ranked by score (``order="trec_eval"``)
it keeps each line's doc id, score and action packed too (see `store_run_stream`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, BinaryIO

import numpy as np
import numpy.typing as npt
from sqlalchemy import Connection, Engine, insert, select, text

from reviewdepth.formats.errors import InputError
from reviewdepth.formats.runs import (
    FLAG_ACTIONS,
    NOT_SHOWN,
    THRESHOLD_FLAG,
    ActionKind,
    Run,
    action_kind,
    parse_run,
    topic_run_tag,
)
from reviewdepth.formats.trec import RUN_FIELDS
from reviewdepth.measures.ranking import rank_order
from reviewdepth.services.errors import Conflict
from reviewdepth.services.files.imports import checked_column, checked_text, checked_value, record_import, text_values
from reviewdepth.store import validation
from reviewdepth.store.evidence import chain_object
from reviewdepth.store.ingest import insert_entries, utc_now
from reviewdepth.store.models import Queue
from reviewdepth.store.ranking_blob import HEADER, MAGIC, strings_with_hashes_or_none

CHUNK_BYTES = 8 * 1024 * 1024
RANKED_SLICE = 200_000  # order="trec_eval": entries inserted at a time, in rank order
# the 2017 interaction codes and the 2018/2019 flags: while every action seen is one of these, the kind is open
_KNOWN_ACTIONS = frozenset({b"AF", b"NF", b"NS", b"AFN", b"DFN", b"DFS", b"NFS", b"NFN"}) | FLAG_ACTIONS


@dataclass(frozen=True)
class Chunk:
    """Bytes ``start..end`` of the file (whole lines), whose first line is line ``line_offset + 1``, and whose
    first result line is result ``row_offset`` (0-based) of the file."""

    start: int
    end: int
    line_offset: int
    row_offset: int = 0


def line_chunks(handle: BinaryIO, size: int) -> Iterator[tuple[Chunk, bytes]]:
    """Line-aligned pieces of about ``size`` bytes read from ``handle`` (a line longer than ``size`` is one piece;
    a last line without a newline ends the last piece)."""
    start, line_offset, carry = 0, 0, b""
    while True:
        block = handle.read(size)
        piece = carry + block
        if not piece:
            return
        cut = piece.rfind(b"\n") + 1 if block else len(piece)
        if cut == 0:  # no newline yet: a line longer than size
            carry = piece
            continue
        whole, carry = piece[:cut], piece[cut:]
        yield Chunk(start, start + len(whole), line_offset), whole
        start += len(whole)
        line_offset += whole.count(b"\n")


def read_chunk(handle: BinaryIO, chunk: Chunk) -> bytes:
    handle.seek(chunk.start)
    return handle.read(chunk.end - chunk.start)


def _shifted(exc: InputError, path: str, chunk: Chunk) -> InputError:
    return InputError(path, None if exc.line is None else exc.line + chunk.line_offset, exc.field, exc.message)


@dataclass
class _Parsed:
    """One chunk parsed and checked: its run columns (line numbers of the file) and its doc ids' stored bytes."""

    run: Run
    doc_bytes: npt.NDArray[np.bytes_]
    hashes: npt.NDArray[np.uint64]
    renamed: dict[int, str]


def _parse(piece: bytes, chunk: Chunk, path: str, topic: str) -> _Parsed | None:
    """The chunk's lines checked as `import_run` checks a file (None: no result line in it)."""
    try:
        checked_text(piece, path, RUN_FIELDS)
        try:
            run = parse_run(piece, path, actions=True, tags=True)
        except InputError as exc:
            if exc.line is None and "empty run file" in exc.message:
                return None
            raise
        lines = run.line
        infinite = np.flatnonzero(~np.isfinite(run.scores()))
        if len(infinite):
            raise InputError(path, int(lines[infinite[0]]), "score", "must be a finite number")
        wrong = np.flatnonzero(run.qid != topic.encode("utf-8", "surrogateescape"))
        if len(wrong):
            other = bytes(run.qid[wrong[0]]).decode("utf-8", "replace")
            raise InputError(path, int(lines[wrong[0]]), "qid",
                             f"topic {other!r} is not {topic!r}; upload one topic's ranking")
        renamed = checked_column(run.docno.values, lines, path, "docno", validation.doc_id, validation.DOC_ID_LENGTH)
    except InputError as exc:
        raise _shifted(exc, path, chunk) from None
    values, hashes = run.docno.values, run.docno.hashed()
    if renamed:  # NFC changed a few doc ids: store (and hash) the normalised text, as import_run does
        texts = text_values(values)
        for row, normal in renamed.items():
            texts[row] = normal
        column = strings_with_hashes_or_none(texts)
        assert column is not None  # run fields hold no whitespace and are never empty
        values, hashes = column.values, column.hashed()
    return _Parsed(run, values, hashes, renamed)


@dataclass
class _Checked:
    """What the check pass keeps: per line 8 bytes, plus a few scalars."""

    rows: int = 0
    width: int = 1
    # every run tag of the file with its number of lines, in order of first appearance: the queue keeps the tag
    # most lines carry, as `import_run` does (`reviewdepth.formats.runs.topic_run_tag`)
    tag_lines: dict[str, int] = field(default_factory=dict)
    actions: set[bytes] = field(default_factory=set)
    other_actions: bool = False
    # the run's own stopping point under either kind (`threshold_rank`), known once the kind is
    last_shown: int = 0
    last_flagged: int | None = None
    chunks: list[Chunk] = field(default_factory=list)
    hashes: list[npt.NDArray[np.uint64]] = field(default_factory=list)
    digest: Any = field(default_factory=hashlib.sha256)
    # order="trec_eval" only: every line's stored doc id, score and action, to rank them by score at the end
    keep_columns: bool = False
    values: list[npt.NDArray[np.bytes_]] = field(default_factory=list)
    scores: list[npt.NDArray[np.float64]] = field(default_factory=list)
    action_values: list[npt.NDArray[np.bytes_]] = field(default_factory=list)

    def threshold(self) -> int | None:
        """`reviewdepth.formats.runs.threshold_rank` of the whole file."""
        kind = self.kind()
        return self.last_shown if kind == "2017" else self.last_flagged if kind == "flags" else None

    def kind(self) -> ActionKind:
        if self.other_actions:
            return "other"
        return action_kind(np.array(sorted(self.actions), dtype=np.bytes_))


def _check(handle: BinaryIO, path: str, topic: str, chunk_bytes: int, keep_columns: bool) -> _Checked:
    checked = _Checked(keep_columns=keep_columns)
    for chunk, piece in line_chunks(handle, chunk_bytes):
        checked.digest.update(piece)
        parsed = _parse(piece, chunk, path, topic)
        if parsed is None:
            continue
        run = parsed.run
        checked.chunks.append(Chunk(chunk.start, chunk.end, chunk.line_offset, checked.rows))
        chunk_first_rank = checked.rows + 1
        checked.rows += len(run)
        checked.width = max(checked.width, parsed.doc_bytes.dtype.itemsize)
        assert run.tag is not None
        for tag, lines in topic_run_tag(run.tag).counts:
            checked.tag_lines[tag] = checked.tag_lines.get(tag, 0) + lines
        checked.hashes.append(parsed.hashes)
        if keep_columns:
            checked.values.append(parsed.doc_bytes)
            checked.scores.append(run.scores())
            checked.action_values.append(run.actions())
        if not checked.other_actions:
            actions = run.actions()
            checked.actions.update(np.unique(actions).tolist())
            checked.other_actions = not checked.actions <= _KNOWN_ACTIONS
            shown = np.flatnonzero(actions != NOT_SHOWN)
            if len(shown):
                checked.last_shown = chunk_first_rank + int(shown[-1])
            flagged = np.flatnonzero(actions == THRESHOLD_FLAG)
            if len(flagged):
                checked.last_flagged = chunk_first_rank + int(flagged[-1])
    if checked.rows == 0:
        raise InputError(path, None, None, "empty run file: no result lines")
    return checked


def _rows_bytes(handle: BinaryIO, checked: _Checked, path: str, topic: str,
                rows: set[int]) -> dict[int, tuple[bytes, int, bool]]:
    """The stored doc-id bytes, file line and whether NFC renamed it, of the given 0-based rows."""
    found: dict[int, tuple[bytes, int, bool]] = {}
    for index, chunk in enumerate(checked.chunks):
        end = checked.chunks[index + 1].row_offset if index + 1 < len(checked.chunks) else checked.rows
        wanted = [r for r in rows if chunk.row_offset <= r < end]
        if not wanted:
            continue
        parsed = _parse(read_chunk(handle, chunk), chunk, path, topic)
        assert parsed is not None
        for row in wanted:
            local = row - chunk.row_offset
            found[row] = (bytes(parsed.doc_bytes[local]), int(parsed.run.line[local]) + chunk.line_offset,
                          local in parsed.renamed)
    return found


def _refuse_duplicates(handle: BinaryIO, checked: _Checked, path: str, topic: str,
                       hashes: npt.NDArray[np.uint64], order: npt.NDArray[np.int64]) -> None:
    """`import_run`'s duplicate check from the sorted hashes: the first line (in file order) whose doc id is on an
    earlier line."""
    sorted_hashes = hashes[order]
    equal = np.flatnonzero(sorted_hashes[1:] == sorted_hashes[:-1])
    if not len(equal):
        return
    # each run of equal hashes, in file order (the sort is stable): its members are candidates
    members = np.unique(np.concatenate((order[equal], order[equal + 1])))
    found = _rows_bytes(handle, checked, path, topic, set(members.tolist()))
    first_at: dict[bytes, int] = {}
    repeats: list[int] = []
    for row in sorted(found):
        value = found[row][0]
        if value in first_at:
            repeats.append(row)
        else:
            first_at[value] = row
    if not repeats:
        return  # hash collisions between different doc ids
    row = min(repeats)
    value, line, renamed = found[row]
    if renamed or found[first_at[value]][2]:
        raise InputError(path, None, "docno", f"two docnos of topic {topic!r} are the same text once "
                         "NFC-normalised")
    raise InputError(path, line, "docno", f"duplicate docno {value.decode(errors='replace')!r} for topic {topic!r}")


class _RankingIndexWriter:
    """Writes the queue's ranking index in sequential pieces, never holding it whole: on SQLite into the row's
    zero-filled blob (the driver's incremental blob I/O, opened per piece so statements between pieces are free to
    run), on PostgreSQL as parts of a temporary table that one statement joins into the row at the end."""

    def __init__(self, conn: Connection, queue_id: int, total: int) -> None:
        self.conn, self.queue_id, self.offset = conn, queue_id, 0
        self.parts = 0
        if conn.dialect.name == "sqlite":
            conn.execute(text("UPDATE queues SET ranking_blob = zeroblob(:n) WHERE id = :id"),
                         {"n": total, "id": queue_id})
        else:
            conn.execute(text("CREATE TEMPORARY TABLE ranking_parts (part integer PRIMARY KEY, data bytea NOT NULL) "
                              "ON COMMIT DROP"))

    def write(self, piece: bytes) -> None:
        raw = self.conn.connection.driver_connection
        assert raw is not None
        if self.conn.dialect.name == "sqlite":
            with raw.blobopen("queues", "ranking_blob", self.queue_id) as blob:
                blob.seek(self.offset)
                blob.write(piece)
        else:
            with raw.cursor() as cursor:
                cursor.execute("INSERT INTO ranking_parts (part, data) VALUES (%s, %s)", (self.parts, piece))
        self.offset += len(piece)
        self.parts += 1

    def close(self) -> None:
        if self.conn.dialect.name != "sqlite":
            self.conn.execute(text("UPDATE queues SET ranking_blob = (SELECT string_agg(data, ''::bytea ORDER BY "
                                   "part) FROM ranking_parts) WHERE id = :id"), {"id": self.queue_id})
            self.conn.execute(text("DROP TABLE ranking_parts"))


def _ranked_columns(checked: _Checked) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.bytes_],
                                                 npt.NDArray[np.float64], npt.NDArray[np.bytes_]]:
    """order="trec_eval": the file rows by score descending (float32, as trec_eval), ties by docno descending, and
    the kept columns."""
    values = np.concatenate(checked.values)
    scores = np.concatenate(checked.scores)
    actions = np.concatenate(checked.action_values)
    checked.values.clear()
    checked.scores.clear()
    checked.action_values.clear()
    ranked = rank_order(np.zeros(len(scores), dtype=np.int64), scores, values, 9)
    return ranked, values, scores, actions


def _threshold_of(kind: ActionKind, actions: npt.NDArray[np.bytes_]) -> int | None:
    """`reviewdepth.formats.runs.threshold_rank` of actions in rank order."""
    if kind == "2017":
        shown = np.flatnonzero(actions != NOT_SHOWN)
        return int(shown[-1]) + 1 if len(shown) else 0
    if kind == "flags":
        marked = np.flatnonzero(actions == THRESHOLD_FLAG)
        return int(marked[-1]) + 1 if len(marked) else None
    return None


def store_run_stream(engine: Engine, topic_id: int, topic: str, queue: str, path: str, *, order: str = "given",
                     chunk_bytes: int = CHUNK_BYTES) -> int:
    """Store the one-topic run file at ``path`` (plain text; the API has decompressed it) as queue ``queue`` of
    ``topic``, in one transaction: nothing is stored when any line is refused. Returns the number of entries.

    ``order="given"`` (file order, CLEF's rule) holds one chunk and 24 bytes a line; ``order="trec_eval"`` (score
    descending as float32, ties by docno descending) must see every line before the first rank is known, so it
    also keeps each line's doc id, score and action as packed columns: the doc id's width and about 35 bytes more a
    line, where Python objects took about 400."""
    if order not in ("given", "trec_eval"):
        raise InputError(path, None, "order", f"order must be given or trec_eval, not {order!r}")
    with open(path, "rb") as handle:
        checked = _check(handle, path, topic, chunk_bytes, keep_columns=order == "trec_eval")
        hashes = np.concatenate(checked.hashes)
        checked.hashes.clear()
        by_hash = np.argsort(hashes, kind="stable").astype(np.int64, copy=False)
        _refuse_duplicates(handle, checked, path, topic, hashes, by_hash)
        kind = checked.kind()
        most = max(checked.tag_lines.values(), default=0)
        tag = checked_value(validation.queue_name, next((t for t, n in checked.tag_lines.items() if n == most), ""),
                            path, None, "run_id")
        digest = checked.digest.hexdigest()
        n, width = checked.rows, checked.width
        threshold = checked.threshold()
        if order == "trec_eval":
            ranked, values, scores, actions = _ranked_columns(checked)
            actions = actions[ranked]
            threshold = _threshold_of(kind, actions)
            hashes = hashes[ranked]
            by_hash = np.argsort(hashes, kind="stable").astype(np.int64, copy=False)
        with engine.begin() as conn:
            taken = conn.execute(select(Queue.id).where(Queue.topic_id == topic_id, Queue.name == queue)).first()
            if taken is not None:
                raise Conflict(f"{path}: queue {queue!r} already exists for topic {topic!r}; choose --queue NAME")
            record_import(conn, "run", path, digest, n, 1, f"queue={queue};order={order}")
            queue_id = int(conn.execute(insert(Queue).values(
                topic_id=topic_id, name=queue, ordering=order, run_tag=tag, threshold_rank=threshold,
                size=n, source=f"import:{digest}", created_at=utc_now(),
            ).returning(Queue.id)).scalar_one())
            index = _RankingIndexWriter(conn, queue_id, HEADER.size + n * (width + 16))
            index.write(HEADER.pack(MAGIC, width, n))
            if order == "given":
                for chunk in checked.chunks:
                    parsed = _parse(read_chunk(handle, chunk), chunk, path, topic)
                    assert parsed is not None
                    chunk_actions = parsed.run.actions()
                    flags = [a.decode() for a in chunk_actions.tolist()] if kind != "other" else None
                    insert_entries(conn, queue_id, text_values(parsed.doc_bytes), parsed.run.scores().tolist(),
                                   flags, first_rank=chunk.row_offset + 1)
                    index.write(parsed.doc_bytes.astype(f"S{width}").tobytes())
            else:
                for start in range(0, n, RANKED_SLICE):
                    rows = ranked[start:start + RANKED_SLICE]
                    flags = [a.decode() for a in actions[start:start + RANKED_SLICE].tolist()] \
                        if kind != "other" else None
                    insert_entries(conn, queue_id, text_values(values[rows]), scores[rows].tolist(), flags,
                                   first_rank=start + 1)
                    index.write(values[rows].astype(f"S{width}").tobytes())
            step = 1 << 22
            for start in range(0, n, step):
                index.write(hashes[by_hash[start:start + step]].astype("<u8").tobytes())
            for start in range(0, n, step):
                index.write(by_hash[start:start + step].astype("<i8").tobytes())
            index.close()
            chain_object(conn, "queue", queue_id)
        return n
