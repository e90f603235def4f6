"""Migration 0019 (the evidence chain) on both databases, with data: the upgrade chains every topic, queue, sample
and audit stream already stored, in a fixed order (topics, queues, samples, streams, each by id), so the upgraded
store verifies clean and tampering after it is named; the downgrade drops exactly the two tables; up again
chains the same objects again."""

from __future__ import annotations

from sqlalchemy import Engine, inspect, text

from reviewdepth.store import migrate
from reviewdepth.store.engine import create_engine_for
from reviewdepth.store.evidence import verify_evidence

WHEN = "2026-01-01 00:00:00"


def fill(engine: Engine) -> None:
    """Two topics with a queue each, a sample with its drawn documents and an audit stream, written at 0018."""
    with engine.begin() as conn:
        for name in ("B", "A"):
            conn.execute(text("INSERT INTO topics (name, created_at) VALUES (:n, :w)"), {"n": name, "w": WHEN})
            topic = conn.execute(text("SELECT id FROM topics WHERE name = :n"), {"n": name}).scalar_one()
            conn.execute(text("INSERT INTO queues (topic_id, name, ordering, size, source, created_at) "
                              "VALUES (:t, 'q', 'given', 5, 'test', :w)"), {"t": topic, "w": WHEN})
            queue = conn.execute(text("SELECT id FROM queues WHERE topic_id = :t"), {"t": topic}).scalar_one()
            conn.execute(text("INSERT INTO queue_entries (queue_id, rank, doc_id, score) VALUES (:q, :r, :d, :s)"),
                         [{"q": queue, "r": r, "d": f"{name}{r}", "s": 1.0 / r} for r in range(1, 6)])
        topic, queue = conn.execute(text("SELECT t.id, q.id FROM topics t JOIN queues q ON q.topic_id = t.id "
                                         "WHERE t.name = 'A'")).one()
        conn.execute(text("INSERT INTO samples (topic_id, queue_id, frame, frame_size, size, seed, created_at) "
                          "VALUES (:t, :q, 'all', 5, 2, 42, :w)"), {"t": topic, "q": queue, "w": WHEN})
        sample = conn.execute(text("SELECT id FROM samples")).scalar_one()
        conn.execute(text("INSERT INTO sample_items (sample_id, position, doc_id, rank) VALUES (:s, :p, :d, :r)"),
                     [{"s": sample, "p": 1, "d": "A4", "r": 4}, {"s": sample, "p": 2, "d": "A2", "r": 2}])
        conn.execute(text("INSERT INTO audit_streams (topic_id, queue_id, seed, population_size, population_digest, "
                          "every_k, position, served, created_at, created_by) VALUES (:t, :q, 7, 5, 'd', 3, 0, 0, "
                          ":w, 'ana')"), {"t": topic, "q": queue, "w": WHEN})


def chained(engine: Engine) -> list[tuple[int, str, int, str]]:
    with engine.connect() as conn:
        return [(int(s), str(k), int(i), str(t)) for s, k, i, t in conn.execute(text(
            "SELECT seq, kind, object_id, topic FROM evidence_events ORDER BY seq"))]


def test_0019_up_down_up_with_data(empty_db_url: str) -> None:
    engine = create_engine_for(empty_db_url)
    try:
        migrate.upgrade(engine, "0018")
        fill(engine)
        migrate.upgrade(engine, "0019")
        with engine.connect() as conn:
            ids = {name: i for i, name in conn.execute(text("SELECT id, name FROM topics"))}
            queues = [int(q) for q in conn.execute(text("SELECT id FROM queues ORDER BY id")).scalars()]
            check = verify_evidence(conn)
        order = [(1, "topic", ids["B"], "B"), (2, "topic", ids["A"], "A"), (3, "queue", queues[0], "B"),
                 (4, "queue", queues[1], "A"), (5, "sample", 1, "A"), (6, "stream", 1, "A")]
        assert chained(engine) == order and check.intact and check.events == 6, check.problems
        with engine.begin() as conn:  # tampering after the upgrade is named: the back-filled digests are real
            conn.execute(text("UPDATE sample_items SET doc_id = 'A5' WHERE position = 2"))
        with engine.connect() as conn:
            assert [p.message for p in verify_evidence(conn).problems] == [
                "sample 1 of topic A: drawn documents differ from the chained draw (event 5)"]
        with engine.begin() as conn:
            conn.execute(text("UPDATE sample_items SET doc_id = 'A2' WHERE position = 2"))

        plan = migrate.downgrade_plan(engine, "0018")
        assert [(s.revision, s.tables, s.columns) for s in plan] == [
            ("0019", ("evidence_chain", "evidence_events"), ())]
        assert plan[0].loses is not None and "evidence chain" in plan[0].loses
        migrate.downgrade(engine, "0018")
        assert not {"evidence_chain", "evidence_events"} & set(inspect(engine).get_table_names())

        migrate.upgrade(engine)
        assert chained(engine) == order
        with engine.connect() as conn:
            assert verify_evidence(conn).intact
    finally:
        engine.dispose()
