"""A queue's doc ids in rank order as one stored value, with a hash index, derived from the entries and written
with them, so a queue of millions is joined to its judgments without reading it row by row.

Layout: ``RDQ2`` | width (u4) | n (u8) | doc ids as fixed-width bytes (n·width) | their 64-bit FNV-1a hashes
sorted ascending (n·8) | the 0-based rank of each sorted hash (n·8). Read with ``np.frombuffer`` (no copy).
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from sqlalchemy import Connection, text

from reviewdepth.formats.errors import InputError
from reviewdepth.formats.scan import StringColumn, scan

MAGIC = b"RDQ2"
HEADER = struct.Struct("<4sIQ")


@dataclass(frozen=True)
class RankingIndex:
    """Doc ids by rank, and the hash-sorted view used for joins."""

    doc_ids: npt.NDArray[np.bytes_]
    sorted_hashes: npt.NDArray[np.uint64]
    rank_of_sorted: npt.NDArray[np.int64]


def encode_ranking(doc_ids: list[str], column: StringColumn | None = None,
                   hash_order: npt.NDArray[np.int64] | None = None) -> bytearray | None:
    """The stored form; None when a doc id is empty or contains whitespace (then entries are read row by row).
    ``column`` (the scanner's strings and hashes, in rank order) avoids hashing again; ``hash_order`` (with it:
    ``np.argsort(column.hashes, kind="stable")``, when the caller sorted them already) avoids sorting again."""
    if column is None:
        column = strings_with_hashes_or_none(doc_ids)
        if column is None:
            return None
        hash_order = None
    values = np.ascontiguousarray(column.values)
    width, n = values.dtype.itemsize, len(values)
    order = np.argsort(column.hashed(), kind="stable").astype(np.int64) if hash_order is None else hash_order
    # written in place into the one buffer returned (the pieces and their join were three times the blob: 0.7 GB
    # for a 10-million-line run); the same bytes as joining the layout's parts
    blob = bytearray(HEADER.size + n * (width + 16))
    HEADER.pack_into(blob, 0, MAGIC, width, n)
    start = HEADER.size
    np.frombuffer(blob, dtype=values.dtype, count=n, offset=start)[:] = values
    start += width * n
    np.take(column.hashed(), order, out=np.frombuffer(blob, dtype="<u8", count=n, offset=start))
    start += 8 * n
    np.frombuffer(blob, dtype="<i8", count=n, offset=start)[:] = order
    return blob


WRITE_ROWS = 1 << 18  # doc ids (and hashes, ranks) of a ranking index written at a time by `store_ranking_blob`


def store_ranking_blob(conn: Connection, queue_id: int, column: StringColumn,
                       hash_order: npt.NDArray[np.int64]) -> None:
    """Set queue ``queue_id``'s ``ranking_blob`` to `encode_ranking` ``(column=column, hash_order=hash_order)``, in
    the caller's transaction, a slice at a time, never whole in memory: on SQLite written in place (``zeroblob``
    then incremental blob I/O: SQLite copies a bound value, so a 10-million-entry index (250 MB) passed as a
    parameter was held three times); on PostgreSQL as the parts of a temporary table joined into the row by one
    statement (one parameter was held twice in the client: the index and the driver's copy)."""
    values = np.ascontiguousarray(column.values)
    width, n = values.dtype.itemsize, len(values)
    raw = conn.connection.driver_connection
    assert raw is not None
    if conn.dialect.name != "sqlite":
        conn.execute(text("CREATE TEMPORARY TABLE ranking_blob_parts (part integer PRIMARY KEY, data bytea NOT NULL) "
                          "ON COMMIT DROP"))
        with raw.cursor() as cursor:
            for part, piece in enumerate(_ranking_pieces(values, column.hashed(), hash_order)):
                cursor.execute("INSERT INTO ranking_blob_parts (part, data) VALUES (%s, %s)", (part, piece))
        conn.execute(text("UPDATE queues SET ranking_blob = (SELECT string_agg(data, ''::bytea ORDER BY part) "
                          "FROM ranking_blob_parts) WHERE id = :id"), {"id": queue_id})
        conn.execute(text("DROP TABLE ranking_blob_parts"))
        return
    conn.execute(text("UPDATE queues SET ranking_blob = zeroblob(:size) WHERE id = :id"),
                 {"size": HEADER.size + n * (width + 16), "id": queue_id})
    with raw.blobopen("queues", "ranking_blob", queue_id) as blob:
        for piece in _ranking_pieces(values, column.hashed(), hash_order):
            blob.write(piece)


def _ranking_pieces(values: npt.NDArray[np.bytes_], hashes: npt.NDArray[np.uint64],
                    hash_order: npt.NDArray[np.int64]) -> Iterator[bytes]:
    """`encode_ranking`'s bytes in order, ``WRITE_ROWS`` rows of one part at a time."""
    n = len(values)
    yield HEADER.pack(MAGIC, values.dtype.itemsize, n)
    for start in range(0, n, WRITE_ROWS):
        yield values[start:start + WRITE_ROWS].tobytes()
    for start in range(0, n, WRITE_ROWS):
        yield hashes[hash_order[start:start + WRITE_ROWS]].astype("<u8").tobytes()
    for start in range(0, n, WRITE_ROWS):
        yield hash_order[start:start + WRITE_ROWS].astype("<i8").tobytes()


def decode_ranking(blob: bytes | bytearray) -> RankingIndex | None:
    """The index, or None for a blob of another layout (then the caller reads entries in SQL)."""
    if len(blob) < HEADER.size:
        return None
    magic, width, n = HEADER.unpack_from(blob)
    if magic != MAGIC:
        return None
    start = HEADER.size
    values = np.frombuffer(blob, dtype=f"S{width}", count=n, offset=start)
    start += width * n
    hashes = np.frombuffer(blob, dtype="<u8", count=n, offset=start)
    start += 8 * n
    order = np.frombuffer(blob, dtype="<i8", count=n, offset=start)
    return RankingIndex(values, hashes.astype(np.uint64, copy=False), order.astype(np.int64, copy=False))


def strings_with_hashes_or_none(doc_ids: list[str]) -> StringColumn | None:
    """Byte strings and FNV-1a hashes of ``doc_ids`` (the scanner's, so they match stored hashes); None when an id
    is empty or holds whitespace."""
    return scan_doc_ids("\n".join(doc_ids).encode("utf-8", "surrogateescape"), len(doc_ids))


def scan_doc_ids(data: bytes, count: int) -> StringColumn | None:
    """`strings_with_hashes_or_none` of ``count`` doc ids already joined by newlines (UTF-8)."""
    try:
        scanned = scan(data, "s", min_fields=1, max_fields=1, path="<doc ids>")
    except InputError:
        return None
    column = scanned.columns[0]
    assert isinstance(column, StringColumn)
    return column if len(column.values) == count else None
