"""The chunked label loader (`reviewdepth.store.loaders._chunked_path`: judgments read a chunk of rows at a time,
the ranking index a slice of bytes at a time) gives exactly the labels of the whole-index path and of the join in
SQL, at every slice size, and reads no more than a slice at a time."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import pytest
from sqlalchemy import Engine, select

from reviewdepth.formats.scan import StringColumn
from reviewdepth.services.admin.topics import create_topic
from reviewdepth.services.files.rankings import RankedDocument, store_ranking
from reviewdepth.store import loaders
from reviewdepth.store.chain import NewJudgment, append_judgments
from reviewdepth.store.evidence import lock_evidence
from reviewdepth.store.labels import POLICIES
from reviewdepth.store.loaders import QueueLabels, load_queue_labels
from reviewdepth.store.models import DISTINCT_DECISION, DUPLICATE_DECISION, VOID_ROLE, Judgment, Queue, Topic
from reviewdepth.store.ranking_blob import strings_with_hashes_or_none

START = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
# (judgment rows per chunk, index bytes per slice): one row and one byte (a slice of one entry), slices that end
# inside a doc id, and the defaults
SLICES = [(1, 1), (3, 40), (7, 8 * 5 + 3), (loaders.JUDGMENT_SLICE_ROWS, loaders.RANKING_SLICE_BYTES)]


def queue_docs() -> list[str]:
    """90 doc ids of two widths, so a slice of doc ids can end inside one."""
    return [f"document-{i}-long" if i % 7 == 0 else f"d{i}" for i in range(90)]


def judge(engine: Engine, rows: list[tuple[str, bool | None, str, str | None]]) -> list[int]:
    """Append (doc id, relevant, role, decision) rows to topic T's log, one second apart after the last; their ids."""
    with engine.begin() as conn:
        topic_id = int(conn.execute(select(Topic.id).where(Topic.name == "T")).scalar_one())
        count = int(conn.execute(select(Judgment.id).where(Judgment.topic_id == topic_id)
                                 .order_by(Judgment.id.desc()).limit(1)).scalar_one_or_none() or 0)
        lock_evidence(conn)
        label = {True: "1", False: "0", None: "maybe"}
        return append_judgments(conn, [
            NewJudgment(topic_id, doc, "void" if role == VOID_ROLE else label[relevant], relevant, None,
                        f"r{n % 3}", role, "test", None, START + timedelta(seconds=count + n), decision=decision)
            for n, (doc, relevant, role, decision) in enumerate(rows)], return_ids=True)


def build(engine: Engine, seed: int = 7) -> list[int]:
    """Topic T, its queue q (`queue_docs`) and a log with everything the labels resolve: repeated judgments of a
    document, relabels, undecided judgments, adjudications, void rows (one on a queue document, relevant: it must
    not count), duplicate flags and their withdrawal, and documents outside the queue. Returns the judgment ids."""
    create_topic(engine, "T")
    docs = queue_docs()
    store_ranking(engine, "T", "q", [RankedDocument(d, float(-i)) for i, d in enumerate(docs)])
    rng = np.random.default_rng(seed)
    pool = docs[:70] + [f"out-{i}" for i in range(12)] + ["outside-the-queue-and-long"]
    decided: list[bool | None] = [True, False, None]
    ids = judge(engine, [(pool[int(rng.integers(len(pool)))], decided[int(rng.integers(3))], "review", None)
                         for _ in range(120)])
    ids += judge(engine, [("d1", True, "review", None), ("d1", False, "review", None), ("d1", True, "review", None),
                          ("d2", False, "review", None), ("d2", True, "adjudication", None),
                          ("d2", False, "review", None), ("d3", None, "review", None)])
    ids += judge(engine, [("d80", True, VOID_ROLE, None), ("sample:1", None, VOID_ROLE, None)])
    ids += judge(engine, [(pool[int(rng.integers(len(pool)))], decided[int(rng.integers(3))],
                           "adjudication" if n % 4 == 0 else "review", None) for n in range(60)])
    ids += judge(engine, [("d4", None, "adjudication", DUPLICATE_DECISION),
                          ("d5", None, "adjudication", DUPLICATE_DECISION),
                          ("d5", None, "adjudication", DISTINCT_DECISION), ("d4", True, "review", None),
                          ("d5", True, "review", None)])
    return ids


