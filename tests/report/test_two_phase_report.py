"""Issue 29, item 2 in the depth report: ``reviewdepth report TOPIC --produce-to RANK`` (and the API report route's
``produce_to``) adds the typed two-phase section, the very section the validation document carries (one
computation: `reviewdepth.services.answers.two_phase.two_phase_of`); without the option the report is unchanged, byte
for byte, and has no ``two_phase`` key."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from sqlalchemy import Engine
from typer.testing import CliRunner

from reviewdepth.cli.app import create_cli
from reviewdepth.estimation.two_phase import StratumSample, TwoPhaseCounts, two_phase_estimate
from reviewdepth.report.render import render
from reviewdepth.services.answers.report import ReportOptions, build_report
from reviewdepth.services.answers.validation import build_validation
from reviewdepth.services.files.imports import import_run
from reviewdepth.services.review.batches import BatchItem, record_batch
from reviewdepth.services.review.samples import draw_sample

SIZE, REVIEWED, CUTOFF = 90, 30, 50


def _topic(engine: Engine, tmp_path: Path) -> tuple[dict[str, int], list[str], list[str]]:
    """90 ranked documents, the first 30 reviewed (every third relevant), then a sample of 24 of the rest (ranks
    31..90) coded in the sample role: relevant when its number is a multiple of 7."""
    docs = [f"d{i:03d}" for i in range(1, SIZE + 1)]
    (tmp_path / "q.run").write_text("".join(f"T Q0 {d} {i} {1000 - i} s\n" for i, d in enumerate(docs, 1)))
    import_run(engine, str(tmp_path / "q.run"))
    truth = {d: int(i % 3 == 0 if i <= REVIEWED else i % 7 == 0) for i, d in enumerate(docs, 1)}
    record_batch(engine, "T", [BatchItem(d, str(truth[d])) for d in docs[:REVIEWED]], reviewer="ann")
    rest = draw_sample(engine, "T", 24, frame="unreviewed", seed=13)
    record_batch(engine, "T", [BatchItem(d, str(truth[d]), role="sample") for d in rest.doc_ids], reviewer="sen")
    return truth, docs, list(rest.doc_ids)


def test_the_report_carries_the_validation_documents_two_phase_section(engine: Engine, tmp_path: Path) -> None:
    truth, docs, sampled = _topic(engine, tmp_path)
    plain = build_report(engine, "T", ReportOptions(targets=["0.8"]))
    report = build_report(engine, "T", ReportOptions(targets=["0.8"], produce_to=CUTOFF))
    assert plain.two_phase is None and "two_phase" not in json.loads(plain.to_json())
    data = json.loads(report.to_json())
    section = data.pop("two_phase")
    # only the new key differs, and the rest is written as before, byte for byte
    assert json.dumps(data, indent=2, ensure_ascii=False) + "\n" == plain.to_json()
    # the same section as the validation document's (one computation, the same numbers)
    document = build_validation(engine, "T", ReportOptions(targets=["0.8"]), produce_to=CUTOFF)
    assert report.two_phase == document.two_phase
    # the counts from the ranking and the coding above, and the figures the core gives on them
    rank = {d: i for i, d in enumerate(docs, 1)}
    above = [d for d in sampled if rank[d] <= CUTOFF]
    below = [d for d in sampled if rank[d] > CUTOFF]
    coded_relevant = sum(truth[d] for d in docs[:REVIEWED])
    counts = TwoPhaseCounts(
        cutoff=CUTOFF, coded=REVIEWED, coded_relevant=coded_relevant, coded_relevant_above=coded_relevant,
        uncoded_above=CUTOFF - REVIEWED, uncoded_below=SIZE - CUTOFF,
        produced_sample=StratumSample(len(above), sum(truth[d] for d in above), 0),
        discard_sample=StratumSample(len(below), sum(truth[d] for d in below), 0))
    expected = two_phase_estimate(counts, 0.95, "hypergeometric")
    assert expected.recall is not None and expected.precision is not None
    assert (section["produced"], section["uncoded_above"], section["discard_pile"]) == (
        coded_relevant + CUTOFF - REVIEWED, CUTOFF - REVIEWED, SIZE - CUTOFF)
    for name, figure in (("recall", expected.recall), ("precision", expected.precision)):
        got = section[name]
        assert (got["point"], got["lower"], got["upper"], got["lower_one_sided"]) == (
            figure.point, figure.lower, figure.upper, figure.lower_one_sided)
        assert got["assumptions"] == [str(a) for a in figure.assumptions]
    assert section["target"] == 0.8

    rows = list(csv.reader(io.StringIO(render(report, "csv"))))
    assert ["two_phase", "recall.point", "value", repr(expected.recall.point)] in rows
    assert not any(r[0] == "two_phase" for r in csv.reader(io.StringIO(render(plain, "csv"))))
    page = render(report, "html")
    assert f"<h2>Two-phase (TAR 1.0) validation at rank cutoff {CUTOFF}</h2>" in page
    assert "Recall assumes: every coding (review and sample) is correct" in page
    assert "Two-phase" not in render(plain, "html")


def test_the_command_takes_produce_to_and_refuses_a_bad_cutoff(engine: Engine, tmp_path: Path) -> None:
    _topic(engine, tmp_path)
    db = engine.url.render_as_string(hide_password=False)

    def invoke(*args: str) -> tuple[int, str, str]:
        result = CliRunner().invoke(create_cli(), ["report", "T", *args, "--db", db])
        return result.exit_code, result.stdout, result.stderr

    code, out, err = invoke("--format", "json", "--produce-to", str(CUTOFF))
    assert code == 0, err
    assert out == build_report(engine, "T", ReportOptions(produce_to=CUTOFF)).to_json()
    code, out, err = invoke("--produce-to", str(CUTOFF))
    assert code == 0, err
    assert "two-phase (TAR 1.0) validation at rank cutoff" in out and "Recall assumes" in " ".join(out.split())
    code, out, err = invoke("--format", "json")
    assert code == 0 and "two_phase" not in json.loads(out)
    for bad in (str(SIZE + 1), "0"):
        code, _, err = invoke("--format", "json", "--produce-to", bad)
        assert code == 2 and "--produce-to" in err and len(err.strip().splitlines()) == 1, (bad, err)
