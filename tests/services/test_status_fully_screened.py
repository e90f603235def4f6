"""Issue 38: one decision at every door, on two states a screening team meets first.

* A fully screened topic (SYNERGY's Donners 2021 labels imported as the population: every record judged, so R is
  known): the report read "reached, by R known" while ``reviewdepth topics``, ``GET /topics`` and the dashboard,
  which did not look at R known without a sample, read "unknown".
* A topic with a queue and nothing judged: the listing's status line said "reviewdepth plan TOPIC" with the
  placeholder, not the topic."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import Engine

from reviewdepth.services.answers.monitor import build_monitor, topic_statuses
from reviewdepth.services.answers.report import ReportOptions, build_report
from reviewdepth.services.files.imports import import_run
from reviewdepth.services.files.records_import import import_records

from ..conftest import shared_data


def test_a_fully_screened_topic_reads_reached_at_every_door(engine: Engine) -> None:
    import_records(engine, str(shared_data("synergy", "Donners_2021_ids.csv.gz")), topic="Donners")
    report = build_report(engine, "Donners", ReportOptions())
    assert report.answer.status == "reached" and report.answer.topic_status.decided_by == "known"
    listed = topic_statuses(engine, ["Donners"])["Donners"]
    monitor = build_monitor(engine, "Donners")
    assert listed[0] == report.answer.topic_status.status == monitor.topic_status.status
    assert listed[1] == report.answer.topic_status.text == monitor.topic_status.text


def test_no_door_prints_the_topic_placeholder(engine: Engine, tmp_path: Path) -> None:
    run = tmp_path / "run.txt"
    run.write_text("".join(f"Q7 Q0 d{i} {i + 1} {100 - i} sys\n" for i in range(50)))
    import_run(engine, str(run))
    word, text = topic_statuses(engine, ["Q7"])["Q7"]
    report = build_report(engine, "Q7", ReportOptions())
    monitor = build_monitor(engine, "Q7")
    for said in (text, report.answer.topic_status.text, monitor.topic_status.text,
                 report.answer.topic_status.next_step or "", *report.answer.topic_status.missing):
        assert "TOPIC" not in said, said
    assert "reviewdepth plan Q7" in text
    assert word == report.answer.topic_status.status == "unknown"


def test_the_prisma_table_prints_words_and_counts_not_python_literals(engine: Engine, empty_db_url: str) -> None:
    import re

    from typer.testing import CliRunner

    from reviewdepth.cli.app import create_cli

    import_records(engine, str(shared_data("synergy", "Donners_2021_ids.csv.gz")), topic="Donners")
    result = CliRunner().invoke(create_cli(), ["prisma", "Donners", "--db", empty_db_url])
    assert result.exit_code == 0, result.output
    assert not re.search(r"\b(True|False|None)\b", result.output), result.output
    assert "stages recorded\tno" in result.output
