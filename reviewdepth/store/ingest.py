"""Bulk loads inside the caller's transaction: executemany on SQLite, COPY on PostgreSQL (psycopg 3)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from itertools import islice
from typing import Any

from sqlalchemy import Connection

CHUNK = 50_000
Progress = Callable[[int], None]


def utc_now() -> datetime:
    return datetime.now(UTC)


def db_timestamp(conn: Connection, moment: datetime) -> Any:
    """The value a raw driver insert needs for a DateTime(timezone=True) column (SQLite stores naive UTC text,
    formatted as SQLAlchemy writes it, so ORM reads and raw loads agree)."""
    if conn.dialect.name == "sqlite":
        return moment.astimezone(UTC).replace(tzinfo=None).isoformat(" ", timespec="microseconds")
    return moment


def bulk_insert(conn: Connection, table: str, columns: Sequence[str], rows: Iterable[Sequence[Any]],
                progress: Progress | None = None) -> int:
    """Insert ``rows`` into ``table`` through the DBAPI connection of ``conn``'s transaction (atomic with it)."""
    raw = conn.connection.driver_connection
    assert raw is not None
    names = ", ".join(columns)
    total = 0
    iterator = iter(rows)
    if conn.dialect.name == "postgresql":
        with raw.cursor() as cursor, cursor.copy(f"COPY {table} ({names}) FROM STDIN") as copy:
            while chunk := list(islice(iterator, CHUNK)):
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
