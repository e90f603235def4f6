"""What the store holds, on SQLite and PostgreSQL: the topic rows (`reviewdepth.services.admin.topics`: queues, the
newest queue's size, its reviewed prefix as the report counts it and the relevant documents in it, judgments
logged, last activity) and a topic's queues (`reviewdepth.services.answers.queues.list_queues`)."""

from __future__ import annotations

import pytest
from sqlalchemy import Engine, func, select

from reviewdepth.services.admin.topics import create_topic, get_topic, list_topics
from reviewdepth.services.answers.queues import list_queues
from reviewdepth.services.answers.report import ReportOptions, build_report
from reviewdepth.services.errors import NotFound
from reviewdepth.services.files.rankings import RankedDocument, store_ranking
from reviewdepth.services.review.batches import BatchItem, record_batch
from reviewdepth.services.review.sample_void import void_sample
from reviewdepth.services.review.samples import draw_sample
from reviewdepth.store.ingest import as_utc
from reviewdepth.store.models import Judgment

DOCS = [f"d{i:02d}" for i in range(30)]
RELEVANT = {"d00", "d03", "d12", "d29"}


def judge(engine: Engine, docs: list[str], role: str = "review") -> None:
    record_batch(engine, "T", [BatchItem(d, str(int(d in RELEVANT)), role=role) for d in docs], reviewer="ana",
                 source="test")


def reviewed_topic(engine: Engine) -> int:
    """Topic T: an old queue and a newer one (q2, the reversed ranking's top 10 reviewed after the same top 10 of
    q1), a sample of the unreviewed rest of q2 whose first document, just past the reviewed prefix, is judged as
    a sample document: the prefix the report counts stays at 10 (the plain judged prefix is 11). The sample's
    id."""
    create_topic(engine, "T", population_size=100)
    store_ranking(engine, "T", "q1", [RankedDocument(d) for d in DOCS])
    judge(engine, DOCS[:5])
    store_ranking(engine, "T", "q2", [RankedDocument(d) for d in DOCS[:10] + DOCS[:9:-1]])
    judge(engine, DOCS[5:10])
    sample = draw_sample(engine, "T", 20, frame="unreviewed", queue="q2", seed=1)
    judge(engine, [DOCS[-1]], role="sample")  # rank 11 of q2, in the sample
    return sample.id


def test_topic_rows(engine: Engine) -> None:
    assert list_topics(engine) == []
    create_topic(engine, "A")
    sample_id = reviewed_topic(engine)
    a, t = list_topics(engine)
    assert (a.name, a.queues, a.judgments, a.newest_queue, a.queue_size, a.reviewed, a.relevant_found_in_reviewed,
            a.last_activity) == ("A", [], 0, None, None, None, None, None)
    assert (t.name, t.population_size, t.queues, t.newest_queue, t.queue_size) == ("T", 100, ["q1", "q2"], "q2", 30)
    summary = build_report(engine, "T", ReportOptions(queue="q2")).summary
    assert (t.reviewed, t.relevant_found_in_reviewed) == (summary.reviewed, summary.relevant_found_in_reviewed)
    assert (t.reviewed, t.relevant_found_in_reviewed, t.judgments) == (10, 2, 11)  # not the relevant sample d29
    with engine.connect() as conn:
        newest = conn.execute(select(Judgment.recorded_at).order_by(Judgment.id.desc()).limit(1)).scalar_one()
    assert t.last_activity is not None and as_utc(t.last_activity) == as_utc(newest)
    assert get_topic(engine, "T") == t and [r.name for r in list_topics(engine, offset=1, limit=5)] == ["T"]
    row = t.as_dict()
    assert row["last_activity"] == as_utc(newest).isoformat() and row["queues"] == ["q1", "q2"]

    # voiding the sample is activity, not a judgment of a document
    void_sample(engine, "T", sample_id, reason="drawn by mistake", reviewer="ana")
    after = get_topic(engine, "T")
    with engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(Judgment)).scalar_one() == 12
    assert after.judgments == 11 and after.last_activity is not None and after.last_activity > newest
    assert after.reviewed == build_report(engine, "T", ReportOptions(queue="q2")).summary.reviewed
    with pytest.raises(NotFound, match="unknown topic 'nope'"):
        get_topic(engine, "nope")


def test_queue_rows(engine: Engine) -> None:
    reviewed_topic(engine)
    rows = list_queues(engine, "T")
    assert [(q.name, q.size, q.ordering, q.source, q.newest) for q in rows] == [
        ("q1", 30, "given", "api", False), ("q2", 30, "given", "api", True)]
    assert rows[0].as_dict()["created_at"] == as_utc(rows[0].created_at).isoformat()
    create_topic(engine, "empty")
    assert list_queues(engine, "empty") == []
    with pytest.raises(NotFound, match="unknown topic 'nope'"):
        list_queues(engine, "nope")
