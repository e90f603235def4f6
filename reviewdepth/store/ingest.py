"""Bulk loads inside the caller's transaction: executemany on SQLite, COPY on PostgreSQL (psycopg 3)."""

from __future__ import annotations

import gc
import re
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from itertools import chain, islice
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

CHUNK = 50_000
FETCH_ROWS = 20_000  # rows `driver_columns` reads and transposes at a time
SMALL = 100
BULK_CACHE_KIB = 64 * 1024  # SQLite's page cache during a large bulk insert (`bulk_insert`)
Progress = Callable[[int], None]
NULL = "\\N"  # COPY's text format: a null field
_COPY_SPECIAL = re.compile(r"[\\\t\n\r]")


# PostgreSQL plans from each table's statistics, which a bulk load leaves stale until autovacuum (when it is on at
# all) gets round to the table: right after a 2,000,000-entry run and its judgments were loaded, the report's look-up
# of 1,000 sampled ranks was planned for a near-empty judgments table and took 0.95 s instead of a few ms. A load
# of at least this many rows into a table has its transaction refresh that table's statistics just before it
# commits (`analyze_bulk_loads`), as PostgreSQL's manual advises after populating a database.
ANALYZE_AFTER_ROWS = 10_000
_BULK_LOADED = "reviewdepth_bulk_loaded"  # in the pooled connection's info: table -> rows loaded this transaction


def note_bulk_load(conn: Connection, table: str, rows: int) -> None:
    """Count ``rows`` loaded into ``table`` in ``conn``'s transaction (PostgreSQL: `analyze_bulk_loads`)."""
    if rows and conn.dialect.name == "postgresql":
        loaded = conn.info.setdefault(_BULK_LOADED, {})
        loaded[table] = loaded.get(table, 0) + rows


def analyze_bulk_loads(conn: Connection) -> None:
    """The engine's ``commit`` hook on PostgreSQL: ANALYZE each table that took `ANALYZE_AFTER_ROWS` rows or more
    in the transaction now committing, inside it (it sees the transaction's own rows; its lock, which only
    another ANALYZE, VACUUM or DDL waits on, is held just until the commit), tables in name order so that two
    such commits never wait on each other in a cycle. Best effort: each runs in a savepoint, and a failure (a
    role that does not own the table, say) leaves the load to commit with the old statistics."""
    if conn.invalidated:  # its info would mean reconnecting (and the commit fails anyway)
        return
    loaded = conn.info.pop(_BULK_LOADED, None)
    if not loaded:
        return
    import psycopg

    raw = conn.connection.driver_connection
    assert raw is not None
    for table in sorted(name for name, rows in loaded.items() if rows >= ANALYZE_AFTER_ROWS):
        try:
            with raw.transaction():  # a savepoint inside the transaction SQLAlchemy holds open
                raw.execute(f"ANALYZE {table}")
        except psycopg.Error:
            continue


def forget_bulk_loads(conn: Connection) -> None:
    """The engine's ``rollback`` hook: nothing of the transaction's loads is left to analyze. A connection the
    server dropped is left alone: reading its info would try to reconnect inside the rollback (its record's info
    goes with the dropped connection)."""
    if not conn.invalidated:
        conn.info.pop(_BULK_LOADED, None)


def utc_now() -> datetime:
    return datetime.now(UTC)


def as_utc(moment: datetime) -> datetime:
    """A stored time as an aware UTC datetime: SQLite hands back naive UTC, PostgreSQL aware datetimes."""
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def db_time(conn: Connection, moment: datetime) -> datetime:
    """An aware UTC ``moment`` as the database compares it with a stored time (SQLite stores naive UTC)."""
    return moment.replace(tzinfo=None) if conn.dialect.name == "sqlite" else moment


def db_timestamp(conn: Connection, moment: datetime) -> Any:
    """The value a raw driver insert needs for a DateTime(timezone=True) column (SQLite stores naive UTC text,
    formatted as SQLAlchemy writes it, so ORM reads and raw loads agree)."""
    if conn.dialect.name == "sqlite":
        return moment.astimezone(UTC).replace(tzinfo=None).isoformat(" ", timespec="microseconds")
    return moment


_gc_lock = threading.Lock()
_gc_pauses = 0  # threads inside gc_paused() now
_gc_resume = False  # whether the first of them found the collector enabled


