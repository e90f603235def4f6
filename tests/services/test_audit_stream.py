"""The audit stream as a sample design, on SQLite and PostgreSQL: a seeded permutation recomputed from the sorted doc
ids (checked by digest), served between the ranked documents at its pace, passing documents already judged,
serving unjudged ones again, one active stream per topic, surviving a restart and a re-ranking, refusing bad input
with the database unchanged, and never serving one element as new twice when two calls race."""

from __future__ import annotations

import hashlib
import threading
from typing import Any

import numpy as np
import pytest
from sqlalchemy import Engine, func, select

from reviewdepth.estimation.audit_order import audit_permutation, population_digest, sorted_population
from reviewdepth.services.admin.topics import create_topic
from reviewdepth.services.errors import Conflict, Invalid, NotFound
from reviewdepth.services.files.rankings import RankedDocument, store_ranking
from reviewdepth.services.review.audit_stream import (
    AuditEvidence,
    audit_doc_ids,
    audit_due,
    change_pace,
    create_stream,
    load_audit,
    next_documents,
    show_stream,
    void_stream,
)
from reviewdepth.services.review.batches import BatchItem, record_batch
from reviewdepth.services.review.judgments import list_judgments
from reviewdepth.store.engine import create_engine_for
from reviewdepth.store.models import AuditStream

SIZE = 60
DOCS = [f"d{i:02d}" for i in range(SIZE)]  # rank order: d00 is rank 1
TRUTH = {d: int(i % 7 == 0) for i, d in enumerate(DOCS)}


def setup_topic(engine: Engine, population: int | None = None) -> None:
    create_topic(engine, "T", population)
    store_ranking(engine, "T", "q", [RankedDocument(d, float(-i)) for i, d in enumerate(DOCS)])


def order_of(seed: int, docs: list[str] = DOCS) -> list[str]:
    ids = sorted(set(docs))
    return [ids[i] for i in np.random.default_rng(seed).permutation(len(ids))]


def deep_seed(depth: int, first: int) -> int:
    """A seed whose first ``first`` audit documents all lie deeper than rank ``depth``, so that the expected
    interleaving is plain (no audit document is also the next ranked one)."""
    return next(s for s in range(10_000) if all(DOCS.index(d) >= depth for d in order_of(s)[:first]))


def judge(engine: Engine, docs: list[str], role: str = "review", reviewer: str = "ana") -> None:
    record_batch(engine, "T", [BatchItem(d, str(TRUTH[d]), role=role) for d in docs], reviewer=reviewer,
                 source="test")


def judge_served(engine: Engine, batch: Any) -> None:
    for d in batch.documents:
        judge(engine, [d.doc_id], d.role)


def stream_rows(engine: Engine) -> list[tuple[Any, ...]]:
    with engine.connect() as conn:
        return [tuple(r) for r in conn.execute(select(AuditStream.id, AuditStream.position, AuditStream.served,
                                                      AuditStream.voided_at).order_by(AuditStream.id))]


def test_the_permutation_is_the_seeded_order_of_the_sorted_ids() -> None:
    ids = sorted_population(["b", "a", "c", "a", "é", "B"])
    assert ids == ["B", "a", "b", "c", "é"]  # Python string order, duplicates dropped
    assert audit_permutation(ids, 5) == audit_permutation(ids, 5) == \
        np.random.default_rng(5).permutation(5).tolist()
    assert audit_permutation(ids, 5) != audit_permutation(ids, 6)
    assert population_digest(ids) == hashlib.sha256("B\na\nb\nc\né".encode()).hexdigest()
    with pytest.raises(ValueError):
        audit_permutation(["b", "a"], 1)
    with pytest.raises(ValueError):
        audit_permutation(ids, 2**63)


