"""The CD010276 validation packet of issue 41 ("Show"; not run in CI: tests/services/test_validation_packet.py
checks the same path). CLEF 2017 CD010276, AMC's ranking, abstract qrels as the truth, the state of issue 38's
test (tests/services/test_one_decision.py): 2,053 reviewed in rank order, a rest sample of 2,173 judged (its test
fails), the review carried on to rank 4,343, then an audit stream judged until it certifies 95 % recall. With
--protocol the topic's protocol fields are entered as a team would (`reviewdepth topic protocol`), and with
--strata a control sample of 300 documents is drawn and coded before the review starts, and after it a QC sample
of 400 judged documents is recoded by a second reviewer (role qc), so that the packet's richness and
three-stratum sections have their samples. The coding is the qrels' throughout (no coding error is simulated).

    python bench/validation_packet_demo.py --db sqlite:////tmp/cd010276.db --protocol --strata --pdf FILE \
        [--json FILE] [--html FILE]
"""

from __future__ import annotations

import argparse
import gzip
import tempfile
from pathlib import Path

from sqlalchemy import update

from reviewdepth.report.validation_render import render_document
from reviewdepth.services.answers.monitor import build_monitor
from reviewdepth.services.answers.report import ReportOptions
from reviewdepth.services.answers.validation import build_validation
from reviewdepth.services.files.imports import import_run
from reviewdepth.services.review.audit_stream import create_stream, next_documents
from reviewdepth.services.review.judgments import record_judgments
from reviewdepth.services.review.samples import draw_sample
from reviewdepth.store.engine import create_engine_for
from reviewdepth.store.models import Topic

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "clef-tar-2017"
TOPIC = "CD010276"


def build_state(db: str, strata: bool = False) -> None:
    from reviewdepth.store.migrate import upgrade

    engine = create_engine_for(db)
    upgrade(engine)
    with gzip.open(DATA / "runs" / "amc.run.gz", "rt") as f:
        lines = [line for line in f if line.startswith(TOPIC + " ")]
    with gzip.open(DATA / "qrels" / "qrel_abs_test.txt.gz", "rt") as f:
        labels = {p[2]: p[3] for p in (line.split() for line in f) if p and p[0] == TOPIC}
    with tempfile.TemporaryDirectory() as tmp:
        run = Path(tmp) / f"{TOPIC}.run"
        run.write_text("".join(lines))
        import_run(engine, str(run))
    with engine.begin() as conn:
        conn.execute(update(Topic).where(Topic.name == TOPIC).values(population_size=len(labels)))
    ranking = [line.split()[2] for line in lines]

    def judge(docs: list[str], role: str, reviewer: str) -> None:
        if docs:
            record_judgments(engine, TOPIC, [(d, labels.get(d, "0")) for d in docs], reviewer=reviewer, role=role)

    if strata:
        control = draw_sample(engine, TOPIC, 300, frame="all", seed=5)
        judge(control.doc_ids, "sample", "senior-1")
    judge(ranking[:2053], "review", "review-team")
    sample = draw_sample(engine, TOPIC, 2173, frame="unreviewed", seed=11)
    judge(sample.doc_ids, "sample", "senior-1")
    drawn = set(sample.doc_ids)
    judge([d for d in ranking[2053:4343] if d not in drawn], "review", "review-team")
    create_stream(engine, TOPIC, every=5, seed=3, reviewer="ana")
    for _ in range(60):
        batch = next_documents(engine, TOPIC, count=20)
        judge([d.doc_id for d in batch.documents if d.role == "audit"], "audit", "ana")
        if build_monitor(engine, TOPIC, target="0.95").certified:
            break
    if strata:
        qc = draw_sample(engine, TOPIC, 400, frame="judged", seed=21)
        judge(qc.doc_ids, "qc", "senior-2")
    engine.dispose()


PROTOCOL = ["--workflow", "TAR 2.0", "--platform", "reviewdepth", "--model", "AMC ranking (CLEF 2017 run)",
            "--tool-version", "0.1.0", "--custodian", "PubMed (CLEF 2017 CD010276 collection)",
            "--date-from", "1946-01-01", "--date-to", "2016-12-31", "--excluded-type", "non-English records",
            "--duplicates-removed", "0", "--threaded", "0", "--acceptance", "recall>=0.95@0.95",
            "--reviewer", "review-team:first-pass reviewers", "--reviewer", "senior-1:validation sample coder",
            "--reviewer", "ana:audit stream coder", "--reviewer", "senior-2:QC reviewer", "--blind",
            "--produced", "54", "--withheld", "0", "--by", "counsel"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", required=True, help="a database URL for a fresh store")
    parser.add_argument("--pdf", type=Path, default=None)
    parser.add_argument("--html", type=Path, default=None)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--protocol", action="store_true", help="enter the topic's protocol fields")
    parser.add_argument("--strata", action="store_true", help="a control sample and a QC sample as well")
    args = parser.parse_args(argv)
    build_state(args.db, args.strata)
    if args.protocol:
        from typer.testing import CliRunner

        from reviewdepth.cli.app import create_cli

        done = CliRunner().invoke(create_cli(), ["topic", "protocol", TOPIC, *PROTOCOL, "--db", args.db])
        assert done.exit_code == 0, done.output
    engine = create_engine_for(args.db)
    document = build_validation(engine, TOPIC, ReportOptions(targets=["0.95"]))
    for path, fmt in ((args.pdf, "pdf"), (args.html, "html"), (args.json, "json")):
        if path is not None:
            path.write_bytes(render_document(document, fmt))  # type: ignore[arg-type]
    print(document.decision.status_text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
