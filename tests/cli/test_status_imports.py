"""The status path imports only what it uses (issue 30): `watch --once`, `report` (table and JSON), the monitor
and dashboard services behind ``GET /topics/{topic}/monitor`` and ``GET /``, and `compare --test t` run in a fresh
interpreter, which then lists the modules it loaded: no ``scipy.stats`` (about half a second of CPU to import, for
tails that ``scipy.special`` computes), and no web framework, plotting or migration library in a CLI command.

The topics make every rule of the status path compute: ``ranked`` has an audit stream and no rest sample (so the
ranked-urn hypergeometric heuristic runs over every urn), ``sampled`` has an audit stream and a rest sample (the
random-urn test, elusion, the sample rules)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import Engine

from reviewdepth.services.admin.topics import create_topic
from reviewdepth.services.files.rankings import RankedDocument, store_ranking
from reviewdepth.services.review.audit_stream import create_stream, next_documents
from reviewdepth.services.review.batches import BatchItem, record_batch
from reviewdepth.services.review.samples import draw_sample

# what no CLI status command may load; the services behind the API's routes may not load scipy.stats either
NOT_IN_CLI = ("scipy.stats", "fastapi", "starlette", "uvicorn", "matplotlib", "alembic", "httpx", "jinja2",
              "sqlalchemy.dialects.postgresql", "psycopg")  # (these tests' stores are SQLite: no PostgreSQL dialect)
NOT_IN_SERVICES = ("scipy.stats", "typer")

# runs in the child: `args` through the installed entry point, then the loaded modules as JSON on stderr's last
# line (the report and watch commands end with os._exit, which skips atexit: it is wrapped instead)
CHILD = """
import json, os, sys
forbidden = json.loads(sys.argv[1])
sys.argv = ["reviewdepth", *sys.argv[2:]]
end = os._exit

def report(code=0):
    sys.stdout.flush()
    loaded = sorted(m for m in sys.modules if m.split(".")[0] in {f.split(".")[0] for f in forbidden}
                    and any(m == f or m.startswith(f + ".") for f in forbidden))
    sys.stderr.write("\\n" + json.dumps(loaded) + "\\n")
    sys.stderr.flush()
    end(code if isinstance(code, int) else 1)

os._exit = report
from reviewdepth.cli.app import main
try:
    main()
except SystemExit as done:
    report(done.code or 0)
report(0)
"""

SERVICES = """
import json, sys
forbidden = json.loads(sys.argv[1])
from reviewdepth.report.monitor_render import render_dashboard
from reviewdepth.services.answers.monitor import build_dashboard, build_monitor
from reviewdepth.store.engine import create_engine_for
engine = create_engine_for(sys.argv[2])
for topic in ("ranked", "sampled"):
    json.dumps(build_monitor(engine, topic, target="0.9").to_dict())
render_dashboard(build_dashboard(engine, target="0.9"))
print(json.dumps(sorted(m for m in sys.modules if any(m == f or m.startswith(f + ".") for f in forbidden))))
"""


def build(engine: Engine, topic: str, *, sample: int, quiet: bool = False) -> None:
    rng = np.random.default_rng(len(topic))
    docs = [f"{topic}{i:04d}" for i in range(600)]
    relevant = {d for d, r in zip(docs, rng.random(600) < 0.25 * np.exp(-np.arange(600) / 90), strict=True) if r}
    if quiet:  # two relevant documents: the point-process heuristic stops at its gate, before any curve fit
        relevant = set(docs[:2])
    create_topic(engine, topic, population_size=600)
    store_ranking(engine, topic, "q", [RankedDocument(d, float(-i)) for i, d in enumerate(docs)])
    create_stream(engine, topic, every=4, seed=3, reviewer="ana")
    served = next_documents(engine, topic, count=250).documents
    record_batch(engine, topic, [BatchItem(d.doc_id, str(int(d.doc_id in relevant)), role=d.role) for d in served],
                 reviewer="ana", source="test")
    if sample:
        drawn = draw_sample(engine, topic, sample, frame="unreviewed", seed=5).doc_ids
        record_batch(engine, topic, [BatchItem(d, str(int(d in relevant)), role="sample") for d in drawn],
                     reviewer="sam", source="test", allow_unqueued=True)


@pytest.fixture
def store(engine: Engine, empty_db_url: str) -> str:
    build(engine, "ranked", sample=0)
    build(engine, "sampled", sample=80)
    build(engine, "quiet", sample=0, quiet=True)
    return empty_db_url


def run_child(code: str, *args: str) -> tuple[int, str, list[str]]:
    done = subprocess.run([sys.executable, "-P", "-c", code, *args], capture_output=True, text=True, timeout=120)
    lines = done.stderr.rstrip("\n").splitlines()
    assert lines, done
    try:
        loaded = json.loads(lines[-1])
    except json.JSONDecodeError:
        raise AssertionError(done.stderr) from None
    return done.returncode, done.stdout, loaded


@pytest.mark.sqlite_only
@pytest.mark.parametrize("args", [
    ("watch", "ranked", "--once"), ("watch", "sampled", "--once", "--format", "json"),
    ("report", "ranked"), ("report", "sampled", "--format", "json"),
])
def test_status_commands_load_no_scipy_stats_nor_framework(store: str, args: tuple[str, ...]) -> None:
    code, out, loaded = run_child(CHILD, json.dumps(NOT_IN_CLI), *args, "--db", store)
    assert code in (0, 1) and out.strip(), (code, out)  # the command did its work (watch --once: 1 = continue)
    if args[0] == "report" or "--format" not in args:
        assert "hypergeometric" in out  # the hypergeometric rule (ranked or random urn) was computed and shown
    assert loaded == [], loaded


@pytest.mark.sqlite_only
@pytest.mark.parametrize("args", [("watch", "quiet", "--once"), ("report", "quiet"), ("topics",)])
def test_no_curve_fit_no_scipy_optimize(store: str, args: tuple[str, ...]) -> None:
    """``scipy.optimize`` (0.2-0.3 s of CPU to import) is loaded by the point-process heuristic's curve fit only,
    not ahead of it: a topic whose fit never runs, and the topic list, do without it."""
    code, out, loaded = run_child(CHILD, json.dumps([*NOT_IN_CLI, "scipy.optimize"]), *args, "--db", store)
    assert code in (0, 1) and out.strip(), (code, out)
    assert loaded == [], loaded


@pytest.mark.sqlite_only
def test_monitor_and_dashboard_services_load_no_scipy_stats(store: str) -> None:
    done = subprocess.run([sys.executable, "-P", "-c", SERVICES, json.dumps(NOT_IN_SERVICES), store],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == []


def test_compare_t_loads_no_scipy_stats(tmp_path: Path) -> None:
    qrels = tmp_path / "q.qrels"
    qrels.write_text("".join(f"{q} 0 d{d} {int((q + d) % 3 == 0)}\n" for q in range(1, 9) for d in range(12)))
    runs = []
    for name, shift in (("base", 0), ("other", 1)):
        run = tmp_path / f"{name}.run"
        run.write_text("".join(f"{q} Q0 d{(d * 5 + q + shift) % 12} {d + 1} {12 - d} {name}\n"
                               for q in range(1, 9) for d in range(12)))
        runs.append(str(run))
    code, out, loaded = run_child(CHILD, json.dumps(NOT_IN_CLI), "compare", str(qrels), *runs, "--test", "t",
                                  "-m", "map")
    assert code == 0 and "map" in out, out
    assert loaded == [], loaded
