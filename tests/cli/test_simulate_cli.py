"""`reviewdepth simulate`: every format prints what `render` gives for the service's report (files and store alike,
on SQLite and PostgreSQL), -o writes the file; bad input is one line naming the option or file and exit 2 with the
database unchanged; an interrupted run prints the partial report and exits 130."""

from __future__ import annotations

import csv
import functools
import io
import json
from pathlib import Path

import pytest
from sqlalchemy import Engine, func, select
from typer.testing import CliRunner

from reviewdepth.cli import simulate_cmds
from reviewdepth.cli.app import create_cli
from reviewdepth.estimation.replay import CHUNK, rules_for
from reviewdepth.report.render import render
from reviewdepth.report.simulation_model import SimulationReport
from reviewdepth.services.files.imports import import_qrels, import_run
from reviewdepth.services.review.batches import BatchItem, record_batch
from reviewdepth.services.simulation.simulate import build_plan, file_source, run_simulation
from reviewdepth.store.models import Judgment, Queue, Topic

DATA = Path(__file__).resolve().parents[1] / "data" / "clef2019"
QRELS = str(DATA / "CD012551.abs.qrels")
RUN = str(DATA / "CD012551.sheffield-baseline.run")
PLAN = ("--design", "audit", "--every", "10", "--looks", "every:50", "--replicates", "12", "--seed", "3")
FILES = ("--qrels", QRELS, "--run", RUN)


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(create_cli(), ["simulate", *args])
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


@functools.cache
def expected_report() -> SimulationReport:
    plan = build_plan(design="audit", every=10, look_every=50, replicates=12, seed=3)
    return run_simulation(file_source(QRELS, RUN), plan)


def expected(fmt: str) -> str:
    return render(expected_report(), fmt)  # type: ignore[arg-type]


