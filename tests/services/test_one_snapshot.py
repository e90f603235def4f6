"""A use case reads in one snapshot: a report computed while another connection records judgments describes one
state of the store, on SQLite and PostgreSQL; and the one reviewed set is the one every door counts."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from sqlalchemy import Engine

from reviewdepth.services.admin.topics import create_topic, list_topics
from reviewdepth.services.answers.monitor import build_monitor
from reviewdepth.services.answers.prisma import topic_prisma
from reviewdepth.services.answers.report import ReportOptions, build_report
from reviewdepth.services.evidence import queue_state as state_loader
from reviewdepth.services.files.rankings import RankedDocument, store_ranking
from reviewdepth.services.review.batches import BatchItem, record_batch
from reviewdepth.services.review.samples import draw_sample

DOCS = [f"d{i:03d}" for i in range(300)]
TRUTH = {d: str(int(i % 7 == 0 or i < 20)) for i, d in enumerate(DOCS)}


def _judge(engine: Engine, docs: list[str], role: str = "review", reviewer: str = "ana") -> None:
    record_batch(engine, "R", [BatchItem(d, TRUTH[d], role=role) for d in docs], reviewer=reviewer, source="test")


def _topic(engine: Engine) -> None:
    create_topic(engine, "R")
    store_ranking(engine, "R", "q", [RankedDocument(d) for d in DOCS])


def test_a_report_read_while_judgments_are_recorded_describes_one_state(
        engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    _topic(engine)
    _judge(engine, DOCS[:120])
    loaded = state_loader.queue_evidence
    written: list[int] = []

    def between_two_reads(*args: Any, **kwargs: Any) -> Any:
        # the report has read the topic, its last judgment id and the labels; another connection now commits a
        # batch, before the report reads the samples, the votes, the PRISMA counts and the chain head
        if not written:
            _judge(engine, DOCS[120:200], reviewer="ben")
            written.append(len(DOCS[120:200]))
        return loaded(*args, **kwargs)

    monkeypatch.setattr(state_loader, "queue_evidence", between_two_reads)
    during = build_report(engine, "R", ReportOptions(targets=["0.9"])).to_dict()
    monkeypatch.undo()
    assert written, "the batch was not committed between two of the report's reads"

    as_of = during["answer"]["as_of_judgment"]
    summary, prisma, head = during["summary"], during["prisma"], during["provenance"]["judgment_chain_head"]
    relevant = sum(TRUTH[d] == "1" for d in DOCS[:120])
    # every section describes the 120 judgments the report's first read saw, none of the 80 committed after it
    assert summary["judged"] == summary["reviewed"] == prisma["screened"] == prisma["reviewed"] == 120
    assert summary["relevant_found"] == prisma["included"] == prisma["relevant_in_reviewed"] == relevant
    assert head["seq"] == 120, "the chain head describes a later state than the as-of judgment"
    # and the report equals the one computed afterwards as of that judgment
    assert build_report(engine, "R", ReportOptions(targets=["0.9"], as_of=as_of)).to_dict() == during
    # the batch is there for the next report
    assert build_report(engine, "R", ReportOptions(targets=["0.9"])).summary.judged == 200


def test_every_door_counts_one_reviewed_set_with_out_of_order_review(engine: Engine) -> None:
    """The judged prefix, a rest sample judged out of turn, then review judgments out of queue order: the report,
    PRISMA, the monitor and the topic list count the same reviewed set S."""
    _topic(engine)
    _judge(engine, DOCS[:50])
    sample = draw_sample(engine, "R", 60, frame="unreviewed", seed=9)
    _judge(engine, sample.doc_ids, role="sample", reviewer="bob")
    later = [DOCS[i] for i in np.random.default_rng(4).choice(np.arange(50, 300), size=80, replace=False)]
    _judge(engine, later)

    report = build_report(engine, "R", ReportOptions(targets=["0.9"]))
    prisma = topic_prisma(engine, "R")
    monitor = build_monitor(engine, "R", target="0.9")
    (listed,) = list_topics(engine)
    assert report.answer.review_order is not None  # S is not a prefix of the queue
    reviewed, found = report.summary.reviewed, report.summary.relevant_found_in_reviewed
    assert reviewed >= 50 + len(set(later))
    assert prisma.reviewed == monitor.reviewed == listed.reviewed == reviewed
    assert prisma.relevant_in_reviewed == monitor.relevant_found == listed.relevant_found_in_reviewed == found
    assert report.prisma.reviewed == prisma.reviewed and prisma.stopped_at_rank is None
