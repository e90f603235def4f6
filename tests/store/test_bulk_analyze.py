"""PostgreSQL refreshes a table's statistics as a bulk load into it commits (`reviewdepth.store.ingest`
.analyze_bulk_loads): the planner then sees the rows just loaded, not the near-empty table of its last look. A load
below the threshold, a rolled-back load and SQLite leave the statistics alone, and a failed ANALYZE does not lose
the load."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import Engine, text

from reviewdepth.services.files.imports import import_qrels, import_run
from reviewdepth.store.ingest import ANALYZE_AFTER_ROWS, note_bulk_load


def estimated_rows(engine: Engine, table: str) -> float:
    """pg_class.reltuples: -1 until the table is first analyzed (PostgreSQL 14 on), then ANALYZE's count."""
    with engine.connect() as conn:
        return float(conn.execute(text("SELECT reltuples FROM pg_class WHERE relname = :t"), {"t": table}).scalar_one())


def write_run(path: Path, topic: str, rows: int) -> None:
    path.write_text("".join(f"{topic} Q0 d{i} {i + 1} {rows - i} r\n" for i in range(rows)))


def test_a_large_load_leaves_fresh_statistics_and_a_small_one_leaves_them(engine: Engine, tmp_path: Path) -> None:
    small, large = tmp_path / "small.run", tmp_path / "large.run"
    write_run(small, "A", ANALYZE_AFTER_ROWS - 1)
    write_run(large, "B", ANALYZE_AFTER_ROWS)
    qrels = tmp_path / "b.qrels"
    qrels.write_text("".join(f"B 0 d{i} {i % 2}\n" for i in range(ANALYZE_AFTER_ROWS)))
    if engine.dialect.name != "postgresql":
        import_run(engine, str(large))  # SQLite: nothing noted, nothing to analyze
        with engine.connect() as conn:
            assert "reviewdepth_bulk_loaded" not in conn.info
        return
    import_run(engine, str(small))
    assert estimated_rows(engine, "queue_entries") == -1  # one row short: left to autovacuum
    import_run(engine, str(large))
    assert estimated_rows(engine, "queue_entries") == 2 * ANALYZE_AFTER_ROWS - 1  # both loads' rows, counted
    assert estimated_rows(engine, "judgments") == -1
    import_qrels(engine, str(qrels))
    assert estimated_rows(engine, "judgments") == ANALYZE_AFTER_ROWS
    with engine.connect() as conn:
        assert "reviewdepth_bulk_loaded" not in conn.info


def test_a_rolled_back_load_is_not_analyzed_and_a_failed_analyze_keeps_the_load(engine: Engine) -> None:
    if engine.dialect.name != "postgresql":
        with engine.begin() as conn:
            note_bulk_load(conn, "queue_entries", 10 * ANALYZE_AFTER_ROWS)
            assert "reviewdepth_bulk_loaded" not in conn.info
        return
    with engine.connect() as conn:
        conn.execute(text("SELECT 1"))  # a transaction is open
        note_bulk_load(conn, "judgments", 10 * ANALYZE_AFTER_ROWS)
        conn.rollback()
        assert "reviewdepth_bulk_loaded" not in conn.info
        conn.execute(text("SELECT 1"))
        conn.commit()
    assert estimated_rows(engine, "judgments") == -1
    with engine.begin() as conn:
        conn.execute(text("INSERT INTO topics (name, chain_length, created_at) VALUES ('kept', 0, now())"))
        note_bulk_load(conn, "no_such_table", 10 * ANALYZE_AFTER_ROWS)  # its ANALYZE fails
        note_bulk_load(conn, "topics", ANALYZE_AFTER_ROWS)  # and this one, after it, still runs
    with engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM topics WHERE name = 'kept'")).scalar_one() == 1
    assert estimated_rows(engine, "topics") == 1
