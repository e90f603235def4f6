"""The one way to load a queue and its current labels into numpy arrays (Core, selected columns)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from datetime import datetime
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt
from sqlalchemy import Connection, select

from reviewdepth.formats.scan import StringColumn, scan
from reviewdepth.store.ingest import driver_columns
from reviewdepth.store.labels import JUDGMENT_CODE_SQL, UNJUDGED, decode_judgment_codes, resolve_codes, resolve_labels
from reviewdepth.store.models import VOID_ROLE, Judgment, Queue, QueueEntry
from reviewdepth.store.ranking_blob import (
    HEADER,
    MAGIC,
    RankingIndex,
    decode_ranking,
    scan_doc_ids,
    strings_with_hashes_or_none,
)


class JudgmentArrays(NamedTuple):
    """A topic's judgments as columns, in id order (`load_judgment_arrays`)."""

    doc_ids: list[str]
    ids: npt.NDArray[np.int64]
    relevant: npt.NDArray[np.int8]  # 1, 0, or -1 (no decision)
    adjudication: npt.NDArray[np.bool_]
    markers: npt.NDArray[np.int8]  # `reviewdepth.store.labels.DUPLICATE_MARKER` and the like


@dataclass(frozen=True)
class QueueLabels:
    """A queue in rank order with each entry's current label (1, 0, -1 unjudged), plus topic-wide counts.

    ``relevant_total`` and ``nonrelevant_total`` count every judged document of the topic, in the queue or
    not (R and the judged non-relevant N of trec_eval).
    """

    size: int
    labels: npt.NDArray[np.int8]
    relevant_total: int
    nonrelevant_total: int
    judged_total: int
    policy: str
    as_of: int | None


# a judgment's label, role and duplicate marker as one digit (`reviewdepth.store.labels.JUDGMENT_CODE_SQL`)
_CODE = JUDGMENT_CODE_SQL
# the ranking index is read this much at a time. 1 MiB slices read a 10,000,000-entry index (270 MB) on
# PostgreSQL in 0.29 s of client CPU and 0.23 s of server CPU against 0.49 s and 0.31 s in 8 MiB slices: each
# slice is copied twice on either side, and 1 MiB copies stay in the processor's caches
RANKING_SLICE_BYTES = 1024 * 1024
JUDGMENT_SLICE_ROWS = 1 << 16  # judgments read (as one aggregate row) at a time by `_chunked_path`
COMPARE_ROWS = 1 << 16  # hash matches whose doc ids are compared (gathered, then as bytes) at a time


def _judgment_filter(conn: Connection, topic_id: int, as_of: int | None,
                     as_of_time: datetime | None) -> tuple[str, tuple[object, ...]]:
    """The WHERE clause (qmark SQL) and parameters selecting a topic's judgments up to ``as_of`` (not the
    ``void`` rows that log a voided sample: they judge no document)."""
    sql = "topic_id = ? AND role <> 'void'"
    params: list[object] = [topic_id]
    if as_of is not None:
        sql += " AND id <= ?"
        params.append(as_of)
    if as_of_time is not None:
        sql += " AND recorded_at <= ?"
        params.append(as_of_time.isoformat(" ") if conn.dialect.name == "sqlite" else as_of_time)
    return sql, tuple(params)


def load_judgment_arrays(conn: Connection, topic_id: int, as_of: int | None = None,
                         as_of_time: datetime | None = None) -> JudgmentArrays:
    """(doc ids, judgment ids, relevant as 1/0/-1, is-adjudication, duplicate marker) of a topic's judgments up to
    ``as_of``."""
    where, params = _judgment_filter(conn, topic_id, as_of, as_of_time)
    docs, ids, codes = driver_columns(conn, f"SELECT doc_id, id, {_CODE} FROM judgments "
                                            f"WHERE {where} ORDER BY id", params, width=3)
    rel, adj, markers = decode_judgment_codes(np.array(codes, dtype=np.int8))
    return JudgmentArrays(list(docs), np.array(ids, dtype=np.int64), rel, adj, markers)


