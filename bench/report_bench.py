"""Depth report for a 2,000,000-document queue with 245,000 judgments (the eval bench's 1x2M shape, reviewed in
rank order: the top 245,000 judged) plus a judged random sample of 1,000 from the unreviewed rest, on SQLite, or on
PostgreSQL with ``--pg`` (a fresh database, dropped at the end).

    python bench/report_bench.py [--workdir bench/data] [--repeat 3] [--pg postgresql://postgres@127.0.0.1:5432/test]

Prints the end-to-end time of `reviewdepth report --format json` (process start to last byte) and of the
`build_report` call alone. Targets (issue 30): <= 1.5 s end to end on SQLite, <= 2.5 s on PostgreSQL. Always
exits 0.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from store_bench import Databases

from reviewdepth.services.answers.report import ReportOptions, build_report
from reviewdepth.services.files.imports import import_qrels, import_run
from reviewdepth.services.review.judgments import record_judgments
from reviewdepth.services.review.samples import draw_sample
from reviewdepth.store import migrate
from reviewdepth.store.engine import create_engine_for


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workdir", type=Path, default=Path(__file__).parent / "data")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--pg", help="PostgreSQL server URL: run on a fresh database there instead of SQLite")
    args = parser.parse_args()
    run = args.workdir / "1x2M.run"
    if not run.exists():
        write_run(run, 2_000_000)
    with tempfile.TemporaryDirectory() as tmp, Databases(args.pg, Path(tmp)).fresh() as db:
        engine = create_engine_for(db)
        migrate.upgrade(engine)
        import_run(engine, str(run))
        docs = [line.split()[2] for line in run.read_text().splitlines()[:245_000]]
        rng = np.random.default_rng(7)
        rel = rng.random(len(docs)) < 0.3 * np.exp(-np.arange(len(docs)) / 80_000)
        qrels = Path(tmp) / "top.qrels"
        qrels.write_text("".join(f"1 0 {d} {int(r)}\n" for d, r in zip(docs, rel, strict=True)))
        import_qrels(engine, str(qrels))
        sample = draw_sample(engine, "1", 1000, frame="unreviewed", seed=3)
        record_judgments(engine, "1", [(d, "1" if rng.random() < 0.002 else "0") for d in sample.doc_ids],
                         reviewer="sampler", role="sample")
        inner = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            report = build_report(engine, "1", ReportOptions())
            report.to_json()
            inner.append(time.perf_counter() - start)
        engine.dispose()
        exe = Path(sys.executable).parent / "reviewdepth"
        outer = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            subprocess.run([str(exe), "report", "1", "--format", "json", "--db", db], check=True,
                           stdout=subprocess.DEVNULL)
            outer.append(time.perf_counter() - start)
    print(f"queue 2,000,000 entries, {len(docs) + 1000:,} judgments, report basis {report.depth_basis}")
    print(f"build_report + JSON (in process): median {statistics.median(inner):.2f} s ({runs(inner)})")
    target = 2.5 if args.pg else 1.5
    print(f"reviewdepth report --format json on {'PostgreSQL' if args.pg else 'SQLite'} (end to end): median "
          f"{statistics.median(outer):.2f} s ({runs(outer)}; target <= {target} s: "
          f"{'met' if statistics.median(outer) <= target else 'NOT met'})")


def write_run(path: Path, documents: int) -> None:
    """One topic ranking ``documents`` documents (scores falling with the rank), in TREC run format."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as out:
        for start in range(0, documents, 100_000):
            out.write("".join(f"1 Q0 doc{i:07d} {i + 1} {documents - i} bench\n"
                              for i in range(start, min(start + 100_000, documents))))


def runs(times: list[float]) -> str:
    return "runs " + ", ".join(f"{t:.2f}" for t in times)


if __name__ == "__main__":
    main()
