"""Issue 39, item 4: one vocabulary in and out. What the tool writes it reads back: ``next --format csv`` (a
``doc_id`` column, refused by ``judge --file``), ``judgments --format csv`` (its descriptive columns), the labels it
prints ("not relevant"); a header-only file is refused by ``import csv`` as by ``judge --file``; contradictory
lines about one document in one file are refused naming both lines; the database unchanged each time."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from sqlalchemy import Engine, func, select
from typer.testing import CliRunner

from reviewdepth.cli.app import create_cli
from reviewdepth.formats.exports import LABEL_FORMATS
from reviewdepth.services.admin.topics import create_topic
from reviewdepth.services.answers.queues import queue_labels
from reviewdepth.services.files.rankings import RankedDocument, store_ranking
from reviewdepth.services.review.judgments import list_judgments, record_judgment
from reviewdepth.services.review.screening import screening_settings
from reviewdepth.store.engine import create_engine_for
from reviewdepth.store.labels import POLICIES
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


def _log(engine: Engine, topic: str) -> list[tuple[object, ...]]:
    """What each judgment of ``topic`` says, in recording order (not its id, time or source)."""
    return [(j.doc_id, j.label, j.relevant, j.reviewer, j.role, j.decision, j.reason, j.stage)
            for j in list_judgments(engine, topic)]


def _labels(engine: Engine, topic: str) -> dict[str, list[int]]:
    return {policy: queue_labels(engine, topic, None, policy)[1].labels.tolist() for policy in POLICIES}


def _two_topics(engine: Engine) -> None:
    """Topics t and u over the same queue of 6 documents, with t's exclusion reasons."""
    for topic in ("t", "u"):
        create_topic(engine, topic)
        store_ranking(engine, topic, "q", [RankedDocument(f"d{i}") for i in range(6)])
        screening_settings(engine, topic, add=["wrong design"])


def test_the_judgments_log_reads_back_whole_with_stages_and_changes_of_mind(engine: Engine, empty_db_url: str,
                                                                         tmp_path: Path) -> None:
    """``judgments --format csv`` into another topic with ``judge --file``, unedited: the same judgments in the
    same order, so the same labels under every policy. The log holds one reviewer's include on title and abstract
    and exclude at full text of one document, and a change of mind: before, both were refused as contradictory."""
    db = ("--db", empty_db_url)
    _two_topics(engine)
    steps = [("d0", "include", "ana", "review", None, None), ("d0", "exclude", "ana", "review", "wrong design",
                                                             "full-text"),
             ("d1", "include", "ana", "review", None, None), ("d1", "not relevant", "ana", "review", None, None),
             ("d2", "maybe", "bo", "review", None, None), ("d2", "relevant", "cy", "adjudication", None, None),
             ("d3", "skip", "bo", "review", None, None), ("d4", "Not Responsive", "bo", "sample", None, None)]
    for doc, label, who, role, reason, stage in steps:
        record_judgment(engine, "t", doc, label, reviewer=who, role=role, reason=reason, stage=stage)
    code, out, err = _run("judgments", "t", "--format", "csv", *db)
    assert code == 0, err
    log = tmp_path / "log.csv"
    log.write_text(out)
    code, _, err = _run("judge", "u", "--file", str(log), *db)
    assert code == 0, err
    assert _log(engine, "u") == _log(engine, "t") and len(_log(engine, "t")) == len(steps)
    assert _labels(engine, "u") == _labels(engine, "t")


