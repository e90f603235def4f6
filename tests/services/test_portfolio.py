"""The portfolio (issue 17, item 3) on SQLite and PostgreSQL: add, list, remove; a topic that is not fully judged
is refused by name with nothing stored; a calibration stores per rule exactly what the replay engine gives when
called directly on the same rankings; the depth report shows it beside the heuristic rows only when a calibration
for the report's target exists, and is otherwise unchanged."""

from __future__ import annotations

import json
import math
from fractions import Fraction

import numpy as np
import pytest
from sqlalchemy import Engine, func, select

from reviewdepth.estimation.replay import Design, ReplayPlan, replay, summarise
from reviewdepth.estimation.rules import EVALUATED
from reviewdepth.services.admin.topics import create_topic
from reviewdepth.services.answers.report import ReportOptions, build_report
from reviewdepth.services.errors import Invalid, NotFound
from reviewdepth.services.files.rankings import RankedDocument, store_ranking
from reviewdepth.services.review.batches import BatchItem, record_batch
from reviewdepth.services.simulation.portfolio import (
    CalibrationInterrupted,
    add_topics,
    calibrate,
    calibrated_rules,
    latest_calibration,
    list_portfolio,
    remove_topics,
)
from reviewdepth.services.simulation.simulate import topic_key
from reviewdepth.store.models import Calibration, PortfolioTopic


def relevant_ranks(name: str) -> tuple[int, set[int]]:
    """Rankings chosen so that the rules differ: A has a sharp knee and 3 late relevant documents (the knee stops
    short of 95 %), B a sharp knee and nothing late (the knee stops in time), C relevant documents spread evenly
    (no knee; the budget rule stops at 3/4 of the queue)."""
    return {"A": (800, set(range(40)) | {600, 700, 750}),
            "B": (800, set(range(0, 60, 2))),
            "C": (600, set(range(0, 600, 20)))}[name]


def labels_of(name: str) -> np.ndarray:
    size, ranks = relevant_ranks(name)
    labels = np.zeros(size, dtype=np.int8)
    labels[sorted(ranks)] = 1
    return labels


def make_topic(engine: Engine, name: str, *, judged: int | None = None) -> None:
    size, ranks = relevant_ranks(name)
    docs = [f"{name}-{i:04d}" for i in range(size)]
    create_topic(engine, name)
    store_ranking(engine, name, "q", [RankedDocument(d, float(-i)) for i, d in enumerate(docs)])
    upto = size if judged is None else judged
    record_batch(engine, name, [BatchItem(d, str(int(i in ranks))) for i, d in enumerate(docs[:upto])],
                 reviewer="ana", source="test")


def portfolio_rows(engine: Engine) -> int:
    with engine.connect() as conn:
        return int(conn.execute(select(func.count()).select_from(PortfolioTopic)).scalar_one())


def test_add_list_remove(engine: Engine) -> None:
    make_topic(engine, "A")
    make_topic(engine, "B")
    added = add_topics(engine, ["B", "A", "B"], reviewer="ana")
    assert [e.topic for e in added] == ["A", "B"] and {e.added_by for e in added} == {"ana"}
    again = add_topics(engine, ["A"], reviewer="bo")  # already there: kept as it was
    assert again[0].added_by == "ana" and again[0].added_at == added[0].added_at
    assert [e.topic for e in list_portfolio(engine)] == ["A", "B"]
    assert remove_topics(engine, ["A"]) == ["A"]
    assert [e.topic for e in list_portfolio(engine)] == ["B"]
    with pytest.raises(NotFound, match="not in the portfolio: A"):
        remove_topics(engine, ["B", "A"])
    assert [e.topic for e in list_portfolio(engine)] == ["B"]  # nothing removed
    with pytest.raises(NotFound, match="unknown topic: nope"):
        add_topics(engine, ["nope"], reviewer="ana")


def test_a_topic_not_fully_judged_is_refused_by_name(engine: Engine) -> None:
    make_topic(engine, "A")
    size, _ = relevant_ranks("B")
    make_topic(engine, "B", judged=size - 5)
    create_topic(engine, "empty")
    with pytest.raises(Invalid) as refused:
        add_topics(engine, ["A", "B", "empty"], reviewer="ana")
    message = str(refused.value)
    assert "B (5 of 800 documents of queue 'q' unjudged)" in message and "empty (no queue)" in message
    assert "A (" not in message
    assert portfolio_rows(engine) == 0  # A, fully judged, was not added either


