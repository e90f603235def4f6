"""Issue 29, item 2: two-phase (TAR 1.0) validation in the validation document (`--produce-to RANK`).

CLEF 2017 CD009579 with Waterloo's ranking: phase 1 codes the first 50 ranks in order and 60 documents out of
order (ranks 301, 311, …, 891: some above the cutoff, most below); the team produces ranks 1..400; a control set
of 400 documents of the whole queue, then 150 documents from ranks:1-400 and 300 from below-rank:400 are drawn and
coded by a senior reviewer in the sample role. The counts
the document states are recomputed here from the run and the qrels; every figure must be the core's on those
counts, and the PDF must print them."""

from __future__ import annotations

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
from reviewdepth.estimation.two_phase import StratumSample, TwoPhaseCounts, two_phase_estimate
from reviewdepth.services.files.imports import import_run
from reviewdepth.services.review.judgments import record_judgments
from reviewdepth.services.review.samples import draw_sample
from tests.conftest import shared_data

TOPIC = "CD009579"
CUTOFF, TRAIN = 400, 50
OUT_OF_ORDER = list(range(301, 900, 10))


def invoke(*args: str) -> tuple[int, bytes, str]:
    result = CliRunner().invoke(create_cli(), list(args))
    return result.exit_code, result.stdout_bytes, result.stderr


@pytest.fixture
def scenario(engine: Engine, tmp_path: Path) -> dict[str, Any]:
    with gzip.open(shared_data("clef-tar-2017", "runs", "waterloo.A-rank-normal.gz"), "rt") as f:
        lines = [line for line in f if line.split()[0] == TOPIC]
    run = tmp_path / "cd009579.run"
    run.write_text("".join(lines))
    import_run(engine, str(run))
    with gzip.open(shared_data("clef-tar-2017", "qrels", "qrel_abs_test.txt.gz"), "rt") as f:
        truth = {p[2]: p[3] for p in (line.split() for line in f) if p and p[0] == TOPIC}
    docs = [line.split()[2] for line in lines]
    coded_ranks = list(range(1, TRAIN + 1)) + OUT_OF_ORDER
    record_judgments(engine, TOPIC, [(docs[r - 1], truth.get(docs[r - 1], "0")) for r in coded_ranks],
                     reviewer="alice")
    control = draw_sample(engine, TOPIC, 400, frame="all", seed=25)
    produced = draw_sample(engine, TOPIC, 150, frame=f"ranks:1-{CUTOFF}", seed=11)
    discard = draw_sample(engine, TOPIC, 300, frame=f"below-rank:{CUTOFF}", seed=12)
    for s in (control, produced, discard):
        record_judgments(engine, TOPIC, [(d, truth.get(d, "0")) for d in s.doc_ids], reviewer="carol",
                         role="sample")
    rel = [truth.get(d, "0") == "1" for d in docs]
    coded = set(coded_ranks)

    def stratum(sample_ranks: list[int], above: bool) -> StratumSample:
        inside = [r for r in sample_ranks if r not in coded and (r <= CUTOFF) == above]
        return StratumSample(len(inside), sum(rel[r - 1] for r in inside))

    counts = TwoPhaseCounts(
        cutoff=CUTOFF, coded=len(coded), coded_relevant=sum(rel[r - 1] for r in coded),
        coded_relevant_above=sum(rel[r - 1] for r in coded if r <= CUTOFF),
        uncoded_above=CUTOFF - sum(r <= CUTOFF for r in coded),
        uncoded_below=len(docs) - CUTOFF - sum(r > CUTOFF for r in coded),
        produced_sample=stratum(produced.ranks, True), discard_sample=stratum(discard.ranks, False))
    control_relevant = [r for r in control.ranks if rel[r - 1]]
    return {"db": engine.url.render_as_string(hide_password=False), "counts": counts, "produced_id": produced.id,
            "discard_id": discard.id, "control_id": control.id, "control_relevant": len(control_relevant),
            "control_found": sum(r in coded or r <= CUTOFF for r in control_relevant)}


def down(x: float) -> str:
    return f"{math.floor(round(x * 10**4, 6)) / 10**4:.4f}"


def up(x: float) -> str:
    return f"{math.ceil(round(x * 10**4, 6)) / 10**4:.4f}"


