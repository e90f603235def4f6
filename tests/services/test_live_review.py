"""The depth answer while a review goes on (issue 11): stale samples rolled forward, a tiny late sample, no sample,
voided samples, re-ranking, |R| = 0, target 1, scope, and the headline — on SQLite and PostgreSQL."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sqlalchemy import Engine

from reviewdepth.report.depth_render import headline_lines, render_csv, render_html
from reviewdepth.services.admin.topics import create_topic
from reviewdepth.services.answers.report import ReportOptions, build_report
from reviewdepth.services.errors import Invalid
from reviewdepth.services.files.imports import import_run
from reviewdepth.services.review.judgments import record_judgments
from reviewdepth.services.review.sample_void import void_sample
from reviewdepth.services.review.samples import draw_sample


def topic_with_queue(engine: Engine, tmp_path: Path, size: int = 3000, seed: int = 5, topic: str = "T",
                     population: int | None = None) -> dict[str, int]:
    """A queue of ``size`` documents whose relevant ones thin out with rank; returns doc -> 0/1."""
    rng = np.random.default_rng(seed)
    prob = 0.4 * np.exp(-np.arange(size) / 400) + 0.004
    truth = {f"d{i}": int(rng.random() < prob[i]) for i in range(size)}
    if population is not None:
        create_topic(engine, topic, population_size=population)
    run = tmp_path / f"{topic}.run"
    run.write_text("".join(f"{topic} Q0 d{i} {i + 1} {size - i} sys\n" for i in range(size)))
    import_run(engine, str(run))
    return truth


def judge(engine: Engine, truth: dict[str, int], docs: list[str], role: str = "review", topic: str = "T") -> None:
    if docs:
        record_judgments(engine, topic, [(d, str(truth[d])) for d in docs], reviewer="r", role=role)


def review_to(engine: Engine, truth: dict[str, int], start: int, stop: int) -> None:
    judge(engine, truth, [f"d{i}" for i in range(start, stop)])


def true_depth(truth: dict[str, int], tau: float) -> int:
    rel = np.array([truth[f"d{i}"] for i in range(len(truth))])
    need = int(np.ceil(tau * rel.sum() - 1e-9))
    return int(np.flatnonzero(np.cumsum(rel) >= need)[0]) + 1


def coherent(data: dict[str, Any]) -> None:
    """The invariants of issue 11 item 2 on a report's JSON."""
    judged = data["summary"]["relevant_judged_in_topic"]
    for est in data["estimates"]:
        if est["lower"] is not None:
            assert est["lower"] >= (judged if est["scope"] == "population" else data["summary"]["relevant_found"])
        if est["upper"] is not None:
            assert est["upper"] >= est["lower"]
        for key in ("recall_point", "recall_lower", "recall_upper"):
            if est.get(key) is not None:
                assert 0.0 <= est[key] <= 1.0, (est["method"], key, est[key])
    for fig in data["recall"]:
        for key in ("point", "lower", "upper", "lower_one_sided"):
            if fig[key] is not None:
                assert 0.0 <= fig[key] <= 1.0
    for row in data["depth"]:
        assert row["status"] in ("reached", "not reached", "unknown")
        if row["status"] == "reached":
            assert row["reached_by"]
        if row["forward_depth"] is not None:
            assert data["summary"]["reviewed"] <= row["forward_depth"] <= data["summary"]["queue_size"]
    for row in data["review_quality"].get("policy_sensitivity", []):
        for key in ("recall", "recall_lower", "recall_upper"):
            if row.get(key) is not None:
                assert 0.0 <= row[key] <= 1.0


def report_json(engine: Engine, **options: Any) -> dict[str, Any]:
    import json

    data: dict[str, Any] = json.loads(build_report(engine, "T", ReportOptions(**options)).to_json())
    coherent(data)
    return data


def row_for(data: dict[str, Any], target: float) -> dict[str, Any]:
    return next(r for r in data["depth"] if r["target"] == target)