def test_calibration_equals_the_engine_called_directly(engine: Engine) -> None:
    for name in "ABC":
        make_topic(engine, name)
    add_topics(engine, list("ABC"), reviewer="ana")
    record = calibrate(engine, replicates=2, seed=5, look_every=25, reviewer="ana")
    assert record.target == "0.95" and record.topic_count == 3 and latest_calibration(engine) == record
    assert [r["rule"] for r in record.rules] == list(calibrated_rules("none"))
    assert calibrated_rules("none")[:2] == ("knee", "budget")
    assert "safe" in calibrated_rules("none") and "safe" not in calibrated_rules("audit")
    assert {r["rule"]: r["kind"] for r in record.rules}["safe"] == "heuristic"

    plan = ReplayPlan(Design("none"), calibrated_rules("none"), Fraction(95, 100), 0.95, 25, 2, 5)
    direct = {s.rule: s for s in summarise([replay(labels_of(n), plan, topic_key(n)) for n in "ABC"], 0.95)}
    for stored in record.rules:
        expected = direct[stored["rule"]]
        for key in ("topics", "runs", "stops", "failures", "never_stopped"):
            assert stored[key] == getattr(expected, key), (stored["rule"], key)
        for key in ("failure_rate", "failure_low", "failure_high", "reviewed_ratio_median", "total_ratio_median"):
            value, want = stored[key], getattr(expected, key)
            assert (value is None and math.isnan(want)) or value == want, (stored["rule"], key)
        assert stored["recall_at_stop"] == expected.recall_quantiles
    # the knee stops short of 95 % on A only (40 of 43 relevant found; 41 needed), in both replicates
    knee = record.rule("knee")
    assert knee is not None and knee["failures"] == 2 and knee["stops"] == 4
    assert "stopped below 95 % recall in 2 of 6 replays of 3 past reviews" in knee["text"]
    with engine.connect() as conn:
        summary, topic_count = conn.execute(select(Calibration.summary, Calibration.topic_count)).one()
    assert json.loads(summary) == record.rules and topic_count == 3


def test_calibrate_needs_a_portfolio_and_a_good_plan(engine: Engine) -> None:
    make_topic(engine, "A")
    with pytest.raises(Invalid, match="portfolio is empty"):
        calibrate(engine, replicates=1)
    add_topics(engine, ["A"], reviewer="ana")
    for bad in ({"target": "1.5"}, {"confidence": 1.0}, {"replicates": 0}, {"design": "nope"}):
        with pytest.raises(Invalid):
            calibrate(engine, **bad)  # type: ignore[arg-type]

    def interrupt(done: int, total: int) -> None:
        raise KeyboardInterrupt

    with pytest.raises(CalibrationInterrupted):  # Ctrl-C during the replays: nothing is stored
        calibrate(engine, replicates=1, progress=interrupt)
    with engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(Calibration)).scalar_one() == 0


def without_calibration(report_json: dict[str, object]) -> dict[str, object]:
    rows = [{k: v for k, v in row.items() if k != "calibration"} for row in report_json["stopping"]]  # type: ignore
    return {**report_json, "stopping": rows}


def test_the_report_shows_the_calibration_beside_heuristic_rows_only_when_one_exists(engine: Engine) -> None:
    for name in "ABC":
        make_topic(engine, name)
    add_topics(engine, list("ABC"), reviewer="ana")
    size, ranks = 500, set(range(0, 100, 3))
    docs = [f"L-{i:04d}" for i in range(size)]
    create_topic(engine, "L")
    store_ranking(engine, "L", "q", [RankedDocument(d, float(-i)) for i, d in enumerate(docs)])
    record_batch(engine, "L", [BatchItem(d, str(int(i in ranks))) for i, d in enumerate(docs[:200])],
                 reviewer="ana", source="test")

    before = build_report(engine, "L", ReportOptions()).to_dict()
    assert all("calibration" not in row for row in before["stopping"])
    calibrate(engine, target="0.9", replicates=1, look_every=25)  # another target: the report is unchanged
    assert build_report(engine, "L", ReportOptions()).to_json() == build_report(engine, "L", ReportOptions()).to_json()
    assert build_report(engine, "L", ReportOptions()).to_dict() == before

    record = calibrate(engine, replicates=1, look_every=25)
    after = build_report(engine, "L", ReportOptions()).to_dict()
    assert without_calibration(after) == before
    shown = {row["rule"]: row["calibration"] for row in after["stopping"] if "calibration" in row}
    kinds = {row["rule"]: row["kind"] for row in after["stopping"]}
    # every calibrated rule the report has a row for (threshold variants such as consecutive-irrelevant-50 are
    # calibrated but have no row of their own)
    assert set(shown) == set(calibrated_rules("none")) & {r.name for r in EVALUATED} >= {"knee", "budget"}
    assert {kinds[r] for r in shown} == {"heuristic"}
    assert shown["knee"]["id"] == record.id and shown["knee"]["topics"] == 3
    assert shown["knee"]["failures"] == 1 and shown["knee"]["stops"] == 2
    assert shown["knee"]["text"].startswith("stopped below 95 % recall in 1 of 3 past reviews (2 stops: failure 50.0 %")
    assert shown["knee"]["text"].endswith("on 3 topics")
