"""Issue 11's three scenarios end to end through the CLI: a stale sample, a tiny late sample, no sample."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from reviewdepth.cli.app import create_cli

SIZE = 1500


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(create_cli(), list(args))
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def review(tmp_path: Path) -> dict[str, Any]:
    """A migrated SQLite store holding a 1,500-document queue of topic T; ``truth`` maps doc -> 0/1."""
    db = f"sqlite:///{tmp_path / 'live.db'}"
    assert invoke("db", "upgrade", "--db", db)[0] == 0
    rng = np.random.default_rng(21)
    prob = 0.4 * np.exp(-np.arange(SIZE) / 250) + 0.005
    truth = {f"d{i}": int(rng.random() < prob[i]) for i in range(SIZE)}
    run = tmp_path / "t.run"
    run.write_text("".join(f"T Q0 d{i} {i + 1} {SIZE - i} sys\n" for i in range(SIZE)))
    assert invoke("import", "run", str(run), "--db", db)[0] == 0
    return {"db": db, "truth": truth, "dir": tmp_path}


def judge_file(review: dict[str, Any], docs: list[str], role: str, name: str) -> None:
    path = review["dir"] / name
    path.write_text("doc,label\n" + "".join(f"{d},{review['truth'][d]}\n" for d in docs))
    code, _, err = invoke("judge", "T", "--file", str(path), "--role", role, "--reviewer", "ana", "--db", review["db"])
    assert code == 0, err


def draw(review: dict[str, Any], size: int, seed: int) -> dict[str, Any]:
    code, out, err = invoke("sample", "draw", "T", "--size", str(size), "--frame", "unreviewed", "--seed", str(seed),
                            "--format", "json", "--db", review["db"])
    assert code == 0, err
    drawn: dict[str, Any] = json.loads(out)
    return drawn


def report(review: dict[str, Any], *extra: str) -> dict[str, Any]:
    code, out, err = invoke("report", "T", "--format", "json", "--db", review["db"], *extra)
    assert code == 0, err
    data: dict[str, Any] = json.loads(out)
    judged = data["summary"]["relevant_judged_in_topic"]
    for est in data["estimates"]:
        assert est["lower"] is None or est["lower"] >= judged
        for key in ("recall_point", "recall_lower", "recall_upper"):
            assert est.get(key) is None or 0 <= est[key] <= 1
    return data


def true_depth(truth: dict[str, int], tau: float) -> int:
    rel = np.array([truth[f"d{i}"] for i in range(SIZE)])
    return int(np.flatnonzero(np.cumsum(rel) >= np.ceil(tau * rel.sum() - 1e-9))[0]) + 1


def test_stale_sample_through_the_cli(review: dict[str, Any]) -> None:
    judge_file(review, [f"d{i}" for i in range(300)], "review", "top.csv")
    sample = draw(review, 300, 1)
    judge_file(review, [d["doc_id"] for d in sample["documents"]], "sample", "sample.csv")
    judge_file(review, [f"d{i}" for i in range(300, 1100)], "review", "more.csv")
    data = report(review)
    elusion = next(e for e in data["estimates"] if e["method"] == "elusion")
    assert elusion["details"]["unreviewed"] == SIZE - 1100
    assert elusion["details"]["sample_size"] == sum(1 for d in sample["documents"] if d["rank"] > 1100)
    assert elusion["lower"] >= data["summary"]["relevant_judged_in_topic"]


def test_tiny_late_sample_through_the_cli(review: dict[str, Any]) -> None:
    judge_file(review, [f"d{i}" for i in range(200)], "review", "top.csv")
    big = draw(review, 400, 2)
    judge_file(review, [d["doc_id"] for d in big["documents"]], "sample", "big.csv")
    judge_file(review, [f"d{i}" for i in range(200, 500)], "review", "more.csv")
    tiny = draw(review, 3, 3)
    judge_file(review, [d["doc_id"] for d in tiny["documents"]], "sample", "tiny.csv")
    data = report(review)
    elusion = next(e for e in data["estimates"] if e["method"] == "elusion")
    assert elusion["details"]["sample_id"] == big["id"]
    row = next(r for r in data["depth"] if r["target"] == 0.95)
    assert true_depth(review["truth"], 0.95) > 500 and row["status"] != "reached"
    code, _, err = invoke("sample", "void", "T", str(tiny["id"]), "--reason", "drawn by mistake", "--db",
                          review["db"])
    assert code == 0, err
    voided = next(s for s in report(review)["samples"] if s["id"] == tiny["id"])
    assert voided["voided"] and voided["use"] == "unused"


def test_no_sample_through_the_cli(review: dict[str, Any]) -> None:
    judge_file(review, [f"d{i}" for i in range(250)], "review", "top.csv")
    data = report(review)
    assert {r["status"] for r in data["depth"]} == {"unknown"}
    assert data["answer"]["status"] == "unknown"
    code, out, _ = invoke("report", "T", "--db", review["db"])
    first = out.splitlines()[0]
    assert code == 0 and first.startswith("95% recall: unknown") and len(first) <= 80
    assert "sample plan" in out
    code, out, err = invoke("sample", "plan", "T", "--format", "json", "--db", review["db"])
    assert code == 0, err
    assert json.loads(out)["frame"] == "unreviewed"