def test_create_stores_seed_and_digest_and_the_order_is_recomputed(engine: Engine) -> None:
    setup_topic(engine)
    record = create_stream(engine, "T", every=5, seed=11, reviewer="lead")
    assert (record.seed, record.population_size, record.every, record.rate, record.position, record.served) == \
        (11, SIZE, 5, None, 0, 0)
    assert record.population_digest == hashlib.sha256("\n".join(sorted(DOCS)).encode()).hexdigest()
    assert record.queue == "q" and record.created_by == "lead" and not record.voided
    assert record.description == "a seeded random permutation of the 60 documents of queue q (every 5)"
    assert list(audit_doc_ids(engine, "T")) == order_of(11)
    assert load_audit(engine, "T") == AuditEvidence(record.id, 11, SIZE, 0, 0, 0, [], [], [], [], record.description)
    create_topic(engine, "U")  # no seed given: a random one, stored
    store_ranking(engine, "U", "q", [RankedDocument("x"), RankedDocument("y")])
    other = create_stream(engine, "U", rate=0.5, reviewer="lead")
    assert 0 <= other.seed < 2**63 and other.rate == 0.5 and other.every is None
    assert other.description.endswith("(rate 0.5)")


def test_a_collection_larger_than_the_queue_is_named_in_the_description(engine: Engine) -> None:
    setup_topic(engine, population=5000)
    record = create_stream(engine, "T", every=10, seed=1, reviewer="lead")
    assert record.population_size == SIZE
    assert "the topic's collection has 5,000 documents: the audit covers the queue's documents only" in \
        record.description


def test_audit_due_counts_are_exact() -> None:
    assert [audit_due(r, every=5) for r in (0, 4, 5, 9, 10, 11)] == [0, 0, 1, 1, 2, 2]
    assert [audit_due(r, rate=0.25) for r in (0, 2, 3, 6, 9)] == [0, 0, 1, 2, 3]
    assert audit_due(7, rate=0.3) == 3  # 7 · 0.3/0.7 is exactly 3, not the float just below it
    assert audit_due(9, rate=0.1) == 1 and audit_due(8, rate=0.1) == 0
    assert audit_due(1, rate=0.5) == 1


def test_every_k_interleaves_one_audit_document_after_every_k_reviewed(engine: Engine) -> None:
    setup_topic(engine)
    seed = deep_seed(30, 4)
    create_stream(engine, "T", every=5, seed=seed, reviewer="lead")
    audit = order_of(seed)
    first = next_documents(engine, "T", count=12)
    assert [(d.doc_id, d.role) for d in first.documents] == \
        [(d, "review") for d in DOCS[:5]] + [(audit[0], "audit")] + \
        [(d, "review") for d in DOCS[5:10]] + [(audit[1], "audit")]
    assert [d.rank for d in first.documents if d.role == "review"] == list(range(1, 11))
    assert [d.audit_position for d in first.documents if d.role == "audit"] == [1, 2]
    assert (first.position, first.served, first.due, first.reviewed) == (2, 2, 0, 0)
    judge_served(engine, first)
    second = next_documents(engine, "T", count=6)
    assert second.reviewed == 10 and second.due == 2
    assert [(d.doc_id, d.role) for d in second.documents] == \
        [(d, "review") for d in DOCS[10:15]] + [(audit[2], "audit")]
    assert stream_rows(engine)[0][1:3] == (3, 3)


def test_a_changed_pace_counts_from_the_change_with_no_burst(engine: Engine) -> None:
    setup_topic(engine)
    seed = deep_seed(40, 6)
    create_stream(engine, "T", every=5, seed=seed, reviewer="lead")
    audit = order_of(seed)
    judge_served(engine, next_documents(engine, "T", count=12))  # 10 reviewed, 2 audit documents served
    record = change_pace(engine, "T", every=2)
    assert record.every == 2 and (record.position, record.served) == (2, 2)
    # from 10 reviewed on, one audit document after every 2 more: no catch-up of the 10 // 2 - 2 = 3 under the
    # new pace for the documents reviewed before the change
    batch = next_documents(engine, "T", count=6)
    assert [(d.doc_id, d.role) for d in batch.documents] == [
        (DOCS[10], "review"), (DOCS[11], "review"), (audit[2], "audit"),
        (DOCS[12], "review"), (DOCS[13], "review"), (audit[3], "audit")]
    assert batch.due == 2  # those served before the change
    judge_served(engine, batch)
    # the evidence is the same permutation's prefix, whatever the pace
    assert audit_doc_ids(engine, "T")[:4] == audit[:4]
    with pytest.raises(Invalid):
        change_pace(engine, "T", every=0)
    void_stream(engine, "T", reason="done", reviewer="lead")
    with pytest.raises(Conflict, match="no active audit stream"):  # the topic's state, not a missing resource
        change_pace(engine, "T", every=3)


