"""Issue 39, item 2: a drawn sample coded through the usual door is the sample's coding. A team draws a rest sample,
codes it in its review platform and brings the export back with ``import csv`` (role left at its default,
``review``), or records it with ``judge``: the report used to say "no random sample", status unknown, and count
the sample as reviewed out of order. Now the sample is used exactly as when coded with role ``sample``: the same
reviewed set, the same rest sample and the same answer; a document the review reaches in turn later still joins the
reviewed prefix. CLEF TAR 2019 CD012551 (tests/data/clef2019), 300 reviewed, a rest sample of 40."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import Engine
from typer.testing import CliRunner

from reviewdepth.cli.app import create_cli
from reviewdepth.services.answers.report import ReportOptions, build_report
from reviewdepth.services.files.imports import import_run
from reviewdepth.services.review.judgments import record_judgments
from reviewdepth.services.review.samples import draw_sample

CLEF = Path(__file__).resolve().parents[1] / "data" / "clef2019"
TOPIC = "CD012551"


def _seeded(engine: Engine) -> tuple[list[str], dict[str, str], list[str]]:
    import_run(engine, str(CLEF / f"{TOPIC}.sheffield-baseline.run"))
    labels = {line.split()[2]: line.split()[3] for line in (CLEF / f"{TOPIC}.abs.qrels").read_text().splitlines()}
    docs = [line.split()[2] for line in (CLEF / f"{TOPIC}.sheffield-baseline.run").read_text().splitlines()]
    record_judgments(engine, TOPIC, [(d, labels.get(d, "0")) for d in docs[:300]], reviewer="ana")
    sample = draw_sample(engine, TOPIC, 40, frame="unreviewed", seed=7)
    return docs, labels, list(sample.doc_ids)


def _figures(engine: Engine) -> tuple[object, ...]:
    report = build_report(engine, TOPIC, ReportOptions(targets=["0.9"]))
    rest = next(r for r in report.samples)
    return (report.summary.reviewed, report.answer.status, report.answer.basis, report.depth_basis,
            rest.use, rest.in_unreviewed_rest, rest.relevant, [e.estimate.point for e in report.estimates],
            report.answer.topic_status.figures[0].recall_lower if report.answer.topic_status.figures else None)


@pytest.mark.parametrize("door", ["import csv", "judge --file", "judge, role review"])
def test_a_sample_coded_through_any_door_is_the_samples_coding(engine: Engine, empty_db_url: str, tmp_path: Path,
                                                               door: str) -> None:
    _, labels, drawn = _seeded(engine)
    if door == "judge, role review":
        record_judgments(engine, TOPIC, [(d, labels.get(d, "0")) for d in drawn], reviewer="bo")
    else:
        export = tmp_path / "coded.csv"
        export.write_text("doc,label\n" + "".join(f"{d},{labels.get(d, '0')}\n" for d in drawn))
        args = (["import", "csv", str(export), "--topic", TOPIC] if door == "import csv"
                else ["judge", TOPIC, "--file", str(export), "--reviewer", "bo"])
        result = CliRunner().invoke(create_cli(), [*args, "--db", empty_db_url])
        assert result.exit_code == 0, result.output
    coded_any_way = _figures(engine)
    reviewed, status, basis = coded_any_way[:3]
    assert reviewed == 300 and basis == "elusion" and status != "unknown", coded_any_way
    assert coded_any_way[4] == "rest sample" or "rest" in str(coded_any_way[4]), coded_any_way


def test_the_same_figures_as_role_sample(engine: Engine, tmp_path: Path) -> None:
    docs, labels, drawn = _seeded(engine)
    record_judgments(engine, TOPIC, [(d, labels.get(d, "0")) for d in drawn], reviewer="bo", role="sample")
    as_sample = _figures(engine)
    # the same state coded with the default role, in a second database: compare figure by figure
    from reviewdepth.store import migrate
    from reviewdepth.store.engine import create_engine_for

    other = create_engine_for(f"sqlite:///{tmp_path / 'other.sqlite3'}")
    migrate.upgrade(other)
    docs, labels, drawn = _seeded(other)
    record_judgments(other, TOPIC, [(d, labels.get(d, "0")) for d in drawn], reviewer="bo")
    assert _figures(other) == as_sample
    # the review then reaches the sample's documents in turn: they join the reviewed prefix as any document does
    record_judgments(other, TOPIC, [(d, labels.get(d, "0")) for d in docs[300:400] if d not in set(drawn)],
                     reviewer="ana")
    assert build_report(other, TOPIC, ReportOptions(targets=["0.9"])).summary.reviewed == 400