def load_queue_labels(conn: Connection, queue_id: int, topic_id: int, size: int, policy: str = "latest",
                      as_of: int | None = None, as_of_time: datetime | None = None) -> QueueLabels:
    """Labels by rank. Judged documents are numbered by their 64-bit hash and joined to the queue's stored hash
    index (every match verified byte for byte); queues without the index, doc ids with whitespace or a hash
    collision take the plain path (a dictionary of doc ids and a join in SQL). The judgments and the index are read
    a slice at a time (`_chunked_path`); the labels are the same as read whole."""
    labels = np.full(size, UNJUDGED, dtype=np.int8)
    chunked = _chunked_path(conn, queue_id, topic_id, as_of, as_of_time, policy, labels)
    if chunked is not None:
        per_doc = chunked
    else:
        per_doc = np.zeros(0, dtype=np.int8)
        docs, ids, rel, adj, markers = load_judgment_arrays(conn, topic_id, as_of, as_of_time)
        if docs:
            ranking = _read_ranking(conn, queue_id)
            column = strings_with_hashes_or_none(docs) if ranking is not None else None
            fast = _hashed_path(ranking, column, ids, rel, adj, policy, labels, markers) \
                if ranking is not None and column is not None else None
            if fast is not None:
                per_doc = fast
            else:
                resolved = resolve_labels(docs, ids, rel, adj, policy, markers)
                per_doc = resolved.labels
                _join_in_sql(conn, queue_id, topic_id, as_of, as_of_time, resolved.doc_ids.tolist(), per_doc,
                             labels)
    return QueueLabels(
        size=size,
        labels=labels,
        relevant_total=int(np.count_nonzero(per_doc == 1)),
        nonrelevant_total=int(np.count_nonzero(per_doc == 0)),
        judged_total=int(np.count_nonzero(per_doc >= 0)),
        policy=policy,
        as_of=as_of,
    )


class _JudgmentChunk(NamedTuple):
    """Up to `JUDGMENT_SLICE_ROWS` judgments after a given id, as one aggregate row (no Python object per
    judgment): doc ids and ids joined by newlines, one `JUDGMENT_CODE_SQL` digit each, and the last id read."""

    rows: int
    doc_text: str
    id_text: str
    code_text: str
    last_id: int


class _JudgedDocuments(NamedTuple):
    """A topic's judgments with their documents numbered by hash rank (`number_by_hash`, across all chunks)."""

    codes: npt.NDArray[np.int64]
    ids: npt.NDArray[np.int64]
    digits: npt.NDArray[np.uint8]
    hashes: npt.NDArray[np.uint64]  # the distinct documents' hashes, ascending
    values: npt.NDArray[np.bytes_]  # their doc ids


ChunkReader = Callable[[int | None], "_JudgmentChunk | None"]
# (offset, length) -> those bytes of a queue's ranking index; None when the queue has none
BlobReader = Callable[[int, int], bytes]


def _chunked_path(conn: Connection, queue_id: int, topic_id: int, as_of: int | None, as_of_time: datetime | None,
                  policy: str, out: npt.NDArray[np.int8]) -> npt.NDArray[np.int8] | None:
    """The hash-index path, every step a slice at a time so its peak does not grow with the queue: the judgments
    read `JUDGMENT_SLICE_ROWS` at a time in id order (`_judged_by_hash`), then the index's sorted hashes, ranks and
    doc ids read `RANKING_SLICE_BYTES` at a time (`_join_by_slices`). Read whole, the index held the doc ids'
    width + 16 bytes an entry (162 MB for 6,000,000 ids of 11 characters) and the judgments as one aggregate about
    150 bytes a judgment; now about 50 bytes a judgment and two slices. None when it cannot be taken (the caller
    then reads row by row and joins in SQL)."""
    raw = conn.connection.driver_connection
    where, params = _judgment_filter(conn, topic_id, as_of, as_of_time)
    if isinstance(raw, sqlite3.Connection):
        sqlite_raw = raw

        def read_chunk(after: int | None) -> _JudgmentChunk | None:
            return _sqlite_judgment_chunk(sqlite_raw, where, params, after)

        def open_ranking() -> AbstractContextManager[tuple[int, BlobReader] | None]:
            return _sqlite_ranking_reader(sqlite_raw, queue_id)
    elif conn.dialect.name == "postgresql" and raw is not None:
        pg_raw = raw

        def read_chunk(after: int | None) -> _JudgmentChunk | None:
            return _postgres_judgment_chunk(pg_raw, where, params, after)

        def open_ranking() -> AbstractContextManager[tuple[int, BlobReader] | None]:
            return nullcontext(_postgres_ranking_reader(pg_raw, queue_id))
    else:
        return None
    judged = _judged_by_hash(read_chunk)
    if judged is None or not len(judged.hashes):
        return None if judged is None else np.zeros(0, dtype=np.int8)
    rel, adj, markers = decode_judgment_codes(judged.digits)
    per_doc = resolve_codes(judged.codes, len(judged.hashes), judged.ids, rel, adj, policy,
                            markers if markers.any() else None)
    doc_hashes, doc_values = judged.hashes, judged.values
    del judged, rel, adj, markers  # the join needs the documents only: 17 bytes a judgment fewer at its peak
    with open_ranking() as ranking:
        found = None if ranking is None else _join_by_slices(ranking[1], ranking[0], doc_hashes, doc_values,
                                                             len(out))
    if found is None:
        return None
    docs, ranks = found
    out[ranks] = per_doc[docs]  # only once every match is verified: a declined path leaves ``out`` as it was
    return per_doc


