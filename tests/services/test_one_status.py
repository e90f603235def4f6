"""Issue 25: one status per topic whatever the door, and the reviewed set is what the team judged in any order.

The CD009579 scenario of the issue (CLEF TAR 2017, Waterloo's ranking, 1,000 reviewed in rank order, then a
400-document rest sample, then an audit stream) and SYNERGY's ADHD review screened in random order by two
reviewers, on SQLite and PostgreSQL."""

from __future__ import annotations

import csv
import gzip
import math
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy import Engine

from reviewdepth.estimation.intervals import hypergeometric_interval
from reviewdepth.services.admin.topics import create_topic, declare_screening_order, list_topics
from reviewdepth.services.answers.monitor import build_dashboard, build_monitor
from reviewdepth.services.answers.prisma import topic_prisma
from reviewdepth.services.answers.report import ReportOptions, build_report
from reviewdepth.services.files.imports import import_run
from reviewdepth.services.files.rankings import RankedDocument, store_ranking
from reviewdepth.services.review.audit_stream import create_stream, next_documents
from reviewdepth.services.review.batches import BatchItem, record_batch
from reviewdepth.services.review.samples import draw_sample, load_samples

from ..conftest import shared_data

TOPIC = "CD009579"


def _clef_topic(engine: Engine, tmp_path: Path) -> dict[str, str]:
    run = tmp_path / "cd9579.run"
    with gzip.open(shared_data("clef-tar-2017", "runs", "waterloo.A-rank-normal.gz"), "rt") as source:
        run.write_text("".join(line for line in source if line.startswith(TOPIC + " ")))
    import_run(engine, str(run))
    truth: dict[str, str] = {}
    with gzip.open(shared_data("clef-tar-2017", "qrels", "qrel_abs_test.txt.gz"), "rt") as qrels:
        for line in qrels:
            topic, _, doc, label = line.split()
            if topic == TOPIC:
                truth[doc] = label
    return truth


def _ranked(run: Path) -> list[str]:
    return [line.split()[2] for line in run.read_text().splitlines()]


def _judge(engine: Engine, topic: str, truth: dict[str, str], docs: list[str], role: str, reviewer: str) -> None:
    record_batch(engine, topic, [BatchItem(d, truth[d], role=role) for d in docs], reviewer=reviewer, source="test")


def _doors(engine: Engine, topic: str) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """The topic status as the report, the monitor (watch and GET /topics/{t}/monitor) and the dashboard give it."""
    report = build_report(engine, topic, ReportOptions(targets=["0.95"])).answer.topic_status.as_dict()
    watch = build_monitor(engine, topic, target="0.95").topic_status.as_dict()
    board = build_dashboard(engine, target="0.95", topics=[topic])
    (entry,) = board.entries
    assert entry.monitor is not None
    return report, watch, entry.monitor.topic_status.as_dict()


def test_the_cd009579_scenario_gives_one_status_at_every_door(engine: Engine, tmp_path: Path) -> None:
    truth = _clef_topic(engine, tmp_path)
    ranked = _ranked(tmp_path / "cd9579.run")
    _judge(engine, TOPIC, truth, ranked[:1000], "review", "alice")

    report, watch, dashboard = _doors(engine, TOPIC)
    assert report == watch == dashboard
    assert report["status"] == "unknown" and report["figures"] == [] and "no bound" in report["missing"][0]

    sample = draw_sample(engine, TOPIC, 400, frame="unreviewed", seed=7)
    _judge(engine, TOPIC, truth, sample.doc_ids, "sample", "bob")
    report, watch, dashboard = _doors(engine, TOPIC)
    # before issue 25 the dashboard said "no audit stream yet, so recall has no bound" and then "recall ≥ 0.024"
    assert report == watch == dashboard
    (figure,) = report["figures"]
    assert (figure["basis"], figure["validity"]) == ("elusion", "one look")
    assert figure["recall_lower"] > 0.7 and report["status"] == "not reached" and report["decided_by"] == "elusion"
    assert report["text"].startswith("95% recall: not reached (not certified: the point estimate is met")
    assert "— recall ≥ 0.778 (elusion: rest sample" in report["text"]
    # one decision: the status word once, the samples' next step (the plan's figures are not in it)
    assert report["text"].count("not reached") == 1 and report["next_step"].startswith("certify: ")
    assert "no audit stream, so no anytime-valid bound" in report["missing"]
    full = build_report(engine, TOPIC, ReportOptions(targets=["0.95"]))
    assert full.answer.status == report["status"]
    watch_report = build_monitor(engine, TOPIC, target="0.95")
    assert "start an audit stream" not in watch_report.next_step.split(";")[0]

    create_stream(engine, TOPIC, every=1, seed=3, reviewer="carol")
    for _ in range(3):
        batch = next_documents(engine, TOPIC, count=200)
        record_batch(engine, TOPIC, [BatchItem(d.doc_id, truth[d.doc_id], role=d.role) for d in batch.documents],
                     reviewer="carol", source="test")
    report, watch, dashboard = _doors(engine, TOPIC)
    assert report == watch == dashboard
    assert [f["basis"] for f in report["figures"]] == ["audit stream", "elusion"]
    assert [f["validity"] for f in report["figures"]] == ["anytime-valid", "one look"]
    assert report["decided_by"] == "audit stream"
    monitor = build_monitor(engine, TOPIC, target="0.95")
    assert report["status"] == ("reached" if monitor.certified else "not reached")
    assert report["figures"][0]["recall_lower"] == monitor.recall_lower


