"""The confidence level is one domain at every command that takes ``--confidence`` (issue 26): 0.5 ≤ confidence
≤ 0.999999. A value outside it (``1e-20``, whose 1 − confidence rounds to 1.0, once a traceback
from `reviewdepth report`) is one line on stderr naming ``confidence`` and exit code 2, with nothing on stdout and
nothing stored; the ends of the domain run, on SQLite and PostgreSQL."""

from __future__ import annotations

import pytest
from sqlalchemy import Engine, func, select
from typer.testing import CliRunner

from reviewdepth.cli.app import create_cli
from reviewdepth.services.admin.topics import create_topic
from reviewdepth.services.files.rankings import RankedDocument, store_ranking
from reviewdepth.services.review.audit_stream import create_stream, next_documents
from reviewdepth.services.review.batches import BatchItem, record_batch
from reviewdepth.services.review.samples import draw_sample
from reviewdepth.services.simulation.portfolio import add_topics
from reviewdepth.store.models import Calibration

DOCS = [f"d{i:02d}" for i in range(40)]
RELEVANT = {"d00", "d01", "d02", "d04", "d07", "d24"}


def judge(engine: Engine, topic: str, docs: list[str], role: str = "review", reviewer: str = "ana") -> None:
    record_batch(engine, topic, [BatchItem(d, str(int(d in RELEVANT)), role=role) for d in docs],
                 reviewer=reviewer, source="test")


def seed_topics(engine: Engine) -> None:
    """T: 40 documents, the top 20 reviewed (some twice, for agreement), a judged sample of the rest and an audit
    stream with 12 documents judged; F: fully judged, in the portfolio (for simulate and calibrate)."""
    for name in ("T", "F"):
        create_topic(engine, name)
        store_ranking(engine, name, "q", [RankedDocument(d, float(-i)) for i, d in enumerate(DOCS)])
    judge(engine, "F", DOCS)
    add_topics(engine, ["F"], reviewer="ana")
    judge(engine, "T", DOCS[:20])
    judge(engine, "T", DOCS[:10], reviewer="bo")
    judge(engine, "T", draw_sample(engine, "T", 8, frame="unreviewed", seed=3).doc_ids, "sample")
    create_stream(engine, "T", every=1, seed=0, reviewer="ana")
    judge(engine, "T", [d.doc_id for d in next_documents(engine, "T", count=12).documents], "audit")


# every command with a --confidence option, and the arguments it needs
COMMANDS = {
    "report": ["report", "T"],
    "validation": ["validation", "T", "--format", "json"],
    "watch": ["watch", "T", "--once"],
    "sample plan": ["sample", "plan", "T"],
    "agreement": ["agreement", "T"],
    "simulate": ["simulate", "F", "--design", "rest", "--sample-size", "5", "--rule", "elusion", "--looks",
                 "every:10", "--replicates", "1"],
    "portfolio calibrate": ["portfolio", "calibrate", "--looks", "every:10"],
}
REFUSED = ["1e-20", "0", "0.4", "0.4999999", "1", "0.9999995", "2", "-0.95", "nan", "inf"]
ACCEPTED = ["0.5", "0.95", "0.999999"]


def calibrations(engine: Engine) -> int:
    with engine.connect() as conn:
        return int(conn.execute(select(func.count()).select_from(Calibration)).scalar_one())


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_confidence_outside_the_domain_is_one_line_and_exit_2_at_every_command(
        engine: Engine, empty_db_url: str, command: str) -> None:
    seed_topics(engine)
    args = [*COMMANDS[command], "--db", empty_db_url]
    runner = CliRunner()
    for confidence in REFUSED:
        result = runner.invoke(create_cli(), [*args, "--confidence", confidence])
        lines = result.stderr.strip().splitlines()
        assert result.exit_code == 2, (confidence, result.output, result.exception)
        assert result.stdout == "" and len(lines) == 1 and "Traceback" not in result.stderr, (confidence, lines)
        assert lines[0].startswith("reviewdepth: error: confidence") and "0.999999" in lines[0], lines[0]
    assert calibrations(engine) == 0
    for confidence in ACCEPTED:
        result = runner.invoke(create_cli(), [*args, "--confidence", confidence])
        assert result.exit_code in (0, 1), (confidence, result.output, result.exception)  # watch: 1 = continue
        assert result.stdout, confidence