def _sqlite_judgment_chunk(raw: sqlite3.Connection, where: str, params: tuple[object, ...],
                           after: int | None) -> _JudgmentChunk | None:
    """The next chunk of judgments after id ``after`` (None: from the first); None when SQLite refuses."""
    after_sql, after_params = ("", ()) if after is None else (" AND id > ?", (after,))
    cursor = raw.cursor()
    try:
        # the three aggregates see the rows in one order, whichever (`resolve_codes` orders by judgment id)
        cursor.execute(f"SELECT count(*), group_concat(doc_id, char(10)), group_concat(id, char(10)), "
                       f"group_concat(code, ''), max(id) FROM (SELECT doc_id, id, {_CODE} AS code FROM judgments "
                       f"WHERE {where}{after_sql} ORDER BY id LIMIT ?)",
                       (*params, *after_params, JUDGMENT_SLICE_ROWS))
        count, doc_text, id_text, code_text, last_id = cursor.fetchone()
    except sqlite3.Error:
        return None
    finally:
        cursor.close()
    return _JudgmentChunk(int(count), doc_text or "", id_text or "", code_text or "", int(last_id or 0))


def _postgres_judgment_chunk(raw: Any, where: str, params: tuple[object, ...],
                             after: int | None) -> _JudgmentChunk | None:
    """`_sqlite_judgment_chunk` on PostgreSQL (psycopg)."""
    after_sql, after_params = ("", ()) if after is None else (" AND id > %s", (after,))
    with raw.cursor() as cursor:
        # the chunk is the next JUDGMENT_SLICE_ROWS judgments by id; the aggregates carry no ORDER BY of their own
        # (each was a sort of its own: 0.75 s, spilled to disk, for 246,000 judgments against 0.29 s without): the
        # three read the chunk's rows in one order, and `resolve_codes` orders by id itself
        cursor.execute(f"SELECT count(*), string_agg(doc_id, E'\\n'), string_agg(id::text, E'\\n'), "
                       f"string_agg(code::text, ''), max(id) "
                       f"FROM (SELECT doc_id, id, {_CODE} AS code FROM judgments "
                       f"WHERE {where.replace('?', '%s')}{after_sql} ORDER BY id LIMIT %s) AS chunk",
                       (*params, *after_params, JUDGMENT_SLICE_ROWS))
        found = cursor.fetchone()
    assert found is not None
    count, doc_text, id_text, code_text, last_id = found
    return _JudgmentChunk(int(count), doc_text or "", id_text or "", code_text or "", int(last_id or 0))


