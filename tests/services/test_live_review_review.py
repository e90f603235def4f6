"""Second-pair-of-eyes findings on issue 11 (the live-review depth answer): each test reproduces one way the report
misled before it was fixed; each now guards its fix."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sqlalchemy import Engine

from reviewdepth.services.admin.topics import create_topic
from reviewdepth.services.answers.report import ReportOptions, build_report
from reviewdepth.services.files.imports import import_run
from reviewdepth.services.review.judgments import record_judgments
from reviewdepth.services.review.samples import draw_sample


def make_topic(engine: Engine, tmp_path: Path, size: int, topic: str = "T", seed: int = 5,
               population: int | None = None, relevant_until: int | None = None) -> dict[str, int]:
    """A queue whose relevant documents thin out with rank (none after ``relevant_until``); returns doc -> 0/1."""
    rng = np.random.default_rng(seed)
    prob = 0.4 * np.exp(-np.arange(size) / 400) + 0.004
    if relevant_until is not None:
        prob[relevant_until:] = 0.0
    truth = {f"d{i}": int(rng.random() < prob[i]) for i in range(size)}
    if population is not None:
        create_topic(engine, topic, population_size=population)
    run = tmp_path / f"{topic}.run"
    run.write_text("".join(f"{topic} Q0 d{i} {i + 1} {size - i} sys\n" for i in range(size)))
    import_run(engine, str(run))
    return truth


def judge(engine: Engine, labels: dict[str, int], docs: list[str], role: str = "review", topic: str = "T",
          allow_unqueued: bool = False) -> None:
    record_judgments(engine, topic, [(d, str(labels[d])) for d in docs], reviewer="r", role=role,
                     allow_unqueued=allow_unqueued)


def report(engine: Engine, topic: str = "T", **options: Any) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(build_report(engine, topic, ReportOptions(**options)).to_json())
    return data


def test_known_relevant_does_not_claim_the_queue_lacks_unjudged_relevant_documents(engine: Engine,
                                                                                   tmp_path: Path) -> None:
    truth = make_topic(engine, tmp_path, 3000)
    judge(engine, truth, [f"d{i}" for i in range(600)])
    sample = draw_sample(engine, "T", 400, frame="unreviewed", seed=3)
    judge(engine, truth, sample.doc_ids, role="sample")
    total = sum(truth.values())  # every relevant document is in the queue
    judged_relevant = sum(truth[f"d{i}"] for i in range(600)) + sum(truth[d] for d in sample.doc_ids)
    assert judged_relevant < total  # the premise: relevant documents remain unjudged in the queue
    data = report(engine, known_relevant=total)
    for row in data["depth"]:
        # the queue holds all `total` relevant documents; only `judged_relevant` of them are judged
        assert "the queue holds only" not in row["basis"], row["basis"]
        if row["forward_basis"] is not None:
            assert not row["forward_basis"].startswith("exact"), row["forward_basis"]


def test_known_relevant_keeps_the_forward_answer_of_a_rest_sample(engine: Engine, tmp_path: Path) -> None:
    truth = make_topic(engine, tmp_path, 3000)
    judge(engine, truth, [f"d{i}" for i in range(600)])
    sample = draw_sample(engine, "T", 400, frame="unreviewed", seed=3)
    judge(engine, truth, sample.doc_ids, role="sample")
    data = report(engine, known_relevant=sum(truth.values()))
    row = next(r for r in data["depth"] if r["target"] == 0.95)
    assert row["status"] == "not reached"
    assert row["more_documents"] is not None and row["forward_depth"] is not None


def test_judged_recall_upper_bound_uses_the_same_scope(engine: Engine, tmp_path: Path) -> None:
    truth = make_topic(engine, tmp_path, 400, topic="U", population=4000)
    judge(engine, truth, [f"d{i}" for i in range(100)], topic="U")
    sample = draw_sample(engine, "U", 100, frame="unreviewed", seed=1)
    judge(engine, truth, sample.doc_ids, role="sample", topic="U")
    outside = {f"x{i}": 1 for i in range(60)}  # relevant documents found outside the queue (hand search)
    judge(engine, outside, list(outside), topic="U", allow_unqueued=True)
    data = report(engine, "U")
    assert data["summary"]["estimate_scope"] == "queue"
    found = sum(truth[f"d{i}"] for i in range(100))
    in_queue = found + sum(truth[d] for d in sample.doc_ids if int(d[1:]) >= 100)
    judged_row = next(r for r in data["recall"] if r["basis"] == "judged")
    assert judged_row["scope"] == "queue"
    # an upper bound on the recall of the queue's relevant documents: found / relevant judged in the queue
    assert judged_row["upper"] == pytest.approx(found / in_queue)
    elusion = next(r for r in data["recall"] if r["basis"] == "elusion")
    assert judged_row["upper"] >= elusion["lower"]


def test_point_met_headline_and_plan_agree(engine: Engine, tmp_path: Path) -> None:
    truth = make_topic(engine, tmp_path, 3000, relevant_until=1500)  # nothing relevant after rank 1,500
    judge(engine, truth, [f"d{i}" for i in range(1500)])
    sample = draw_sample(engine, "T", 30, frame="unreviewed", seed=1)
    judge(engine, truth, sample.doc_ids, role="sample")
    data = report(engine, with_plan=True)
    answer = data["answer"]
    assert "the point estimate is met" in answer["text"]  # premise: R̂ = F (no positive in the sample), not certified
    # the next step is the decision's (the same at every door: "certify", pointing at the plan); the stop plan's
    # recommended path, with the documents it judges, is the answer's "to certify" beside it (issues 25 and 38)
    assert answer["next_step"].startswith("certify: ") and "reviewdepth plan T" in answer["next_step"]
    assert answer["certify"]["step"] and answer["certify"]["expected"] > 0
    assert answer["next_step"] == answer["topic_status"]["next_step"]
    plan = answer["plan"]
    # the plan the next step points to must say how large a sample certifies, not contradict the headline
    assert plan["feasible"] and plan["size"], plan["summary"]
