"""Store commands through the CLI: db upgrade/current/downgrade, imports, judge, judgments, queue show."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from reviewdepth.cli.app import create_cli


def invoke(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(create_cli(), list(args), env=env)
    return result.exit_code, result.stdout, result.stderr


def test_full_cycle_on_an_explicit_database(tmp_path: Path, trec_data: Path) -> None:
    db = f"sqlite:///{tmp_path / 'x.db'}"
    code, _, err = invoke("import", "qrels", str(trec_data / "qrels.test"), "--db", db)
    assert code == 2 and "reviewdepth db upgrade" in err  # schema missing: the user is told what to run
    assert invoke("db", "current", "--db", db)[1].startswith("current: none")
    assert invoke("db", "upgrade", "--db", db)[0] == 0
    assert invoke("import", "qrels", str(trec_data / "qrels.test"), "--db", db)[0] == 0
    code, out, _ = invoke("import", "run", str(trec_data / "results.test"), "--order", "trec_eval", "--db", db)
    assert code == 0 and "1,500 ranked documents" in out
    code, _, err = invoke("import", "qrels", str(trec_data / "qrels.test"), "--db", db)
    assert code == 2 and "already imported" in err
    code, out, _ = invoke("queue", "show", "302", "--format", "json", "--db", db)
    shown = json.loads(out)
    assert shown["measures"]["num_rel"] == 77 and round(shown["measures"]["map"], 4) == 0.4175
    code, out, _ = invoke("judge", "302", "NEWDOC", "yes", "--reviewer", "ana", "--note", "late find",
                          "--allow-unqueued", "--db", db)
    assert code == 0 and "relevant" in out
    code, out, _ = invoke("judgments", "302", "--format", "json", "--reviewer", "ana", "--db", db)
    assert [(j["doc_id"], j["note"]) for j in json.loads(out)] == [("NEWDOC", "late find")]
    code, out, _ = invoke("judgments", "302", "--format", "csv", "--db", db)
    in_302 = sum(1 for line in (trec_data / "qrels.test").read_text().splitlines() if line.split()[0] == "302")
    assert out.splitlines()[0].startswith("id,topic,doc_id,label")
    assert len(out.splitlines()) == 1 + in_302 + 1
    assert invoke("db", "downgrade", "base", "--db", db, "--yes")[0] == 0
    assert invoke("db", "current", "--db", db)[1].startswith("current: none")


def test_bad_import_exits_2_and_names_the_line(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'x.db'}"
    invoke("db", "upgrade", "--db", db)
    bad = tmp_path / "bad.qrels"
    bad.write_text("1 0 a 1\n1 0 b 1 extra\n")
    code, _, err = invoke("import", "qrels", str(bad), "--db", db)
    assert code == 2 and f"{bad}:2" in err
    code, _, err = invoke("judge", "1", "a", "1", "--role", "boss", "--db", db)
    assert code == 2 and "Invalid value for '--role': 'boss' is not one of 'review', 'sample'" in err


def test_environment_variable_and_embedded_default(tmp_path: Path, trec_data: Path) -> None:
    env = {"REVIEWDEPTH_DATABASE_URL": f"sqlite:///{tmp_path / 'env.db'}"}
    assert invoke("db", "upgrade", env=env)[0] == 0
    assert (tmp_path / "env.db").exists()
    # the embedded default is created and migrated on first use, and the user is told
    home = {k: v for k, v in os.environ.items() if k != "REVIEWDEPTH_DATABASE_URL"}
    home["XDG_DATA_HOME"] = str(tmp_path / "data")
    exe = Path(sys.executable).parent / "reviewdepth"
    done = subprocess.run([str(exe), "judge", "T", "d1", "1", "--reviewer", "ana"], env=home, capture_output=True,
                          check=False, cwd=tmp_path)
    assert done.returncode == 2 and b"unknown topic 'T'" in done.stderr
    assert b"created/updated the embedded database" in done.stderr
    assert (tmp_path / "data" / "reviewdepth" / "reviewdepth.sqlite3").exists()
    done = subprocess.run([str(exe), "import", "run", str(trec_data / "results.trunc")], env=home,
                          capture_output=True, check=False, cwd=tmp_path)
    assert done.returncode == 0 and b"created/updated" not in done.stderr
