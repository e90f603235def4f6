"""Issue 39, item 4: one vocabulary in and out. What the tool writes it reads back: ``next --format csv`` (a
``doc_id`` column, refused by ``judge --file``), ``judgments --format csv`` (its descriptive columns), the labels it
prints ("not relevant"); a header-only file is refused by ``import csv`` as by ``judge --file``; contradictory
lines about one document in one file are refused naming both lines; the database unchanged each time."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from sqlalchemy import Engine, func, select
from typer.testing import CliRunner

from reviewdepth.cli.app import create_cli
from reviewdepth.services.rankings import RankedDocument, store_ranking
from reviewdepth.services.topics import create_topic
from reviewdepth.store.models import Judgment


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(create_cli(), list(args))
    return result.exit_code, result.stdout, result.stderr


def _judgments(engine: Engine) -> int:
    with engine.connect() as conn:
        return int(conn.execute(select(func.count()).select_from(Judgment)).scalar_one())


def test_what_the_tool_writes_it_reads_back(engine: Engine, empty_db_url: str, tmp_path: Path) -> None:
    db = ("--db", empty_db_url)
    create_topic(engine, "t")
    store_ranking(engine, "t", "q", [RankedDocument(f"d{i}") for i in range(20)])
    # next --format csv, a label column added as a reviewer would: read back as it is
    code, out, err = _run("next", "t", "--count", "4", "--format", "csv", *db)
    assert code == 0, err
    rows = list(csv.DictReader(io.StringIO(out)))
    served = tmp_path / "served.csv"
    served.write_text("doc_id,role,rank,label\n" + "".join(
        f"{r['doc_id']},{r['role']},{r['rank']},{label}\n"
        for r, label in zip(rows, ["relevant", "not relevant", "include", "exclude"], strict=True)))
    code, _, err = _run("judge", "t", "--file", str(served), "--reviewer", "ana", *db)
    assert code == 0, err
    # the log as CSV reads back as a judge file for another reviewer (its descriptive columns are not recorded)
    code, out, err = _run("judgments", "t", "--format", "csv", *db)
    assert code == 0, err
    log = tmp_path / "log.csv"
    log.write_text(out.replace(",ana,", ",bo,"))
    code, _, err = _run("judge", "t", "--file", str(log), *db)
    assert code == 0, err
    code, out, _ = _run("judgments", "t", "--format", "csv", "--reviewer", "bo", *db)
    bo = {r["doc_id"]: r["relevant"] for r in csv.DictReader(io.StringIO(out))}
    assert bo == {r["doc_id"]: v for r, v in zip(rows, ["True", "False", "True", "False"], strict=True)}


def test_refusals_name_the_lines_and_change_nothing(engine: Engine, empty_db_url: str, tmp_path: Path) -> None:
    db = ("--db", empty_db_url)
    create_topic(engine, "t")
    store_ranking(engine, "t", "q", [RankedDocument(f"d{i}") for i in range(20)])
    before = _judgments(engine)
    header_only = tmp_path / "header.csv"
    header_only.write_text("doc,label\n")
    for args in (("import", "csv", str(header_only), "--topic", "t"), ("judge", "t", "--file", str(header_only))):
        code, _, err = _run(*args, *db)
        assert code == 2 and "no" in err and err.count("\n") == 1, (args, err)
    clash = tmp_path / "clash.csv"
    clash.write_text("doc,label\nd1,1\nd2,0\nd1,not relevant\n")
    code, _, err = _run("judge", "t", "--file", str(clash), *db)
    assert code == 2 and f"{clash}:4" in err and "line 2" in err and err.count("\n") == 1, err
    assert _judgments(engine) == before
