"""`reviewdepth simulate --cost review=R,sample=S` (issue 29, item 3): the cost column is the median over every run
of (R·reviewed + S·sampled)/(R·d*), recomputed here from the runs; with unit costs it equals the total ratio; the
planned policy weighs the costs it is given; a bad cost is one line and exit 2."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import numpy as np
from typer.testing import CliRunner

from reviewdepth.cli.app import create_cli
from reviewdepth.estimation.replay import replay
from reviewdepth.services.simulation.simulate import build_plan, file_source, run_simulation, topic_key

DATA = Path(__file__).resolve().parents[1] / "data" / "clef2019"
QRELS = str(DATA / "CD012551.abs.qrels")
RUN = str(DATA / "CD012551.sheffield-baseline.run")
FILES = ("--qrels", QRELS, "--run", RUN)


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(create_cli(), ["simulate", *args])
    return result.exit_code, result.stdout, result.stderr


def test_cost_column_is_the_weighted_ratio() -> None:
    code, out, err = invoke(*FILES, "--design", "audit", "--every", "10", "--looks", "every:50", "--replicates", "12",
                            "--seed", "3", "--cost", "review=1,sample=3", "--format", "csv")
    assert code == 0, err
    rows = {r["rule"]: r for r in csv.DictReader(io.StringIO(out))}
    assert {r["review_cost"] for r in rows.values()} == {"1.0"} and {r["sample_cost"] for r in rows.values()} == {"3.0"}
    # the same runs, from the engine directly
    source = file_source(QRELS, RUN)
    plan = build_plan(design="audit", every=10, look_every=50, replicates=12, seed=3, review_cost=1, sample_cost=3)
    [queue] = source.queues
    runs = replay(queue.labels, plan, topic_key(queue.name))
    for name, r in runs.items():
        expected = float(np.median((r.depth + 3 * r.sampled) / r.oracle_depth))
        assert float(rows[name]["cost_ratio_median"]) == expected, name
    assert any(float(rows[n]["cost_ratio_median"]) > float(rows[n]["total_ratio_median"]) for n in rows)
    code, out, _ = invoke(*FILES, "--design", "audit", "--every", "10", "--looks", "every:50", "--replicates", "12",
                          "--seed", "3", "--cost", "review=1,sample=3")
    assert code == 0 and "costs review 1, sample 3 per document" in out


def test_unit_costs_give_the_total_ratio_and_the_planned_policy_weighs_costs() -> None:
    source = file_source(QRELS, RUN)
    unit = run_simulation(source, build_plan(design="planned", look_every=50, replicates=12, seed=5))
    assert all(r.cost_ratio_median == r.total_ratio_median for r in unit.rules)
    dear = run_simulation(source, build_plan(design="planned", look_every=50, replicates=12, seed=5,
                                             sample_cost=5))
    u = next(r for r in unit.rules if r.rule == "planned")
    d = next(r for r in dear.rules if r.rule == "planned")
    # audit documents five times dearer: the policy reviews at least as deep before auditing, and audits less
    assert d.reviewed_ratio_median is not None and u.reviewed_ratio_median is not None
    assert d.reviewed_ratio_median >= u.reviewed_ratio_median
    assert (d.total_ratio_median or 0) - d.reviewed_ratio_median <= (u.total_ratio_median or 0) - \
        u.reviewed_ratio_median
    assert dear.settings.sample_cost == 5 and unit.settings.sample_cost == 1


def test_bad_cost_is_one_line() -> None:
    for bad in ("review=0", "sample=x", "senior=2"):
        code, _, err = invoke(*FILES, "--design", "audit", "--every", "10", "--cost", bad)
        assert code == 2 and "cost" in err and len(err.strip().splitlines()) == 1, (bad, err)
