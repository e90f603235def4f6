"""``reviewdepth plan`` and ``GET /topics/{t}/plan`` (issue 24): the floor and the paths through both doors, the
report's first screen showing the same floor, and bad input refused in one line / a 4xx."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from reviewdepth.cli.app import create_cli
from reviewdepth.estimation.count_bound import certification_floor

SIZE = 1200


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(create_cli(), list(args))
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def store(tmp_path: Path) -> tuple[str, int]:
    """A SQLite store with topic T: a 1,200-document queue whose first 300 are judged; returns (url, found)."""
    db = f"sqlite:///{tmp_path / 'plan.db'}"
    assert invoke("db", "upgrade", "--db", db)[0] == 0
    rng = np.random.default_rng(4)
    truth = (rng.random(SIZE) < 0.35 * np.exp(-np.arange(SIZE) / 120) + 0.003).astype(int)
    run = tmp_path / "t.run"
    run.write_text("".join(f"T Q0 d{i} {i + 1} {SIZE - i} sys\n" for i in range(SIZE)))
    assert invoke("import", "run", str(run), "--db", db)[0] == 0
    judged = tmp_path / "j.csv"
    judged.write_text("doc,label\n" + "".join(f"d{i},{truth[i]}\n" for i in range(300)))
    code, _, err = invoke("judge", "T", "--file", str(judged), "--reviewer", "ana", "--db", db)
    assert code == 0, err
    return db, int(truth[:300].sum())


def test_plan_command_shows_the_floor_and_the_paths(store: tuple[str, int]) -> None:
    db, found = store
    code, out, err = invoke("plan", "T", "--format", "json", "--db", db)
    assert code == 0, err
    data = json.loads(out)
    floor = certification_floor(found, SIZE - 300, Fraction("0.95"), 0.95)
    assert data["floor"] == floor and data["found"] == found and data["unreviewed"] == SIZE - 300
    assert {p["kind"] for p in data["paths"]} >= {"sample_now", "planned"}
    assert data["recommended"] in {p["kind"] for p in data["paths"]}
    assert f"{floor:,}" in data["floor_sentence"]
    code, text, _ = invoke("plan", "T", "--target", "0.8", "--db", db)
    assert code == 0
    assert f"fewer than {certification_floor(found, SIZE - 300, Fraction('0.8'), 0.95):,} more judged" in text
    assert "recommended:" in text and "validity:" in text
    # the report's first screen carries the same floor
    code, report, _ = invoke("report", "T", "--format", "json", "--db", db)
    assert code == 0
    assert json.loads(report)["answer"]["floor"]["documents"] == floor


@pytest.mark.parametrize("args", [("--confidence", "1e-20"), ("--confidence", "1"), ("--target", "1"),
                                  ("--cost", "review=x"), ("--cost", "banana=2"), ("--power", "0")])
def test_plan_bad_input_is_one_line_exit_2(store: tuple[str, int], args: tuple[str, str]) -> None:
    db, _ = store
    code, out, err = invoke("plan", "T", *args, "--db", db)
    assert code == 2, (out, err)
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_plan_route(store: tuple[str, int]) -> None:
    from fastapi.testclient import TestClient
    from sqlalchemy import create_engine

    from reviewdepth.api import ApiSettings, create_app
    from reviewdepth.services.admin.keys import create_key

    db, found = store
    engine = create_engine(db)
    key = create_key(engine, "ana", "read")[1]
    with TestClient(create_app(ApiSettings(database_url=db))) as client:
        headers = {"Authorization": f"Bearer {key}"}
        got = client.get("/topics/T/plan", params={"target": "0.9"}, headers=headers)
        assert got.status_code == 200, got.text
        assert got.json()["floor"] == certification_floor(found, SIZE - 300, Fraction("0.9"), 0.95)
        assert client.get("/topics/T/plan", params={"confidence": "1e-20"}, headers=headers).status_code == 422
        assert client.get("/topics/NOPE/plan", headers=headers).status_code == 404
