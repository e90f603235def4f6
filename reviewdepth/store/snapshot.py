"""One read snapshot: a connection whose every statement sees the same committed state of the database.

A use case that reads several tables (a depth report reads the log, the queue, the samples, the audit stream and
the chain head) must describe one moment even while judgments are being recorded. On PostgreSQL the snapshot is a
``REPEATABLE READ READ ONLY`` transaction: its first statement fixes what every later one sees. On SQLite the
driver starts no transaction for a read (pysqlite begins one only before a write), so every SELECT would see the
database as of that SELECT; an explicit deferred ``BEGIN`` makes them one read transaction, whose snapshot (WAL)
is taken at its first read and held until it ends. Nothing is written in it: it always ends in a rollback."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import Connection, Engine


@contextmanager
def read_snapshot(engine: Engine) -> Iterator[Connection]:
    """One connection in one read-only transaction (module docstring); the loaders of
    `reviewdepth.services.evidence` take it."""
    with engine.connect() as conn:
        if conn.dialect.name == "postgresql":
            conn = conn.execution_options(isolation_level="REPEATABLE READ", postgresql_readonly=True)
            with conn.begin() as transaction:
                try:
                    yield conn
                finally:
                    transaction.rollback()
            return
        with conn.begin() as transaction:
            conn.exec_driver_sql("BEGIN")
            try:
                yield conn
            finally:
                transaction.rollback()