def test_rate_interleaves_the_share_of_all_served(engine: Engine) -> None:
    setup_topic(engine)
    seed = deep_seed(30, 4)
    create_stream(engine, "T", rate=0.25, seed=seed, reviewer="lead")
    batch = next_documents(engine, "T", count=12)
    assert [d.role for d in batch.documents] == ["review", "review", "review", "audit"] * 3
    assert [d.doc_id for d in batch.documents if d.role == "audit"] == order_of(seed)[:3]
    assert (batch.position, batch.served) == (3, 3)


def test_documents_already_judged_are_passed_without_serving(engine: Engine) -> None:
    setup_topic(engine)
    seed = deep_seed(30, 6)
    create_stream(engine, "T", every=2, seed=seed, reviewer="lead")
    audit = order_of(seed)
    judge(engine, DOCS[:2])  # two ranked documents reviewed: one audit document due
    judge(engine, audit[:3], role="review", reviewer="bob")  # judged out of turn: the stream passes them
    batch = next_documents(engine, "T", count=1)
    assert [(d.doc_id, d.role, d.audit_position) for d in batch.documents] == [(audit[3], "audit", 4)]
    assert (batch.position, batch.served) == (4, 1)
    judge(engine, [audit[3]], role="audit")
    evidence = load_audit(engine, "T")
    assert evidence is not None and evidence.judged == 4 and evidence.doc_ids == audit[:4]
    assert evidence.relevant == [bool(TRUTH[d]) for d in audit[:4]] and evidence.pending == []
    assert evidence.ranks == [DOCS.index(d) + 1 for d in audit[:4]]


def test_a_served_audit_document_still_unjudged_is_served_again_first(engine: Engine) -> None:
    setup_topic(engine)
    seed = deep_seed(30, 4)
    create_stream(engine, "T", every=3, seed=seed, reviewer="lead")
    audit = order_of(seed)
    first = next_documents(engine, "T", count=4)
    assert [d.role for d in first.documents] == ["review"] * 3 + ["audit"]
    judge(engine, [d.doc_id for d in first.documents if d.role == "review"])  # the audit document is left
    again = next_documents(engine, "T", count=4)
    assert (again.documents[0].doc_id, again.documents[0].role, again.documents[0].again) == (audit[0], "audit", True)
    assert [d.role for d in again.documents[1:]] == ["review"] * 3
    assert (again.position, again.served) == (1, 1)  # nothing new was due: 3 reviewed, 1 served
    evidence = load_audit(engine, "T")
    assert evidence is not None and (evidence.judged, evidence.pending) == (0, [audit[0]])


def test_a_gap_stops_the_evidence_and_as_of_is_honoured(engine: Engine) -> None:
    setup_topic(engine)
    judge(engine, ["d00"])  # the one judgment before the stream
    [first_id] = [j.id for j in list_judgments(engine, "T")]
    seed = deep_seed(30, 4)
    create_stream(engine, "T", every=1, seed=seed, reviewer="lead")
    assert load_audit(engine, "T", as_of=first_id - 1) is None  # the stream did not exist yet
    audit = order_of(seed)
    batch = next_documents(engine, "T", count=6)
    served = [d.doc_id for d in batch.documents if d.role == "audit"]
    assert served == audit[:3]
    judge(engine, [audit[0], audit[2]], role="audit")  # the second is left: a gap
    evidence = load_audit(engine, "T")
    assert evidence is not None and evidence.judged == 1 and evidence.doc_ids == audit[:1]
    assert evidence.pending == [audit[1]] and evidence.position == 3 and evidence.served == 3
    as_of_before = load_audit(engine, "T", as_of=first_id)
    assert as_of_before is not None and as_of_before.judged == 0 and as_of_before.pending == audit[:3]
    judge(engine, [audit[1]], role="audit", reviewer="cy")
    after = load_audit(engine, "T")
    assert after is not None and after.judged == 3 and after.pending == []
    with pytest.raises(Invalid, match="policy"):
        load_audit(engine, "T", policy="newest")