def _judged_by_hash(read_chunk: ChunkReader) -> _JudgedDocuments | None:
    """Every judgment read chunk by chunk, its document numbered by hash rank among the judged documents. Per
    judgment only its hash (until numbered), id and code digit are kept; per document its hash and doc id. None
    when a doc id cannot be hashed (whitespace, a newline), a code is not one digit, or two judged documents share
    a hash."""
    hash_parts: list[npt.NDArray[np.uint64]] = []
    id_parts: list[npt.NDArray[np.int64]] = []
    digit_parts: list[npt.NDArray[np.uint8]] = []
    doc_hashes = np.zeros(0, dtype=np.uint64)
    doc_values = np.zeros(0, dtype="S1")
    after: int | None = None
    while True:
        chunk = read_chunk(after)
        if chunk is None:
            return None
        if not chunk.rows:
            break
        if len(chunk.code_text) != chunk.rows:
            return None
        column = scan_doc_ids(chunk.doc_text.encode("utf-8", "surrogateescape"), chunk.rows)
        if column is None:
            return None
        numbered = number_by_hash(column)
        if numbered is None:
            return None
        merged = _merge_distinct(doc_hashes, doc_values, numbered[1], numbered[2])
        if merged is None:
            return None
        doc_hashes, doc_values = merged
        ids = scan(chunk.id_text.encode("ascii"), "i", min_fields=1, max_fields=1, path="<judgment ids>").columns[0]
        assert isinstance(ids, np.ndarray) and len(ids) == chunk.rows
        hash_parts.append(column.hashed())
        id_parts.append(ids.astype(np.int64))
        digit_parts.append(np.frombuffer(chunk.code_text.encode("ascii"), dtype=np.uint8) - np.uint8(ord("0")))
        after = chunk.last_id
        if chunk.rows < JUDGMENT_SLICE_ROWS:
            break
    if not hash_parts:
        return _JudgedDocuments(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64),
                                np.zeros(0, dtype=np.uint8), doc_hashes, doc_values)
    # assembled one column at a time, each chunk's part dropped as it is copied (a concatenation of the parts
    # held them twice)
    total = sum(len(part) for part in id_parts)
    codes = np.empty(total, dtype=np.int64)
    at = 0
    while hash_parts:
        part = hash_parts.pop(0)
        codes[at:at + len(part)] = np.searchsorted(doc_hashes, part)
        at += len(part)
    ids_all = np.concatenate(id_parts)
    id_parts.clear()
    return _JudgedDocuments(codes, ids_all, np.concatenate(digit_parts), doc_hashes, doc_values)


DistinctDocuments = tuple[npt.NDArray[np.uint64], npt.NDArray[np.bytes_]]  # ascending hashes, their doc ids


def _merge_distinct(hashes: npt.NDArray[np.uint64], values: npt.NDArray[np.bytes_],
                    more_hashes: npt.NDArray[np.uint64],
                    more_values: npt.NDArray[np.bytes_]) -> DistinctDocuments | None:
    """The distinct documents so far (ascending hashes, their doc ids) joined with a chunk's (the same form); None
    when a hash of the chunk is already there for another doc id."""
    pos = np.searchsorted(hashes, more_hashes)
    known = pos < len(hashes)
    known[known] = hashes[pos[known]] == more_hashes[known]
    if known.any() and not _same_strings(values[pos[known]], more_values[known]):
        return None
    width = max(values.dtype.itemsize, more_values.dtype.itemsize)
    new = ~known
    return (np.insert(hashes, pos[new], more_hashes[new]),
            np.insert(values.astype(f"S{width}", copy=False), pos[new], more_values[new]))