def _expected_reviewed(docs: list[str], in_review: set[str], sampled: set[str]) -> set[str]:
    """S recounted by document: every document judged in a review role, plus the judged prefix of the queue less
    the sample documents at its end (judged out of turn, not passed by the review)."""
    judged = in_review | sampled
    prefix = next((i for i, d in enumerate(docs) if d not in judged), len(docs))
    while prefix and docs[prefix - 1] in sampled - in_review:
        prefix -= 1
    return in_review | set(docs[:prefix])


def _synergy_adhd() -> tuple[list[str], dict[str, str]]:
    with gzip.open(shared_data("synergy", "Cohen_2006_ADHD_ids.csv.gz"), "rt") as source:
        rows = list(csv.DictReader(source))
    docs = [r["pmid"].rsplit("/", 1)[-1] for r in rows]  # the one identifier every record has, once
    return docs, {d: r["label_included"] for d, r in zip(docs, rows, strict=True)}


def test_adhd_screened_in_random_order_counts_one_reviewed_set(engine: Engine) -> None:
    docs, truth = _synergy_adhd()
    assert len(docs) == 851 and sum(v == "1" for v in truth.values()) == 20
    create_topic(engine, "ADHD")
    store_ranking(engine, "ADHD", "file-order", [RankedDocument(d) for d in docs])  # the RIS file's order
    order = np.random.default_rng(2012).permutation(len(docs))
    screened = [docs[i] for i in order[:500]]
    for reviewer in ("ana", "ben"):  # dual screening of the same 500 records, each in random order
        _judge(engine, "ADHD", truth, screened, "review", reviewer)
    included = sum(truth[d] == "1" for d in screened)

    report = build_report(engine, "ADHD", ReportOptions(targets=["0.95"]))
    prisma = topic_prisma(engine, "ADHD")
    (listed,) = list_topics(engine)
    monitor = build_monitor(engine, "ADHD", target="0.95")
    # before issue 25: PRISMA "stopped at rank 1", the report "reviewed 1", the dashboard "0 relevant found"
    assert report.summary.reviewed == prisma.reviewed == listed.reviewed == monitor.reviewed == 500
    assert (report.summary.relevant_found_in_reviewed == prisma.relevant_in_reviewed == monitor.relevant_found
            == included)
    assert listed.relevant_found_in_reviewed == included and prisma.screened == 500
    assert prisma.stopped_at_rank is None  # screening in random order stops at no rank
    # the guarantee restated for reviewed sets that grow in any order fixed without looking at the audit
    assert any("may grow in any order" in a and "fixed without looking at the audit" in a
               for a in monitor.assumptions)
    assert "reviewed out of queue order" in report.answer.review_order

    assert report.answer.basis == "judged" and report.answer.topic_status.status == "unknown"

    # declared random (never guessed): the screened set is a random sample of the queue, and the report says so
    declare_screening_order(engine, "ADHD", "random")
    declared = build_report(engine, "ADHD", ReportOptions(targets=["0.95"]))
    assert declared.answer.basis == "screened" and declared.summary.reviewed == 500
    screened_estimate = next(e.estimate for e in declared.estimates if e.estimate.method == "screened")
    low, high = hypergeometric_interval(included, 500, 851, 0.95)
    assert (screened_estimate.lower, screened_estimate.upper) == (max(low, included), high)
    assert any("uniformly random order" in a for a in screened_estimate.assumptions)
    status = declared.answer.topic_status
    assert status == build_monitor(engine, "ADHD", target="0.95").topic_status
    assert (status.decided_by, status.figures[0].validity) == ("screened", "one look")
    assert "declared screened in random order" in status.figures[0].evidence
    # how many more to screen in the same random order: k(N_u + 1)/(b + 1) for the k-th of the b relevant left
    row = next(r for r in declared.depth if r.target == 0.95)
    point = screened_estimate.point
    need = math.ceil(Fraction(95, 100) * Fraction(repr(point))) - included
    left = math.floor(point) - included
    assert row.more.documents == (0 if need <= 0 else 351 if need > left else
                                     min(351, math.ceil(need * 352 / (left + 1))))
    assert row.to_rank.depth is None and row.more.low <= row.more.documents <= row.more.high
    assert f"about {row.more.documents:,} more documents" in declared.answer.text
    declare_screening_order(engine, "ADHD", "queue")

    # a rest sample now is drawn from what is not yet screened, and speaks for it
    sample = draw_sample(engine, "ADHD", 100, frame="unreviewed", seed=5)
    assert not set(sample.doc_ids) & set(screened) and sample.frame_size == 351
    _judge(engine, "ADHD", truth, sample.doc_ids, "sample", "cleo")
    after = build_report(engine, "ADHD", ReportOptions(targets=["0.95"]))
    use = next(s for s in after.samples if s.id == sample.id)
    # undeclared, a sample document inside the judged prefix (ranks 1..k all judged) counts as passed by the
    # review, as it does for a review in rank order; declared random, only review-role judgments make S
    passed = _expected_reviewed(docs, set(screened), set(sample.doc_ids)) - set(screened)
    assert use.use == "rest" and use.in_unreviewed_rest == 100 - len(passed)
    assert after.summary.reviewed == 500 + len(passed)
    declare_screening_order(engine, "ADHD", "random")
    after = build_report(engine, "ADHD", ReportOptions(targets=["0.95"]))
    use = next(s for s in after.samples if s.id == sample.id)
    assert use.use == "rest" and use.in_unreviewed_rest == 100 and after.summary.reviewed == 500
    assert after.answer.basis == "elusion"  # a sample of the rest is the stronger evidence
    status = after.answer.topic_status
    assert status == build_monitor(engine, "ADHD", target="0.95").topic_status
    assert status.figures[0].basis == "elusion"
    assert load_samples(engine, "ADHD", sample_id=sample.id)[0].complete


