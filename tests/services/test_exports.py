"""``export queue`` and ``export labels``: the files read back (by trec_eval via pytrec_eval, by reviewdepth's own
importers) give what was stored."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
import pytrec_eval
from sqlalchemy import Engine, func, select
from sqlalchemy.engine import make_url
from typer.testing import CliRunner

from reviewdepth.cli.app import create_cli
from reviewdepth.formats.errors import InputError
from reviewdepth.formats.exports import LABEL_FORMATS, RUN_FORMATS
from reviewdepth.services.errors import Invalid, NotFound
from reviewdepth.services.files.asreview_import import import_asreview
from reviewdepth.services.files.imports import import_csv, import_run
from reviewdepth.services.review.exports import export_labels, export_queue
from reviewdepth.services.review.judgments import record_judgment
from reviewdepth.store.engine import create_engine_for
from reviewdepth.store.models import Judgment, Queue, QueueEntry, Topic
from tests.conftest import _admin, _throwaway_database

DATA = Path(__file__).resolve().parents[1] / "data"
MEASURES = {"map", "P_5", "P_100", "ndcg", "recip_rank", "bpref", "num_rel_ret"}


def _entries(engine: Engine, topic: str, queue: str) -> list[tuple[int, str]]:
    with engine.connect() as conn:
        return [(int(r), d) for r, d in conn.execute(
            select(QueueEntry.rank, QueueEntry.doc_id).join(Queue).join(Topic)
            .where(Topic.name == topic, Queue.name == queue).order_by(QueueEntry.rank))]


def _trec_eval(qrels: Path, run_text: str, topic: str) -> dict[str, float]:
    judged: dict[str, dict[str, int]] = {}
    for line in qrels.read_text().splitlines():
        q, _, doc, rel = line.split()
        judged.setdefault(q, {})[doc] = int(rel)
    run: dict[str, dict[str, float]] = {}
    for line in run_text.splitlines():
        q, _, doc, _, score, _ = line.split()
        run.setdefault(q, {})[doc] = float(score)
    return dict(pytrec_eval.RelevanceEvaluator({topic: judged[topic]}, MEASURES).evaluate(run)[topic])


def test_queue_exported_as_a_run_reads_back_identically(engine: Engine, tmp_path: Path) -> None:
    trec = DATA / "trec_eval"
    import_run(engine, str(trec / "results.test"), order="trec_eval")
    exported = export_queue(engine, "302", "trec")
    assert exported.rows == len(_entries(engine, "302", "STANDARD"))
    run_file = tmp_path / "302.run"
    run_file.write_text(exported.text)
    # trec_eval (pytrec_eval) scores the exported run exactly as the original file's lines of topic 302
    original = "".join(line + "\n" for line in (trec / "results.test").read_text().splitlines()
                       if line.split()[0] == "302")
    assert _trec_eval(trec / "qrels.test", exported.text, "302") == _trec_eval(trec / "qrels.test", original, "302")
    # reviewdepth reads it back in both orders as the same queue
    import_run(engine, str(run_file), queue_name="given", order="given")
    import_run(engine, str(run_file), queue_name="sorted", order="trec_eval", again=True)
    stored = _entries(engine, "302", "STANDARD")
    assert _entries(engine, "302", "given") == stored and _entries(engine, "302", "sorted") == stored


def test_clef_run_round_trips_with_its_threshold(engine: Engine, tmp_path: Path) -> None:
    import_run(engine, str(DATA / "tar" / "seed.runA.flag3"), queue_name="A")
    exported = export_queue(engine, "q1", "clef", queue="A")
    assert exported.text.splitlines()[2].split()[:2] == ["q1", "1"]  # the file's own flag on line 3
    path = tmp_path / "q1.clef"
    path.write_text(exported.text)
    import_run(engine, str(path), queue_name="back")
    with engine.connect() as conn:
        thresholds = dict(conn.execute(select(Queue.name, Queue.threshold_rank)).all())
    assert thresholds["back"] == thresholds["A"] == 3
    assert _entries(engine, "q1", "back") == _entries(engine, "q1", "A")


def test_labels_exported_read_back_as_asreview_reported_them(engine: Engine, tmp_path: Path) -> None:
    expected = json.loads((DATA / "asreview" / "small.expected.json").read_text())
    asreview_labels = {str(d["record_id"]): d["label"] for d in expected["labels"]}
    import_asreview(engine, str(DATA / "asreview" / "small.asreview"), topic="T")
    exported = export_labels(engine, "T", "asreview")
    assert exported.rows == len(expected["records"])
    path = tmp_path / "labels.csv"
    path.write_text(exported.text)
    summary = import_csv(engine, str(path), topic="U", allow_unqueued=True)
    assert (summary.stored, summary.unlabelled) == (len(asreview_labels), len(expected["records"]) - len(
        asreview_labels))
    with engine.connect() as conn:
        back = dict(conn.execute(select(Judgment.doc_id, Judgment.label).join(Topic).where(Topic.name == "U")).all())
    assert {d: int(v) for d, v in back.items()} == asreview_labels
    overlay = export_labels(engine, "T", "overlay").text.splitlines()
    assert overlay[0] == "Control Number,Responsiveness"
    assert dict(line.split(",") for line in overlay[1:]) == {
        d: "Responsive" if v == 1 else "Not Responsive" for d, v in asreview_labels.items()}
    # as of the third judgment: ASReview's first three decisions only
    early = export_labels(engine, "T", "csv", as_of="3").text.splitlines()[1:]
    judged = {line.split(",")[1]: line.split(",")[2] for line in early if line.split(",")[2]}
    first = expected["labels"][:3]
    assert judged == {str(d["record_id"]): str(d["label"]) for d in first}


def test_export_refusals(engine: Engine, tmp_path: Path) -> None:
    with pytest.raises(NotFound, match="unknown topic"):
        export_labels(engine, "missing", "csv")
    import_asreview(engine, str(DATA / "asreview" / "small.asreview"), topic="T")
    with pytest.raises(Invalid, match="--format"):
        export_labels(engine, "T", "xml")
    with pytest.raises(Invalid, match="policy"):
        export_labels(engine, "T", "csv", policy="loudest")
    with pytest.raises(Invalid, match="--format"):
        export_queue(engine, "T", "xml")
    db = engine.url.render_as_string(hide_password=False)
    with engine.connect() as conn:
        before = conn.execute(select(func.count()).select_from(Judgment)).scalar_one()
    for args in (["labels", "missing"], ["labels", "T", "--format", "xml"], ["queue", "T", "--queue", "nope"]):
        result = CliRunner().invoke(create_cli(), ["export", *args, "--db", db])
        assert result.exit_code == 2 and len(result.stderr.strip().splitlines()) == 1, result.stderr
    out = tmp_path / "q.run"
    result = CliRunner().invoke(create_cli(), ["export", "queue", "T", "-o", str(out), "--db", db])
    assert result.exit_code == 0 and len(out.read_text().splitlines()) == 12
    with engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(Judgment)).scalar_one() == before


@pytest.fixture
def fresh_engine(engine: Engine, request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Engine]:
    """A second database at the latest revision, on ``engine``'s backend: the one exported files are read into."""
    if engine.dialect.name == "sqlite":
        path = tmp_path / "fresh.db"
        shutil.copyfile(request.getfixturevalue("sqlite_template"), path)
        fresh = create_engine_for(f"sqlite:///{path}")
        yield fresh
        fresh.dispose()
        return
    with _throwaway_database("rd_fresh") as (server, name):
        admin = _admin(server)
        with admin.connect() as conn:
            conn.exec_driver_sql(f'DROP DATABASE "{name}"')
            conn.exec_driver_sql(f'CREATE DATABASE "{name}" TEMPLATE "{request.getfixturevalue("postgres_template")}"')
        admin.dispose()
        fresh = create_engine_for(make_url(server).set(database=name).render_as_string(hide_password=False))
        yield fresh
        fresh.dispose()