@pytest.mark.sqlite_only
def test_two_phase_section_is_the_core_on_the_true_counts(scenario: dict[str, Any], tmp_path: Path) -> None:
    db, counts = scenario["db"], scenario["counts"]
    code, out, err = invoke("validation", TOPIC, "--target", "0.8", "--format", "json", "--produce-to",
                            str(CUTOFF), "--db", db)
    assert code == 0, err
    section = json.loads(out)["two_phase"]
    assert (section["cutoff"], section["coded"], section["coded_relevant"], section["coded_relevant_above"],
            section["uncoded_above"], section["discard_pile"]) == (
        counts.cutoff, counts.coded, counts.coded_relevant, counts.coded_relevant_above, counts.uncoded_above,
        counts.uncoded_below)
    assert section["produced"] == counts.coded_relevant + counts.uncoded_above
    assert counts.coded_relevant > counts.coded_relevant_above  # some coded relevant below the cutoff
    found, eluded = section["found_uncoded"], section["eluded"]
    assert found["sample_id"] == scenario["produced_id"] and eluded["sample_id"] == scenario["discard_id"]
    assert produced_sample(found) == counts.produced_sample and produced_sample(eluded) == counts.discard_sample
    expected = two_phase_estimate(counts, 0.95, "hypergeometric")
    assert expected.recall is not None and expected.precision is not None
    for name, figure in (("recall", expected.recall), ("precision", expected.precision)):
        got = section[name]
        assert (got["point"], got["lower"], got["upper"], got["lower_one_sided"]) == pytest.approx(
            (figure.point, figure.lower, figure.upper, figure.lower_one_sided), rel=1e-12)
        assert got["assumptions"] == [str(a) for a in figure.assumptions]
    assert section["gaps"] == []
    assert section["target"] == 0.8 and section["meets_target"] == (expected.recall.lower_one_sided >= 0.8)
    # the control set (the whole-queue sample): found/relevant with the Clopper–Pearson interval, by scipy here
    from scipy import stats

    k, n = scenario["control_found"], scenario["control_relevant"]
    assert (section["control_sample_id"], section["control_relevant"], section["control_found"]) == (
        scenario["control_id"], n, k)
    assert 0 < k < n
    control = section["control_recall"]
    assert control["point"] == pytest.approx(k / n)
    assert control["lower"] == pytest.approx(stats.beta.ppf(0.025, k, n - k + 1))
    assert control["upper"] == pytest.approx(stats.beta.ppf(0.975, k + 1, n - k))
    assert control["lower_one_sided"] == pytest.approx(stats.beta.ppf(0.05, k, n - k + 1))

    pdf = tmp_path / "v.pdf"
    code, _, err = invoke("validation", TOPIC, "--target", "0.8", "--produce-to", str(CUTOFF), "-o", str(pdf),
                          "--db", db)
    assert code == 0, err
    from pypdf import PdfReader

    flat = " ".join("\n".join(p.extract_text() for p in PdfReader(io.BytesIO(pdf.read_bytes())).pages).split())
    r, p = expected.recall, expected.precision
    assert f"Two-phase (TAR 1.0) validation at rank cutoff {CUTOFF}" in flat
    assert f"Recall (Elusion with Recall), two-sided 95% interval [{down(r.lower)}, {up(r.upper)}]" in flat
    assert f"Recall (Elusion with Recall), one-sided 95% lower bound {down(r.lower_one_sided)}" in flat
    assert f"Precision of the produced set, two-sided 95% interval [{down(p.lower)}, {up(p.upper)}]" in flat
    assert f"Precision of the produced set, one-sided 95% lower bound {down(p.lower_one_sided)}" in flat
    assert "Recall assumes: every coding (review and sample) is correct" in flat
    assert "strata are each estimated at 97.46% so that both hold at once at 95%" in flat
    verdict = "met" if section["meets_target"] else "not shown"
    assert f"Target recall 0.8 at 95% {verdict}: the one-sided lower bound {down(r.lower_one_sided)}" in flat


def produced_sample(figure: dict[str, Any]) -> StratumSample:
    return StratumSample(figure["sample_size"], figure["sample_relevant"], figure["sample_unjudged"])


@pytest.mark.sqlite_only
def test_without_a_discard_sample_recall_is_a_gap_and_bad_cutoffs_are_refused(engine: Engine,
                                                                                tmp_path: Path) -> None:
    with gzip.open(shared_data("clef-tar-2017", "runs", "waterloo.A-rank-normal.gz"), "rt") as f:
        lines = [line for line in f if line.split()[0] == TOPIC]
    run = tmp_path / "cd009579.run"
    run.write_text("".join(lines))
    import_run(engine, str(run))
    docs = [line.split()[2] for line in lines]
    record_judgments(engine, TOPIC, [(d, "1") for d in docs[:20]], reviewer="alice")
    sample = draw_sample(engine, TOPIC, 30, frame=f"ranks:1-{CUTOFF}", seed=3)
    record_judgments(engine, TOPIC, [(d, "0") for d in sample.doc_ids], reviewer="carol", role="sample")
    db = engine.url.render_as_string(hide_password=False)
    code, out, err = invoke("validation", TOPIC, "--target", "0.8", "--format", "json", "--produce-to",
                            str(CUTOFF), "--db", db)
    assert code == 0, err
    section = json.loads(out)["two_phase"]
    assert section["recall"] is None and section["eluded"] is None and section["gaps"] == ["no_discard_sample"]
    assert section["precision"] is not None
    code, out, err = invoke("validation", TOPIC, "--format", "html", "--produce-to", str(CUTOFF), "--db", db)
    assert code == 0, err
    assert f"--frame below-rank:{CUTOFF}" in out.decode()
    code, _, err = invoke("validation", TOPIC, "--format", "json", "--produce-to", str(len(docs) + 1), "--db", db)
    assert code == 2 and "--produce-to" in err and len(err.strip().splitlines()) == 1
    code, out, _ = invoke("validation", TOPIC, "--format", "json", "--db", db)
    assert code == 0 and json.loads(out)["two_phase"] is None
