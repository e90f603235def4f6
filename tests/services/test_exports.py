"""``export queue`` and ``export labels``: the files read back (by trec_eval via pytrec_eval, by reviewdepth's own
importers) give what was stored."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import pytrec_eval
from sqlalchemy import Engine, func, select
from typer.testing import CliRunner

from reviewdepth.cli.app import create_cli
from reviewdepth.services.asreview_import import import_asreview
from reviewdepth.services.errors import Invalid, NotFound
from reviewdepth.services.exports import export_labels, export_queue
from reviewdepth.services.imports import import_csv, import_run
from reviewdepth.store.models import Judgment, Queue, QueueEntry, Topic

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