def queue_of(engine: Engine) -> tuple[int, int, int]:
    with engine.connect() as conn:
        queue_id, topic_id, size = conn.execute(select(Queue.id, Queue.topic_id, Queue.size)).one()
    return int(queue_id), int(topic_id), int(size)


def load(engine: Engine, policy: str, as_of: int | None = None, as_of_time: datetime | None = None) -> QueueLabels:
    queue_id, topic_id, size = queue_of(engine)
    with engine.connect() as conn:
        return load_queue_labels(conn, queue_id, topic_id, size, policy, as_of, as_of_time)


def assert_same(a: QueueLabels, b: QueueLabels) -> None:
    assert a.labels.dtype == b.labels.dtype and a.labels.tolist() == b.labels.tolist()
    assert (a.size, a.relevant_total, a.nonrelevant_total, a.judged_total, a.policy, a.as_of) == \
        (b.size, b.relevant_total, b.nonrelevant_total, b.judged_total, b.policy, b.as_of)


def spy_chunked(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether each `_chunked_path` call was taken (returned labels rather than None)."""
    taken: list[bool] = []
    chunked = loaders._chunked_path

    def spy(*args: Any) -> Any:
        result = chunked(*args)
        taken.append(result is not None)
        return result

    monkeypatch.setattr(loaders, "_chunked_path", spy)
    return taken


def reference_paths(engine: Engine, monkeypatch: pytest.MonkeyPatch, policy: str, as_of: int | None,
                    as_of_time: datetime | None) -> QueueLabels:
    """The labels by the whole-index path (the index read whole, `_hashed_path`) after checking them against the
    dictionary and join in SQL (`_join_in_sql`)."""
    with monkeypatch.context() as patch:
        patch.setattr(loaders, "_chunked_path", lambda *args: None)
        whole = load(engine, policy, as_of, as_of_time)
        patch.setattr(loaders, "_hashed_path", lambda *args: None)
        joined = load(engine, policy, as_of, as_of_time)
    assert_same(whole, joined)
    return joined


def test_chunked_loader_matches_the_whole_index_and_the_sql_join(engine: Engine,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    ids = build(engine)
    cuts: list[tuple[int | None, datetime | None]] = [
        (None, None), (ids[0], None), (ids[119], None), (ids[126], None), (ids[-3], None),
        (None, START + timedelta(seconds=60)), (ids[-1], START + timedelta(seconds=190))]
    for policy in POLICIES:
        for as_of, as_of_time in cuts:
            expected = reference_paths(engine, monkeypatch, policy, as_of, as_of_time)
            for rows, slice_bytes in SLICES:
                with monkeypatch.context() as patch:
                    patch.setattr(loaders, "JUDGMENT_SLICE_ROWS", rows)
                    patch.setattr(loaders, "RANKING_SLICE_BYTES", slice_bytes)
                    taken = spy_chunked(patch)
                    got = load(engine, policy, as_of, as_of_time)
                assert taken == [True], (policy, as_of, rows, slice_bytes)
                assert_same(got, expected)
    # the log resolves as built: d1 relabelled back to relevant, d2's adjudication (relevant) over a later review,
    # d3 undecided, the void row on d80 no label, d4 flagged a duplicate, d5's flag withdrawn
    rank = {d: r for r, d in enumerate(queue_docs())}
    latest, adjudicated = load(engine, "latest").labels, load(engine, "adjudicated").labels
    assert [int(latest[rank[d]]) for d in ("d1", "d2", "d4", "d5", "d80")] == [1, 0, 0, 1, -1]
    assert int(adjudicated[rank["d2"]]) == 1


def colliding_scan(monkeypatch: pytest.MonkeyPatch, forced: dict[str, str]) -> None:
    """Make the loader hash each doc id of ``forced`` as its value (a 64-bit collision, too rare to find)."""
    scan_doc_ids = loaders.scan_doc_ids
    hash_of = {k.encode(): strings_with_hashes_or_none([v]).hashed()[0]  # type: ignore[union-attr]
               for k, v in forced.items()}

    def scan(data: bytes, count: int) -> StringColumn | None:
        column = scan_doc_ids(data, count)
        if column is None:
            return None
        hashes = column.hashed().copy()
        for doc, value in hash_of.items():
            hashes[column.values == doc] = value
        return StringColumn(column.values, hashes)

    monkeypatch.setattr(loaders, "scan_doc_ids", scan)


@pytest.mark.parametrize("rows", [1, 2, loaders.JUDGMENT_SLICE_ROWS])
@pytest.mark.parametrize("forced", [{"out-3": "d75"}, {"d12": "d11"}, {"out-5": "out-6"}])
def test_a_forced_hash_collision_takes_the_exact_path(engine: Engine, monkeypatch: pytest.MonkeyPatch,
                                                      forced: dict[str, str], rows: int) -> None:
    """A judged document outside the queue hashed as an unjudged queue document (d75: the match is not the same doc
    id), two judged queue documents, or two judged documents outside the queue, with one hash: the chunked path
    declines (within a chunk and across chunks) and the labels are the SQL join's."""
    build(engine)
    judge(engine, [("out-3", True, "review", None), ("d12", False, "review", None), ("d11", True, "review", None),
                   ("out-5", True, "review", None), ("out-6", False, "review", None)])
    for policy in POLICIES:
        expected = reference_paths(engine, monkeypatch, policy, None, None)
        with monkeypatch.context() as patch:
            colliding_scan(patch, forced)
            patch.setattr(loaders, "JUDGMENT_SLICE_ROWS", rows)
            taken = spy_chunked(patch)
            got = load(engine, policy)
        assert taken == [False]
        assert_same(got, expected)
    assert int(load(engine, "latest").labels[queue_docs().index("d75")]) == -1


def test_reads_are_bounded_by_the_slice_sizes(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    """No read of the index is longer than `RANKING_SLICE_BYTES`, no chunk of judgments longer than
    `JUDGMENT_SLICE_ROWS`, every judgment is read once, and the index is never read whole."""
    ids = build(engine)
    expected = reference_paths(engine, monkeypatch, "latest", None, None)
    reads: list[int] = []
    chunks: list[int] = []

    def recording(found: tuple[int, loaders.BlobReader] | None) -> tuple[int, loaders.BlobReader] | None:
        if found is None:
            return None
        total, read = found

        def reader(offset: int, length: int) -> bytes:
            piece = read(offset, length)
            assert len(piece) == length
            reads.append(length)
            return piece

        return total, reader

    sqlite_reader, postgres_reader = loaders._sqlite_ranking_reader, loaders._postgres_ranking_reader

    @contextmanager
    def sqlite_spy(raw: Any, queue_id: int) -> Iterator[tuple[int, loaders.BlobReader] | None]:
        with sqlite_reader(raw, queue_id) as found:
            yield recording(found)

    def chunk_spy(original: Callable[..., loaders._JudgmentChunk | None]) -> Callable[..., Any]:
        def spy(*args: Any) -> loaders._JudgmentChunk | None:
            chunk = original(*args)
            assert chunk is not None
            chunks.append(chunk.rows)
            return chunk

        return spy

    def whole(*args: Any) -> None:
        raise AssertionError("the index was read whole")

    monkeypatch.setattr(loaders, "JUDGMENT_SLICE_ROWS", 16)
    monkeypatch.setattr(loaders, "RANKING_SLICE_BYTES", 64)
    monkeypatch.setattr(loaders, "_sqlite_ranking_reader", sqlite_spy)
    monkeypatch.setattr(loaders, "_postgres_ranking_reader", lambda raw, queue_id: recording(
        postgres_reader(raw, queue_id)))
    monkeypatch.setattr(loaders, "_sqlite_judgment_chunk", chunk_spy(loaders._sqlite_judgment_chunk))
    monkeypatch.setattr(loaders, "_postgres_judgment_chunk", chunk_spy(loaders._postgres_judgment_chunk))
    monkeypatch.setattr(loaders, "_read_ranking", whole)
    got = load(engine, "latest")
    assert_same(got, expected)
    void_rows = 2
    assert sum(chunks) == len(ids) - void_rows and max(chunks) == 16
    assert reads and max(reads) <= 64