def cli_on(engine: Engine, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(create_cli(), [*args, "--db", engine.url.render_as_string(hide_password=False)])
    return result.exit_code, result.stdout, result.stderr


def stored_judgments(engine: Engine) -> list[tuple[str, str, bool | None]]:
    """Every judgment as (topic, doc id, relevant), sorted."""
    with engine.connect() as conn:
        return sorted((t, d, r) for t, d, r in conn.execute(
            select(Topic.name, Judgment.doc_id, Judgment.relevant).join(Topic, Topic.id == Judgment.topic_id)))


def stored_queues(engine: Engine) -> list[tuple[str, str, str | None, int | None, list[tuple[int, str]]]]:
    """Every queue as (topic, name, run tag, threshold rank, its (rank, doc id) entries)."""
    with engine.connect() as conn:
        queues = conn.execute(select(Topic.name, Queue.name, Queue.run_tag, Queue.threshold_rank)
                              .join(Topic, Topic.id == Queue.topic_id).order_by(Queue.id)).all()
    return [(t, q, tag, threshold, _entries(engine, t, q)) for t, q, tag, threshold in queues]


def reviewed_topic(engine: Engine, tmp_path: Path) -> None:
    """Topic T: a queue of six documents (a CLEF flag run, threshold rank 3) with decisions on four of them, one
    decision replaced, and a judged document in no queue."""
    run = tmp_path / "source.run"
    run.write_text("".join(f"T {int(rank == 3)} d{rank} {rank} {7 - rank} seed\n" for rank in range(1, 7)))
    import_run(engine, str(run), queue_name="seed")
    for doc, label in (("d1", "1"), ("d2", "0"), ("d3", "1"), ("d3", "0"), ("d5", "1")):
        record_judgment(engine, "T", doc, label, reviewer="ana")
    record_judgment(engine, "T", "outside", "1", reviewer="ana", allow_unqueued=True)


@pytest.mark.parametrize(("what", "fmt"), [*(("labels", f) for f in LABEL_FORMATS),
                                           *(("queue", f) for f in RUN_FORMATS)])
def test_every_export_reads_back_into_a_fresh_database(engine: Engine, fresh_engine: Engine, tmp_path: Path,
                                                      what: str, fmt: str) -> None:
    """Issue 26 item 2: each format `export` offers, imported into an empty database, gives what was exported:
    the labels as the topic's current judgments (topic, document, decision), a queue as the same queue (topic,
    documents in rank order, run tag, and a CLEF run's threshold rank)."""
    reviewed_topic(engine, tmp_path)
    exported = tmp_path / f"exported.{fmt}"  # a name that is not the topic's: the topic comes from the file
    code, _, err = cli_on(engine, "export", what, "T", "--format", fmt, "-o", str(exported))
    assert code == 0, err
    if what == "queue":
        assert cli_on(fresh_engine, "import", "run", str(exported))[0] == 0
        source = stored_queues(engine)
        if fmt == "trec":  # a TREC run has no column for the threshold
            source = [(t, q, tag, None, entries) for t, q, tag, _, entries in source]
        assert stored_queues(fresh_engine) == source
        return
    # csv carries the topic; the ASReview and overlay files name documents and labels only
    topic = [] if fmt == "csv" else ["--topic", "T"]
    code, _, err = cli_on(fresh_engine, "import", "csv", str(exported), *topic, "--allow-unqueued")
    assert code == 0, err
    current = {(d, r) for _, d, r in stored_judgments(engine) if d != "d3"} | {("d3", False)}  # latest of d3
    assert stored_judgments(fresh_engine) == sorted(("T", d, r) for d, r in current)


def test_a_topic_column_and_a_different_topic_option_are_refused(engine: Engine, fresh_engine: Engine,
                                                                 tmp_path: Path) -> None:
    reviewed_topic(engine, tmp_path)
    exported = tmp_path / "labels.csv"
    assert cli_on(engine, "export", "labels", "T", "--format", "csv", "-o", str(exported))[0] == 0
    code, _, err = cli_on(fresh_engine, "import", "csv", str(exported), "--topic", "U", "--allow-unqueued")
    assert code == 2 and err == (f"reviewdepth: error: {exported}:2: field topic: topic 'T' is not --topic 'U'; "
                                 "leave --topic out to store each row under its own topic\n")
    assert stored_judgments(fresh_engine) == [] and cli_on(fresh_engine, "judgments", "U")[0] == 2
    # the same topic as the column's is no conflict
    assert cli_on(fresh_engine, "import", "csv", str(exported), "--topic", "T", "--allow-unqueued")[0] == 0
    assert {t for t, _, _ in stored_judgments(fresh_engine)} == {"T"}



def test_an_empty_topic_cell_takes_the_topic_option(engine: Engine, tmp_path: Path) -> None:
    path = tmp_path / "gaps.csv"
    path.write_text("topic,doc,label\nA,d1,1\n,d2,0\n")
    with pytest.raises(InputError, match=r"gaps\.csv:3: field topic: must not be empty"):
        import_csv(engine, str(path), allow_unqueued=True)
    assert stored_judgments(engine) == []
    import_csv(engine, str(path), topic="A", allow_unqueued=True)
    assert stored_judgments(engine) == [("A", "d1", True), ("A", "d2", False)]


@pytest.mark.parametrize("fmt", LABEL_FORMATS)
def test_the_summary_counts_the_rows_written(engine: Engine, tmp_path: Path, fmt: str) -> None:
    """Issue 26 item 6: an overlay (judged documents only) was reported as every document of the topic."""
    reviewed_topic(engine, tmp_path)
    path = tmp_path / f"labels.{fmt}"
    code, out, err = cli_on(engine, "export", "labels", "T", "--format", fmt, "-o", str(path))
    assert code == 0, err
    written = len(path.read_text().splitlines()) - 1
    assert written == (5 if fmt == "overlay" else 7)  # 4 judged in the queue and 1 outside; 2 unjudged
    assert out == (f"wrote {written} documents of topic 'T' (3 relevant, 2 not) to {path} ({fmt}, policy latest)\n")
