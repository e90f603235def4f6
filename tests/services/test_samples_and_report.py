"""Samples as records, and the depth report built from the store, on SQLite and PostgreSQL."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import Engine

from reviewdepth.measures import trec
from reviewdepth.report.depth_render import render_csv, render_html
from reviewdepth.services.answers.report import ReportOptions, build_report
from reviewdepth.services.errors import Conflict, Invalid
from reviewdepth.services.files.imports import import_run
from reviewdepth.services.review.judgments import record_judgments
from reviewdepth.services.review.samples import draw_sample, load_samples


def synthetic_topic(engine: Engine, tmp_path: Path, size: int = 2000, seed: int = 5) -> dict[str, int]:
    """A queue of ``size`` documents whose relevant ones thin out with rank; returns doc -> 0/1."""
    rng = np.random.default_rng(seed)
    prob = 0.5 * np.exp(-np.arange(size) / 300) + 0.01
    truth = {f"d{i}": int(rng.random() < prob[i]) for i in range(size)}
    run = tmp_path / "t.run"
    run.write_text("".join(f"T Q0 d{i} {i + 1} {size - i} sys\n" for i in range(size)))
    import_run(engine, str(run))
    return truth


def judge(engine: Engine, truth: dict[str, int], docs: list[str], role: str = "review") -> None:
    record_judgments(engine, "T", [(d, str(truth[d])) for d in docs], reviewer="r", role=role)


def test_sample_draw_is_reproducible_and_tracks_missing(engine: Engine, tmp_path: Path) -> None:
    truth = synthetic_topic(engine, tmp_path)
    judge(engine, truth, [f"d{i}" for i in range(500)])
    first = draw_sample(engine, "T", 50, frame="unreviewed", seed=11)
    again = draw_sample(engine, "T", 50, frame="unreviewed", seed=11)
    assert first.doc_ids == again.doc_ids and first.seed == 11
    assert first.below_rank == 500 and first.frame_size == 1500
    assert all(r > 500 for r in first.ranks) and len(set(first.doc_ids)) == 50
    stored = load_samples(engine, "T", sample_id=first.id)[0]
    assert stored.missing == first.doc_ids and not stored.complete
    judge(engine, truth, first.doc_ids[:10], role="sample")
    assert len(load_samples(engine, "T", sample_id=first.id)[0].missing) == 40
    band = draw_sample(engine, "T", 5, frame="ranks:10-20", seed=1)
    assert all(10 <= r <= 20 for r in band.ranks)
    qc = draw_sample(engine, "T", 20, frame="judged", seed=2)
    assert all(r <= 500 for r in qc.ranks)
    with pytest.raises(Conflict, match="cannot draw 5000 documents from a frame of 2000"):
        draw_sample(engine, "T", 5000, frame="all")
    with pytest.raises(Invalid):
        draw_sample(engine, "T", 5, frame="somewhere")


def test_report_with_elusion_sample(engine: Engine, tmp_path: Path) -> None:
    truth = synthetic_topic(engine, tmp_path)
    judge(engine, truth, [f"d{i}" for i in range(800)])
    before = build_report(engine, "T", ReportOptions())
    assert before.depth_basis == "judged"
    sample = draw_sample(engine, "T", 300, frame="unreviewed", seed=3)
    incomplete = build_report(engine, "T", ReportOptions())
    assert [s.missing for s in incomplete.samples] == [300]  # not used until every drawn doc is judged
    assert incomplete.depth_basis == "judged"
    judge(engine, truth, sample.doc_ids, role="sample")
    report = build_report(engine, "T", ReportOptions(targets=("0.8", "0.95")))
    assert report.depth_basis == "elusion"
    methods = {e.estimate.method: e.estimate for e in report.estimates}
    true_r = sum(truth.values())
    elusion = methods["elusion"]
    assert elusion.lower <= true_r <= elusion.upper
    assert report.summary.reviewed == 800 and report.summary.relevant_found_in_reviewed == sum(
        truth[f"d{i}"] for i in range(800))
    assert [row.target for row in report.depth] == [0.8, 0.95]
    assert {e.evidence.kind for e in report.stopping} == {"certified", "heuristic"}
    assert report.settings.label_policy == "latest" and report.provenance.sample_seeds == [3]
    # the same inputs give the same bytes, and --as-of reproduces an earlier state after more judgments
    as_of = report.settings.as_of_judgment
    assert build_report(engine, "T", ReportOptions(targets=("0.8", "0.95"))).to_json() == report.to_json()
    judge(engine, truth, [f"d{i}" for i in range(800, 900)])
    replay = build_report(engine, "T", ReportOptions(targets=("0.8", "0.95"), as_of=as_of))
    assert replay.to_json() == report.to_json()
    assert render_html(replay) == render_html(report)
    data = json.loads(report.to_json())
    assert set(data) >= {"summary", "estimates", "depth", "stopping", "measures", "settings", "provenance"}
    assert render_csv(report).startswith("section,row,column,value\n")


def test_fully_judged_topic_gets_known_depths_and_completed_review(engine: Engine, tmp_path: Path) -> None:
    truth = synthetic_topic(engine, tmp_path, size=400)
    judge(engine, truth, [f"d{i}" for i in range(400)])
    report = build_report(engine, "T", ReportOptions(targets=("0.95",)))
    assert report.depth_basis == "known"
    rel_ranks = [i + 1 for i in range(400) if truth[f"d{i}"]]
    k = -(-95 * len(rel_ranks) // 100)
    assert report.depth[0].depth == rel_ranks[k - 1]
    assert report.completed_review is not None
    assert report.completed_review["last_rel"] == rel_ranks[-1]
    # the report's precision-recall chart is the measures' curve (R known), thinned at the gain chart's depths
    curve = trec.precision_recall_points(np.array([truth[f"d{i}"] == 1 for i in range(400)]), len(rel_ranks))
    at = np.array(report.gain.depth) - 1
    assert report.precision_recall.precision == curve["precision"][at].tolist()
    assert report.precision_recall.interpolated_precision == curve["interpolated_precision"][at].tolist()
    assert report.precision_recall.recall == curve["recall"][at].tolist()


def test_report_rejects_bad_settings(engine: Engine, tmp_path: Path) -> None:
    synthetic_topic(engine, tmp_path, size=50)
    for options in (ReportOptions(targets=("1.5",)), ReportOptions(confidence=1.0), ReportOptions(interval="wald"),
                    ReportOptions(policy="loudest")):
        with pytest.raises(Invalid):
            build_report(engine, "T", options)