def _join_by_slices(read: BlobReader, total: int, doc_hashes: npt.NDArray[np.uint64],
                    doc_values: npt.NDArray[np.bytes_],
                    size: int) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]] | None:
    """(judged document, 0-based rank) of each judged document in the queue, joined on the stored index (layout
    in `reviewdepth.store.ranking_blob`) read a slice at a time: the sorted hashes in slices, each judged hash
    matched at its first position at or above it (as one ``np.searchsorted`` on the whole index would), the ranks
    read only over a slice's span of matches, then the doc ids only over each slice's span of matched ranks,
    compared byte for byte. None when the index is not of this layout, not ``size`` entries, or a match is another
    doc id (a hash collision: the caller then joins in SQL)."""
    if total < HEADER.size:
        return None
    magic, width, n = HEADER.unpack(read(0, HEADER.size))
    if magic != MAGIC or n != size or total < HEADER.size + n * (width + 16):
        return None
    no_match = np.zeros(0, dtype=np.int64)
    if not n:
        return no_match, no_match
    hashes_at, ranks_at = HEADER.size + width * n, HEADER.size + (width + 8) * n
    rows = max(1, RANKING_SLICE_BYTES // 8)
    doc_parts: list[npt.NDArray[np.int64]] = []
    rank_parts: list[npt.NDArray[np.int64]] = []
    first = 0  # judged documents before it are matched or absent
    for start in range(0, n, rows):
        if first == len(doc_hashes):
            break
        stop = min(n, start + rows)
        sorted_slice = np.frombuffer(read(hashes_at + 8 * start, 8 * (stop - start)), dtype="<u8")
        last = first + int(np.searchsorted(doc_hashes[first:], sorted_slice[-1], side="right"))
        local = np.searchsorted(sorted_slice, doc_hashes[first:last])
        hit = np.flatnonzero(sorted_slice[local] == doc_hashes[first:last])
        if len(hit):
            low, high = int(local[hit].min()), int(local[hit].max()) + 1
            ranks = np.frombuffer(read(ranks_at + 8 * (start + low), 8 * (high - low)), dtype="<i8")
            doc_parts.append(first + hit.astype(np.int64))
            rank_parts.append(ranks[local[hit] - low].astype(np.int64))
        first = last
    if not doc_parts:
        return no_match, no_match
    docs, ranks = np.concatenate(doc_parts), np.concatenate(rank_parts)
    del doc_parts, rank_parts
    rows = max(1, RANKING_SLICE_BYTES // width)
    for start in range(0, n, rows):
        in_slice = np.flatnonzero((ranks >= start) & (ranks < start + rows))
        if not len(in_slice):
            continue
        low, high = int(ranks[in_slice].min()), int(ranks[in_slice].max()) + 1
        stored = np.frombuffer(read(HEADER.size + width * low, width * (high - low)), dtype=f"S{width}")
        for at in range(0, len(in_slice), COMPARE_ROWS):
            some = in_slice[at:at + COMPARE_ROWS]
            if not _same_strings(stored[ranks[some] - low], doc_values[docs[some]]):
                return None
    return docs, ranks


@contextmanager
def _sqlite_ranking_reader(raw: sqlite3.Connection, queue_id: int) -> Iterator[tuple[int, BlobReader] | None]:
    """(length, reader) of the queue's index with incremental blob I/O (only the pages read are loaded), or
    ``substr`` where the blob cannot be opened; None when the queue has none."""
    row = raw.execute("SELECT length(ranking_blob) FROM queues WHERE id = ?", (queue_id,)).fetchone()
    if row is None or not row[0]:
        yield None
        return
    total = int(row[0])
    try:
        handle = raw.blobopen("queues", "ranking_blob", queue_id, readonly=True)
    except sqlite3.Error:
        def by_substr(offset: int, length: int) -> bytes:
            found = raw.execute("SELECT substr(ranking_blob, ?, ?) FROM queues WHERE id = ?",
                                (offset + 1, length, queue_id)).fetchone()
            return bytes(found[0])

        yield total, by_substr
        return
    with handle:
        def by_handle(offset: int, length: int) -> bytes:
            handle.seek(offset)
            return handle.read(length)

        yield total, by_handle


def _postgres_ranking_reader(raw: Any, queue_id: int) -> tuple[int, BlobReader] | None:
    """(length, reader) of the queue's index read with ``substring`` in binary (a whole value in one result was
    held twice, as hex text then bytes); None when the queue has none."""
    with raw.cursor(binary=True) as cursor:
        cursor.execute("SELECT octet_length(ranking_blob) FROM queues WHERE id = %s", (queue_id,))
        found = cursor.fetchone()
    total = int(found[0]) if found is not None and found[0] is not None else 0
    if not total:
        return None

    def by_substring(offset: int, length: int) -> bytes:
        with raw.cursor(binary=True) as cursor:
            cursor.execute("SELECT substring(ranking_blob FROM %s FOR %s) FROM queues WHERE id = %s",
                           (offset + 1, length, queue_id))
            piece = cursor.fetchone()
        return bytes(piece[0])

    return total, by_substring


def _read_ranking(conn: Connection, queue_id: int) -> RankingIndex | None:
    """The queue's hash index. On PostgreSQL read in binary slices into one buffer: the whole value in one
    result would be held twice (hex text, then bytes: about 3× the index; 490 MB for 6,000,000 entries)."""
    raw = conn.connection.driver_connection
    if conn.dialect.name != "postgresql" or raw is None:
        blob = conn.execute(select(Queue.ranking_blob).where(Queue.id == queue_id)).scalar_one()
        return decode_ranking(blob) if blob else None
    with raw.cursor(binary=True) as cursor:
        cursor.execute("SELECT octet_length(ranking_blob) FROM queues WHERE id = %s", (queue_id,))
        found = cursor.fetchone()
        total = int(found[0]) if found is not None and found[0] is not None else 0
        if not total:
            return None
        buffer = bytearray(total)
        for start in range(0, total, RANKING_SLICE_BYTES):
            cursor.execute("SELECT substring(ranking_blob FROM %s FOR %s) FROM queues WHERE id = %s",
                           (start + 1, RANKING_SLICE_BYTES, queue_id))
            piece = cursor.fetchone()[0]
            buffer[start:start + len(piece)] = piece
    return decode_ranking(buffer)


def number_by_hash(column: StringColumn) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.uint64],
                                                  npt.NDArray[np.bytes_]] | None:
    """Number the distinct strings of ``column`` 0..n-1 in hash order: (code per string, sorted distinct hashes,
    their strings); None when two different strings share a 64-bit hash."""
    # numbering by hash rank: any sort order of equal hashes gives the same numbers
    order = np.argsort(column.hashed())
    hashes = column.hashed()[order]
    values = column.values[order]
    first = np.ones(len(hashes), dtype=bool)
    first[1:] = hashes[1:] != hashes[:-1]
    repeat = ~first[1:]
    if not bool(np.all(values[1:][repeat] == values[:-1][repeat])):
        return None
    codes = np.empty(len(hashes), dtype=np.int64)
    codes[order] = np.cumsum(first) - 1
    return codes, hashes[first], values[first]