def test_a_rest_sample_drawn_before_out_of_order_review_rolls_forward(engine: Engine) -> None:
    """A rest sample drawn after a prefix, then documents reviewed out of queue order: the sample's documents
    still unreviewed are a random sample of the rest on the review order (`review_order`), and the counts match
    a direct recount by document."""
    create_topic(engine, "R")
    docs = [f"d{i:03d}" for i in range(300)]
    truth = {d: str(int(i % 7 == 0 or i < 20)) for i, d in enumerate(docs)}
    store_ranking(engine, "R", "q", [RankedDocument(d) for d in docs])
    _judge(engine, "R", truth, docs[:50], "review", "ana")
    sample = draw_sample(engine, "R", 60, frame="unreviewed", seed=9)
    _judge(engine, "R", truth, sample.doc_ids, "sample", "bob")
    rng = np.random.default_rng(4)
    later = [docs[i] for i in rng.choice(np.arange(50, 300), size=80, replace=False)]
    _judge(engine, "R", truth, later, "review", "ana")
    reviewed = _expected_reviewed(docs, set(docs[:50]) | set(later), set(sample.doc_ids))
    report = build_report(engine, "R", ReportOptions(targets=["0.9"]))
    use = next(s for s in report.samples if s.id == sample.id)
    in_rest = [d for d in sample.doc_ids if d not in reviewed]
    assert report.summary.reviewed == len(reviewed)
    assert report.summary.relevant_found_in_reviewed == sum(truth[d] == "1" for d in reviewed)
    assert use.use == "rest" and use.in_unreviewed_rest == len(in_rest)
    assert use.positives_in_rest == sum(truth[d] == "1" for d in in_rest)
    # "review to rank k" is a queue rank: the (more documents)-th unreviewed document in queue order
    unreviewed = [i + 1 for i, d in enumerate(docs) if d not in reviewed]
    forward = [row for row in report.depth if row.to_rank.depth is not None and row.more.documents]
    assert forward
    for row in forward:
        assert row.to_rank.depth == unreviewed[row.more.documents - 1]
