"""The Quant and QuantCI rows of the depth report (issue 28, item 3): shown only when the queue's scores are
declared probabilities of relevance, read from the stored queue in queue order, labelled heuristic, and "not
applicable" (saying why) when a document has no score or a score outside [0, 1]."""

from __future__ import annotations

import numpy as np
from sqlalchemy import Engine

from reviewdepth.estimation.stopping import QUANT_CI_M, quant_rule
from reviewdepth.services.admin.topics import create_topic
from reviewdepth.services.answers.report import ReportOptions, build_report
from reviewdepth.services.files.rankings import RankedDocument, store_ranking
from reviewdepth.services.review.batches import BatchItem, record_batch

SIZE, REVIEWED = 200, 120


def _topic(engine: Engine, name: str, scores: list[float | None]) -> None:
    docs = [f"{name}-{i:03d}" for i in range(SIZE)]
    create_topic(engine, name)
    store_ranking(engine, name, "q", [RankedDocument(d, s) for d, s in zip(docs, scores, strict=True)])
    record_batch(engine, name, [BatchItem(d, str(int(i % 4 == 0 and i < 100))) for i, d in enumerate(docs[:REVIEWED])],
                 reviewer="ana", source="test")


def _rows(engine: Engine, name: str, declared: bool) -> dict[str, dict[str, object]]:
    report = build_report(engine, name, ReportOptions(targets=["0.8"], scores_are_probabilities=declared)).to_dict()
    assert report["settings"]["scores_are_probabilities"] is declared  # the report states what it was told
    return {row["rule"]: row for row in report["stopping"] if str(row["rule"]).startswith("quant")}


def test_quant_rows_read_the_stored_scores_when_declared_probabilities(engine: Engine) -> None:
    p = np.linspace(0.9, 0.01, SIZE)
    _topic(engine, "P", p.tolist())
    assert _rows(engine, "P", declared=False) == {}  # not declared: not shown
    rows = _rows(engine, "P", declared=True)
    assert set(rows) == {"quant", "quant-ci"}
    for name, m in (("quant", 0.0), ("quant-ci", QUANT_CI_M)):
        expected = quant_rule(p, REVIEWED, tau=0.8, m=m)
        assert rows[name]["kind"] == "heuristic"
        assert rows[name]["stop_now"] == expected.stop_now and rows[name]["stop_depth"] == expected.stop_depth


def test_quant_is_not_applicable_without_a_score_for_every_document(engine: Engine) -> None:
    scores: list[float | None] = list(np.linspace(0.9, 0.01, SIZE))
    scores[150] = None
    _topic(engine, "M", scores)
    _topic(engine, "S", list(np.linspace(12.0, -3.0, SIZE)))  # a ranker's scores, not probabilities
    for name, why in (("M", "no score"), ("S", "not probabilities")):
        rows = _rows(engine, name, declared=True)
        assert set(rows) == {"quant", "quant-ci"}
        for row in rows.values():
            assert row["stop_now"] is None and "not applicable" in str(row["reason"]) and why in str(row["reason"])
