"""The per-role cost of a document produced without being reviewed (issue 29, item 3): ``--cost
review=R,sample=S,produce=P`` given to ``plan`` (and ``GET /topics/{t}/plan``'s ``produce_cost``) offers the
production-cutoff (TAR 1.0) path, whose expected cost pays P per document produced unreviewed, and which the plan
recommends when it is the cheapest; without P no path produces an unreviewed document. ``simulate`` records P in
its settings (a replayed review is one-phase). A bad P is one line and exit 2."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine
from typer.testing import CliRunner

from reviewdepth.cli.app import create_cli
from reviewdepth.services.files.imports import import_run
from reviewdepth.services.review.batches import BatchItem, record_batch

DATA = Path(__file__).resolve().parents[1] / "data" / "clef2019"
FILES = ("--qrels", str(DATA / "CD012551.abs.qrels"), "--run", str(DATA / "CD012551.sheffield-baseline.run"))


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(create_cli(), list(args))
    return result.exit_code, result.stdout, result.stderr


def production_topic(engine: Engine, tmp_path: Path, size: int = 1500, judged: int = 150) -> str:
    """A ranked topic of ``size`` with the first ``judged`` reviewed, relevant every fourth of the first 90."""
    (tmp_path / "t.run").write_text("".join(f"T Q0 d{i} {i + 1} {size - i} s\n" for i in range(size)))
    import_run(engine, str(tmp_path / "t.run"))
    record_batch(engine, "T", [BatchItem(f"d{i}", str(int(i % 4 == 0 and i < 90))) for i in range(judged)],
                 reviewer="ana")
    return engine.url.render_as_string(hide_password=False)


def plan_json(db: str, cost: str) -> dict[str, Any]:
    code, out, err = invoke("plan", "T", "--target", "0.95", "--cost", cost, "--format", "json", "--db", db)
    assert code == 0, err
    data: dict[str, Any] = json.loads(out)
    return data


def test_plan_offers_the_production_path_only_with_a_produce_cost(engine: Engine, tmp_path: Path) -> None:
    db = production_topic(engine, tmp_path)
    plain, cheap, dear = (plan_json(db, c) for c in ("review=1,sample=3", "review=1,sample=3,produce=0.2",
                                                     "review=1,sample=3,produce=5"))
    assert (plain["review_cost"], plain["sample_cost"], plain["produce_cost"]) == (1, 3, None)
    assert (cheap["review_cost"], cheap["sample_cost"], cheap["produce_cost"]) == (1, 3, 0.2)
    assert "produce_cutoff" not in {p["kind"] for p in plain["paths"]}
    assert cheap["recommended"] == "produce_cutoff" and dear["recommended"] != "produce_cutoff"
    path = next(p for p in cheap["paths"] if p["kind"] == "produce_cutoff")
    # its cost from its own figures: D reviewed, n_a + n_b sampled, N_a produced if the test certifies, else the rest
    # (less the samples) reviewed
    rest = cheap["unreviewed"]
    judged = path["produced_sample"] + path["sample_size"]
    success = 1 * path["review_more"] + 3 * judged + 0.2 * path["produced_unreviewed"]
    failure = 1 * path["review_more"] + 3 * judged + 1 * (rest - path["review_more"] - judged)
    assert path["expected_cost"] == pytest.approx(path["chance"] * success + (1 - path["chance"]) * failure)
    assert path["cost_range"] == pytest.approx([success, failure])
    assert path["produce_to"] == cheap["reviewed"] + path["review_more"] + path["produced_unreviewed"]
    assert path["discard_pile"] == rest - path["review_more"] - path["produced_unreviewed"]
    assert path["chance"] >= cheap["power"] and 0 < path["produced_precision"] <= 1
    assert set(path["two_phase_assumptions"]) >= {"coding_correct", "cutoff_before_samples", "joint_level"}
    # the other paths are the same whatever P
    others = [p for p in cheap["paths"] if p["kind"] != "produce_cutoff"]
    assert others == plain["paths"]
    code, text, _ = invoke("plan", "T", "--cost", "sample=3,produce=0.2", "--db", db)
    assert code == 0 and "costs per document: review 1, sample 3, produced unreviewed 0.2" in text
    assert f"--produce-to {path['produce_to']}" in text and "validation does not check reviewers' errors" in text
    assert "projected precision of the production" in text
    code, text, _ = invoke("plan", "T", "--db", db)
    assert code == 0 and "costs per document" not in text and "produce" not in text  # unit costs: as before
    for bad in ("produce=-1", "produce=x", "review=1,produced=2"):
        code, _, err = invoke("plan", "T", "--cost", bad, "--db", db)
        assert code == 2 and "cost" in err and len(err.strip().splitlines()) == 1, (bad, err)


def test_simulate_records_the_produce_cost() -> None:
    common = (*FILES, "--design", "audit", "--every", "10", "--looks", "every:50", "--replicates", "4", "--seed",
              "2", "--format", "csv")
    code, plain, err = invoke("simulate", *common, "--cost", "review=1,sample=3")
    assert code == 0, err
    code, out, err = invoke("simulate", *common, "--cost", "review=1,sample=3,produce=0.5")
    assert code == 0, err
    rows, plain_rows = list(csv.DictReader(io.StringIO(out))), list(csv.DictReader(io.StringIO(plain)))
    assert {r["produce_cost"] for r in rows} == {"0.5"} and {r["produce_cost"] for r in plain_rows} == {"1.0"}
    assert [{**r, "produce_cost": "1.0"} for r in rows] == plain_rows
    code, text, err = invoke("simulate", *common[:-2], "--cost", "sample=3,produce=0.5")
    assert code == 0, err
    assert "costs review 1, sample 3, produced unreviewed 0.5 per document" in " ".join(text.split())
    code, _, err = invoke("simulate", *common, "--cost", "produce=-2")
    assert code == 2 and "produce" in err and len(err.strip().splitlines()) == 1, err
