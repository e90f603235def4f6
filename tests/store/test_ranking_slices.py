"""The queue's ranking index read in slices (PostgreSQL, `reviewdepth.store.loaders._read_ranking`) gives the same
labels as read whole, whatever the slice size, and the same index bytes as stored."""

from __future__ import annotations

import pytest
from sqlalchemy import Engine, select

from reviewdepth.services.admin.topics import create_topic
from reviewdepth.services.files.rankings import RankedDocument, store_ranking
from reviewdepth.services.review.batches import BatchItem, record_batch
from reviewdepth.store import loaders
from reviewdepth.store.models import Queue
from reviewdepth.store.ranking_blob import decode_ranking


@pytest.mark.parametrize("slice_bytes", [1, 7, 64, 1 << 25])
def test_slices_read_the_index_as_stored(engine: Engine, slice_bytes: int, monkeypatch: pytest.MonkeyPatch) -> None:
    create_topic(engine, "t")
    store_ranking(engine, "t", "q", [RankedDocument(f"doc-{i}", float(-i)) for i in range(300)])
    record_batch(engine, "t", [BatchItem(f"doc-{i}", str(int(i % 3 == 0))) for i in range(0, 300, 7)],
                 reviewer="ana", source="test")
    with engine.connect() as conn:
        queue_id, stored = conn.execute(select(Queue.id, Queue.ranking_blob)).one()
        expected = loaders.load_queue_labels(conn, queue_id, 1, 300)
        monkeypatch.setattr(loaders, "RANKING_SLICE_BYTES", slice_bytes)
        index = loaders._read_ranking(conn, queue_id)
        got = loaders.load_queue_labels(conn, queue_id, 1, 300)
    whole = decode_ranking(stored)
    assert index is not None and whole is not None
    assert index.doc_ids.tobytes() == whole.doc_ids.tobytes()
    assert (index.sorted_hashes == whole.sorted_hashes).all() and (index.rank_of_sorted == whole.rank_of_sorted).all()
    assert got.labels.tolist() == expected.labels.tolist()
    assert (got.relevant_total, got.nonrelevant_total) == (expected.relevant_total, expected.nonrelevant_total)
    assert got.relevant_total == sum(1 for i in range(0, 300, 7) if i % 3 == 0)