@contextmanager
def gc_paused() -> Iterator[None]:
    """The cyclic garbage collector off while a large read builds its rows (process-wide; nested and concurrent
    pauses hold it off until the last one ends).

    A read of a million rows allocates a million tuples that all survive; each few thousand of them trigger a
    collection, and the survivors' promotions trigger full ones, each scanning every live container with the
    GIL held, so the server's event loop waited up to 0.4 s at a time (bench/bounded_bench.py). Rows of
    strings and numbers hold no reference cycles, so nothing is left uncollected meanwhile: other threads'
    cycles are collected once the pause ends."""
    global _gc_pauses, _gc_resume
    with _gc_lock:
        if _gc_pauses == 0:
            _gc_resume = gc.isenabled()
            gc.disable()
        _gc_pauses += 1
    try:
        yield
    finally:
        with _gc_lock:
            _gc_pauses -= 1
            if _gc_pauses == 0 and _gc_resume:
                gc.enable()


@contextmanager
def _driver_cursor(conn: Connection, sql: str, params: Sequence[object], plan_each_time: bool) -> Iterator[Any]:
    """A DBAPI cursor of ``conn``'s transaction that has run ``sql`` (qmark) with ``params``."""
    raw = conn.connection.driver_connection
    assert raw is not None
    if conn.dialect.name != "sqlite":
        sql = sql.replace("?", "%s")
    cursor = raw.cursor()
    try:
        if plan_each_time and conn.dialect.name != "sqlite":
            cursor.execute(sql, tuple(params), prepare=False)
        else:
            cursor.execute(sql, tuple(params))
        yield cursor
    finally:
        cursor.close()


def driver_rows(conn: Connection, sql: str, params: Sequence[object] = (), *,
                fetch: bool = True, plan_each_time: bool = False) -> list[tuple[Any, ...]]:
    """Run qmark SQL straight on the DBAPI connection of ``conn``'s transaction: no statement compilation and no
    per-row result objects (hot paths: large reads, and the few statements of every judgment write).

    ``plan_each_time``: never a prepared statement on PostgreSQL (psycopg prepares a statement run five times,
    and the server may then keep a generic plan): for a statement whose best plan depends on its parameters, such
    as a list of documents that may hold one or thousands."""
    with _driver_cursor(conn, sql, params, plan_each_time) as cursor:
        if not fetch:
            return []
        with gc_paused():
            rows: list[tuple[Any, ...]] = cursor.fetchall()
        return rows


def driver_columns(conn: Connection, sql: str, params: Sequence[object] = (), *,
                   width: int) -> list[tuple[Any, ...]]:
    """The ``width`` columns of what `driver_rows` would return, one tuple each (empty when there is no row).
    Read FETCH_ROWS rows at a time and transposed chunk by chunk with the collector paused: no million row
    tuples left for it to scan, and no single call holding the GIL for long (transposing a million rows at once
    held it ~80 ms)."""
    columns: list[list[Any]] = [[] for _ in range(width)]
    with _driver_cursor(conn, sql, params, False) as cursor, gc_paused():
        while rows := cursor.fetchmany(FETCH_ROWS):
            for column, values in zip(columns, zip(*rows, strict=True), strict=True):
                column.extend(values)
    return [tuple(column) for column in columns]


def bulk_insert(conn: Connection, table: str, columns: Sequence[str], rows: Iterable[Sequence[Any]],
                progress: Progress | None = None) -> int:
    """Insert ``rows`` into ``table`` through the DBAPI connection of ``conn``'s transaction (atomic with it)."""
    raw = conn.connection.driver_connection
    assert raw is not None
    names = ", ".join(columns)
    total = 0
    iterator = iter(rows)
    if conn.dialect.name == "postgresql":
        first = list(islice(iterator, CHUNK))
        if len(first) < SMALL:  # a few rows: COPY's set-up costs more than the inserts
            with raw.cursor() as cursor:
                cursor.executemany(f"INSERT INTO {table} ({names}) VALUES ({', '.join('%s' for _ in columns)})",
                                   first)
            if progress and first:
                progress(len(first))
            return len(first)
        rest = iterator
        chunks = chain([first], iter(lambda: list(islice(rest, CHUNK)), []))
        with raw.cursor() as cursor, cursor.copy(f"COPY {table} ({names}) FROM STDIN") as copy:
            for chunk in chunks:
                for row in chunk:
                    copy.write_row(row)
                total += len(chunk)
                if progress:
                    progress(total)
        note_bulk_load(conn, table, total)
        return total
    sql = f"INSERT INTO {table} ({names}) VALUES ({', '.join('?' for _ in columns)})"
    cursor = raw.cursor()
    first = list(islice(iterator, CHUNK))
    previous_cache: int | None = None
    try:
        if len(first) == CHUNK:
            # an index inserted in random key order (a queue's doc ids) outgrows SQLite's default 2 MiB page cache
            # and then rewrites the same pages over and over: a 500,000-entry queue took 4.5 s instead of 2.8 s.
            # Raised for this insert only, so pooled server connections keep the small default.
            [(previous_cache,)] = cursor.execute("PRAGMA cache_size").fetchall()
            cursor.execute(f"PRAGMA cache_size={-BULK_CACHE_KIB}")
        cursor.executemany(sql, first)
        total = len(first)
        if progress and total:
            progress(total)
        added = len(first)
        while added == CHUNK:
            # sqlite3 reads the rows straight from the iterator; the statement's change count says how many
            cursor.executemany(sql, islice(iterator, CHUNK))
            added = cursor.rowcount
            total += added
            if progress and added:
                progress(total)
    finally:
        if previous_cache is not None:
            cursor.execute(f"PRAGMA cache_size={int(previous_cache)}")
        cursor.close()
    return total


