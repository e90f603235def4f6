"""The documents reviewed out of queue order are found the same way whether their few labelled ranks are looked
up one by one or the queue's entries after the prefix are scanned (`queue_evidence._reviewed_beyond`)."""

from __future__ import annotations

import csv
import gzip

import numpy as np
import pytest
from sqlalchemy import Engine

from reviewdepth.services.admin.topics import create_topic
from reviewdepth.services.answers.report import ReportOptions, build_report
from reviewdepth.services.evidence import queue_evidence
from reviewdepth.services.files.rankings import RankedDocument, store_ranking
from reviewdepth.services.review.judgments import record_judgments
from reviewdepth.services.review.samples import draw_sample

from ..conftest import shared_data


def test_lookup_and_scan_find_the_same_reviewed_set(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    with gzip.open(shared_data("synergy", "Cohen_2006_ADHD_ids.csv.gz"), "rt") as source:
        rows = list(csv.DictReader(source))
    docs = [r["pmid"].rsplit("/", 1)[-1] for r in rows]
    truth = {d: r["label_included"] for d, r in zip(docs, rows, strict=True)}
    create_topic(engine, "ADHD")
    store_ranking(engine, "ADHD", "file-order", [RankedDocument(d) for d in docs])
    order = np.random.default_rng(3).permutation(len(docs))
    record_judgments(engine, "ADHD", [(docs[i], truth[docs[i]]) for i in order[:40]], reviewer="ana")
    record_judgments(engine, "ADHD", [(d, truth[d]) for d in docs[:120]], reviewer="ana")  # a judged prefix
    sample = draw_sample(engine, "ADHD", 60, frame="unreviewed", seed=9)
    record_judgments(engine, "ADHD", [(d, truth[d]) for d in sample.doc_ids], reviewer="cleo", role="sample")
    looked_up = build_report(engine, "ADHD", ReportOptions(targets=["0.95"]))
    monkeypatch.setattr(queue_evidence, "CANDIDATES_LOOKED_UP", 0)
    scanned = build_report(engine, "ADHD", ReportOptions(targets=["0.95"]))
    assert looked_up.to_json() == scanned.to_json()
    beyond = {docs[i] for i in order[:40]} - set(docs[:120])
    assert beyond and looked_up.summary.reviewed == 120 + len(beyond)  # each out-of-order review counts
