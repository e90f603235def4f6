"""Issue 38, item 6, through the doors: before any review the report's next step, ``reviewdepth plan`` and
``GET /topics/{topic}/plan`` ask for a richness sample of its size (no path priced on an assumed rate); once the
sample is judged, through any door, the plan prices TAR 1.0 (a cutoff chosen now) against TAR 2.0 (review in ranked
order with the monitor). Real CLEF 2017 topic CD009135 (Waterloo's ranking A, 791 documents, 77 relevant)."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import Engine
from typer.testing import CliRunner

from reviewdepth.estimation.stop_plan import richness_sample_size
from reviewdepth.report.stop_plan_render import as_data, render_text
from reviewdepth.services.answers.report import ReportOptions, build_report
from reviewdepth.services.answers.sample_plan import plan_sample
from reviewdepth.services.answers.stop_plan import topic_stop_plan
from reviewdepth.services.review.judgments import record_judgments
from reviewdepth.services.review.samples import draw_sample

from .test_one_decision import _topic as clef_2017_topic

TOPIC = "CD009135"


def test_before_review_every_door_asks_for_a_richness_sample_then_prices_tar_1_and_2(
        engine: Engine, tmp_path: Path, empty_db_url: str) -> None:
    _, labels = clef_2017_topic(engine, tmp_path, TOPIC, "waterloo.A-rank-normal.gz")
    size = richness_sample_size(791, 0.95)
    assert size == 259

    report = build_report(engine, TOPIC, ReportOptions())
    next_step = report.answer.topic_status.next_step or ""
    assert "richness sample" in next_step and "reviewdepth plan CD009135" in next_step
    assert "TOPIC" not in next_step
    # no elusion test sized on an assumed rate ("half the rest relevant") before any evidence
    sample_plan = plan_sample(engine, TOPIC)
    assert not sample_plan["feasible"] and "richness sample" in sample_plan["reason"]
    assert "TOPIC" not in sample_plan["reason"]

    before = topic_stop_plan(engine, TOPIC, target="0.9")
    assert before.plan.paths == () and before.plan.richness_size == size
    text = render_text(before)
    assert f"reviewdepth sample draw {TOPIC} --size {size}" in text
    assert "projection:" not in text and "expected cost" not in text
    data = as_data(before)
    assert data["before_review"] and data["richness_size"] == size and TOPIC in data["richness_sentence"]

    from reviewdepth.cli.app import create_cli

    result = CliRunner().invoke(create_cli(), ["plan", TOPIC, "--target", "0.9", "--db", empty_db_url])
    assert result.exit_code == 0, result.output
    assert f"reviewdepth sample draw {TOPIC} --size {size}" in result.output

    # the sample drawn as the plan says (the whole collection) and judged as a team would, role left at review
    sample = draw_sample(engine, TOPIC, size, seed=7)
    record_judgments(engine, TOPIC, [(d, labels.get(d, "0")) for d in sample.doc_ids], reviewer="ana")
    after = topic_stop_plan(engine, TOPIC, target="0.9")
    assert after.plan.before_review and after.plan.richness_size is None
    feasible = {p.kind for p in after.plan.paths if p.feasible}
    assert "planned" in feasible
    assert "bands along the ranking" in after.plan.projection_source or "evenly" in after.plan.projection_source
    text = render_text(after)
    assert "before review: TAR 2.0" in text and "before review: TAR 1.0" in text
    assert "drawn after the cutoff is chosen" in text
    assert as_data(after)["tar_sentences"]
