"""Seeing the store through the CLI, on SQLite and PostgreSQL: ``topics`` and ``queue list`` print the services'
rows as a table, JSON or CSV, and ``import run --topic`` stores only the chosen topics; bad input is one line,
exit code 2, and the database unchanged."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from sqlalchemy import Engine, func, select
from typer.testing import CliRunner

from reviewdepth.cli.app import create_cli
from reviewdepth.services.admin.topics import create_topic, list_topics
from reviewdepth.services.answers.monitor import build_monitor, topic_statuses
from reviewdepth.services.answers.queues import list_queues
from reviewdepth.store.models import ImportRecord, Judgment, Queue, QueueEntry, Topic


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(create_cli(), list(args))
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


def counts(engine: Engine) -> tuple[int, ...]:
    with engine.connect() as conn:
        return tuple(conn.execute(select(func.count()).select_from(t)).scalar_one()
                     for t in (Topic, Queue, QueueEntry, ImportRecord, Judgment))


def one_error_line(err: str, *parts: str) -> None:
    assert err.count("\n") == 1 and err.startswith("reviewdepth: error: "), err
    for part in parts:
        assert part in err, err


def test_topics_and_queues(engine: Engine, empty_db_url: str, tmp_path: Path) -> None:
    db = ("--db", empty_db_url)
    code, out, err = invoke("topics", *db)
    assert (code, err) == (0, "") and out.count("\n") == 1 and "no topics in the store yet" in out
    code, out, err = invoke("topics", "--format", "json", *db)
    assert code == 0 and json.loads(out) == [] and "no topics in the store yet" in err

    run = tmp_path / "two.run"
    run.write_text("".join(f"{t} Q0 {t}-{i} {i} {9 - i} sys\n" for t in ("T1", "T2") for i in range(1, 6)))
    assert invoke("import", "run", str(run), "--topic", "T2", *db)[0] == 0
    assert invoke("judge", "T2", "T2-1", "1", "--reviewer", "ana", *db)[0] == 0
    assert invoke("judge", "T2", "T2-2", "0", "--reviewer", "ana", *db)[0] == 0
    create_topic(engine, "empty")

    code, out, _ = invoke("topics", "--format", "json", *db)
    statuses = topic_statuses(engine, ["T2", "empty"])
    assert code == 0 and json.loads(out) == [
        {**r.as_dict(), "status": statuses[r.name][0], "status_text": statuses[r.name][1]} for r in list_topics(engine)]
    code, out, _ = invoke("topics", "--format", "csv", *db)
    assert code == 0 and list(csv.reader(io.StringIO(out)))[:3] == [
        ["topic", "status", "queues", "newest_queue", "queue_size", "reviewed", "relevant_found_in_reviewed",
         "judgments", "last_activity", "screening_order", "status_text"],
        ["T2", "unknown", "1", "sys", "5", "2", "1", "2", list_topics(engine)[0].as_dict()["last_activity"], "queue",
         build_monitor(engine, "T2").topic_status.text],
        ["empty", "no queue", "0", "", "", "", "", "0", "", "queue", "no queue yet: import a run"]]
    code, out, _ = invoke("topics", *db)
    # by the topic column (the first word of each row under the heading's rule): a timestamp holds "T1" too
    body = out.split("─\n", 1)[1]
    shown = {line.split()[0] for line in body.splitlines() if line.strip()}
    assert code == 0 and {"T2", "empty"} <= shown and "T1" not in shown

    code, out, _ = invoke("queue", "list", "T2", "--format", "json", *db)
    assert code == 0 and json.loads(out) == [q.as_dict() for q in list_queues(engine, "T2")]
    assert [(q["name"], q["size"], q["newest"]) for q in json.loads(out)] == [("sys", 5, True)]
    code, out, _ = invoke("queue", "list", "T2", "--format", "csv", *db)
    assert code == 0 and out.splitlines()[0] == "name,size,ordering,source,run_tag,threshold_rank,created_at,newest"
    code, out, _ = invoke("queue", "list", "T2", *db)
    assert code == 0 and "sys" in out and "yes" in out and "True" not in out  # no Python literal in a table
    code, out, _ = invoke("queue", "list", "empty", *db)
    assert code == 0 and out == "topic 'empty' has no queue yet: reviewdepth import run FILE\n"

    before = counts(engine)
    code, out, err = invoke("queue", "list", "nope", *db)
    assert (code, out) == (2, "")
    one_error_line(err, "unknown topic 'nope'")
    assert counts(engine) == before


def test_import_run_topic_option(engine: Engine, empty_db_url: str, tmp_path: Path) -> None:
    db = ("--db", empty_db_url)
    run = tmp_path / "three.run"
    run.write_text("".join(f"{t} Q0 {t}-{i} {i} {9 - i} sys\n" for t in ("A", "B", "C") for i in range(1, 4)))
    before = counts(engine)
    code, out, err = invoke("import", "run", str(run), "--topic", "A", "--topic", "Z", *db)
    assert (code, out) == (2, "")
    one_error_line(err, f"{run}: field --topic: topic 'Z' is not in the file (it holds topics 'A', 'B', 'C')")
    assert counts(engine) == before

    code, out, _ = invoke("import", "run", str(run), "--topic", "A", "--topic", "C", *db)
    assert code == 0 and out.startswith("imported 6 ranked documents into queue 'sys' of 2 topics")
    assert [t.name for t in list_topics(engine)] == ["A", "C"]
    stored = counts(engine)
    code, out, err = invoke("import", "run", str(run), "--topic", "C", "--queue", "other", *db)
    assert code == 2
    one_error_line(err, "topic 'C' of this file", "already imported as import 1", "--again")
    code, out, err = invoke("import", "run", str(run), *db)
    assert code == 2
    one_error_line(err, "topics 'A', 'C' of this file", "or --topic for its other topics")
    assert counts(engine) == stored
    code, out, _ = invoke("import", "run", str(run), "--topic", "B", *db)
    assert code == 0 and "3 ranked documents" in out and [t.name for t in list_topics(engine)] == ["A", "C", "B"]
