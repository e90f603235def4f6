"""The packed judgment reads take the rows in the order the table is scanned, not in id order (PostgreSQL's
aggregates sort no more): a judgment row stored after a later one still loses to it under every label policy."""

from __future__ import annotations

from sqlalchemy import Engine, bindparam, select, text

from reviewdepth.services.admin.topics import create_topic
from reviewdepth.services.files.rankings import RankedDocument, store_ranking
from reviewdepth.services.review.batches import BatchItem, record_batch
from reviewdepth.services.review.judgments import topic_id_of
from reviewdepth.store import loaders, votes
from reviewdepth.store.labels import POLICIES
from reviewdepth.store.models import Judgment, Queue


def test_labels_and_voters_do_not_depend_on_the_scan_order(engine: Engine) -> None:
    create_topic(engine, "t")
    store_ranking(engine, "t", "q", [RankedDocument(f"doc-{i}", float(-i)) for i in range(40)])
    # ana first, then bob contradicting her on the even documents, then ana again on a few of them
    record_batch(engine, "t", [BatchItem(f"doc-{i}", "1") for i in range(20)], reviewer="ana", source="test")
    record_batch(engine, "t", [BatchItem(f"doc-{i}", "0") for i in range(0, 20, 2)], reviewer="bob", source="test")
    record_batch(engine, "t", [BatchItem(f"doc-{i}", "0") for i in range(1, 8, 3)], reviewer="ana", source="test")
    topic_id = topic_id_of(engine, "t")
    with engine.connect() as conn:
        queue_id = conn.execute(select(Queue.id)).scalar_one()
        before = {p: loaders.load_queue_labels(conn, queue_id, topic_id, 40, p) for p in POLICIES}
        voters = votes.reviewers_per_document(conn, topic_id)
    with engine.begin() as conn:
        first_ids = conn.execute(select(Judgment.id).order_by(Judgment.id).limit(10)).scalars().all()
        # an update writes a new row version at the end of a PostgreSQL table: the earliest judgments are then
        # scanned last (SQLite keeps rowid order; the check holds there trivially)
        conn.execute(text("UPDATE judgments SET note = note WHERE id IN :ids")
                     .bindparams(bindparam("ids", expanding=True)), {"ids": list(first_ids)})
    with engine.connect() as conn:
        if engine.dialect.name == "postgresql":
            scanned = conn.execute(text("SELECT id FROM judgments")).scalars().all()
            assert scanned != sorted(scanned)  # the premise: scan order is not id order
        for policy in POLICIES:
            after = loaders.load_queue_labels(conn, queue_id, topic_id, 40, policy)
            assert after.labels.tolist() == before[policy].labels.tolist(), policy
            assert (after.relevant_total, after.nonrelevant_total) == \
                (before[policy].relevant_total, before[policy].nonrelevant_total)
        assert votes.reviewers_per_document(conn, topic_id) == voters
    latest = before["latest"].labels.tolist()
    assert latest[:8] == [0, 0, 0, 1, 0, 1, 0, 0]  # doc-1, doc-4 and doc-7 ana's second word; evens bob's
    assert latest[8:20] == [0, 1] * 6 and latest[20:] == [-1] * 20