def test_every_format(tmp_path: Path) -> None:
    code, out, _ = invoke(*FILES, *PLAN, "--format", "json")
    assert code == 0 and out == expected("json")
    shown = json.loads(out)
    assert [r["rule"] for r in shown["rules"]] == list(rules_for("audit"))
    assert rules_for("audit")[:6] == ("monitor", "fixed", "qbcb", "target", "knee", "budget")
    assert shown["settings"]["replicates_done"] == 12 and shown["settings"]["partial"] is False

    code, out, _ = invoke(*FILES, *PLAN, "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert code == 0 and out == expected("csv")
    assert [(r["rule"], r["kind"], r["runs"]) for r in rows] == [
        (r["rule"], r["kind"], "12") for r in shown["rules"]]

    code, out, _ = invoke(*FILES, *PLAN, "--format", "table")
    assert code == 0
    for rule in ("monitor", "qbcb", "knee", "budget"):
        assert rule in out
    assert "heuristic" in out and "inv.*" in out and "A failure is a stop with recall below the target" in out

    page = tmp_path / "sim.html"
    code, _, err = invoke(*FILES, *PLAN, "--format", "html", "-o", str(page))
    html = page.read_text(encoding="utf-8")
    assert code == 0 and err == f"wrote {page}\n" and html == expected("html")
    assert html.count("<svg") == len(rules_for("audit"))
    assert "heuristic (no guarantee)" in html and "invalid as used" in html
    assert "<script" not in html


def test_store_topics_give_the_files_figures(engine: Engine, empty_db_url: str) -> None:
    import_run(engine, RUN)
    import_qrels(engine, QRELS)
    code, out, _ = invoke("CD012551", *PLAN, "--format", "json", "--db", empty_db_url)
    assert code == 0
    from_store, from_files = json.loads(out), json.loads(expected("json"))
    assert from_store["rules"] == from_files["rules"] and from_store["charts"] == from_files["charts"]
    code, out, _ = invoke(*PLAN, "--format", "json", "--db", empty_db_url)  # no topic: every fully judged one
    assert code == 0 and json.loads(out)["rules"] == from_files["rules"]


def counts(engine: Engine) -> tuple[int, ...]:
    with engine.connect() as conn:
        return tuple(conn.execute(select(func.count()).select_from(t)).scalar_one() for t in (Topic, Queue, Judgment))


BAD_INPUTS = [
    (("--rule", "nope"), "rule: unknown rule 'nope'"),
    (("--design", "none", "--rule", "monitor"), "rule: 'monitor' does not apply to the design 'none'"),
    (("--looks", "100"), "looks: expected every:K"),
    (("--replicates", "0"), "replicates: must be a whole number >= 1"),
    (("--target", "1"), "target: no random sample can certify recall 1"),
    (("--workers", "0"), "--workers: must be a whole number >= 1"),
    (("--workers", "2", "--dask", "tcp://127.0.0.1:8786"), "--workers and --dask: give one of them"),
    (("--design", "audit"), "every: the audit design needs one audit document per every >= 1"),
    (("CD012551",), "topic 'CD012551': queue 'baseline' has 561 unjudged documents of 591"),
    (("nope",), "unknown topic 'nope'"),
    (("--qrels", QRELS), "--qrels and --run: give both"),
    (("--qrels", "/nonexistent/q", "--run", RUN), "/nonexistent/q: cannot read file"),
]


def test_bad_input_is_one_line_and_exit_2(engine: Engine, empty_db_url: str) -> None:
    """Each case on a store holding CD012551's run with 30 documents judged (one database for all the cases)."""
    import_run(engine, RUN)
    docs = [line.split()[2] for line in Path(RUN).read_text().splitlines()[:30]]
    record_batch(engine, "CD012551", [BatchItem(d, "0") for d in docs], reviewer="ana", source="test")
    before = counts(engine)
    for args, message in BAD_INPUTS:
        base = ["--design", "audit", "--every", "10"] if "--design" not in args else []
        code, out, err = invoke(*base, *args, "--db", empty_db_url)
        assert (code, out) == (2, ""), (args, err)
        assert err.count("\n") == 1 and err.startswith("reviewdepth: error: ") and message in err, (args, err)
    assert counts(engine) == before


def test_bad_file_line_is_named(tmp_path: Path) -> None:
    bad = tmp_path / "bad.qrels"
    bad.write_text("CD012551 0 d1 1\nCD012551 0 d2 x\n")
    code, out, err = invoke("--qrels", str(bad), "--run", RUN, *PLAN)
    assert (code, out) == (2, "") and err.startswith(f"reviewdepth: error: {bad}:2: field rel: ")
    assert err.count("\n") == 1


def test_ctrl_c_prints_the_partial_report_and_exits_130(monkeypatch: pytest.MonkeyPatch) -> None:
    replicates = str(CHUNK + 5)  # two chunks: the first one finishes, then Ctrl-C

    def interrupt(self: object, done: int, total: int) -> None:
        if done == 1:
            raise KeyboardInterrupt

    monkeypatch.setattr(simulate_cmds._Progress, "__call__", interrupt)
    args = (*FILES, "--design", "none", "--replicates", replicates, "--progress", "--format", "json")
    code, out, err = invoke(*args)
    assert code == 130
    shown = json.loads(out)
    assert shown["settings"]["partial"] is True and shown["settings"]["replicates_done"] == CHUNK
    assert f"the figures cover {CHUNK} of {CHUNK + 5} replicates per topic" in err
    full = render(run_simulation(file_source(QRELS, RUN), build_plan(design="none", replicates=CHUNK)), "json")
    assert shown["rules"] == json.loads(full)["rules"]


def test_progress_lines_without_a_terminal() -> None:
    code, _, err = invoke(*FILES, "--design", "none", "--replicates", str(3 * CHUNK), "--progress")
    assert code == 0
    assert err.splitlines() == [f"reviewdepth: simulate: {n} of 3 jobs done" for n in (1, 2, 3)]


def test_rule_planned_brings_its_design_and_is_certified() -> None:
    code, out, err = invoke(*FILES, "--rule", "planned", "--target", "0.8", "--looks", "every:20", "--replicates",
                            "30", "--seed", "5", "--format", "json")
    assert code == 0, err
    shown = json.loads(out)
    assert shown["settings"]["design"] == "planned"
    [rule] = shown["rules"]
    assert rule["rule"] == "planned" and rule["kind"] == "certified"
    again = invoke(*FILES, "--rule", "planned", "--target", "0.8", "--looks", "every:20", "--replicates", "30",
                   "--seed", "5", "--format", "json")
    assert again[1] == out  # the same seed, the same bytes


def test_safe_is_replayed_labelled_heuristic_and_seeded() -> None:
    """SAFE (design none): the command prints the service's report, the rule labelled heuristic; the same seed gives
    the same bytes."""
    args = (*FILES, "--design", "none", "--rule", "safe", "--rule", "knee", "--looks", "every:10", "--replicates",
            "20", "--seed", "4", "--format", "json")
    code, out, _ = invoke(*args)
    plan = build_plan(design="none", rules=["safe", "knee"], look_every=10, replicates=20, seed=4)
    assert code == 0 and out == render(run_simulation(file_source(QRELS, RUN), plan), "json")
    assert invoke(*args)[1] == out
    shown = {r["rule"]: r for r in json.loads(out)["rules"]}
    assert shown["safe"]["kind"] == "heuristic" and shown["safe"]["runs"] == 20
    code, table, _ = invoke(*args[:-1], "table")
    assert code == 0 and "safe" in table and "heur." in table
