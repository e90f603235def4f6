"""The count bound on CLEF 2017 topics with fewer than 59 relevant documents (issue 41, item 4, "Show"; not run in
CI: tests/services/test_count_bound.py checks the same path on one topic).

For each topic (AMC's ranking, abstract qrels as the truth, N = the qrels' size) the team reviews the top quarter
of the ranking, then draws a random sample of 300 of the unreviewed rest and judges it. The script prints
`reviewdepth plan TOPIC --missed-at-most M` for each, and the recall target's status beside it.

    python bench/count_bound_demo.py --db sqlite:////tmp/count_bound.db [--topics CD008760 CD010771 ...] [--at-most 1]
"""

from __future__ import annotations

import argparse
import gzip
import tempfile
from pathlib import Path

from sqlalchemy import update
from typer.testing import CliRunner

from reviewdepth.cli.app import create_cli
from reviewdepth.services.files.imports import import_run
from reviewdepth.services.review.judgments import record_judgments
from reviewdepth.services.review.samples import draw_sample
from reviewdepth.store.engine import create_engine_for
from reviewdepth.store.models import Topic

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "clef-tar-2017"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", required=True, help="a database URL for a fresh store")
    parser.add_argument("--topics", nargs="*", default=None)
    parser.add_argument("--at-most", type=int, default=1)
    parser.add_argument("--sample", type=int, default=300)
    args = parser.parse_args(argv)
    truth: dict[str, dict[str, str]] = {}
    with gzip.open(DATA / "qrels" / "qrel_abs_test.txt.gz", "rt") as f:
        for p in (line.split() for line in f):
            if p:
                truth.setdefault(p[0], {})[p[2]] = p[3]
    small = sorted(t for t, labels in truth.items() if sum(v == "1" for v in labels.values()) < 59
                   and len(labels) >= 1500)
    topics = args.topics or small[:3]
    with gzip.open(DATA / "runs" / "amc.run.gz", "rt") as f:
        lines = [line for line in f if line.split()[0] in topics]
    engine = create_engine_for(args.db)
    from reviewdepth.store.migrate import upgrade

    upgrade(engine)
    with tempfile.TemporaryDirectory() as tmp:
        run = Path(tmp) / "run.txt"
        run.write_text("".join(lines))
        import_run(engine, str(run))
    runner = CliRunner()
    for topic in topics:
        labels = truth[topic]
        with engine.begin() as conn:
            conn.execute(update(Topic).where(Topic.name == topic).values(population_size=len(labels)))
        ranking = [line.split()[2] for line in lines if line.split()[0] == topic]
        top = ranking[:len(ranking) // 4]
        record_judgments(engine, topic, [(d, labels.get(d, "0")) for d in top], reviewer="review-team")
        sample = draw_sample(engine, topic, args.sample, frame="unreviewed", seed=41)
        record_judgments(engine, topic, [(d, labels.get(d, "0")) for d in sample.doc_ids], reviewer="senior",
                         role="sample")
        relevant = sum(v == "1" for v in labels.values())
        found = sum(labels.get(d) == "1" for d in top)
        print(f"== {topic}: R = {relevant} (qrels), {len(top):,} reviewed in rank order finding {found} "
              f"(true recall {found / relevant:.3f}), {relevant - found} truly left; rest sample of {args.sample}")
        done = runner.invoke(create_cli(), ["plan", topic, "--missed-at-most", str(args.at_most), "--db", args.db])
        print(done.stdout.rstrip())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