def copy_field(value: str) -> str:
    """``value`` as a field of PostgreSQL's COPY text format: backslash, tab, newline and carriage return escaped."""
    if _COPY_SPECIAL.search(value) is None:
        return value
    return value.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")


def needs_escape(values: Iterable[str]) -> bool:
    """Whether any of ``values`` holds a character `copy_field` escapes (one scan of them all, which costs a
    fraction of checking each value)."""
    return _COPY_SPECIAL.search("".join(values)) is not None


def copy_lines(conn: Connection, table: str, columns: Sequence[str], lines: Iterable[str],
               progress: Progress | None = None) -> int:
    """COPY ready-made lines of PostgreSQL's text format (tab-separated `copy_field` values or `NULL`, ending in a
    newline) into ``table`` in the caller's transaction. The hot loaders format their rows themselves: an
    f-string per row costs a fraction of psycopg's ``write_row``, which adapts every value on its own."""
    raw = conn.connection.driver_connection
    assert raw is not None
    total = 0
    iterator = iter(lines)
    with raw.cursor() as cursor, cursor.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
        while chunk := list(islice(iterator, CHUNK)):
            copy.write("".join(chunk))
            total += len(chunk)
            if progress:
                progress(total)
    note_bulk_load(conn, table, total)
    return total


ENTRY_COLUMNS = ("queue_id", "rank", "doc_id", "score", "flag")


def insert_entries(conn: Connection, queue_id: int, doc_ids: Sequence[str], scores: Sequence[float | None],
                   flags: Sequence[str] | None, progress: Progress | None = None, *, first_rank: int = 1) -> int:
    """A queue's entries, ranked ``first_rank``, ``first_rank + 1``, … in the order of ``doc_ids`` (``scores`` and
    ``flags`` beside them; ``flags`` None: no flag), in the caller's transaction."""
    n = len(doc_ids)
    ranks = range(first_rank, first_rank + n)
    if conn.dialect.name != "postgresql" or n < SMALL:
        flag_values: Sequence[str | None] = [None] * n if flags is None else flags
        return bulk_insert(conn, "queue_entries", ENTRY_COLUMNS, zip(
            [queue_id] * n, ranks, doc_ids, scores, flag_values, strict=True), progress)
    docs = [copy_field(d) for d in doc_ids] if needs_escape(doc_ids) else doc_ids
    # repr: the shortest text that reads back as the same double (what psycopg sends too)
    score_text = [NULL if s is None else repr(float(s)) for s in scores]
    flag_text = [NULL] * n if flags is None else [copy_field(f) for f in flags]
    prefix = f"{int(queue_id)}\t"
    return copy_lines(conn, "queue_entries", ENTRY_COLUMNS, (
        f"{prefix}{rank}\t{doc}\t{score}\t{flag}\n"
        for rank, doc, score, flag in zip(ranks, docs, score_text, flag_text, strict=True)), progress)