def test_the_label_policy_resolves_audit_labels(engine: Engine) -> None:
    setup_topic(engine)
    seed = deep_seed(30, 2)
    create_stream(engine, "T", every=1, seed=seed, reviewer="lead")
    doc, second = order_of(seed)[:2]
    record_batch(engine, "T", [BatchItem(doc, "1", role="audit")], reviewer="ana")
    record_batch(engine, "T", [BatchItem(doc, "0", role="audit")], reviewer="bob")
    judge(engine, ["d00"])  # one reviewed: one audit document due
    batch = next_documents(engine, "T", count=1)
    assert [(d.doc_id, d.audit_position) for d in batch.documents] == [(second, 2)]  # the first was passed
    latest = load_audit(engine, "T", policy="latest")
    anyrel = load_audit(engine, "T", policy="any_relevant")
    assert latest is not None and anyrel is not None
    assert (latest.position, latest.served, latest.judged, latest.pending) == (2, 1, 1, [second])
    assert latest.relevant == [False] and anyrel.relevant == [True]


def test_one_active_stream_per_topic(engine: Engine) -> None:
    setup_topic(engine)
    first = create_stream(engine, "T", every=5, seed=1, reviewer="lead")
    with pytest.raises(Conflict, match=f"stream {first.id}"):
        create_stream(engine, "T", rate=0.1, seed=2, reviewer="lead")
    assert len(stream_rows(engine)) == 1
    voided = void_stream(engine, "T", reason="wrong pace", reviewer="lead")
    assert voided.voided and voided.void_reason == "wrong pace" and voided.voided_by == "lead"
    assert load_audit(engine, "T") is None
    assert next_documents(engine, "T", count=3).stream_id is None
    with pytest.raises(Conflict, match="no active audit stream"):
        void_stream(engine, "T", reason="again", reviewer="lead")
    second = create_stream(engine, "T", every=10, seed=3, reviewer="lead")
    assert second.id != first.id and show_stream(engine, "T").id == second.id


def test_the_stream_survives_a_restart(engine: Engine, empty_db_url: str) -> None:
    setup_topic(engine)
    seed = deep_seed(30, 4)
    create_stream(engine, "T", every=2, seed=seed, reviewer="lead")
    before = next_documents(engine, "T", count=6)
    judge(engine, [d.doc_id for d in before.documents if d.role == "review"])
    engine.dispose()
    fresh = create_engine_for(empty_db_url)
    try:
        shown = show_stream(fresh, "T")
        assert (shown.seed, shown.position, shown.served) == (seed, before.position, before.served)
        after = next_documents(fresh, "T", count=3)
        audit = [d.doc_id for d in before.documents if d.role == "audit"]
        assert [d.doc_id for d in after.documents[:len(audit)]] == audit and all(
            d.again for d in after.documents[:len(audit)])
    finally:
        fresh.dispose()


def test_a_re_ranking_keeps_the_stream_and_ranks_come_from_the_new_queue(engine: Engine) -> None:
    setup_topic(engine)
    seed = deep_seed(30, 4)
    record = create_stream(engine, "T", every=2, seed=seed, reviewer="lead")
    batch = next_documents(engine, "T", count=3)
    judge_served(engine, batch)
    reranked = list(reversed(DOCS))
    store_ranking(engine, "T", "q2", [RankedDocument(d, float(-i)) for i, d in enumerate(reranked)])
    assert list(audit_doc_ids(engine, "T")) == order_of(seed)
    evidence = load_audit(engine, "T")  # the newest queue: q2
    assert evidence is not None and evidence.stream_id == record.id and evidence.judged == 1
    assert evidence.ranks == [reranked.index(order_of(seed)[0]) + 1]
    on_q = load_audit(engine, "T", "q")
    assert on_q is not None and on_q.ranks == [DOCS.index(order_of(seed)[0]) + 1]
    after = next_documents(engine, "T", count=3)
    assert after.queue == "q2" and after.stream_id == record.id
    judged = {d.doc_id for d in batch.documents}
    first_open = next(i for i, d in enumerate(reranked) if d not in judged)
    assert (after.documents[0].doc_id, after.documents[0].rank) == (reranked[first_open], first_open + 1)
    assert show_stream(engine, "T").description.endswith("of queue q (every 2)")
    store_ranking(engine, "T", "other", [RankedDocument("d00"), RankedDocument("zz")])
    partial = load_audit(engine, "T", "other")
    assert partial is not None and partial.ranks == [None]


