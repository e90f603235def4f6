"""`reviewdepth demo`, `report`, `plot` and `sample` through the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from reviewdepth.cli.app import create_cli


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(create_cli(), list(args))
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def demo_db(tmp_path: Path) -> str:
    db = f"sqlite:///{tmp_path / 'demo.db'}"
    assert invoke("db", "upgrade", "--db", db)[0] == 0
    code, out, err = invoke("demo", "--db", db, "--format", "json")
    assert code == 0, err
    report = json.loads(out)
    assert report["topic"] == "CD008803" and report["summary"]["reviewed"] == 1000
    assert report["summary"]["population"] == 5220 and report["depth_basis"] == "elusion"
    elusion = next(e for e in report["estimates"] if e["method"] == "elusion")
    assert elusion["lower"] <= 99 <= elusion["upper"]  # the qrels hold 99 relevant documents
    return db


def test_report_formats_are_deterministic(demo_db: str, tmp_path: Path) -> None:
    first = invoke("report", "CD008803", "--db", demo_db, "--format", "json")[1]
    assert invoke("report", "CD008803", "--db", demo_db, "--format", "json")[1] == first
    html = tmp_path / "r.html"
    assert invoke("report", "CD008803", "--db", demo_db, "--format", "html", "-o", str(html))[0] == 0
    page = html.read_text()
    assert page.startswith("<!DOCTYPE html>") and page.count("<svg") == 2 and "http://" not in page.replace(
        "http://www.w3.org/2000/svg", "")
    csv_text = invoke("report", "CD008803", "--db", demo_db, "--format", "csv")[1]
    assert csv_text.startswith("section,row,column,value") and "stopping,elusion,kind,certified" in csv_text
    code, out, _ = invoke("report", "CD008803", "--db", demo_db, "--target", "0.9", "--confidence", "0.9",
                          "--interval", "clopper-pearson", "--format", "json")
    data = json.loads(out)
    assert data["settings"]["targets"] == ["0.9"] and data["settings"]["confidence"] == 0.9
    assert data["settings"]["interval"] == "clopper-pearson" and data["answer"]["confidence"] == 0.9
    elusion = next(e for e in data["estimates"] if e["method"] == "elusion")
    assert elusion["interval"] == "clopper-pearson"
    code, _, err = invoke("report", "CD008803", "--db", demo_db, "--interval", "wilson")
    assert code == 2 and "Invalid value for '--interval': 'wilson' is not one of 'hypergeometric', " in err
    code, _, err = invoke("report", "CD008803", "--db", demo_db, "--target", "1.2")
    assert code == 2 and "target recall must be in (0, 1]" in err


def test_plot_svg_and_png(demo_db: str, tmp_path: Path) -> None:
    svg = tmp_path / "gain.svg"
    assert invoke("plot", "CD008803", "--kind", "gain", "-o", str(svg), "--db", demo_db)[0] == 0
    assert svg.read_text().startswith("<svg") and "target 0.95" in svg.read_text()
    pr = tmp_path / "pr.svg"
    assert invoke("plot", "CD008803", "--kind", "pr", "-o", str(pr), "--db", demo_db)[0] == 0
    first = pr.read_bytes()
    invoke("plot", "CD008803", "--kind", "pr", "-o", str(pr), "--db", demo_db)
    assert pr.read_bytes() == first
    png = tmp_path / "gain.png"
    assert invoke("plot", "CD008803", "-o", str(png), "--db", demo_db)[0] == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    code, _, err = invoke("plot", "CD008803", "-o", str(tmp_path / "x.gif"), "--db", demo_db)
    assert code == 2 and ".svg or .png" in err


def test_sample_commands(demo_db: str) -> None:
    code, out, _ = invoke("sample", "draw", "CD008803", "--size", "5", "--frame", "unreviewed", "--seed", "9",
                          "--db", demo_db, "--format", "json")
    drawn = json.loads(out)
    assert code == 0 and drawn["seed"] == 9 and len(drawn["documents"]) == 5
    assert all(d["rank"] > 1000 for d in drawn["documents"])
    code, out, _ = invoke("sample", "show", "CD008803", str(drawn["id"]), "--db", demo_db)
    assert code == 0 and "5 of 5 not judged yet" in out
    doc = drawn["documents"][0]["doc_id"]
    assert invoke("judge", "CD008803", doc, "0", "--role", "sample", "--reviewer", "x", "--db", demo_db)[0] == 0
    assert "4 of 5 not judged yet" in invoke("sample", "show", "CD008803", str(drawn["id"]), "--db", demo_db)[1]
