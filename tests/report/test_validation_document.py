"""Issue 29, item 1: the validation document (`reviewdepth validation TOPIC`).

The scenario is CLEF 2017 CD009579 with Waterloo's ranking (waterloo.A-rank-normal): the first 2,000 ranks
reviewed in order, then a random sample of 400 of the unreviewed rest (seed 7), judged from the abstract qrels;
at target 0.8 and 95 % the elusion test certifies the stop. The PDF's text (read back with pypdf) must carry every
number of `reviewdepth report --format json` the document states, printed as the document promises (four
decimals; lower bounds rounded down, upper bounds rounded up), computed here independently of the renderer."""

from __future__ import annotations

import dataclasses
import gzip
import io
import json
import math
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine
from typer.testing import CliRunner

from reviewdepth.cli.app import create_cli
from reviewdepth.report.validation_model import ValidationDocument
from reviewdepth.services.files.imports import import_run
from reviewdepth.services.review.judgments import record_judgments
from reviewdepth.services.review.samples import draw_sample
from tests.conftest import shared_data

TOPIC = "CD009579"
REVIEWED, SAMPLE, SEED, TARGET = 2000, 400, 7, "0.8"


def invoke(*args: str) -> tuple[int, bytes, str]:
    result = CliRunner().invoke(create_cli(), list(args))
    return result.exit_code, result.stdout_bytes, result.stderr


def certified_stop(engine: Engine, tmp_path: Path) -> list[str]:
    """The scenario (module docstring); returns the sample's documents."""
    with gzip.open(shared_data("clef-tar-2017", "runs", "waterloo.A-rank-normal.gz"), "rt") as f:
        lines = [line for line in f if line.split()[0] == TOPIC]
    run = tmp_path / "cd009579.run"
    run.write_text("".join(lines))
    import_run(engine, str(run))
    with gzip.open(shared_data("clef-tar-2017", "qrels", "qrel_abs_test.txt.gz"), "rt") as f:
        truth = {p[2]: p[3] for p in (line.split() for line in f) if p and p[0] == TOPIC}
    docs = [line.split()[2] for line in lines]
    record_judgments(engine, TOPIC, [(d, truth.get(d, "0")) for d in docs[:REVIEWED]], reviewer="alice")
    sample = draw_sample(engine, TOPIC, SAMPLE, frame="unreviewed", seed=SEED)
    record_judgments(engine, TOPIC, [(d, truth.get(d, "0")) for d in sample.doc_ids], reviewer="bob", role="sample")
    return list(sample.doc_ids)


def pdf_text(content: bytes) -> str:
    from pypdf import PdfReader

    return "\n".join(page.extract_text() for page in PdfReader(io.BytesIO(content)).pages)


# the printing rules the document states, written again here (not imported from the renderer)
def point(x: float) -> str:
    return f"{x:.4f}"


def down(x: float) -> str:
    return f"{math.floor(round(x * 10**4, 6)) / 10**4:.4f}"


def up(x: float) -> str:
    return f"{math.ceil(round(x * 10**4, 6)) / 10**4:.4f}"


def whole(x: float) -> str:
    assert float(x).is_integer()
    return f"{int(x):,}"


@pytest.fixture
def scenario(engine: Engine, tmp_path: Path) -> tuple[str, list[str]]:
    docs = certified_stop(engine, tmp_path)
    return engine.url.render_as_string(hide_password=False), docs