def test_each_labels_export_reads_back(engine: Engine, empty_db_url: str, tmp_path: Path) -> None:
    """``export labels`` in each format into another topic, unedited: ``import csv`` reads every one (an empty
    label: an unscreened document), ``judge --file`` each whose documents are all judged (the asreview and overlay
    exports' columns, record_id / asreview_label and Control Number / Responsiveness, were refused before)."""
    db = ("--db", empty_db_url)
    _two_topics(engine)
    for i, label in enumerate(["1", "0", "0", "1", "0"]):
        record_judgment(engine, "t", f"d{i}", label, reviewer="ana")
    want = _labels(engine, "t")["latest"]
    assert want == [1, 0, 0, 1, 0, -1]
    # into another database holding topic t and its queue (a labels CSV names its topic in a column)
    other_url = f"sqlite:///{tmp_path / 'other.db'}"
    assert _run("db", "upgrade", "--db", other_url)[0] == 0
    other = create_engine_for(other_url)
    create_topic(other, "t")
    store_ranking(other, "t", "q", [RankedDocument(f"d{i}") for i in range(6)])
    for fmt in LABEL_FORMATS:
        exported = tmp_path / f"{fmt}.csv"
        code, _, err = _run("export", "labels", "t", "--format", fmt, "-o", str(exported), *db)
        assert code == 0, err
        code, _, err = _run("import", "csv", str(exported), "--topic", "t", "--reviewer", f"r-{fmt}", "--db",
                            other_url)
        assert code == 0, (fmt, err)
        got = {j.doc_id: j.relevant for j in list_judgments(other, "t", reviewer=f"r-{fmt}")}
        assert got == {f"d{i}": v == 1 for i, v in enumerate(want) if v >= 0}, fmt
    other.dispose()
    # judge --file: every document judged (the overlay export leaves unjudged ones out; judge the sixth first)
    record_judgment(engine, "t", "d5", "1", reviewer="ana")
    for fmt in LABEL_FORMATS:
        exported = tmp_path / f"{fmt}-all.csv"
        code, _, err = _run("export", "labels", "t", "--format", fmt, "-o", str(exported), *db)
        assert code == 0, err
        code, _, err = _run("judge", "u", "--file", str(exported), "--reviewer", f"r-{fmt}", *db)
        assert code == 0, (fmt, err)
        code, out, _ = _run("judgments", "u", "--format", "csv", "--reviewer", f"r-{fmt}", *db)
        got = {r["doc_id"]: r["relevant"] for r in csv.DictReader(io.StringIO(out))}
        assert got == {f"d{i}": str(v == 1) for i, v in enumerate([1, 0, 0, 1, 0, 1])}, fmt


def test_identical_lines_are_recorded_and_stages_are_no_contradiction(engine: Engine, empty_db_url: str,
                                                                      tmp_path: Path) -> None:
    """The same line twice is two judgments that change no label (recorded as the file says); one reviewer's
    include on title and abstract and exclude at full text are two steps, not a contradiction; an include and an
    exclude at one stage are refused naming both lines."""
    db = ("--db", empty_db_url)
    _two_topics(engine)
    sheet = tmp_path / "sheet.csv"
    sheet.write_text("doc,label,stage\nd0,include,\nd0,include,\nd1,include,title-abstract\nd1,exclude,full-text\n")
    code, _, err = _run("judge", "t", "--file", str(sheet), "--reviewer", "ana", *db)
    assert code == 0, err
    assert [(j.doc_id, j.decision, j.stage) for j in list_judgments(engine, "t")] == [
        ("d0", "include", "title-abstract"), ("d0", "include", "title-abstract"), ("d1", "include", "title-abstract"),
        ("d1", "exclude", "full-text")]
    before = _judgments(engine)
    clash = tmp_path / "clash.csv"
    clash.write_text("doc,label,stage\nd2,include,full-text\nd3,0,\nd2,exclude,full-text\n")
    code, _, err = _run("judge", "t", "--file", str(clash), "--reviewer", "ana", *db)
    assert code == 2 and f"{clash}:4" in err and "line 2" in err and err.count("\n") == 1, err
    assert _judgments(engine) == before


def test_prisma_and_the_report_use_one_label_policy_by_default(engine: Engine, empty_db_url: str) -> None:
    """A title-abstract conflict adjudicated "include", then the record excluded at full text: each record's final
    decision excludes it. ``prisma`` defaulted to ``adjudicated``, under which that adjudication outranks the later
    exclusion (1 included where the report's PRISMA section, under ``latest``, said 0)."""
    db = ("--db", empty_db_url)
    _two_topics(engine)
    record_judgment(engine, "t", "d0", "include", reviewer="ana")
    record_judgment(engine, "t", "d0", "exclude", reviewer="bo")
    record_judgment(engine, "t", "d0", "include", reviewer="cy", role="adjudication")
    record_judgment(engine, "t", "d0", "exclude", reviewer="ana", stage="full-text", reason="wrong design")
    code, out, err = _run("prisma", "t", "--format", "json", *db)
    assert code == 0, err
    prisma = json.loads(out)
    code, out, err = _run("report", "t", "--format", "json", *db)
    assert code == 0, err
    in_report = json.loads(out)["prisma"]
    assert prisma["label_policy"] == in_report["label_policy"] == "latest"
    assert prisma["included"] == in_report["included"] == 0
    assert prisma["excluded_full_text"] == in_report["excluded_full_text"] == 1
    code, out, err = _run("prisma", "t", *db)  # the table: a reason with its count, not as a count of reviewers
    assert code == 0 and "excluded per reason\tfull-text: wrong design: 1\n" in out, err
