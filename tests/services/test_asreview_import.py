"""ASReview project files: a project written by the ``asreview`` package round-trips through ``import asreview``.

The independent side of each comparison is what ASReview's own API reports for the file
(``tests/data/asreview/make_project.py``: ``Project.load`` + ``Database``), never this package's reading of it.
"""

from __future__ import annotations

import importlib.util
import io
import json
import subprocess
import sys
import zipfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, func, select
from typer.testing import CliRunner

from reviewdepth.cli.app import create_cli
from reviewdepth.formats.errors import InputError
from reviewdepth.services.errors import Conflict
from reviewdepth.services.files.asreview_import import REPLACED_NOTE, import_asreview
from reviewdepth.store.models import ImportRecord, Judgment, Queue, QueueEntry, Topic

DATA = Path(__file__).resolve().parents[1] / "data" / "asreview"


def _close(stored: datetime, unix_seconds: float) -> bool:
    """``stored`` is ``unix_seconds`` rounded to the microsecond (within the float's own error)."""
    moment = stored if stored.tzinfo else stored.replace(tzinfo=UTC)
    whole = moment.replace(microsecond=0).timestamp()  # exact: an integer number of seconds
    return abs((whole - int(unix_seconds)) * 1_000_000 + moment.microsecond
               - (unix_seconds - int(unix_seconds)) * 1_000_000) < 0.51


def _stored(engine: Engine, topic: str) -> tuple[list[str], list[Any]]:
    with engine.connect() as conn:
        queue_id = conn.execute(select(Queue.id).join(Topic).where(Topic.name == topic)).scalar_one()
        order = list(conn.execute(select(QueueEntry.doc_id).where(QueueEntry.queue_id == queue_id)
                                  .order_by(QueueEntry.rank)).scalars())
        judgments = conn.execute(select(Judgment.doc_id, Judgment.label, Judgment.recorded_at, Judgment.reviewer,
                                        Judgment.note, Judgment.source, Judgment.queue_id)
                                 .join(Topic).where(Topic.name == topic).order_by(Judgment.id)).all()
    assert {j.queue_id for j in judgments} == {queue_id}
    return order, list(judgments)


def check_round_trip(engine: Engine, asreview_file: Path, expected: dict[str, Any]) -> None:
    """Import ``asreview_file`` and compare labels, order, times and users with ASReview's report."""
    summary = import_asreview(engine, str(asreview_file), topic="T")
    order, judgments = _stored(engine, "T")
    # order: ASReview's labelling order, then its unlabelled records in the model's ranking order
    assert order == [str(d["record_id"]) for d in expected["labels"]] + [
        str(r) for r in expected["unlabelled_in_ranking_order"]]
    assert sorted(int(d) for d in order) == expected["records"]
    current = [j for j in judgments if j.note != REPLACED_NOTE]
    replaced = [j for j in judgments if j.note == REPLACED_NOTE]

    def reviewer(user: int | None) -> str:
        return "asreview" if user is None else f"asreview-user-{user}"

    assert [(j.doc_id, j.label, j.reviewer) for j in current] == [
        (str(d["record_id"]), str(d["label"]), reviewer(d["user_id"])) for d in expected["labels"]]
    # times to the microsecond (the stores keep microseconds; ASReview a float of seconds)
    assert all(_close(j.recorded_at, d["time"]) for j, d in zip(current, expected["labels"], strict=True))
    decided_changes = [c for c in expected["decision_changes"] if c["label"] is not None]
    assert [(j.doc_id, j.label, j.reviewer) for j in replaced] == [
        (str(c["record_id"]), str(c["label"]), reviewer(c["user_id"])) for c in decided_changes]
    assert all(_close(j.recorded_at, c["time"]) for j, c in zip(replaced, decided_changes, strict=True))
    # the latest judgment per document is ASReview's current label
    latest = {j.doc_id: j.label for j in judgments}
    assert latest == {str(d["record_id"]): str(d["label"]) for d in expected["labels"]}
    assert {j.source for j in judgments} == {f"asreview:{expected['project']}"}
    assert summary.rows == len(expected["records"])
    assert summary.labelled == len(expected["labels"]) and summary.replaced == len(decided_changes)
    assert summary.stored == len(judgments)
    assert summary.unlabelled == len(expected["unlabelled_in_ranking_order"])
    assert summary.pending == len(expected["pending"])
    assert summary.labelled + summary.unlabelled == summary.rows


def test_shipped_project_round_trips(engine: Engine) -> None:
    expected = json.loads((DATA / "small.expected.json").read_text())
    check_round_trip(engine, DATA / "small.asreview", expected)
    with pytest.raises(Conflict, match="already imported"):
        import_asreview(engine, str(DATA / "small.asreview"), topic="T")
    with pytest.raises(Conflict, match="queue 'asreview' already exists"):
        import_asreview(engine, str(DATA / "small.asreview"), topic="T", again=True)
    summary = import_asreview(engine, str(DATA / "small.asreview"), again=True)
    assert summary.topics == [expected["project"]] and summary.queues == ["asreview"]


