"""The short write path of the API (few round trips on PostgreSQL): one statement reads the topic, its queues and
the documents they hold; one inserts the judgments, moves the head and checks the tail; a pooled connection is
pinged only after it idled. Each keeps what the longer path guaranteed."""

from __future__ import annotations

import pytest
from sqlalchemy import Engine, func, select, text

from reviewdepth.services.admin.topics import create_topic
from reviewdepth.services.errors import Conflict, NotFound
from reviewdepth.services.files.rankings import RankedDocument, store_ranking
from reviewdepth.services.review.audit import verify_chains
from reviewdepth.services.review.batches import BatchItem, record_batch
from reviewdepth.store import engine as engine_module
from reviewdepth.store.chain import ChainBroken
from reviewdepth.store.engine import create_engine_for
from reviewdepth.store.models import Judgment, Topic


def judgments(engine: Engine) -> list[tuple[str, int]]:
    with engine.connect() as conn:
        return [(d, s) for d, s in conn.execute(select(Judgment.doc_id, Judgment.seq).order_by(Judgment.id))]


@pytest.fixture
def topic(engine: Engine) -> Engine:
    create_topic(engine, "T")
    store_ranking(engine, "T", "first", [RankedDocument(f"d{i}") for i in range(10)])
    store_ranking(engine, "T", "second", [RankedDocument(f"e{i}") for i in range(5)])
    return engine


def test_a_batch_records_ids_queues_and_links_in_order(topic: Engine) -> None:
    ids = record_batch(topic, "T", [BatchItem("d1", "1"), BatchItem("e2", "0", queue="second"),
                                    BatchItem("d3", "1", queue="first")], reviewer="ann", queue="first").ids
    with topic.connect() as conn:
        rows = conn.execute(select(Judgment.id, Judgment.doc_id, Judgment.seq, Judgment.queue_id)
                            .order_by(Judgment.id)).all()
        queues = dict(conn.execute(text("SELECT name, id FROM queues")).all())
    assert [r.id for r in rows] == ids
    assert [(r.doc_id, r.seq, r.queue_id) for r in rows] == [
        ("d1", 1, queues["first"]), ("e2", 2, queues["second"]), ("d3", 3, queues["first"])]
    more = record_batch(topic, "T", [BatchItem("e4", "1")], reviewer="bob").ids  # the newest queue by default
    assert more[0] > ids[-1] and judgments(topic)[-1] == ("e4", 4)
    assert verify_chains(topic, "T")[0].intact


def test_refusals_of_the_one_read_name_what_is_wrong_and_store_nothing(topic: Engine) -> None:
    with pytest.raises(NotFound, match="unknown topic 'nope'"):
        record_batch(topic, "nope", [BatchItem("d1", "1")], reviewer="ann")
    with pytest.raises(Conflict, match=r"judgments\[1\].doc_id: document 'x9' is in no queue"):
        record_batch(topic, "T", [BatchItem("d1", "1"), BatchItem("x9", "1")], reviewer="ann")
    with pytest.raises(Conflict, match="queue: topic 'T' has no queue 'third'"):
        record_batch(topic, "T", [BatchItem("d1", "1")], reviewer="ann", queue="third")
    create_topic(topic, "empty")
    with pytest.raises(Conflict, match="topic 'empty' has no queue"):
        record_batch(topic, "empty", [BatchItem("d1", "1")], reviewer="ann")
    assert judgments(topic) == []
    record_batch(topic, "empty", [BatchItem("x1", "1")], reviewer="ann", allow_unqueued=True)
    assert judgments(topic) == [("x1", 1)]


def test_a_row_far_beyond_the_recorded_length_refuses_a_post(topic: Engine) -> None:
    """A row behind the application's back at a seq the post does not reach (no unique clash): the tail check
    of the one statement still sees it."""
    record_batch(topic, "T", [BatchItem("d1", "1"), BatchItem("d2", "0")], reviewer="ann")
    with topic.begin() as conn:
        topic_id = conn.execute(select(Topic.id).where(Topic.name == "T")).scalar_one()
        conn.execute(text("INSERT INTO judgments (topic_id, doc_id, label, reviewer, role, source, recorded_at, seq, "
                          "chain_hash) VALUES (:t, 'sneaky', '1', 'x', 'review', 'x', CURRENT_TIMESTAMP, 9, 'x')"),
                     {"t": topic_id})
    before = judgments(topic)
    with topic.connect() as conn:
        length = conn.execute(select(Topic.chain_length).where(Topic.id == topic_id)).scalar_one()
    with pytest.raises(ChainBroken, match="beyond"):
        record_batch(topic, "T", [BatchItem("d3", "1")], reviewer="ann")
    with topic.connect() as conn:
        assert conn.execute(select(Topic.chain_length).where(Topic.id == topic_id)).scalar_one() == length
    assert judgments(topic) == before


def test_an_idle_pooled_connection_the_server_dropped_is_replaced(engine: Engine, monkeypatch: pytest.MonkeyPatch
                                                                  ) -> None:
    if engine.dialect.name != "postgresql":
        pytest.skip("a PostgreSQL server closing a pooled connection")
    monkeypatch.setattr(engine_module, "PING_AFTER_IDLE_SECONDS", 0.0)
    pooled = create_engine_for(engine.url.render_as_string(hide_password=False))
    try:
        with pooled.connect() as conn:
            pid = conn.exec_driver_sql("SELECT pg_backend_pid()").scalar_one()
        with engine.connect() as conn:  # the server ends the idle pooled connection (a restart, a timeout)
            assert conn.exec_driver_sql(f"SELECT pg_terminate_backend({pid})").scalar_one()
        with pooled.connect() as conn:
            assert conn.exec_driver_sql("SELECT pg_backend_pid()").scalar_one() != pid
            assert conn.execute(select(func.count()).select_from(Topic)).scalar_one() == 0
    finally:
        pooled.dispose()
