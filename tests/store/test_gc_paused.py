"""`reviewdepth.store.ingest.gc_paused` and `driver_columns` (issue 26): large reads pause the cyclic collector,
nested and concurrent pauses restore it exactly once, and the columns are the rows transposed."""

from __future__ import annotations

import gc
import threading

from sqlalchemy import Engine

from reviewdepth.store.ingest import driver_columns, driver_rows, gc_paused


def test_pauses_nest_across_threads_and_restore_the_collector() -> None:
    assert gc.isenabled()
    inside, leave = threading.Event(), threading.Event()

    def other() -> None:
        with gc_paused():
            inside.set()
            leave.wait(10)

    thread = threading.Thread(target=other)
    with gc_paused():
        assert not gc.isenabled()
        thread.start()
        assert inside.wait(10)
    assert not gc.isenabled()  # the other thread still reads
    leave.set()
    thread.join(10)
    assert gc.isenabled()


def test_a_collector_disabled_before_stays_disabled() -> None:
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_columns_are_the_rows_transposed(engine: Engine) -> None:
    with engine.connect() as conn:
        sql = "SELECT id, name FROM topics WHERE id > ? ORDER BY id"
        assert driver_columns(conn, sql, (-1,), width=2) == [(), ()]
        conn.exec_driver_sql("INSERT INTO topics (name, created_at, chain_length, chain_head) "
                             "VALUES ('a', CURRENT_TIMESTAMP, 0, ''), ('b', CURRENT_TIMESTAMP, 0, '')")
        rows = driver_rows(conn, sql, (-1,))
        assert driver_columns(conn, sql, (-1,), width=2) == [tuple(r[0] for r in rows), ("a", "b")]
    assert gc.isenabled()