@pytest.fixture(scope="module")
def fresh_project(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """A project the installed ``asreview`` writes now (in a subprocess: importing asreview adds a SQLAlchemy
    listener to every engine of the process), with ASReview's report of it."""
    if importlib.util.find_spec("asreview") is None:
        pytest.skip("the asreview package is not installed (pip install asreview); the shipped project file "
                    "written by it is tested in test_shipped_project_round_trips")
    out = tmp_path_factory.mktemp("asreview")
    subprocess.run([sys.executable, str(DATA / "make_project.py"), str(out)], check=True, capture_output=True, cwd=out,
                   timeout=120)
    return out / "small.asreview", json.loads((out / "small.expected.json").read_text())


def test_project_written_by_installed_asreview_round_trips(engine: Engine,
                                                           fresh_project: tuple[Path, dict[str, Any]]) -> None:
    check_round_trip(engine, *fresh_project)


def _counts(engine: Engine) -> tuple[int, ...]:
    with engine.connect() as conn:
        return tuple(int(conn.execute(select(func.count()).select_from(t)).scalar_one())
                     for t in (Topic, Queue, QueueEntry, Judgment, ImportRecord))


def _rezip(tmp_path: Path, name: str, change: dict[str, bytes | None]) -> Path:
    """The shipped project with members replaced (None = removed)."""
    out = io.BytesIO()
    with zipfile.ZipFile(DATA / "small.asreview") as source, zipfile.ZipFile(out, "w") as target:
        for member in source.namelist():
            if member in change:
                if change[member] is not None:
                    target.writestr(member, change[member])  # type: ignore[arg-type]
            else:
                target.writestr(member, source.read(member))
    path = tmp_path / name
    path.write_bytes(out.getvalue())
    return path


def test_bad_project_files_are_refused_naming_the_member(engine: Engine, tmp_path: Path) -> None:
    not_zip = tmp_path / "notes.asreview"
    not_zip.write_text("record_id,label\n1,1\n")
    config = json.loads(zipfile.ZipFile(DATA / "small.asreview").read("project.json"))
    cases = [
        (not_zip, None, "is a zip archive"),
        (_rezip(tmp_path, "noconfig.asreview", {"project.json": None}), "project.json", "holds no project.json"),
        (_rezip(tmp_path, "nodb.asreview", {"results.db": None}), "results.db", "holds no results.db"),
        (_rezip(tmp_path, "corrupt.asreview", {"results.db": b"SQLite format 3\x00" + b"\x07" * 200}),
         "results.db", "SQLite"),
        (_rezip(tmp_path, "v1.asreview", {"project.json": json.dumps({**config, "project_file_version": 1})
                                          .encode()}), "project.json: project_file_version", "export it again"),
        (_rezip(tmp_path, "json.asreview", {"project.json": b"{not json"}), "project.json", "not JSON"),
    ]
    before = _counts(engine)
    for path, field, message in cases:
        with pytest.raises(InputError, match=message) as caught:
            import_asreview(engine, str(path))
        assert caught.value.path == str(path) and caught.value.field == field
    assert _counts(engine) == before


def test_cli_import_asreview_and_refusal(engine: Engine, tmp_path: Path) -> None:
    db = engine.url.render_as_string(hide_password=False)
    result = CliRunner().invoke(create_cli(), ["import", "asreview", str(DATA / "small.asreview"), "--topic", "S",
                                               "--db", db])
    assert result.exit_code == 0, result.stderr
    assert "12 records" in result.stdout and "stored 9 judgments (8 current decisions" in result.stdout
    assert "4 records unlabelled (1 shown, undecided)" in result.stdout
    before = _counts(engine)
    bad = tmp_path / "bad.asreview"
    bad.write_bytes(b"PK\x03\x04 truncated")
    result = CliRunner().invoke(create_cli(), ["import", "asreview", str(bad), "--db", db])
    assert result.exit_code == 2 and len(result.stderr.strip().splitlines()) == 1
    assert f"{bad}: not an ASReview project file" in result.stderr
    # the project file given to `import csv` (it said "not UTF-8" before) points to `import asreview`
    result = CliRunner().invoke(create_cli(), ["import", "csv", str(DATA / "small.asreview"), "--topic", "X",
                                               "--db", db])
    assert result.exit_code == 2 and "reviewdepth import asreview" in result.stderr
    assert _counts(engine) == before


def test_asreview_csv_export_ranking_and_row_counts(engine: Engine, tmp_path: Path) -> None:
    """An ASReview CSV export: ``asreview_ranking`` becomes the queue without --map, and the summary accounts for
    every row (stored + skipped unlabelled = rows)."""
    from reviewdepth.services.files.imports import import_csv

    ranks = [4, 1, 6, 2, 5, 3]
    labels = ["1", "", "0", "", "", "1"]
    rows = "".join(f"{i},Title {i},{lab},{rank}\n" for i, (lab, rank) in enumerate(zip(labels, ranks, strict=True)))
    export = tmp_path / "export.csv"
    export.write_text("record_id,title,asreview_label,asreview_ranking\n" + rows)
    summary = import_csv(engine, str(export), topic="E")
    assert (summary.rows, summary.stored, summary.unlabelled) == (6, 3, 3)
    order, judgments = _stored(engine, "E")
    assert order == [str(i) for _, i in sorted((r, i) for i, r in enumerate(ranks))]
    assert sorted((j.doc_id, j.label) for j in judgments) == [("0", "1"), ("2", "0"), ("5", "1")]
    db = engine.url.render_as_string(hide_password=False)
    result = CliRunner().invoke(create_cli(), ["import", "csv", str(export), "--topic", "F", "--again", "--db", db])
    assert result.exit_code == 0, result.stderr
    assert "imported 6 rows" in result.stdout and "stored 3 judgments, skipped 3 unlabelled rows" in result.stdout