def test_stale_sample_is_rolled_forward_to_the_current_cutoff(engine: Engine, tmp_path: Path) -> None:
    truth = topic_with_queue(engine, tmp_path)
    review_to(engine, truth, 0, 600)
    sample = draw_sample(engine, "T", 400, frame="unreviewed", seed=3)
    judge(engine, truth, sample.doc_ids, role="sample")
    at_draw = report_json(engine)
    elusion = next(e for e in at_draw["estimates"] if e["method"] == "elusion")
    assert elusion["details"]["unreviewed"] == 2400 and elusion["details"]["sample_size"] == 400
    review_to(engine, truth, 600, 2100)
    later = report_json(engine)
    elusion = next(e for e in later["estimates"] if e["method"] == "elusion")
    still = [r for r in sample.ranks if r > 2100]
    # the old report kept the cutoff at 600 and the whole sample; now: the rest after 2,100 and its documents
    assert elusion["details"]["unreviewed"] == 900
    assert elusion["details"]["sample_size"] == len(still)
    found = later["summary"]["relevant_judged_in_topic"]
    assert elusion["lower"] >= found
    used = next(s for s in later["samples"] if s["id"] == sample.id)
    assert used["use"].startswith("rest") and used["in_unreviewed_rest"] == len(still)


def test_tiny_late_sample_never_displaces_a_large_one_and_can_be_voided(engine: Engine, tmp_path: Path) -> None:
    truth = topic_with_queue(engine, tmp_path)
    review_to(engine, truth, 0, 500)
    big = draw_sample(engine, "T", 400, frame="unreviewed", seed=4)
    judge(engine, truth, big.doc_ids, role="sample")
    review_to(engine, truth, 500, 900)
    tiny = draw_sample(engine, "T", 3, frame="unreviewed", seed=5)
    judge(engine, truth, tiny.doc_ids, role="sample")
    data = report_json(engine)
    elusion = next(e for e in data["estimates"] if e["method"] == "elusion")
    assert elusion["details"]["sample_id"] == big.id
    assert next(s for s in data["samples"] if s["id"] == tiny.id)["use"] == "unused"
    assert row_for(data, 0.95)["status"] != "reached"  # truth: 95 % needs far more than 900 documents
    assert true_depth(truth, 0.95) > 900
    void_sample(engine, "T", tiny.id, reason="drawn by mistake", reviewer="admin")
    voided = report_json(engine)
    row = next(s for s in voided["samples"] if s["id"] == tiny.id)
    assert row["voided"] and "drawn by mistake" in row["status"]


def test_without_a_sample_nothing_is_reached_and_the_report_says_what_to_do(engine: Engine, tmp_path: Path) -> None:
    truth = topic_with_queue(engine, tmp_path)
    review_to(engine, truth, 0, 700)
    data = report_json(engine)
    assert data["depth_basis"] == "judged"
    assert {r["status"] for r in data["depth"]} == {"unknown"}
    assert data["answer"]["status"] == "unknown" and "sample plan" in data["answer"]["next_step"]
    lines = headline_lines(build_report(engine, "T", ReportOptions()))
    assert all(len(line) <= 80 for line in lines) and "unknown" in lines[0]
    plan = data["answer"]["plan"]
    # the recent yield says recall is far below 95 % at 700 documents: review on before sampling
    assert plan["feasible"] is False and "review deeper first" in plan["reason"]
    assert "recent yield" in plan["rate_source"]


def test_forward_answer_from_the_rest_sample(engine: Engine, tmp_path: Path) -> None:
    truth = topic_with_queue(engine, tmp_path)
    review_to(engine, truth, 0, 400)
    sample = draw_sample(engine, "T", 600, frame="unreviewed", seed=8)
    judge(engine, truth, sample.doc_ids, role="sample")
    data = report_json(engine)
    row = row_for(data, 0.95)
    assert row["status"] == "not reached"
    assert row["more_documents"] is not None and row["forward_depth"] > 400
    assert row["more_low"] <= row["more_documents"] <= row["more_high"]
    assert "about" in data["answer"]["text"] and "more documents" in data["answer"]["text"]
    html = render_html(build_report(engine, "T", ReportOptions()))
    assert "More documents" in html and data["answer"]["text"].split(";")[0] in html
    assert "answer,status,value,not reached" in render_csv(build_report(engine, "T", ReportOptions()))


def test_reached_only_on_a_one_sided_bound(engine: Engine, tmp_path: Path) -> None:
    truth = topic_with_queue(engine, tmp_path)
    review_to(engine, truth, 0, 2500)
    sample = draw_sample(engine, "T", 400, frame="unreviewed", seed=9)
    judge(engine, truth, sample.doc_ids, role="sample")
    data = report_json(engine, targets=("0.8", "0.95", "1"))
    for row in data["depth"]:
        if row["status"] == "reached":
            assert row["conservative_reached"] is True
    assert row_for(data, 1.0)["status"] != "reached"
    elusion_rule = next(e for e in data["stopping"] if e["rule"] == "elusion")
    assert (row_for(data, 0.95)["status"] == "reached") == bool(elusion_rule["stop_now"])


