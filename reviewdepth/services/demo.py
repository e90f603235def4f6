"""`reviewdepth demo`: a real CLEF TAR topic reviewed in rank order, with a random sample for estimation."""

from __future__ import annotations

import gzip
from importlib import resources
from pathlib import Path

from sqlalchemy import Engine, update

from reviewdepth.report.model import Report
from reviewdepth.services.answers.report import ReportOptions, build_report
from reviewdepth.services.files.imports import import_run
from reviewdepth.services.review.judgments import record_judgments
from reviewdepth.services.review.samples import draw_sample
from reviewdepth.store.engine import create_engine_for, default_database_path
from reviewdepth.store.models import Topic

DEMO_TOPIC = "CD008803"
RUN_FILE = "CD008803.waterloo.A-rank-normal.run.gz"
QRELS_FILE = "CD008803.abs.qrels.gz"


def fresh_demo_database() -> tuple[str, Path]:
    """A new, migrated SQLite database beside the embedded one (``demo.sqlite3``, replaced on every call): its
    URL and its file."""
    from reviewdepth.store import migrate

    path = default_database_path().with_name("demo.sqlite3")
    path.parent.mkdir(parents=True, exist_ok=True)
    for stale in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        stale.unlink(missing_ok=True)
    url = f"sqlite:///{path}"
    engine = create_engine_for(url)
    try:
        migrate.upgrade(engine)
    finally:
        engine.dispose()
    return url, path


def demo_file(name: str) -> str:
    return str(resources.files("reviewdepth") / "data" / "demo" / name)


def demo_labels() -> dict[str, str]:
    with gzip.open(demo_file(QRELS_FILE), "rt") as handle:
        return {f[2]: f[3] for f in (line.split() for line in handle) if len(f) == 4}


def run_demo(engine: Engine, *, reviewed: int = 1000, sample_size: int = 400, seed: int = 2017) -> Report:
    """Import the Waterloo ranking of CD008803 (5,220 candidates, 99 relevant), record the qrels' labels for the
    top ``reviewed`` documents as if a reviewer had judged them in order, draw a random sample of the unreviewed
    rest, judge it the same way, and build the depth report."""
    summary = import_run(engine, demo_file(RUN_FILE), queue_name="waterloo-A", again=True)
    topic = summary.topics[0]
    labels = demo_labels()
    with engine.begin() as conn:
        conn.execute(update(Topic).where(Topic.name == topic).values(population_size=len(labels)))
    with gzip.open(demo_file(RUN_FILE), "rt") as handle:
        ranking = [line.split()[2] for line in handle if line.strip()]
    top = ranking[:reviewed]
    record_judgments(engine, topic, [(d, labels[d]) for d in top], reviewer="demo-reviewer", source="demo")
    sample = draw_sample(engine, topic, sample_size, frame="unreviewed", seed=seed)
    record_judgments(engine, topic, [(d, labels[d]) for d in sample.doc_ids], reviewer="demo-sampler",
                     role="sample", source="demo")
    return build_report(engine, topic, ReportOptions())