@pytest.mark.parametrize("kwargs, words", [
    ({"rate": 0.0}, "rate"), ({"rate": 1.0}, "rate"), ({"rate": float("nan")}, "rate"), ({"rate": -0.5}, "rate"),
    ({"every": 0}, "every"), ({"every": 2**31}, "every"), ({}, "every, rate"),
    ({"every": 5, "rate": 0.1}, "not both"), ({"every": 5, "seed": -1}, "seed"),
    ({"every": 5, "seed": 2**63}, "seed"), ({"every": 5, "queue": "nope"}, "queue"),
    ({"every": 5, "topic": "nope"}, "unknown topic"), ({"every": 5, "reviewer": " "}, "reviewer"),
])
def test_bad_input_is_refused_and_stores_nothing(engine: Engine, kwargs: dict[str, Any], words: str) -> None:
    setup_topic(engine)
    args: dict[str, Any] = {"reviewer": "lead", **kwargs}
    topic = args.pop("topic", "T")
    with pytest.raises((Invalid, NotFound), match=words):
        create_stream(engine, topic, **args)
    with engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(AuditStream)).scalar_one() == 0


def test_next_refuses_bad_input(engine: Engine) -> None:
    setup_topic(engine)
    create_stream(engine, "T", every=1, seed=1, reviewer="lead")
    for count in (0, 10_001, True):
        with pytest.raises(Invalid, match="count"):
            next_documents(engine, "T", count=count)
    with pytest.raises(NotFound, match="queue"):
        next_documents(engine, "T", queue="nope")
    with pytest.raises(NotFound, match="unknown topic"):
        next_documents(engine, "nope")
    assert stream_rows(engine)[0][1:3] == (0, 0)
    with pytest.raises(NotFound, match="unknown topic"):
        load_audit(engine, "nope")
    create_topic(engine, "U")
    assert load_audit(engine, "U") is None
    with pytest.raises(NotFound, match="no audit stream"):
        show_stream(engine, "U")


def test_concurrent_next_calls_never_serve_an_element_as_new_twice(engine: Engine) -> None:
    setup_topic(engine)
    create_stream(engine, "T", every=1, seed=4, reviewer="lead")
    judge(engine, DOCS[:40])  # 40 audit documents due at once
    rounds, threads = 4, 2
    new: list[tuple[str, int | None]] = []
    errors: list[BaseException] = []
    lock = threading.Lock()

    def call(barrier: threading.Barrier) -> None:
        try:
            barrier.wait()
            batch = next_documents(engine, "T", count=3)
            with lock:
                new.extend((d.doc_id, d.audit_position) for d in batch.documents if d.role == "audit" and not d.again)
        except BaseException as exc:  # reported below: a thread's failure must fail the test
            errors.append(exc)

    for _ in range(rounds):
        barrier = threading.Barrier(threads)
        workers = [threading.Thread(target=call, args=(barrier,)) for _ in range(threads)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        judge(engine, sorted({d for d, _ in new} - judged_so_far(engine)), role="audit")
    assert not errors, errors
    docs = [d for d, _ in new]
    assert len(docs) == len(set(docs)), "an audit element was served as new twice"
    [(_, position, served, _)] = stream_rows(engine)
    assert served == len(docs) and position >= served and position > 0
    positions = sorted(p for _, p in new if p is not None)
    assert positions == sorted(set(positions))


def judged_so_far(engine: Engine) -> set[str]:
    return {j.doc_id for j in list_judgments(engine, "T")}
