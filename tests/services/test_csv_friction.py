"""Issue 15 item 5 on both databases: the label vocabulary message lists every accepted word, a --level no judgment
reaches is refused, a delimiter is chosen by consistency and dates are read by a stated or unambiguous order; every
refusal leaves the database as it was."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import Engine, func, select

from reviewdepth.formats.errors import InputError
from reviewdepth.services.evidence.decision_words import read_label
from reviewdepth.services.files.imports import import_csv, import_qrels
from reviewdepth.services.files.judgment_files import record_judgment_file
from reviewdepth.store.models import ImportRecord, Judgment, Queue, QueueEntry, Topic


def counts(engine: Engine) -> dict[str, int]:
    with engine.connect() as conn:
        return {model.__tablename__: int(conn.execute(select(func.count()).select_from(model)).scalar_one())
                for model in (Topic, Queue, QueueEntry, Judgment, ImportRecord)}


def refused(engine: Engine, call: object) -> str:
    """The one-line message of a refused import (its file's directory left out), checking that it stored nothing."""
    before = counts(engine)
    with pytest.raises(InputError) as caught:
        call()  # type: ignore[operator]
    assert counts(engine) == before
    message = str(caught.value)
    assert "\n" not in message
    return re.sub(r"^[^ :]*/", "", message)


def test_the_label_message_lists_every_accepted_word(engine: Engine, tmp_path: Path) -> None:
    export = tmp_path / "T.csv"
    export.write_text("doc,label\nd1,Responsive\nd2,Not Responsive\nd3,Perhaps\n")
    message = refused(engine, lambda: import_csv(engine, str(export), allow_unqueued=True))
    assert message.startswith("T.csv:4: field label: label 'Perhaps' is neither")
    relevant, nonrelevant = (re.search(rf"nor an? {kind} word \(([^)]*)\)", message) for kind in
                             ("relevant", "non-relevant"))
    assert relevant is not None and nonrelevant is not None
    listed = {True: relevant.group(1).split(", "), False: nonrelevant.group(1).split(", ")}
    # the words the issue found missing, and each listed word read back as the class it is listed under
    assert "responsive" in listed[True] and "not responsive" in listed[False] and "include" in listed[True]
    for decision, words in listed.items():
        for word in words:
            assert read_label(word.upper(), "f", 1, "label", 1) == (decision, None), word
    # 17, and the words the tool prints itself: not relevant, not-relevant, not_relevant, not included
    assert len(listed[True]) + len(listed[False]) == 21


def test_a_level_no_qrels_judgment_reaches_is_refused(engine: Engine, tmp_path: Path) -> None:
    qrels = tmp_path / "binary.qrels"
    qrels.write_text("1 0 a 0\n1 0 b 1\n2 0 c -1\n2 0 d 0\n")
    message = refused(engine, lambda: import_qrels(engine, str(qrels), level=2))
    assert message == ("binary.qrels: field --level: no judgment reaches --level 2: the highest grade in the file "
                       "is 1 (line 2), so no graded judgment would be relevant; use --level 1 or lower")
    # the binary reading of a file with no relevant judgment stays accepted; a reached level is accepted
    nothing_relevant = tmp_path / "none.qrels"
    nothing_relevant.write_text("1 0 a 0\n")
    assert import_qrels(engine, str(nothing_relevant)).rows == 1
    graded = tmp_path / "graded.qrels"
    graded.write_text("3 0 a 2\n3 0 b 1\n")
    import_qrels(engine, str(graded), level=2)
    with engine.connect() as conn:
        stored = {doc: relevant for doc, relevant in conn.execute(
            select(Judgment.doc_id, Judgment.relevant).join(Topic, Topic.id == Judgment.topic_id)
            .where(Topic.name == "3"))}
    assert stored == {"a": True, "b": False}


def test_a_level_no_csv_label_reaches_is_refused(engine: Engine, tmp_path: Path) -> None:
    export = tmp_path / "T.csv"
    export.write_text("doc,label\nd1,0\nd2,1\nd3,yes\nd4,\n")
    message = refused(engine, lambda: import_csv(engine, str(export), level=3, allow_unqueued=True))
    assert message.startswith("T.csv: field --level: no judgment reaches --level 3: the highest grade in the file "
                              "is 1 (line 3)")
    assert import_csv(engine, str(export), level=1, allow_unqueued=True).rows == 4


def test_us_dates_need_a_stated_format_when_ambiguous(engine: Engine, tmp_path: Path) -> None:
    export = tmp_path / "T.csv"
    export.write_text("doc,label,when\nd1,1,03/04/2024 10:30\nd2,0,\nd3,yes,12/11/2024 08:00\n")
    message = refused(engine, lambda: import_csv(engine, str(export), mapping="doc=doc,label=label,time=when",
                                                 allow_unqueued=True))
    assert message == ("T.csv:2: field when: date '03/04/2024 10:30' could be day-first or month-first and no date "
                       "in the file has a day above 12; state the order with --date-format '%d/%m/%Y %H:%M' or "
                       "'%m/%d/%Y %H:%M'")
    message = refused(engine, lambda: import_csv(engine, str(export), mapping="doc=doc,label=label,time=when",
                                                 allow_unqueued=True, date_format="%m/%d/%Y"))
    assert message == "T.csv:2: field when: time '03/04/2024 10:30' does not match --date-format '%m/%d/%Y'"
    import_csv(engine, str(export), mapping="doc=doc,label=label,time=when", allow_unqueued=True,
               date_format="%m/%d/%Y %H:%M")
    with engine.connect() as conn:
        stored = {doc: when for doc, when in conn.execute(select(Judgment.doc_id, Judgment.recorded_at))}
    assert stored["d1"].replace(tzinfo=UTC) == datetime(2024, 3, 4, 10, 30, tzinfo=UTC)
    assert stored["d3"].replace(tzinfo=UTC) == datetime(2024, 12, 11, 8, 0, tzinfo=UTC)
    assert set(stored) == {"d1", "d2", "d3"} and stored["d2"].year > 2024  # an empty time: the import time


def test_a_semicolon_export_with_a_stray_semicolon_imports(engine: Engine, tmp_path: Path) -> None:
    rows = [f"d{i};{'Responsive' if i % 3 == 0 else 'Not Responsive'};{'see; d3' if i == 2 else 'ok'}"
            for i in range(1, 61)]
    export = tmp_path / "T.csv"
    export.write_text("control;coding;note\n" + "\n".join(rows) + "\n")
    summary = import_csv(engine, str(export), mapping="doc=control,label=coding", allow_unqueued=True)
    assert summary.rows == 60
    with engine.connect() as conn:
        stored = {doc: relevant for doc, relevant in conn.execute(select(Judgment.doc_id, Judgment.relevant))}
    assert stored == {f"d{i}": i % 3 == 0 for i in range(1, 61)}


def test_a_judge_file_with_semicolons_and_a_quoted_note(engine: Engine, tmp_path: Path) -> None:
    seed = tmp_path / "queue.csv"
    seed.write_text("doc,label,rank\nd1,,1\nd2,,2\n")
    import_csv(engine, str(seed), mapping="doc=doc,label=label,rank=rank", topic="T")
    sheet = tmp_path / "judged.csv"
    sheet.write_text('doc;label;note\nd1;Responsive;"hot; see d2"\nd2;not responsive;\n')
    record_judgment_file(engine, "T", str(sheet), reviewer="ana")
    with engine.connect() as conn:
        stored = {doc: (relevant, note) for doc, relevant, note in conn.execute(
            select(Judgment.doc_id, Judgment.relevant, Judgment.note))}
    assert stored == {"d1": (True, "hot; see d2"), "d2": (False, None)}
    sheet.write_text("doc;label;note\nd1;1;hot; see d2\n")
    message = refused(engine, lambda: record_judgment_file(engine, "T", str(sheet), reviewer="ana"))
    assert message == "judged.csv:2: expected 3 fields, found 4 (a ';' inside a cell? quote that cell)"


def test_a_judge_file_sent_again_is_refused_unless_again(engine: Engine, tmp_path: Path) -> None:
    """Issue 26 item 5: `judge --file F` twice recorded every judgment twice (and said "recorded 1 judgments")."""
    from typer.testing import CliRunner

    from reviewdepth.cli.app import create_cli

    def judge(*args: str) -> tuple[int, str, str]:
        result = CliRunner().invoke(create_cli(), ["judge", "T", *args, "--db",
                                                   engine.url.render_as_string(hide_password=False)])
        return result.exit_code, result.stdout, result.stderr

    seed = tmp_path / "queue.csv"
    seed.write_text("doc,label,rank\nd1,,1\nd2,,2\n")
    import_csv(engine, str(seed), mapping="doc=doc,label=label,rank=rank", topic="T")
    one = tmp_path / "one.csv"
    one.write_text("doc,label\nd1,1\n")
    code, out, err = judge("--file", str(one), "--reviewer", "ana")
    assert code == 0 and out == "recorded 1 judgment of T (id 1)\n", err
    before = counts(engine)
    code, out, err = judge("--file", str(one), "--reviewer", "ana")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert re.fullmatch(rf"reviewdepth: error: {re.escape(str(one))}: this file \(sha256 [0-9a-f]{{12}}…\) was already "
                        r"imported as import 2 \(one\.csv, .*\); use --again to import it once more\n", err), err
    assert counts(engine) == before
    code, out, err = judge("--file", str(one), "--reviewer", "ana", "--again")
    assert code == 0 and out == "recorded 1 judgment of T (id 2)\n", err
    two = tmp_path / "two.csv"
    two.write_text("doc,label\nd1,0\nd2,1\n")
    assert judge("--file", str(two), "--reviewer", "bo") == (0, "recorded 2 judgments of T (ids 3..4)\n", "")
    with engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(Judgment)).scalar_one() == 4
