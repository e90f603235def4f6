"""Bulk loads inside the caller's transaction: executemany on SQLite, COPY on PostgreSQL (psycopg 3)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from itertools import chain, islice
from typing import Any

from sqlalchemy import Connection

CHUNK = 50_000
SMALL = 100
Progress = Callable[[int], None]


def utc_now() -> datetime:
    return datetime.now(UTC)


def db_timestamp(conn: Connection, moment: datetime) -> Any:
    """The value a raw driver insert needs for a DateTime(timezone=True) column (SQLite stores naive UTC text,
    formatted as SQLAlchemy writes it, so ORM reads and raw loads agree)."""
    if conn.dialect.name == "sqlite":
        return moment.astimezone(UTC).replace(tzinfo=None).isoformat(" ", timespec="microseconds")
    return moment


def driver_rows(conn: Connection, sql: str, params: Sequence[object] = (), *,
                fetch: bool = True) -> list[tuple[Any, ...]]:
    """Run qmark SQL straight on the DBAPI connection of ``conn``'s transaction: no statement compilation and no
    per-row result objects (hot paths: large reads, and the few statements of every judgment write)."""
    raw = conn.connection.driver_connection
    assert raw is not None
    if conn.dialect.name != "sqlite":
        sql = sql.replace("?", "%s")
    cursor = raw.cursor()
    try:
        cursor.execute(sql, tuple(params))
        return list(cursor.fetchall()) if fetch else []
    finally:
        cursor.close()


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
        return total
    marks = ", ".join("?" for _ in columns)
    cursor = raw.cursor()
    try:
        while chunk := list(islice(iterator, CHUNK)):
            cursor.executemany(f"INSERT INTO {table} ({names}) VALUES ({marks})", chunk)
            total += len(chunk)
            if progress:
                progress(total)
    finally:
        cursor.close()
    return total