@pytest.mark.sqlite_only
def test_the_pdf_states_every_number_of_the_report(scenario: tuple[str, list[str]], tmp_path: Path) -> None:
    db, sample_docs = scenario
    code, out, err = invoke("report", TOPIC, "--target", TARGET, "--format", "json", "--db", db)
    assert code == 0, err
    report: dict[str, Any] = json.loads(out)
    pdf = tmp_path / "validation.pdf"
    code, _, err = invoke("validation", TOPIC, "--target", TARGET, "--format", "pdf", "-o", str(pdf), "--db", db)
    assert code == 0, err
    content = pdf.read_bytes()
    assert content.startswith(b"%PDF-")
    text = pdf_text(content)
    flat = " ".join(text.split())

    answer, summary = report["answer"], report["summary"]
    assert answer["status"] == "reached" and report["depth_basis"] == "elusion"  # a certified stop
    # the decision once, in the decision object's words: no separate status row beside its headline
    assert f"Decision {answer['text']}" in flat and "Topic status" not in flat
    depth_row = next(r for r in report["depth"] if r["target"] == float(TARGET))
    assert f"Certified by {depth_row['reached_by']}" in flat
    rule = next(s for s in report["stopping"] if s["rule"] == "elusion")
    assert rule["stop_now"] is True and rule["kind"] == "certified"
    assert f"Guarantee {rule['guarantee'].replace('≥', '>=')}" in flat

    # protocol
    assert f"Target recall {float(TARGET):g}" in flat and f"Confidence {answer['confidence']:g} (95%)" in flat
    assert f"Interval {report['settings']['interval']}" in flat and "Design elusion test" in flat

    # cutoff and discard pile
    reviewed, population = summary["reviewed"], summary["population"]
    assert f"Rank cutoff {reviewed:,} (ranks 1 to {reviewed:,} reviewed)" in flat
    assert f"Discard pile {population - reviewed:,} documents neither reviewed nor produced" in flat
    assert f"Population {population:,} documents" in flat and f"Queue size {summary['queue_size']:,}" in flat

    # recall on the decision's basis, its two intervals and the margin of error
    recall = next(r for r in report["recall"] if r["basis"] == report["depth_basis"])
    assert f"Recall (point) {point(recall['point'])}" in flat
    assert f"Recall, two-sided 95% interval [{down(recall['lower'])}, {up(recall['upper'])}]" in flat
    assert f"Recall, one-sided 95% lower bound {down(recall['lower_one_sided'])}" in flat
    assert f"Margin of error (post-test) ±{up((recall['upper'] - recall['lower']) / 2)}" in flat

    # elusion: the rate, its interval (eluded bounds over the discard pile), eluded documents and their range
    estimate = next(e for e in report["estimates"] if e["method"] == "elusion")
    details = estimate["details"]
    assert details["unreviewed"] == population - reviewed
    assert f"sample {details['sample_id']}: {details['sample_relevant']} relevant of {details['sample_size']}" in flat
    assert f"Elusion rate {point(details['sample_relevant'] / details['sample_size'])}" in flat
    rate_low, rate_high = (details["missed_lower"] / details["unreviewed"],
                           details["missed_upper"] / details["unreviewed"])
    assert f"Elusion rate, two-sided 95% interval [{down(rate_low)}, {up(rate_high)}]" in flat
    assert f"Elusion margin of error ±{up((rate_high - rate_low) / 2)}" in flat
    assert f"Eluded documents (estimate) {whole(details['missed_point'])}" in flat
    assert (f"Eluded documents, 95% range {whole(details['missed_lower'])} to {whole(details['missed_upper'])}"
            in flat)
    assert (f"Relevant documents R {whole(estimate['point'])} [{whole(estimate['lower'])}, "
            f"{whole(estimate['upper'])}]") in flat

    # precision of the reviewed set, k/depth
    current = report["current"]
    assert (f"Precision of the reviewed set {point(current['precision'])} = {current['relevant_found']:,} relevant / "
            f"{current['depth']:,} reviewed") in flat
    assert current["precision"] == current["relevant_found"] / current["depth"]

    # the samples: seeds, sizes, frames, relevant, who coded them
    for row in report["samples"]:
        assert row["seed"] == SEED and row["size"] == SAMPLE
        assert (f"{row['id']} {row['frame']} {row['seed']} {row['size']:,} {row['frame_size']:,} "
                f"{row['drawn_at_judgment']:,} {row['relevant']} 0 {row['use']} bob ({SAMPLE})") in flat
    assert report["provenance"]["sample_seeds"] == [SEED] and f"Sample seeds {SEED}" in flat
    for doc in sample_docs:
        assert f" {doc} " in flat  # the appendix lists each sample document with its coding
    assert flat.count(" bob sample ") == SAMPLE

    # plan/floor, chain head, software
    if answer["status"] == "reached":
        # one decision: a reached topic carries no floor of a further certification, no plan, no "to certify"
        assert "floor" not in answer and "certify" not in answer and "Floor n_min" not in flat
        assert "to certify" not in flat
    else:
        floor = answer["floor"]
        assert f"Floor n_min now {floor['documents']:,} documents judged outside the reviewed set" in flat
    head = report["provenance"]["judgment_chain_head"]
    assert f"Chain head judgment {head['seq']:,}, {head['recorded_at']}" in flat
    assert head["hash"] in text.replace("\n", "")
    assert f"Software {report['provenance']['software']}" in flat

    # the caveats
    assert "does not check the reviewers' own coding" in flat and "Skipped or unreviewable sample documents" in flat