def test_rest_sample_survives_a_reranking_of_the_rest(engine: Engine, tmp_path: Path) -> None:
    truth = topic_with_queue(engine, tmp_path, size=1500)
    review_to(engine, truth, 0, 300)
    sample = draw_sample(engine, "T", 300, frame="unreviewed", seed=10)
    whole = draw_sample(engine, "T", 200, frame="all", seed=11)
    judge(engine, truth, sorted(set(sample.doc_ids) | set(whole.doc_ids)), role="sample")
    # a new ranking: the reviewed 300 first, the rest reversed
    order = [f"d{i}" for i in range(300)] + [f"d{i}" for i in reversed(range(300, 1500))]
    run = tmp_path / "rerank.run"
    run.write_text("".join(f"T Q0 {d} {r + 1} {1500 - r} sys2\n" for r, d in enumerate(order)))
    import_run(engine, str(run), queue_name="second")
    data = report_json(engine, queue="second")
    uses = {s["id"]: s for s in data["samples"]}
    assert uses[sample.id]["use"].startswith("rest") or uses[whole.id]["use"].startswith("rest")
    assert "population" in uses[whole.id]["use"]
    assert data["depth_basis"] == "elusion"


def test_relevant_zero_and_population_larger_than_the_queue(engine: Engine, tmp_path: Path) -> None:
    truth = topic_with_queue(engine, tmp_path, size=50)
    judge(engine, dict.fromkeys(truth, 0), list(truth))  # fully judged, nothing relevant
    for options in ({}, {"known_relevant": 0}):
        data = report_json(engine, **options)
        assert data["depth_basis"] == "known"
        assert all(r["status"] == "reached" and r["depth"] == 0 for r in data["depth"])
    with pytest.raises(Invalid, match="negative"):
        build_report(engine, "T", ReportOptions(known_relevant=-1))
    judge(engine, {"d0": 1}, ["d0"])
    with pytest.raises(Invalid, match="already judged relevant"):
        build_report(engine, "T", ReportOptions(known_relevant=0))
    truth_u = topic_with_queue(engine, tmp_path, size=400, topic="U", population=4000)
    judge(engine, truth_u, [f"d{i}" for i in range(100)], topic="U")
    sample = draw_sample(engine, "U", 100, frame="unreviewed", seed=1)
    judge(engine, truth_u, sample.doc_ids, role="sample", topic="U")
    import json

    data = json.loads(build_report(engine, "U", ReportOptions()).to_json())
    assert data["summary"]["estimate_scope"] == "queue"
    assert "3,600 documents of the population are outside it" in data["summary"]["scope_note"]
    elusion = next(e for e in data["estimates"] if e["method"] == "elusion")
    assert elusion["details"]["unreviewed"] == 300 and elusion["scope"] == "queue"


def test_only_exact_intervals(engine: Engine, tmp_path: Path) -> None:
    topic_with_queue(engine, tmp_path, size=100)
    for method in ("wilson", "jeffreys", "agresti-coull"):
        with pytest.raises(Invalid, match="cover less than"):
            build_report(engine, "T", ReportOptions(interval=method))


def test_sample_documents_judged_out_of_turn_do_not_extend_the_prefix(engine: Engine, tmp_path: Path) -> None:
    truth = topic_with_queue(engine, tmp_path, size=400)
    review_to(engine, truth, 0, 100)
    sample = draw_sample(engine, "T", 300, frame="unreviewed", seed=2)  # 300 of 300: ranks 101.. are all drawn
    judge(engine, truth, [d for d, r in zip(sample.doc_ids, sample.ranks, strict=True) if r <= 105], role="sample")
    data = report_json(engine)
    assert data["summary"]["reviewed"] == 100  # ranks 101-105 were judged as sample documents, out of turn
    judge(engine, truth, [f"d{i}" for i in range(100, 103)])  # the review reaches them in turn
    assert report_json(engine)["summary"]["reviewed"] == 103


def test_report_prisma_counts_unqueued_judgments_apart_as_the_command_does(engine: Engine, tmp_path: Path) -> None:
    from reviewdepth.services.answers.prisma import topic_prisma

    truth = topic_with_queue(engine, tmp_path, size=10)
    review_to(engine, truth, 0, 10)
    record_judgments(engine, "T", [("elsewhere", "1")], reviewer="r", allow_unqueued=True)
    prisma = report_json(engine)["prisma"]
    assert prisma["screened"] <= prisma["identified"] == 10
    assert prisma == topic_prisma(engine, "T", policy="latest").as_dict()
