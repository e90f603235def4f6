"""The dashboard's server CPU for 100 topics of 2,000 documents (issue 30), measured in process
(``time.process_time`` around `build_dashboard` + `render_dashboard`, what ``GET /`` runs), medians over
``--rounds``: cold with nothing kept in the store (the first render a store ever sees); cold (a new process's
cache, the topics' summaries kept in the store: `reviewdepth.services.answers.monitor_summaries`); warm (nothing
changed);
and after one new judgment on one topic.

    python bench/dashboard_bench.py [--topics 100] [--documents 2000] [--rounds 7] [--db URL]

Each topic: a run of ``--documents`` documents (1 in 10 relevant, more near the top), its top 600 judged in rank
order, and a rest sample of 100 judged.
"""

from __future__ import annotations

import argparse
import gzip
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from reviewdepth.estimation import stopping
from reviewdepth.report.monitor_render import render_dashboard
from reviewdepth.services.answers.monitor import MonitorCache, build_dashboard
from reviewdepth.services.files.imports import import_run
from reviewdepth.services.review.judgments import record_judgments
from reviewdepth.services.review.samples import draw_sample
from reviewdepth.store.engine import create_engine_for
from reviewdepth.store.migrate import upgrade
from reviewdepth.store.models import TopicSummary


def build(url: str, topics: int, documents: int, workdir: Path) -> None:
    rng = np.random.default_rng(30)
    run = workdir / "run.gz"
    truth: dict[str, np.ndarray] = {}
    with gzip.open(run, "wt") as out:
        for t in range(topics):
            qid = f"T{t:03d}"
            # relevant documents concentrated near the top, as a good ranking leaves them
            p = 0.4 * np.exp(-np.arange(documents) / 300) + 0.02
            truth[qid] = (rng.random(documents) < p).astype(np.int8)
            for rank in range(documents):
                out.write(f"{qid} Q0 {qid}-d{rank:05d} {rank + 1} {documents - rank} bench\n")
    engine = create_engine_for(url)
    import_run(engine, str(run))
    for qid, labels in truth.items():
        items = [(f"{qid}-d{r:05d}", str(int(labels[r]))) for r in range(600)]
        record_judgments(engine, qid, items, reviewer="ann")
        sample = draw_sample(engine, qid, 100, frame="unreviewed", seed=7)
        record_judgments(engine, qid, [(d, str(int(labels[int(d.rsplit("d", 1)[1])]))) for d in sample.doc_ids],
                         reviewer="bob", role="sample")
    engine.dispose()


def render(engine: object, cache: MonitorCache, topics: int) -> float:
    start = time.process_time()
    render_dashboard(build_dashboard(engine, limit=min(topics, 200), cache=cache))  # type: ignore[arg-type]
    return time.process_time() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--topics", type=int, default=100)
    parser.add_argument("--documents", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--db", default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        url = args.db or f"sqlite:///{tmp}/dashboard.db"
        upgrade(create_engine_for(url))
        build(url, args.topics, args.documents, Path(tmp))
        engine = create_engine_for(url)
        render(engine, MonitorCache(), args.topics)  # imports and first-use costs out of the figures
        cold_first, cold, warm, changed = [], [], [], []
        for r in range(args.rounds):
            with engine.begin() as conn:  # no summary kept: the first render a store ever sees
                conn.execute(TopicSummary.__table__.delete())
            stopping._FITS.clear()  # nor any point-process fit of this process (a new process has none)
            cold_first.append(render(engine, MonitorCache(), args.topics))
            cache = MonitorCache()
            cold.append(render(engine, cache, args.topics))
            warm.append(render(engine, cache, args.topics))
            qid = f"T{r % args.topics:03d}"
            record_judgments(engine, qid, [(f"{qid}-d{600 + r:05d}", "0")], reviewer="ann")
            changed.append(render(engine, cache, args.topics))
        for name, values in (("cold, nothing kept in the store", cold_first),
                             ("cold (a new process; summaries kept)", cold), ("warm (nothing changed)", warm),
                             ("after one judgment on one topic", changed)):
            print(f"{name:34s} median {1000 * statistics.median(values):8.1f} ms CPU "
                  f"(min {1000 * min(values):.1f}, max {1000 * max(values):.1f}; {args.topics} topics)")


if __name__ == "__main__":
    main()
