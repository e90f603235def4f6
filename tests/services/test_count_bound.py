"""Issue 41, item 4: the count bound on a CLEF 2017 topic with R < 59 (CD007431, AMC's ranking: 24 relevant).
The top quarter reviewed and a random sample of 300 of the rest judged: 95 % recall cannot be certified at a sane
cost, and both `plan --missed-at-most M` and the validation packet say what can: "at most m relevant documents
remain unreviewed", with what lowering it costs."""

from __future__ import annotations

import gzip
import io
import json
from pathlib import Path

from sqlalchemy import Engine, update
from typer.testing import CliRunner

from reviewdepth.cli.app import create_cli
from reviewdepth.estimation.count_bound import at_most_from_sample, sample_for_at_most
from reviewdepth.report.validation_render import render_document
from reviewdepth.services.answers.report import ReportOptions, build_report
from reviewdepth.services.answers.validation import build_validation
from reviewdepth.services.files.imports import import_run
from reviewdepth.services.review.judgments import record_judgments
from reviewdepth.services.review.samples import draw_sample
from reviewdepth.store.models import Topic

from ..conftest import shared_data

TOPIC = "CD007431"


def _state(engine: Engine, tmp_path: Path) -> None:
    with gzip.open(shared_data("clef-tar-2017", "runs", "amc.run.gz"), "rt") as f:
        lines = [line for line in f if line.startswith(TOPIC + " ")]
    with gzip.open(shared_data("clef-tar-2017", "qrels", "qrel_abs_test.txt.gz"), "rt") as f:
        labels = {p[2]: p[3] for p in (line.split() for line in f) if p and p[0] == TOPIC}
    run = tmp_path / "run.txt"
    run.write_text("".join(lines))
    import_run(engine, str(run))
    with engine.begin() as conn:
        conn.execute(update(Topic).where(Topic.name == TOPIC).values(population_size=len(labels)))
    ranking = [line.split()[2] for line in lines]
    assert sum(v == "1" for v in labels.values()) < 59
    record_judgments(engine, TOPIC, [(d, labels.get(d, "0")) for d in ranking[:len(ranking) // 4]], reviewer="r")
    sample = draw_sample(engine, TOPIC, 300, frame="unreviewed", seed=41)
    record_judgments(engine, TOPIC, [(d, labels.get(d, "0")) for d in sample.doc_ids], reviewer="s", role="sample")


def test_the_count_bound_is_planned_and_stated(engine: Engine, tmp_path: Path) -> None:
    _state(engine, tmp_path)
    report = build_report(engine, TOPIC, ReportOptions(targets=["0.95"]))
    elusion = next(e.estimate for e in report.estimates if e.estimate.method == "elusion")
    n, x, rest = (int(elusion.details[k]) for k in ("sample_size", "sample_relevant", "unreviewed"))  # type: ignore[call-overload]
    m = at_most_from_sample(x, n, rest, 0.95)
    url = engine.url.render_as_string(hide_password=False)
    runner = CliRunner()
    done = runner.invoke(create_cli(), ["plan", TOPIC, "--missed-at-most", "1", "--format", "json", "--db", url])
    assert done.exit_code == 0, done.output
    data = json.loads(done.stdout)
    assert (data["at_most"], data["unreviewed"], data["found"]) == (m, rest, report.current.relevant_found)
    assert data["missed_at_most_sample"] == sample_for_at_most(rest, 1, 0.95)
    assert data["target_certified"] is False and data["target_above_half"] is True
    text = runner.invoke(create_cli(), ["plan", TOPIC, "--missed-at-most", "1", "--db", url]).stdout
    assert f"at most {m:,} relevant documents remain unreviewed (95% confidence" in text
    assert f"--size {data['missed_at_most_sample']} --frame unreviewed" in text and "not at a sane cost" in text
    bad = runner.invoke(create_cli(), ["plan", TOPIC, "--missed-at-most", "-1", "--db", url])
    assert bad.exit_code == 2

    from pypdf import PdfReader

    doc = build_validation(engine, TOPIC, ReportOptions(targets=["0.95"]))
    assert doc.count_bound is not None and doc.count_bound.at_most == m
    flat = " ".join(" ".join(p.extract_text() for p in PdfReader(io.BytesIO(render_document(doc, "pdf"))).pages
                             ).split())
    assert "The recall target cannot be certified at a sane cost" in flat
    assert f"at most {m:,} relevant documents remain unreviewed" in flat
