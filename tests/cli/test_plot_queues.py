"""``reviewdepth plot TOPIC --queue A --queue B``: several queues of one topic on one chart."""

from __future__ import annotations

import gzip
from pathlib import Path

from typer.testing import CliRunner

from reviewdepth.cli.app import create_cli

DEMO_RUN = Path(__file__).parents[2] / "reviewdepth" / "data" / "demo" / "CD008803.waterloo.A-rank-normal.run.gz"


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(create_cli(), list(args))
    return result.exit_code, result.stdout, result.stderr


def test_two_queues_on_one_chart(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'demo.db'}"
    assert invoke("db", "upgrade", "--db", db)[0] == 0
    assert invoke("demo", "--db", db, "--format", "json")[0] == 0  # queue waterloo-A, its first 1,000 judged
    # the same documents with the judged top 1,000 in reverse order: a second queue over the same judgments
    lines = gzip.decompress(DEMO_RUN.read_bytes()).decode().splitlines()
    docs = [line.split()[2] for line in lines]
    swapped = docs[:1000][::-1] + docs[1000:]
    run = tmp_path / "swapped.run"
    run.write_text("".join(f"CD008803 AF {doc} {i} {-i} SW\n" for i, doc in enumerate(swapped, 1)))
    code, _, err = invoke("import", "run", str(run), "--queue", "swapped", "--db", db)
    assert code == 0, err

    svg = tmp_path / "two.svg"
    code, _, err = invoke("plot", "CD008803", "--queue", "waterloo-A", "--queue", "swapped", "-o", str(svg),
                          "--db", db)
    assert code == 0, err
    text = svg.read_text()
    assert text.startswith("<svg") and "waterloo-A (|R| " in text and "swapped (|R| " in text
    assert "recall (estimated)" in text
    png = tmp_path / "two.png"
    code, _, _ = invoke("plot", "CD008803", "--queue", "waterloo-A", "--queue", "swapped", "--kind", "pr",
                        "-o", str(png), "--db", db)
    assert code == 0 and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    code, _, err = invoke("plot", "CD008803", "--queue", "waterloo-A", "--queue", "nosuch", "-o", str(svg),
                          "--db", db)
    assert code == 2 and "nosuch" in err and len(err.strip().splitlines()) == 1


def test_run_curves_by_hand() -> None:
    from reviewdepth.report.model import Gain
    from reviewdepth.services.evaluation.run_plots import run_curves

    gain, pr = run_curves([0, 1, 1, 0, 1], 4)
    assert gain == Gain(depth=[1, 2, 3, 4, 5], found=[0, 1, 2, 2, 3], relevant_estimate=4)
    assert pr.recall == [0.0, 0.25, 0.5, 0.5, 0.75]
    assert pr.precision == [0.0, 0.5, 2 / 3, 0.5, 0.6]
    assert pr.interpolated_precision == [2 / 3, 2 / 3, 2 / 3, 0.6, 0.6]


def test_run_files_on_one_chart(tmp_path: Path) -> None:
    data = Path(__file__).parents[1] / "data" / "clef2019"
    qrels, run = data / "CD012551.abs.qrels", data / "CD012551.sheffield-baseline.run"
    lines = run.read_text().splitlines()
    reversed_run = tmp_path / "reversed.run"
    reversed_run.write_text("".join(f"{' '.join(line.split()[:3])} {i} {-i} rev\n"
                                    for i, line in enumerate(reversed(lines), 1)))
    svg = tmp_path / "runs.svg"
    code, _, err = invoke("plot", "CD012551", "--qrels", str(qrels), "--run", str(run), "--run", str(reversed_run),
                          "-o", str(svg))
    assert code == 0, err
    relevant = sum(1 for line in qrels.read_text().splitlines() if int(line.split()[3]) > 0)
    text = svg.read_text()
    assert f"CD012551.sheffield-baseline.run (R {relevant})" in text and f"reversed.run (R {relevant})" in text
    code, _, err = invoke("plot", "NOSUCH", "--qrels", str(qrels), "--run", str(run), "-o", str(svg))
    assert code == 2 and "topic 'NOSUCH'" in err and len(err.strip().splitlines()) == 1
    code, _, err = invoke("plot", "CD012551", "--run", str(run), "-o", str(svg))
    assert code == 2 and "--qrels and --run go together" in err
