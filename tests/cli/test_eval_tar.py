"""`reviewdepth eval --suite tar` end to end through the installed console script."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from reviewdepth.cli.app import create_cli

TESTS = Path(__file__).resolve().parents[1]
SEED = TESTS / "data" / "seed"
TAR = TESTS / "data" / "tar"
SHARED = TESTS.parent.parent / "shared" / "data"


def executable() -> str:
    local = Path(sys.executable).parent / "reviewdepth"
    found = str(local) if local.exists() else shutil.which("reviewdepth")
    assert found, "the reviewdepth console script is not installed"
    return found


def run_cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([executable(), *map(str, args)], capture_output=True, text=True, timeout=120, check=False)


def tar_lines(out: str) -> dict[tuple[str, str], str]:
    return {(p[0], p[1]): p[2] for p in (line.split("\t") for line in out.splitlines()) if len(p) == 3}


def test_seed_clef2017_line_format() -> None:
    for system, expected in (("A", {"last_rel": "10", "wss_100": "0.167", "wss_95": "0.117", "norm_area": "0.7",
                                    "ap": "0.683", "NCG@10": "0.25", "loss_e": "0.642"}),
                             ("B", {"last_rel": "6", "wss_100": "0.5", "wss_95": "0.45", "norm_area": "0.8",
                                    "ap": "0.525", "NCG@10": "0.0", "NCG@80": "1.0"})):
        done = run_cli("eval", SEED / "seed.qrels", SEED / f"seed.run{system}", "--suite", "tar", "--compat",
                       "clef2017", "--num-docs", "12", "--format", "tar")
        assert done.returncode == 0, done.stderr
        lines = tar_lines(done.stdout)
        assert done.stdout.splitlines()[0] == "q1\ttopic_id\tq1"
        assert {k: lines[("q1", k)] for k in expected} == expected
        assert lines[("ALL", "num_docs")] == "12"


def test_seed_json_ranks_reverse_between_ap_and_recall_measures() -> None:
    values = {}
    for system in ("A", "B"):
        done = run_cli("eval", SEED / "seed.qrels", SEED / f"seed.run{system}", "--suite", "tar", "--num-docs",
                       "12", "--format", "json", "-q")
        assert done.returncode == 0, done.stderr
        body = json.loads(done.stdout)
        assert set(body) == {"per_query", "all"} and set(body["per_query"]) == {"q1"}
        values[system] = body["all"]
    a, b = values["A"], values["B"]
    assert round(a["ap"], 3) == 0.683 and round(b["ap"], 3) == 0.525
    assert (a["last_rel"], b["last_rel"]) == (10, 6)
    assert (round(a["wss_100"], 3), round(b["wss_100"], 3)) == (0.167, 0.5)
    assert (round(a["norm_area"], 2), round(b["norm_area"], 2)) == (0.7, 0.8)
    assert a["ap"] > b["ap"] and b["wss_100"] > a["wss_100"] and b["norm_area"] > a["norm_area"]


def test_csv_table_and_trec_lines() -> None:
    runner = CliRunner()
    app = create_cli()
    args = ["eval", str(SEED / "seed.qrels"), str(SEED / "seed.runB"), "--suite", "tar", "--num-docs", "12"]
    csv_out = runner.invoke(app, [*args, "--format", "csv", "-q"]).stdout.splitlines()
    assert csv_out[0] == "measure,query,value" and "wss_100,q1,0.5" in csv_out and "wss_100,all,0.5" in csv_out
    table = runner.invoke(app, [*args, "--format", "table"])
    assert table.exit_code == 0 and "norm_area" in table.stdout and "0.8" in table.stdout
    trec = runner.invoke(app, [*args, "--format", "trec"]).stdout.splitlines()
    assert "last_rel              \tall\t6.0000" in trec and "num_rels              \tall\t4" in trec
    assert "wss_100               \tall\t0.5000" in trec


def test_asreview_compat() -> None:
    done = run_cli("eval", SEED / "seed.qrels", SEED / "seed.runA", "--suite", "tar", "--compat", "asreview",
                   "--num-docs", "12", "--format", "json")
    body = json.loads(done.stdout)["all"]
    assert body["loss"] == 0.375 and body["rrf@10"] == 0.25 and round(body["wss@95"], 3) == -0.083


def test_threshold_flag_double_charged_cost_compat_versus_clean() -> None:
    compat = run_cli("eval", SEED / "seed.qrels", TAR / "seed.runA.flag3", "--suite", "tar", "--compat",
                     "clef2019", "--num-docs", "12")
    assert compat.returncode == 0, compat.stderr
    lines = tar_lines(compat.stdout)
    assert lines[("q1", "total_cost")] == "43.0" and lines[("q1", "threshold")] == "3"
    assert lines[("q1", "recall_threshold")] == "0.5" and lines[("q1", "recall@1.0%")] == "0.0"
    assert [line.split("\t")[1] for line in compat.stdout.splitlines()].count("threshold") == 4  # printed twice
    clean = run_cli("eval", SEED / "seed.qrels", TAR / "seed.runA.flag3", "--suite", "tar", "--num-docs", "12",
                    "--format", "json")
    body = json.loads(clean.stdout)["all"]
    assert body["utility"] == 3.0 and body["num_shown"] == 3 and body["recall_threshold"] == 0.5


@pytest.mark.parametrize(("args", "message"), [
    (["--compat", "none", str(TAR / "seed.runA.flag3and9")], "seed.runA.flag3and9:9: field action"),
    (["--compat", "clef2019", str(SEED / "seed.runA")], "seed.runA:1: field action: action must be an integer"),
    (["--compat", "clef2017", str(SEED / "seed.runA")], "N = 10 < 10"),
])
def test_bad_input_one_line_exit_2(args: list[str], message: str) -> None:
    run = args.pop()
    done = run_cli("eval", SEED / "seed.qrels", run, "--suite", "tar", *args)
    if "N = 10" in message:  # N = 10 is fine for the 2017 script; 9 is not
        done = run_cli("eval", SEED / "seed.qrels", run, "--suite", "tar", *args, "--num-docs", "9")
        message = "N = 9 < 10"
    assert done.returncode == 2
    assert message in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_duplicates_and_regrouped_topics(tmp_path: Path) -> None:
    lines = (SEED / "seed.runA").read_text().splitlines()
    dup = tmp_path / "dup.run"
    dup.write_text("\n".join([*[line.replace(" Q0 ", " NF ") for line in lines], lines[3].replace(" Q0 ", " NF ")])
                   + "\n")
    compat = run_cli("eval", SEED / "seed.qrels", dup, "--suite", "tar", "--compat", "clef2017")
    assert compat.returncode == 0 and compat.stdout.splitlines()[0] == "q1 Duplicate n2"
    assert tar_lines(compat.stdout)[("q1", "num_shown")] == "10"
    clean = run_cli("eval", SEED / "seed.qrels", dup, "--suite", "tar")
    assert clean.returncode == 2 and "dup.run:11: field docno: duplicate docno 'n2'" in clean.stderr
    split = tmp_path / "split.run"
    split.write_text("q1 NF r1 1 1 t\nq2 NF x 1 1 t\nq1 NF r2 2 1 t\n")
    done = run_cli("eval", SEED / "seed.qrels", split, "--suite", "tar")
    assert done.returncode == 2 and "split.run:3: field topic" in done.stderr


def test_trec_suite_options_stay_separate() -> None:
    done = run_cli("eval", SEED / "seed.qrels", SEED / "seed.runA", "--format", "tar")
    assert done.returncode == 2 and "--suite tar" in done.stderr
    done = run_cli("eval", SEED / "seed.qrels", SEED / "seed.runA", "--compat", "clef2017")
    assert done.returncode == 2
    done = run_cli("eval", SEED / "seed.qrels", SEED / "seed.runA", "--suite", "tar", "-m", "map")
    assert done.returncode == 2 and "--suite trec only" in done.stderr


def test_clef2019_sheffield_run_in_file_order() -> None:
    data = SHARED / "clef-tar-2019"
    if not data.exists():
        pytest.skip(f"shared data not found at {data}")
    qrels = data / "qrels" / "full.test.prognosis.abs.2019.qrels.gz"
    run = data / "runs" / "sheffield" / "Prognosis_sheffield-relevence_feedback.gz"
    file_order = run_cli("eval", qrels, run, "--suite", "tar", "--compat", "clef2019")
    assert file_order.returncode == 0, file_order.stderr
    lines = tar_lines(file_order.stdout)
    assert lines[("ALL", "num_shown")] == "3367" and lines[("ALL", "num_rels")] == "192"
    # the same file ranked by score (trec_eval's rule) is a different ranking: AP differs
    by_file = json.loads(run_cli("eval", qrels, run, "--suite", "tar", "--format", "json").stdout)["all"]
    by_score = json.loads(run_cli("eval", qrels, run, "--suite", "tar", "--run-format", "trec",
                                  "--format", "json").stdout)["all"]
    assert by_file["rels_found"] == by_score["rels_found"] == 192
    assert by_file["ap"] != by_score["ap"]
