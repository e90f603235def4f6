"""Votes and voters per document: the packed count (SQLite and PostgreSQL) equals the grouped SQL count and a count in
Python."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np
from sqlalchemy import Engine, delete

from reviewdepth.services.review.batches import BatchItem, record_batch
from reviewdepth.services.review.judgments import record_judgment, topic_id_of
from reviewdepth.store import votes
from reviewdepth.store.models import Judgment


def expected_counts(log: list[tuple[int, str, str, str, str]], as_of: int | None) -> dict[int, int]:
    voters: dict[str, set[str]] = defaultdict(set)
    for jid, doc, reviewer, label, role in log:
        if (as_of is None or jid <= as_of) and label != "-1" and role != "adjudication":
            voters[doc].add(reviewer)
    sizes: dict[int, int] = defaultdict(int)
    for names in voters.values():
        sizes[len(names)] += 1
    return dict(sizes)


def test_voters_per_document_three_ways(engine: Engine) -> None:
    record_judgment(engine, "T", "seed", "1", reviewer="x", create_topic=True, allow_unqueued=True)
    rng = np.random.default_rng(3)
    log: list[tuple[int, str, str, str, str]] = [(1, "seed", "x", "1", "review")]
    for reviewer in ("ann", "bob", "cy", "dee"):
        docs = rng.choice(300, size=120, replace=False)
        labels = rng.choice(["1", "0", "-1"], size=120, p=[0.3, 0.6, 0.1])
        roles = rng.choice(["review", "qc", "adjudication"], size=120, p=[0.8, 0.1, 0.1])
        items = [BatchItem(f"doc {d}" if reviewer == "dee" and d % 50 == 0 else f"d{d}", str(lab), role=str(r))
                 for d, lab, r in zip(docs, labels, roles, strict=True)]
        ids = record_batch(engine, "T", items, reviewer=reviewer, allow_unqueued=True).ids
        log += [(i, it.doc_id, reviewer, it.label, it.role) for i, it in zip(ids, items, strict=True)]
    topic_id = topic_id_of(engine, "T")
    cut = log[len(log) // 2][0]
    with engine.connect() as conn:
        for as_of in (None, cut):
            want = expected_counts(log, as_of)
            assert votes.reviewers_per_document(conn, topic_id, as_of) == want
            if as_of is None:
                # a doc id with a space (only dee's, recorded last) forces the SQL path
                assert votes._packed_voter_counts(conn, topic_id, as_of) is None
    with engine.connect() as conn:
        plain = [row for row in log if " " not in row[1]]
        conn.execute(delete(Judgment).where(Judgment.doc_id.like("doc %")))
        for as_of in (None, cut):
            want = expected_counts(plain, as_of)
            assert votes.reviewers_per_document(conn, topic_id, as_of) == want
            # on both databases: PostgreSQL counted in SQL only before (0.8 s for 246,000 votes)
            assert votes._packed_voter_counts(conn, topic_id, as_of) == want
        conn.rollback()


def test_distinct_reviewers_counted_by_table_and_by_sort_alike() -> None:
    rng = np.random.default_rng(11)
    for reviewers, documents, count in ((2, 50, 400), (3, 1_000, 200), (400, 300, 500), (1, 10, 10)):
        doc_codes = rng.integers(0, documents, size=count).astype(np.int64)
        reviewer_codes = rng.integers(0, reviewers, size=count).astype(np.int64)
        seen: dict[int, set[int]] = defaultdict(set)
        for d, r in zip(doc_codes.tolist(), reviewer_codes.tolist(), strict=True):
            seen[d].add(r)
        want = [len(seen[d]) for d in range(documents)]
        got = votes._distinct_reviewers_per_document(doc_codes, documents, reviewer_codes, reviewers)
        assert got.tolist() == want


def _plan_nodes(plan: dict[str, object]) -> list[dict[str, object]]:
    children = plan.get("Plans", [])
    assert isinstance(children, list)
    return [plan, *(node for child in children for node in _plan_nodes(child))]


def test_documents_with_several_voters_are_read_in_one_pass_on_fresh_statistics(engine: Engine) -> None:
    """`load_votes` with ``min_reviewers=2`` keeps exactly the documents two reviewers took a position on (against a
    filter in Python of every document's votes), now and as of a cut. On PostgreSQL, with the judgments written in
    small transactions (no ANALYZE yet, so the planner guesses one row), no step of any query it sends runs more
    than once: as a join with the grouped subquery, the grouping ran once per judgment (18 s at 5,900 judgments)."""
    from sqlalchemy import event

    record_judgment(engine, "T", "seed", "1", reviewer="x", create_topic=True, allow_unqueued=True)
    rng = np.random.default_rng(11)
    for reviewer in ("ann", "bob"):
        docs = rng.choice(1500, size=1200, replace=False)
        labels = rng.choice(["1", "0", "maybe"], size=1200, p=[0.2, 0.7, 0.1])
        for start in range(0, 1200, 400):  # below the bulk-load ANALYZE threshold each time
            record_batch(engine, "T", [BatchItem(f"d{d}", str(lab)) for d, lab in
                                       zip(docs[start:start + 400], labels[start:start + 400], strict=True)],
                         reviewer=reviewer, allow_unqueued=True)
    topic_id = topic_id_of(engine, "T")
    sent: list[tuple[str, Any]] = []

    def keep(conn: object, cursor: object, statement: str, parameters: Any, context: object,
             executemany: bool) -> None:
        if "judgments" in statement:
            sent.append((statement, parameters))

    with engine.connect() as conn:
        for as_of in (None, 1500):
            every = votes.load_votes(conn, topic_id, as_of)
            want = [(d.doc_id, d.stage, [v.reviewer for v in d.votes], [m.reviewer for m in d.maybes])
                    for d in every if len(d.votes) + len(d.maybes) >= 2]
            assert len(want) > 100
            event.listen(engine, "before_cursor_execute", keep)
            try:
                got = votes.load_votes(conn, topic_id, as_of, min_reviewers=2)
            finally:
                event.remove(engine, "before_cursor_execute", keep)
            assert [(d.doc_id, d.stage, [v.reviewer for v in d.votes], [m.reviewer for m in d.maybes])
                    for d in got] == want
        if engine.dialect.name != "postgresql":
            return
        assert sent
        for statement, parameters in sent:
            plan = conn.exec_driver_sql("EXPLAIN (ANALYZE, FORMAT JSON) " + statement, parameters).scalar_one()
            loops = {str(node["Node Type"]): int(node["Actual Loops"])  # type: ignore[call-overload]
                     for node in _plan_nodes(plan[0]["Plan"])}
            assert max(loops.values()) <= 1, (statement, loops)