@pytest.mark.sqlite_only
def test_same_inputs_give_the_same_bytes_and_a_sane_json(scenario: tuple[str, list[str]], tmp_path: Path) -> None:
    from pypdf import PdfReader

    db, sample_docs = scenario
    outputs: dict[str, list[bytes]] = {}
    for fmt in ("pdf", "html", "json"):
        for turn in range(2):
            path = tmp_path / f"{turn}.{fmt}"
            code, _, err = invoke("validation", TOPIC, "--target", TARGET, "--format", fmt, "-o", str(path),
                                  "--db", db)
            assert code == 0, err
            outputs.setdefault(fmt, []).append(path.read_bytes())
    for fmt, (first, second) in outputs.items():
        assert first == second, fmt
    code, stdout, _ = invoke("validation", TOPIC, "--target", TARGET, "--format", "json", "--db", db)
    assert code == 0 and stdout == outputs["json"][0]

    document = json.loads(outputs["json"][0])
    # the JSON is the dataclasses, field for field
    assert list(document) == [f.name for f in dataclasses.fields(ValidationDocument)]
    assert document["decision"]["status"] == "reached" and document["decision"]["rule"] == "elusion"
    (sample,) = document["evidence"]["samples"]
    assert sample["seed"] == SEED and len(sample["documents"]) == sample["size"] == SAMPLE
    assert [d["doc_id"] for d in sample["documents"]] == sample_docs
    assert all(d["reviewer"] == "bob" and d["role"] == "sample" and d["recorded_at"] for d in sample["documents"])
    assert sample["coders"] == [{"reviewer": "bob", "documents": SAMPLE}] and sample["uncoded"] == 0
    results = document["results"]
    for low, mid, high in (("recall_lower", "recall", "recall_upper"),
                           ("elusion_rate_lower", "elusion_rate", "elusion_rate_upper"),
                           ("eluded_lower", "eluded", "eluded_upper"),
                           ("relevant_lower", "relevant_estimate", "relevant_upper")):
        assert results[low] <= results[mid] <= results[high], mid
    assert results["recall_lower"] <= results["recall_lower_one_sided"] <= results["recall"]
    assert document["cutoff"]["discard_pile"] == document["cutoff"]["population"] - document["cutoff"]["reviewed"]
    assert len(document["provenance"]["judgment_chain_head"]["hash"]) == 64
    assert document["dated"] == document["provenance"]["judgment_chain_head"]["recorded_at"]
    assert all(isinstance(c, str) and c for c in document["caveats"])

    html = outputs["html"][0].decode()
    assert html.startswith("<!DOCTYPE html>") and "<script" not in html and "http://" not in html
    assert f"Rank cutoff</th><td>{REVIEWED:,} (ranks 1 to {REVIEWED:,} reviewed)" in html
    # the metadata are the document's own, not the clock's
    meta = PdfReader(io.BytesIO(outputs["pdf"][0])).metadata
    assert meta is not None and meta.producer == document["provenance"]["software"]
    assert meta.creation_date is not None and meta.creation_date.strftime("%Y-%m-%dT%H:%M:%S") == (
        document["dated"][:19])


def test_bad_input_is_one_line_and_exit_2(engine: Engine, tmp_path: Path) -> None:
    db = engine.url.render_as_string(hide_password=False)
    out = tmp_path / "v.pdf"
    code, _, err = invoke("validation", "NOPE", "-o", str(out), "--db", db)
    assert code == 2 and err == "reviewdepth: error: unknown topic 'NOPE'\n" and not out.exists()
    code, _, err = invoke("validation", "NOPE", "--db", db)
    assert code == 2 and err == "reviewdepth: error: --format pdf needs -o FILE\n"
    code, _, err = invoke("validation", "NOPE", "--format", "json", "--target", "1", "--db", db)
    assert code == 2 and len(err.splitlines()) == 1 and "below 1" in err
