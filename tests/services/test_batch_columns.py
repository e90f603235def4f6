"""A batch held as columns (`BatchColumns`, what the API makes of a large body) records exactly what the same
batch as a list of `BatchItem` records: the same rows, chain and ids, the same idempotency digest, and the same
refusal (naming the same judgment) with nothing written. SQLite and PostgreSQL."""

from __future__ import annotations

import random

import pytest
from sqlalchemy import Engine, text

from reviewdepth.services.admin.topics import create_topic
from reviewdepth.services.errors import Conflict, Invalid
from reviewdepth.services.files.rankings import RankedDocument, store_ranking
from reviewdepth.services.review.batches import BatchColumns, BatchItem, _columns_digest, _listed_digest, record_batch

DOCS = [f"d{i:05d}" for i in range(6_000)]


def as_columns(items: list[BatchItem]) -> BatchColumns:
    columns = BatchColumns()
    for item in items:
        columns.add(item)
    return columns


def stored(engine: Engine, topic: str) -> list[tuple[object, ...]]:
    """The topic's log, every column but the id, the topic's id, the time and the chain hash (both differ
    between two topics), plus the queue's name."""
    with engine.connect() as conn:
        return [tuple(r) for r in conn.execute(text(
            "SELECT j.seq, j.doc_id, j.label, j.relevant, j.grade, j.reviewer, j.role, j.source, j.note, j.decision, "
            "j.reason, j.stage, q.name FROM judgments j JOIN topics t ON t.id = j.topic_id "
            "LEFT JOIN queues q ON q.id = j.queue_id WHERE t.name = :t ORDER BY j.seq"), {"t": topic})]


def topic_with_queues(engine: Engine, name: str) -> None:
    create_topic(engine, name)
    store_ranking(engine, name, "first", [RankedDocument(d, float(-i)) for i, d in enumerate(DOCS)])
    store_ranking(engine, name, "second", [RankedDocument(d, float(-i)) for i, d in enumerate(DOCS[::2])])


@pytest.mark.parametrize("mixed", [False, True])
def test_columns_record_what_the_list_records(engine: Engine, mixed: bool) -> None:
    rng = random.Random(7)
    items = [BatchItem(d, rng.choice(["1", "0", "yes", "2"])) if not mixed else
             BatchItem(d, rng.choice(["1", "0", "maybe"]), role=rng.choice(["review", "qc"]),
                       note=rng.choice([None, "a note"]), queue=rng.choice([None, "first", "second" if i % 2 == 0
                                                                            else None]),
                       stage=rng.choice([None, "full-text"]))
             for i, d in enumerate(DOCS[:5_000])]
    topic_with_queues(engine, "A")
    topic_with_queues(engine, "B")
    listed = record_batch(engine, "A", items, reviewer="ana", source="api")
    columned = record_batch(engine, "B", as_columns(items), reviewer="ana", source="api")
    assert len(columned.ids) == len(listed.ids) == len(items)
    assert stored(engine, "B") == stored(engine, "A")
    with engine.connect() as conn:
        by_id = dict(conn.execute(text("SELECT id, doc_id FROM judgments")).all())
    assert [by_id[i] for i in columned.ids] == [item.doc_id for item in items]


def test_columns_replay_under_the_same_idempotency_key(engine: Engine) -> None:
    topic_with_queues(engine, "A")
    items = [BatchItem(d, "1" if i % 9 == 0 else "0") for i, d in enumerate(DOCS[:3_000])]
    first = record_batch(engine, "A", items, reviewer="ana", idempotency_key="k1")
    again = record_batch(engine, "A", as_columns(items), reviewer="ana", idempotency_key="k1")
    assert again.replayed and again.ids == first.ids
    changed = as_columns([*items[:-1], BatchItem(items[-1].doc_id, "1")])
    with pytest.raises(Conflict, match="idempotency_key 'k1'"):
        record_batch(engine, "A", changed, reviewer="ana", idempotency_key="k1")


@pytest.mark.parametrize("seed", range(40))
def test_the_columns_digest_is_the_listed_one(seed: int) -> None:
    rng = random.Random(seed)
    items = [BatchItem(rng.choice(["a", 'é"x', "d\\1", "\u2028z", "\x7f"]), rng.choice(["1", "0", "maybe"]),
                       rng.choice(["review", "qc"]), rng.choice([None, "n", "=x\n"]),
                       rng.choice([None, "q1"]) if seed % 3 else None,
                       rng.choice([None, "r"]) if seed % 4 else None,
                       rng.choice([None, "full-text"]) if seed % 5 else None)
             for _ in range(rng.choice([1, 3, 4096, 9_000]))]
    for queue, allow in [(None, False), ("q", False), (None, True)]:
        assert _columns_digest("T ✓", as_columns(items), queue, allow) == _listed_digest("T ✓", items, queue, allow)


def counts(engine: Engine) -> tuple[object, ...]:
    with engine.connect() as conn:
        return tuple(conn.execute(text("SELECT (SELECT count(*) FROM judgments), (SELECT count(*) FROM "
                                       "api_idempotency), (SELECT max(chain_head) FROM topics)")).one())


@pytest.mark.parametrize("bad", ["label", "queue", "unqueued", "role"])
def test_a_bad_judgment_is_named_alike_and_nothing_is_written(engine: Engine, bad: str) -> None:
    topic_with_queues(engine, "A")
    items = [BatchItem(d, "0") for d in DOCS[:4_000]]
    at = 3_217
    if bad == "label":
        items[at] = BatchItem(items[at].doc_id, "perhaps")
    elif bad == "queue":
        items[at] = BatchItem(items[at].doc_id, "1", queue="third")
    elif bad == "unqueued":
        items[at] = BatchItem("not-in-any-queue", "1")
    else:
        items[at] = BatchItem(items[at].doc_id, "1", role="boss")
    before = counts(engine)
    errors = []
    for batch in (items, as_columns(items)):
        with pytest.raises((Invalid, Conflict)) as caught:
            record_batch(engine, "A", batch, reviewer="ana", idempotency_key="k")
        errors.append((type(caught.value), str(caught.value)))
    assert errors[0] == errors[1] and f"judgments[{at}]" in errors[0][1]
    assert counts(engine) == before
