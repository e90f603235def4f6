"""`reviewdepth portfolio` on SQLite and PostgreSQL: add refuses a topic that is not fully judged on one line
naming it (exit 2, nothing stored), list and remove, calibrate stores what the service stores, and `reviewdepth
report` then shows the calibration beside the heuristic rows in every format (the row text of the service)."""

from __future__ import annotations

import csv
import io
import json

from sqlalchemy import Engine
from typer.testing import CliRunner

from reviewdepth.cli.app import create_cli
from reviewdepth.estimation.rules import EVALUATED
from reviewdepth.services.simulation.portfolio import calibrated_rules, latest_calibration, list_portfolio

from ..services.test_portfolio import make_topic


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(create_cli(), list(args))
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


def test_portfolio_commands_and_the_calibrated_report(engine: Engine, empty_db_url: str) -> None:
    db = ("--db", empty_db_url)
    for name in "AB":
        make_topic(engine, name)
    make_topic(engine, "C", judged=300)  # half judged: the live topic of the report

    code, out, err = invoke("portfolio", "add", "A", "C", *db)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "C (300 of 600 documents of queue 'q' unjudged)" in err and "Traceback" not in err
    assert list_portfolio(engine) == []

    code, out, _ = invoke("portfolio", "add", "A", "B", "--reviewer", "ana", *db)
    assert code == 0 and [line.split("\t")[0] for line in out.splitlines()] == ["A", "B"]
    code, out, _ = invoke("portfolio", "list", "--format", "json", *db)
    assert code == 0 and [t["topic"] for t in json.loads(out)["topics"]] == ["A", "B"]
    assert json.loads(out)["calibration"] is None

    _, before, _ = invoke("report", "C", "--format", "json", *db)
    _, table_before, _ = invoke("report", "C", *db)
    code, out, err = invoke("portfolio", "calibrate", "--looks", "every:25", "--format", "json", *db)
    assert code == 0, err
    stored = latest_calibration(engine)
    assert stored is not None and json.loads(out) == stored.as_dict() and stored.topic_count == 2
    safe = stored.rule("safe")  # SAFE is calibrated like every heuristic of the design none, and labelled so
    assert safe is not None and safe["kind"] == "heuristic" and "past reviews" in safe["text"]

    code, after, _ = invoke("report", "C", "--format", "json", *db)
    assert code == 0 and after != before
    rows = {row["rule"]: row for row in json.loads(after)["stopping"]}
    assert rows["knee"]["calibration"]["text"] == stored.rule("knee")["text"]  # type: ignore[index]
    assert {r for r, row in rows.items() if "calibration" in row} \
        == set(calibrated_rules("none")) & {r.name for r in EVALUATED} >= {"knee", "budget"}
    assert [{k: v for k, v in row.items() if k != "calibration"} for row in json.loads(after)["stopping"]] \
        == json.loads(before)["stopping"]

    _, table, _ = invoke("report", "C", *db)
    assert "portfolio" in table and "portfolio" not in table_before
    _, page, _ = invoke("report", "C", "--format", "html", *db)
    assert "On the team&#39;s portfolio" in page or "On the team's portfolio" in page
    _, csv_text, _ = invoke("report", "C", "--format", "csv", *db)
    found = {(r[1], r[2]): r[3] for r in csv.reader(io.StringIO(csv_text)) if r and r[0] == "stopping"}
    assert found[("knee", "calibration_text")] == stored.rule("knee")["text"]  # type: ignore[index]
    assert found[("knee", "calibration_topics")] == "2"

    code, out, _ = invoke("portfolio", "remove", "B", *db)
    assert code == 0 and [e.topic for e in list_portfolio(engine)] == ["A"]
    code, _, err = invoke("portfolio", "remove", "B", *db)
    assert code == 2 and "not in the portfolio: B" in err
