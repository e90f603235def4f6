"""A whole-queue sample plan when relevant documents were judged outside the queue: R (known, topic-wide) exceeds
the queue's size, and the queue's prevalence is still a proportion (schemathesis found a 500 here)."""

from __future__ import annotations

from sqlalchemy import Engine

from reviewdepth.services.admin.topics import create_topic
from reviewdepth.services.answers.sample_plan import plan_sample
from reviewdepth.services.files.rankings import RankedDocument, store_ranking
from reviewdepth.services.review.judgments import record_judgments


def test_population_plan_with_relevant_documents_outside_the_queue(engine: Engine) -> None:
    create_topic(engine, "T")
    store_ranking(engine, "T", "q", [RankedDocument("x")])
    record_judgments(engine, "T", [("x", "1")], reviewer="ana")
    record_judgments(engine, "T", [("o1", "1"), ("o2", "1")], reviewer="ana", allow_unqueued=True)
    plan = plan_sample(engine, "T", queue="q", frame="all")
    assert 0.0 <= plan["prevalence"] <= 1.0 and 0.0 <= plan["recall_estimate"] <= 1.0
