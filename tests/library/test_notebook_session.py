"""docs/examples/notebook_session.py runs from start to end against the CLEF 2017 and SYNERGY data and a real
``reviewdepth serve`` (uvicorn, a free port), and what it prints says the server's answers are the library's."""

from __future__ import annotations

import csv
import gzip
import math
import os
import subprocess
import sys
from pathlib import Path

from ..api.server import started_server
from ..conftest import shared_data

SCRIPT = Path(__file__).parents[2] / "docs" / "examples" / "notebook_session.py"


def test_the_notebook_session_runs_against_a_live_server(tmp_path: Path) -> None:
    data = shared_data()
    db_url = f"sqlite:///{tmp_path / 'server.sqlite3'}"
    env = {**os.environ, "REVIEWDEPTH_DATABASE_URL": db_url, "OPENBLAS_NUM_THREADS": "1"}
    command = [sys.executable, "-m", "reviewdepth.cli.app"]
    # from tmp_path: from the checkout's root `-m` would find the source folder before the installed package
    subprocess.run([*command, "db", "upgrade"], env=env, check=True, capture_output=True, timeout=120, cwd=tmp_path)
    key = subprocess.run([*command, "keys", "create", "--reviewer", "ana"], env=env, check=True,
                         capture_output=True, text=True, timeout=120, cwd=tmp_path).stdout.strip()
    with started_server(db_url, tmp_path) as server:
        done = subprocess.run([sys.executable, str(SCRIPT), str(data), server.base, key], env=env,
                              capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    with gzip.open(data / "clef-tar-2017" / "qrels" / "qrel_abs_test.txt.gz", "rt") as handle:
        rows = [line.split() for line in handle if line.strip()]
    assert lines[0] == f"qrels: {len(rows):,} judgments over {len({r[0] for r in rows})} topics; 6 runs"
    # the depth of a completed review in file order, counted here: the rank of the ceil(0.95 R)-th relevant record
    with gzip.open(data / "synergy" / "Cohen_2006_ADHD_ids.csv.gz", "rt") as handle:
        labels = [int(row["label_included"]) for row in csv.DictReader(handle)]
    needed = math.ceil(0.95 * sum(labels))
    ranks = [i for i, y in enumerate(labels, start=1) if y]
    assert f"target 0.95: reached, depth {ranks[needed - 1]} ({needed} relevant needed)" in lines
    server_lines = [line for line in lines if line.startswith("server:")]
    assert len(server_lines) == 2 and all(line.endswith("True") for line in server_lines), server_lines