def entry_lines_python(prefix: bytes, first_rank: int, docs: npt.NDArray[np.bytes_],
                       scores: npt.NDArray[np.float64], flags: npt.NDArray[np.bytes_] | None, start: int,
                       stop: int) -> bytes:
    """The COPY text lines ``<prefix><rank>\\t<doc>\\t<score>\\t<flag>\\n`` of rows ``start`` to ``stop - 1`` of a
    queue (rank ``first_rank + row``): `insert_entries`' lines, from the parsed arrays. The compiled scanner's
    ``entry_lines`` writes the same bytes (tests/store/test_entry_lines.py holds them to it)."""
    doc_values: list[bytes] = docs[start:stop].tolist()
    if _COPY_SPECIAL_BYTES.search(b"".join(doc_values)) is not None:
        doc_values = [_copy_field_bytes(d) for d in doc_values]
    flag_values: list[bytes] = ([_copy_field_bytes(f) for f in flags[start:stop].tolist()] if flags is not None
                                else [NULL.encode()] * (stop - start))
    return b"".join(b"%s%d\t%s\t%s\t%s\n" % (prefix, rank, doc, repr(score).encode(), flag)
                    for rank, doc, score, flag in zip(range(first_rank + start, first_rank + stop), doc_values,
                           scores[start:stop].tolist(), flag_values, strict=True))


_COPY_SPECIAL_BYTES = re.compile(rb"[\\\t\n\r]")


def _copy_field_bytes(value: bytes) -> bytes:
    return value.replace(b"\\", b"\\\\").replace(b"\t", b"\\t").replace(b"\n", b"\\n").replace(b"\r", b"\\r")


def insert_entry_arrays(conn: Connection, queue_id: int, docs: npt.NDArray[np.bytes_],
                        scores: npt.NDArray[np.float64], flags: npt.NDArray[np.bytes_] | None,
                        progress: Progress | None = None, *, use_compiled: bool | None = None) -> int:
    """`insert_entries` from a parsed file's arrays (doc ids as UTF-8 fixed-width bytes that NFC leaves as they
    are, doubles, flags as bytes or None), ranked 1, 2, … in their order. On PostgreSQL the COPY lines are written
    straight from the arrays, by the compiled scanner when it is built (``use_compiled``: None takes it when
    available; False the pure-Python `entry_lines_python`), without a Python string per value: for a run of
    millions of lines that was most of the import's own time (issue 30)."""
    import numpy as np

    from reviewdepth.formats.scan import compiled

    n = len(docs)
    if conn.dialect.name != "postgresql":
        # `insert_entries`' rows, made a chunk at a time: a 10-million-line run held as Python strings and floats
        # took about 130 MB a million rows on top of its arrays
        def rows() -> Iterator[tuple[int, int, str, float, str | None]]:
            for start in range(0, n, CHUNK):
                stop = min(n, start + CHUNK)
                doc_ids = [d.decode("utf-8", "surrogateescape") for d in docs[start:stop].tolist()]
                flag_values: list[str | None] = [None] * (stop - start) if flags is None else \
                    [f.decode() for f in flags[start:stop].tolist()]
                yield from zip([queue_id] * (stop - start), range(start + 1, stop + 1), doc_ids,
                               scores[start:stop].tolist(), flag_values, strict=True)

        return bulk_insert(conn, "queue_entries", ENTRY_COLUMNS, rows(), progress)
    if n < SMALL:
        return insert_entries(conn, queue_id, [d.decode("utf-8", "surrogateescape") for d in docs.tolist()],
                              scores.tolist(), None if flags is None else [f.decode() for f in flags.tolist()],
                              progress)
    if use_compiled and compiled is None:
        raise RuntimeError("the compiled scanner reviewdepth.formats._textscan is not available")
    doc_array = np.ascontiguousarray(docs)
    score_array = np.ascontiguousarray(scores, dtype=np.float64)
    flag_array = None if flags is None else np.ascontiguousarray(flags)
    if doc_array.dtype.itemsize == 0 or (flag_array is not None and flag_array.dtype.itemsize == 0):
        raise ValueError("empty fixed-width byte strings")  # numpy's S0 holds no value to write
    prefix = f"{int(queue_id)}\t".encode()
    if compiled is not None and use_compiled is not False:
        scanner = compiled
        width, flag_width = doc_array.dtype.itemsize, 0 if flag_array is None else flag_array.dtype.itemsize

        def lines(start: int, stop: int) -> bytes:
            return bytes(scanner.entry_lines(prefix, 1, doc_array, width, score_array, flag_array, flag_width,
                                             start, stop))
    else:
        def lines(start: int, stop: int) -> bytes:
            return entry_lines_python(prefix, 1, doc_array, score_array, flag_array, start, stop)
    raw = conn.connection.driver_connection
    assert raw is not None
    with raw.cursor() as cursor, cursor.copy(f"COPY queue_entries ({', '.join(ENTRY_COLUMNS)}) FROM STDIN") as copy:
        for start in range(0, n, CHUNK):
            stop = min(start + CHUNK, n)
            copy.write(lines(start, stop))
            if progress:
                progress(stop)
    note_bulk_load(conn, "queue_entries", n)
    return n
