"""The monitor service (`reviewdepth.services.answers.monitor`) on SQLite and PostgreSQL: the `MonitorInput` it
assembles
from the store is recomputed here from the known truth and the stream's permutation (reviewed set, relevant found,
audit prefix, ranks), and its figures are pinned on a small topic: certified at one target and not at another, no
stream, audit documents waiting, a re-ranking that leaves the reviewed set as it was, bad settings refused, the
dashboard's rows and the change marker of `watch`."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from sqlalchemy import Engine, select

from reviewdepth.estimation.monitor import MonitorInput, monitor, upper_missed
from reviewdepth.services.admin.topics import create_topic
from reviewdepth.services.answers.monitor import build_dashboard, build_monitor, change_marker
from reviewdepth.services.errors import Invalid, NotFound
from reviewdepth.services.files.rankings import RankedDocument, store_ranking
from reviewdepth.services.review.audit_stream import audit_doc_ids, create_stream, next_documents
from reviewdepth.services.review.batches import BatchItem, record_batch
from reviewdepth.store.models import AuditStream

SIZE = 40
DOCS = [f"d{i:02d}" for i in range(SIZE)]  # rank order on queue q: d00 is rank 1
RELEVANT = {"d00", "d01", "d02", "d04", "d07", "d24"}
SEED = 0  # its first audit documents include d20–d24, so the reviewed prefix grows to rank 25 (below)


def judge(engine: Engine, docs: list[str], role: str = "review", topic: str = "T") -> None:
    record_batch(engine, topic, [BatchItem(d, str(int(d in RELEVANT)), role=role) for d in docs], reviewer="ana",
                 source="test")


def topic_with_review(engine: Engine, reviewed: int = 20, topic: str = "T") -> None:
    create_topic(engine, topic)
    store_ranking(engine, topic, "q", [RankedDocument(d, float(-i)) for i, d in enumerate(DOCS)])
    judge(engine, DOCS[:reviewed], topic=topic)


def served_audit(engine: Engine, count: int = 12, topic: str = "T") -> list[str]:
    """Start a stream (one audit document due per reviewed document) and serve ``count`` documents: all audit."""
    create_stream(engine, topic, every=1, seed=SEED, reviewer="ana")
    batch = next_documents(engine, topic, count=count)
    assert {d.role for d in batch.documents} == {"audit"}
    return [d.doc_id for d in batch.documents]


def expected_input(engine: Engine, judged: set[str], queue_docs: list[str] = DOCS,
                   in_review_role: set[str] | None = None) -> MonitorInput:
    """The monitor's input recomputed from what the test judged: S is the longest judged prefix of q (the only
    queue reviewed), the audit evidence the permutation's prefix up to the stored position with every document
    judged; ranks on ``queue_docs``, along which the reviewed set is its judged prefix plus every document judged
    in the review role (``in_review_role``, default the first 20 of q that are judged) wherever it sits."""
    in_review_role = set(DOCS[:20]) & judged if in_review_role is None else in_review_role
    reviewed = next((i for i, d in enumerate(DOCS) if d not in judged), SIZE)
    in_s = set(DOCS[:reviewed])
    with engine.connect() as conn:
        position = conn.execute(select(AuditStream.position)).scalar_one()
    order = list(audit_doc_ids(engine, "T"))
    m = next((i for i, d in enumerate(order[:position]) if d not in judged), position)
    outside = [d for d in order[:m] if d not in in_s]
    rank = {d: i + 1 for i, d in enumerate(queue_docs)}
    cur_prefix = next((i for i, d in enumerate(queue_docs) if d not in judged), SIZE)
    cur_reviewed = cur_prefix + len(in_review_role - set(queue_docs[:cur_prefix]))
    known = RELEVANT & judged
    return MonitorInput(
        population=SIZE, reviewed=len(in_s), found=len(in_s & RELEVANT), audited=m, known_relevant=len(known),
        queue_reviewed=cur_reviewed, queue_size=SIZE,
        audit_outside_ranks=np.array([rank[d] for d in outside], dtype=np.int64),
        audit_outside_relevant=np.array([d in RELEVANT for d in outside], dtype=np.bool_),
        known_outside_relevant_ranks=np.array(sorted(rank[d] for d in known - in_s), dtype=np.int64),
        outside_ranks=np.array([rank.get(d, 0) for d in DOCS if d not in in_s], dtype=np.int64))


def assert_same(report: object, expected: MonitorInput, target: str) -> None:
    from reviewdepth.report.monitor_model import MonitorReport

    assert isinstance(report, MonitorReport)
    result = monitor(expected, target, 0.95)
    assert (report.population, report.reviewed, report.relevant_found, report.relevant_known,
            report.queue_reviewed) == (expected.population, expected.reviewed, expected.found,
                                        expected.known_relevant, expected.queue_reviewed)
    assert report.audit is not None and report.audit.judged == expected.audited
    assert report.audit.relevant_outside_reviewed == expected.missed
    assert (report.status, report.recall_lower, report.missed_upper) == (result.status, result.recall_lower,
                                                                         result.upper_missed)
    assert (report.to_go.bound, report.to_go.estimate, report.audit_needed.more) == (
        result.to_go_bound, result.to_go_estimate, result.audit_needed)


def test_certified_at_one_target_and_not_at_another(engine: Engine) -> None:
    topic_with_review(engine)
    audit = served_audit(engine)
    judge(engine, audit, "audit")
    judged = set(DOCS[:20]) | set(audit)
    expected = expected_input(engine, judged)
    # d20–d24 were audit documents: judged, they extend the reviewed prefix to rank 25, which holds all 6 relevant
    assert (expected.reviewed, expected.found, expected.audited, expected.missed) == (25, 6, 21, 0)
    low = build_monitor(engine, "T", target="0.6")
    assert_same(low, expected, "0.6")
    assert low.status == "stop certified" and low.certified and low.state == "reached"
    assert low.topic_status.decided_by == "audit stream" and low.topic_status.status == "reached"
    # U = 4 relevant outside at most: recall ≥ 6/(6 + 4)
    assert low.missed_upper == upper_missed(SIZE, 21, 0, 0.95) == 4 and low.recall_lower == pytest.approx(0.6)
    assert low.headline.startswith("STOP CERTIFIED: recall ≥ 0.600 at 95 % (anytime-valid)")
    assert low.next_step.startswith("stop")
    high = build_monitor(engine, "T", target="0.95")
    assert_same(high, expected, "0.95")
    assert high.status == "continue" and high.headline.startswith("CONTINUE: recall ≥ 0.600")
    assert high.fixed_look.label == "valid for one look only"
    assert high.one_look_rules and {r.label for r in high.one_look_rules} == {"valid for one look only"}
    assert high.audit is not None and high.audit.seed == SEED and high.audit.pending == 0
    assert high.as_of_judgment is not None and high.last_activity is not None
    assert high.judgment_chain_head.seq == 20 + len(audit)
    # as of the judgment before the audit: the 12 served documents wait; the evidence is the permutation's
    # prefix of documents reviewed already
    before = build_monitor(engine, "T", target="0.6", as_of=20)
    order = list(audit_doc_ids(engine, "T"))
    assert before.status == "continue" and before.audit is not None and before.audit.pending == 12
    assert before.audit.judged == next(i for i, d in enumerate(order) if d not in DOCS[:20])


def test_no_stream(engine: Engine) -> None:
    topic_with_review(engine, reviewed=10)
    report = build_monitor(engine, "T")
    assert report.audit is None and report.state == "unknown" and report.status == "continue"
    assert (report.population, report.reviewed, report.relevant_found, report.missed_upper) == (SIZE, 10, 5, SIZE - 10)
    # with no audit, the bound is every document still outside the reviewed set
    assert report.recall_lower == pytest.approx(5 / (5 + SIZE - 10))
    assert "reviewdepth sample stream start T --every auto" in report.next_step
    assert report.floor > 0
    assert report.headline.startswith("NO AUDIT STREAM: no audit stream and no random sample")
    assert any("no audit document is judged yet" in n for n in report.notes)


def test_audit_documents_waiting_stop_the_evidence(engine: Engine) -> None:
    topic_with_review(engine)
    audit = served_audit(engine)
    judge(engine, audit[1:], "audit")  # the first served stays unjudged
    report = build_monitor(engine, "T")
    assert report.audit is not None
    assert report.audit.pending == 1 and report.audit.pending_documents == [audit[0]]
    assert f"judge the 1 audit document served and not yet judged ({audit[0]})" in report.next_step
    expected = expected_input(engine, set(DOCS[:20]) | set(audit[1:]))
    assert report.audit.judged == expected.audited < 21
    assert_same(report, expected, "0.95")


def test_a_reranking_never_shrinks_the_reviewed_set(engine: Engine) -> None:
    topic_with_review(engine)
    audit = served_audit(engine)
    judge(engine, audit, "audit")
    before = build_monitor(engine, "T", target="0.6")
    reversed_docs = DOCS[::-1]
    store_ranking(engine, "T", "q2", [RankedDocument(d, float(-i)) for i, d in enumerate(reversed_docs)])
    after = build_monitor(engine, "T", target="0.6")  # the newest queue is now q2
    # the 20 documents reviewed along q stay reviewed on q2, wherever q2 ranks them (reviewed in any order)
    assert after.queue == "q2" and after.queue_reviewed == 20
    assert (after.reviewed, after.relevant_found, after.status) == (before.reviewed, before.relevant_found,
                                                                     "stop certified")
    assert any("2 queues" in n for n in after.notes)
    assert_same(after, expected_input(engine, set(DOCS[:20]) | set(audit), reversed_docs), "0.6")
    named = build_monitor(engine, "T", queue="q", target="0.6")
    assert (named.queue, named.queue_reviewed, named.reviewed) == ("q", 25, 25)


BAD_SETTINGS: list[tuple[dict[str, object], str]] = [
    ({"target": "abc"}, "target"), ({"target": "0"}, "target"), ({"target": "1.5"}, "target"),
    ({"confidence": 1.0}, "confidence"), ({"confidence": float("nan")}, "confidence"),
    ({"policy": "loudest"}, "policy"), ({"as_of": -1}, "as_of")]


def test_bad_settings_are_refused_naming_the_field(engine: Engine) -> None:
    topic_with_review(engine, reviewed=2)
    for settings, field in BAD_SETTINGS:
        with pytest.raises(Invalid, match=field):
            build_monitor(engine, "T", **settings)  # type: ignore[arg-type]
    with pytest.raises(NotFound, match="unknown topic"):
        build_monitor(engine, "nope")
    with pytest.raises(NotFound, match="no queue 'q9'"):
        build_monitor(engine, "T", queue="q9")


def test_dashboard_rows_and_the_change_marker(engine: Engine) -> None:
    create_topic(engine, "A-empty")
    topic_with_review(engine)
    topic_with_review(engine, reviewed=5, topic="U")
    marker = change_marker(engine, "T")
    assert change_marker(engine, "T") == marker
    audit = served_audit(engine)
    moved = change_marker(engine, "T")
    assert moved != marker  # the stream advanced
    judge(engine, audit, "audit")
    assert change_marker(engine, "T") != moved
    board = build_dashboard(engine, target="0.6")
    # the most recently judged first (T's audit judgments came after U's review), never-judged topics last
    assert [(e.topic, e.state) for e in board.entries] == [("T", "reached"), ("U", "unknown"),
                                                          ("A-empty", "no queue")]
    assert board.entries[2].last_activity is None and board.entries[0].last_activity is not None
    t = board.entries[0].monitor
    assert t is not None and t.one_look_rules == [] and t.target == "0.6"
    assert Fraction(board.target) == Fraction(3, 5)


def test_dashboard_active_topics_first_and_its_filter(engine: Engine) -> None:
    """Order: newest judgment first, then the never-judged topics by name (whatever the names); the filter by a
    part of the name (any case) and to judged topics only; pages over the filtered list."""
    for name in ("b-idle", "a-idle", "Z-idle"):  # a queue, no judgment
        create_topic(engine, name)
        store_ranking(engine, name, "q", [RankedDocument(d, float(-i)) for i, d in enumerate(DOCS)])
    topic_with_review(engine, reviewed=3, topic="y-old")
    topic_with_review(engine, reviewed=3, topic="x-new")
    create_topic(engine, "c-empty")

    def names(**kwargs: Any) -> list[str]:
        return [e.topic for e in build_dashboard(engine, **kwargs).entries]

    assert names() == ["x-new", "y-old", "Z-idle", "a-idle", "b-idle", "c-empty"]
    judge(engine, DOCS[:1], topic="b-idle")  # b-idle is now the most recently active
    assert names() == ["b-idle", "x-new", "y-old", "Z-idle", "a-idle", "c-empty"]
    assert names(name_contains="IDLE") == ["b-idle", "Z-idle", "a-idle"]
    assert names(name_contains="  z-i ") == ["Z-idle"]
    assert names(judged_only=True) == ["b-idle", "x-new", "y-old"]
    assert names(judged_only=True, name_contains="idle") == ["b-idle"]
    assert names(name_contains="nothing") == []
    board = build_dashboard(engine, name_contains="idle", page=2, limit=2)
    assert [e.topic for e in board.entries] == ["a-idle"] and board.total == 3 and not board.has_next
    assert board.name_contains == "idle" and not board.judged_only
    assert names(topics=["a-idle", "x-new"], judged_only=True) == ["x-new"]
    last = {e.topic: e.last_activity for e in build_dashboard(engine).entries}
    assert last["b-idle"] is not None and last["b-idle"] >= str(last["x-new"]) and last["c-empty"] is None
    with pytest.raises(Invalid, match="q: "):
        build_dashboard(engine, name_contains="x" * 201)
    with pytest.raises(Invalid, match=r"q: .*control"):
        build_dashboard(engine, name_contains="a\x00")


def _inputs(engine: Engine, monkeypatch: pytest.MonkeyPatch, by_rank: bool, **settings: object) -> tuple[Any, ...]:
    """The MonitorInput build_monitor hands the estimator, and its report, with the one-queue path (by rank) on
    or off."""
    from reviewdepth.services.answers import monitor as service
    seen: list[MonitorInput] = []

    def recorded(inp: MonitorInput, *args: object) -> object:
        seen.append(inp)
        return monitor(inp, *args)  # type: ignore[arg-type]

    with monkeypatch.context() as patch:
        patch.setattr(service, "monitor", recorded)
        if by_rank:
            def no_documents(*_args: object, **_kwargs: object) -> None:
                raise AssertionError("the one-queue monitor read the queue's documents")

            patch.setattr(service, "_docs", no_documents)
        else:
            patch.setattr(service, "_one_queue", lambda *_args: False)
        report = build_monitor(engine, "T", **settings)  # type: ignore[arg-type]
    (inp,) = seen
    fields = {name: getattr(inp, name) for name in inp.__dataclass_fields__}
    return tuple((k, v.tolist() if isinstance(v, np.ndarray) else v) for k, v in fields.items()), report.to_dict()


@pytest.mark.parametrize("stream", [True, False])
def test_a_one_queue_topic_is_monitored_by_rank_as_by_document(engine: Engine, monkeypatch: pytest.MonkeyPatch,
                                                                 stream: bool) -> None:
    """Issue 26: with one queue (and the stream, if any, over it) the monitor takes its sets from the queue's
    labels by rank, never reading the queue's documents; the figures are those of the general path."""
    topic_with_review(engine, reviewed=20)
    judge(engine, ["d30", "d24"])  # judged beyond the reviewed prefix; d24 relevant
    record_batch(engine, "T", [BatchItem("elsewhere", "1"), BatchItem("d03", "1"), BatchItem("d03", "0")],
                 reviewer="bob", source="test", allow_unqueued=True)  # outside the queue; a disagreement
    if stream:
        judge(engine, served_audit(engine), role="audit")
    last = record_batch(engine, "T", [BatchItem("d20", "1")], reviewer="ana", source="test").ids[0]
    for settings in ({}, {"target": "0.6"}, {"as_of": last - 1}, {"policy": "majority"},
                     {"policy": "any_relevant"}):
        by_rank = _inputs(engine, monkeypatch, True, **settings)
        assert by_rank == _inputs(engine, monkeypatch, False, **settings)
