"""The per-role cost of a document produced without being reviewed (issue 29, item 3): ``--cost
review=R,sample=S,produce=P`` is taken by ``plan`` (and ``GET /topics/{t}/plan``'s ``produce_cost``) and by
``simulate``, recorded and shown in their settings; every path of the plan and every replayed review is one-phase
(it stops and withholds the unreviewed rest), so P changes no other figure. A bad P is one line and exit 2."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from sqlalchemy import Engine
from typer.testing import CliRunner

from reviewdepth.cli.app import create_cli
from reviewdepth.services.batches import BatchItem, record_batch
from reviewdepth.services.imports import import_run

DATA = Path(__file__).resolve().parents[1] / "data" / "clef2019"
FILES = ("--qrels", str(DATA / "CD012551.abs.qrels"), "--run", str(DATA / "CD012551.sheffield-baseline.run"))
SIZE, JUDGED = 400, 120


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(create_cli(), list(args))
    return result.exit_code, result.stdout, result.stderr


def test_plan_records_the_produce_cost_and_no_path_pays_it(engine: Engine, tmp_path: Path) -> None:
    (tmp_path / "t.run").write_text("".join(f"T Q0 d{i} {i + 1} {SIZE - i} s\n" for i in range(SIZE)))
    import_run(engine, str(tmp_path / "t.run"))
    record_batch(engine, "T", [BatchItem(f"d{i}", str(int(i % 4 == 0 and i < 90))) for i in range(JUDGED)],
                 reviewer="ana")
    db = engine.url.render_as_string(hide_password=False)
    code, without, err = invoke("plan", "T", "--cost", "review=1,sample=3", "--format", "json", "--db", db)
    assert code == 0, err
    code, out, err = invoke("plan", "T", "--cost", "review=1,sample=3,produce=0.2", "--format", "json", "--db", db)
    assert code == 0, err
    plain, produced = json.loads(without), json.loads(out)
    assert (plain["review_cost"], plain["sample_cost"], plain["produce_cost"]) == (1, 3, 1)
    assert (produced["review_cost"], produced["sample_cost"], produced["produce_cost"]) == (1, 3, 0.2)
    # one-phase paths produce nothing unreviewed: every other figure is the same
    assert {**produced, "produce_cost": 1.0} == plain
    code, text, _ = invoke("plan", "T", "--cost", "sample=3,produce=0.2", "--db", db)
    assert code == 0 and "costs per document: review 1, sample 3, produced unreviewed 0.2" in text
    code, text, _ = invoke("plan", "T", "--db", db)
    assert code == 0 and "costs per document" not in text  # unit costs: the text as before
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
