"""`reviewdepth eval` end to end: the installed console script, formats, stdin, gzip and bad input."""

from __future__ import annotations

import gzip
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from reviewdepth.cli.app import create_cli


def executable() -> str:
    local = Path(sys.executable).parent / "reviewdepth"
    found = str(local) if local.exists() else shutil.which("reviewdepth")
    assert found, "the reviewdepth console script is not installed"
    return found


def run_cli(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([executable(), *args], input=stdin, capture_output=True, timeout=120, check=False)


def test_console_script_matches_trec_eval_byte_for_byte(trec_data: Path) -> None:
    done = run_cli("eval", str(trec_data / "qrels.test"), str(trec_data / "results.test"))
    assert done.returncode == 0, done.stderr
    assert done.stdout == (trec_data / "out.test").read_bytes()


def test_per_query_all_measures_and_complete(trec_data: Path) -> None:
    done = run_cli("eval", "-q", "-c", "-M", "100", "-m", "all", str(trec_data / "qrels.test"),
                   str(trec_data / "results.trunc"))
    assert done.returncode == 0
    expected = (trec_data / "out.test.aqcM").read_text().splitlines()
    ours = done.stdout.decode().splitlines()
    names = {line.split()[0] for line in ours}
    assert ours == [line for line in expected if line.split()[0] in names]


def test_stdin_and_gzip(tmp_path: Path, trec_data: Path) -> None:
    gz = tmp_path / "qrels.gz"
    gz.write_bytes(gzip.compress((trec_data / "qrels.test").read_bytes()))
    done = run_cli("eval", str(gz), "-", stdin=(trec_data / "results.test").read_bytes())
    assert done.returncode == 0, done.stderr
    assert done.stdout == (trec_data / "out.test").read_bytes()


def test_json_csv_and_table(trec_data: Path) -> None:
    runner = CliRunner()
    app = create_cli()
    args = [str(trec_data / "qrels.test"), str(trec_data / "results.test"), "-q", "-m", "map", "-m", "P.5,10"]
    as_json = json.loads(runner.invoke(app, ["eval", *args, "--format", "json"]).stdout)
    assert set(as_json) == {"per_query", "all"}
    assert round(as_json["all"]["map"], 4) == 0.1785
    assert set(as_json["per_query"]["301"]) == {"map", "P_5", "P_10"}
    csv_out = runner.invoke(app, ["eval", *args, "--format", "csv"]).stdout.splitlines()
    assert csv_out[0] == "measure,query,value"
    assert any(line.startswith("map,all,0.1785") for line in csv_out)
    table = runner.invoke(app, ["eval", *args, "--format", "table"])
    assert table.exit_code == 0 and "map" in table.stdout and "0.1785" in table.stdout


def test_measure_parameters(trec_data: Path) -> None:
    runner = CliRunner()
    out = runner.invoke(create_cli(), ["eval", str(trec_data / "qrels.test"), str(trec_data / "results.test"),
                                       "-m", "P_10", "-m", "recall.5,1000"]).stdout.splitlines()
    assert [line.split()[0] for line in out] == ["P_10", "recall_5", "recall_1000"]


@pytest.mark.parametrize(("qrels", "run", "message"), [
    ("q 0 d 1\n", "q Q0 d 1 1.0\n", "r.txt:1"),
    ("q 0 d 1\nq 0 d 1\n", "q Q0 d 1 1.0 t\n", "q.txt:2: field docno: duplicate docno"),
    ("q 0 d one\n", "q Q0 d 1 1.0 t\n", "q.txt:1: field rel"),
    ("", "q Q0 d 1 1.0 t\n", "q.txt: empty qrels file"),
])
def test_bad_input_exits_2_with_one_clear_line(tmp_path: Path, qrels: str, run: str, message: str) -> None:
    (tmp_path / "q.txt").write_text(qrels)
    (tmp_path / "r.txt").write_text(run)
    done = subprocess.run([executable(), "eval", "q.txt", "r.txt"], cwd=tmp_path, capture_output=True, check=False)
    assert done.returncode == 2
    err = done.stderr.decode()
    assert message in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_missing_file_and_unknown_measure(tmp_path: Path, trec_data: Path) -> None:
    done = run_cli("eval", str(tmp_path / "nope"), str(trec_data / "results.test"))
    assert done.returncode == 2 and b"cannot read file" in done.stderr
    done = run_cli("eval", "-m", "ndcgx", str(trec_data / "qrels.test"), str(trec_data / "results.test"))
    assert done.returncode == 2 and b"unknown measure 'ndcgx'" in done.stderr


def test_help_and_version() -> None:
    done = run_cli("--help")
    assert done.returncode == 0 and b"eval" in done.stdout
    assert run_cli("--version").stdout.startswith(b"reviewdepth ")


def test_cli_module_imports_no_heavy_libraries(tmp_path: Path) -> None:
    """`reviewdepth --help` stays instant: numpy, scipy and SQLAlchemy load only inside command bodies."""
    code = ("import sys; import reviewdepth.cli.app; "
            "print(sorted(m for m in ('numpy', 'scipy', 'sqlalchemy', 'matplotlib', 'fastapi', 'pydantic') "
            "if m in sys.modules))")
    # run outside the checkout so the installed package (with reviewdepth.cli) is the one imported
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, check=True, cwd=tmp_path)
    assert done.stdout.strip() == b"[]"


def test_a_nan_measure_is_minus_nan_in_trec_output_and_null_in_json(tmp_path: Path) -> None:
    # -J leaves query 1 with no document: trec_eval's 0/0 prints "-nan"; JSON has no NaN, so it is null
    (tmp_path / "q").write_text("1 0 d1 1\n2 0 d3 1\n")
    (tmp_path / "r").write_text("1 Q0 x1 1 2.0 r\n2 Q0 d3 1 1.0 r\n")
    args = ["eval", "-J", "-q", "-m", "iprec_at_recall.0", str(tmp_path / "q"), str(tmp_path / "r")]
    trec = CliRunner().invoke(create_cli(), args)
    assert trec.exit_code == 0 and "iprec_at_recall_0.00  \t1\t  -nan" in trec.stdout
    out = CliRunner().invoke(create_cli(), [*args, "--format", "json"])
    assert out.exit_code == 0
    body = json.loads(out.stdout, parse_constant=lambda name: pytest.fail(f"bare {name} in JSON"))
    assert body["per_query"]["1"]["iprec_at_recall_0.00"] is None and body["all"]["iprec_at_recall_0.00"] is None
    assert body["per_query"]["2"]["iprec_at_recall_0.00"] == 1.0