def _hashed_path(ranking: RankingIndex, column: StringColumn, ids: npt.NDArray[np.int64],
                 rel: npt.NDArray[np.int8], adj: npt.NDArray[np.bool_], policy: str,
                 out: npt.NDArray[np.int8], markers: npt.NDArray[np.int8] | None = None) -> npt.NDArray[np.int8] | None:
    """Resolve labels per document and fill ``out`` by rank; None when this path cannot be taken."""
    if len(ranking.doc_ids) != len(out):
        return None
    numbered = number_by_hash(column)
    if numbered is None:
        return None
    codes, doc_hashes, doc_values = numbered
    per_doc = resolve_codes(codes, len(doc_hashes), ids, rel, adj, policy, markers)
    if len(ranking.sorted_hashes):
        pos = np.minimum(np.searchsorted(ranking.sorted_hashes, doc_hashes), len(ranking.sorted_hashes) - 1)
        hit = np.flatnonzero(ranking.sorted_hashes[pos] == doc_hashes)
        ranks = ranking.rank_of_sorted[pos[hit]]
        if not _same_strings(ranking.doc_ids[ranks], doc_values[hit]):
            return None
        out[ranks] = per_doc[hit]
    return per_doc


def _same_strings(a: npt.NDArray[np.bytes_], b: npt.NDArray[np.bytes_]) -> bool:
    """``bool(np.all(a == b))`` for byte strings, compared as one block of bytes at a common width."""
    width = max(a.dtype.itemsize, b.dtype.itemsize)
    return bool(np.ascontiguousarray(a, dtype=f"S{width}").tobytes()
                == np.ascontiguousarray(b, dtype=f"S{width}").tobytes())


def _join_in_sql(conn: Connection, queue_id: int, topic_id: int, as_of: int | None, as_of_time: datetime | None,
                 judged_docs: list[str], judged_labels: npt.NDArray[np.int8], out: npt.NDArray[np.int8]) -> None:
    judged = select(Judgment.doc_id).where(Judgment.topic_id == topic_id, Judgment.role != VOID_ROLE)
    if as_of is not None:
        judged = judged.where(Judgment.id <= as_of)
    if as_of_time is not None:
        judged = judged.where(Judgment.recorded_at <= as_of_time)
    judged_sub = judged.distinct().subquery()
    found = conn.execute(
        select(QueueEntry.rank, QueueEntry.doc_id)
        .join(judged_sub, judged_sub.c.doc_id == QueueEntry.doc_id)
        .where(QueueEntry.queue_id == queue_id)
    ).all()
    if found:
        label_of = dict(zip(judged_docs, judged_labels.tolist(), strict=True))
        ranks = np.fromiter((r[0] for r in found), dtype=np.int64, count=len(found))
        values = np.fromiter((label_of[r[1]] for r in found), dtype=np.int8, count=len(found))
        out[ranks - 1] = values
