"""CPU of the status path (issue 30): ``reviewdepth watch TOPIC --once`` and ``reviewdepth report TOPIC`` on a
10,000-document topic with an audit stream and a rest sample, against ``python -c "import numpy"``.

The topic is built in a temporary SQLite database through the services: a ranking of 10,000 documents (relevance
drawn with a prevalence falling along the ranking, about 2 % overall), an audit stream with one audit document after
every 10 ranked, the top 3,000 served by ``next_documents`` and judged (so the audit documents are judged with role
``audit`` as served), then a simple random sample of 400 from the unreviewed rest, judged with role ``sample``.

Each command runs in interleaved pairs with the numpy import (which one goes first alternates, so machine load hits
both alike); CPU is the child's user + system time (``resource.getrusage(RUSAGE_CHILDREN)``). Prints min / median /
max of each and the median of the per-pair ratios. Target (issue 30): ratio <= 1.5. Always exits 0.

    python bench/status_bench.py [--pairs 15] [--documents 10000] [--reviewed 3000] [--sample 400] [--keep DIR]
                                 [--bytecode-cache DIR] [--baseline numpy|stack] [--command NAME]...

``--baseline stack`` compares with importing the libraries the status path stands on (issue 44: target 1.2x);
``--command topics`` also times ``reviewdepth topics``. Every child runs with ``OPENBLAS_NUM_THREADS=1``.

Both commands run from the same virtualenv (``sys.executable`` and the ``reviewdepth`` console script beside it),
with the environment as it is. ``--sample 0``: no rest sample (the ranked-urn hypergeometric heuristic then runs
over every urn). ``--bytecode-cache DIR`` runs every child with ``PYTHONPYCACHEPREFIX=DIR`` and without
``PYTHONDONTWRITEBYTECODE``, so that reviewdepth's own modules load from cached bytecode as from an installed wheel
(with ``PYTHONDONTWRITEBYTECODE=1`` and an editable install they are compiled from source on every run, numpy's not;
see ``bench/eval_startup_bench.py``).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

TOPIC = "T"
STACK = "import numpy, sqlalchemy.orm, scipy.special, typer, rich, pydantic_settings"


def build_topic(url: str, documents: int, reviewed: int, sample: int, seed: int = 30) -> None:
    """Create the topic described in the module docstring in the database at ``url`` (migrated here)."""
    from reviewdepth.services.admin.topics import create_topic
    from reviewdepth.services.files.rankings import RankedDocument, store_ranking
    from reviewdepth.services.review.audit_stream import create_stream, next_documents
    from reviewdepth.services.review.batches import BatchItem, record_batch
    from reviewdepth.services.review.samples import draw_sample
    from reviewdepth.store import migrate
    from reviewdepth.store.engine import create_engine_for

    rng = np.random.default_rng(seed)
    docs = [f"doc{i:06d}" for i in range(documents)]
    prevalence = 0.12 * np.exp(-np.arange(documents) / (documents / 8))
    relevant = {d for d, r in zip(docs, rng.random(documents) < prevalence, strict=True) if r}
    engine = create_engine_for(url)
    try:
        migrate.upgrade(engine)
        create_topic(engine, TOPIC, population_size=documents)
        store_ranking(engine, TOPIC, "ranked", [RankedDocument(d, float(documents - i)) for i, d in enumerate(docs)])
        create_stream(engine, TOPIC, every=10, seed=seed, reviewer="bench")
        done = 0
        while done < reviewed:
            batch = next_documents(engine, TOPIC, count=min(500, reviewed - done))
            if not batch.documents:
                break
            items = [BatchItem(d.doc_id, str(int(d.doc_id in relevant)), role=d.role) for d in batch.documents]
            record_batch(engine, TOPIC, items, reviewer="bench", source="bench")
            done += sum(d.role == "review" for d in batch.documents)
        if sample:
            drawn = draw_sample(engine, TOPIC, sample, frame="unreviewed", seed=seed)
            record_batch(engine, TOPIC, [BatchItem(d, str(int(d in relevant)), role="sample")
                                         for d in drawn.doc_ids], reviewer="sampler", source="bench",
                         allow_unqueued=True)
    finally:
        engine.dispose()


def cpu(command: list[str], env: dict[str, str]) -> float:
    """CPU time (user + system) of one run of ``command``; its exit code is not checked (watch --once exits 1
    while the stop is not certified) but a code above 1 is an error."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode > 1:
        raise SystemExit(f"{' '.join(command)} exited {done.returncode}: {done.stderr}")
    return after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def interleaved(command: list[str], baseline: list[str], env: dict[str, str],
                pairs: int) -> tuple[list[float], list[float], list[float]]:
    """CPU of ``command`` and of ``baseline`` in ``pairs`` interleaved pairs (which goes first alternates, so
    machine load hits both alike), and the per-pair ratios."""
    mine: list[float] = []
    base: list[float] = []
    for i in range(pairs):
        if i % 2:
            base.append(cpu(baseline, env))
            mine.append(cpu(command, env))
        else:
            mine.append(cpu(command, env))
            base.append(cpu(baseline, env))
    return mine, base, [m / b for m, b in zip(mine, base, strict=True)]


def spread(values: list[float]) -> str:
    return f"min {min(values):.3f}  median {statistics.median(values):.3f}  max {max(values):.3f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=15)
    parser.add_argument("--documents", type=int, default=10_000)
    parser.add_argument("--reviewed", type=int, default=3_000)
    parser.add_argument("--sample", type=int, default=400)
    parser.add_argument("--keep", metavar="DIR", help="build the database in DIR and keep it (reused if present)")
    parser.add_argument("--bytecode-cache", metavar="DIR", help="load every module from bytecode cached in DIR")
    parser.add_argument("--baseline", choices=("numpy", "stack"), default="numpy",
                        help="numpy: python -c 'import numpy' (target 1.5x, issue 30); stack: the import of the "
                             f"libraries the status path stands on, {STACK!r} (target 1.2x, issue 44)")
    parser.add_argument("--command", action="append", choices=("watch --once", "report", "topics"),
                        help="the commands to time (repeatable; default: watch --once and report)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(args.keep) if args.keep else Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "status.sqlite3"
        url = f"sqlite:///{path}"
        if not path.exists():
            build_topic(url, args.documents, args.reviewed, args.sample)
        exe = str(Path(sys.executable).parent / "reviewdepth")
        env = dict(os.environ, REVIEWDEPTH_DATABASE_URL=url, OPENBLAS_NUM_THREADS="1")  # one BLAS thread, as the CLI
        if args.bytecode_cache:
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            env["PYTHONPYCACHEPREFIX"] = args.bytecode_cache
        baseline = [sys.executable, "-c", "import numpy" if args.baseline == "numpy" else STACK]
        base_name, target = ("import numpy", 1.5) if args.baseline == "numpy" else ("stack import", 1.2)
        known = {"watch --once": [exe, "watch", TOPIC, "--once"], "report": [exe, "report", TOPIC],
                 "topics": [exe, "topics"]}
        commands = {name: known[name] for name in (args.command or ["watch --once", "report"])}
        for command in commands.values():  # warm the page cache and any bytecode caches once
            cpu(command, env)
        cpu(baseline, env)
        print(f"topic: {args.documents:,} documents, {args.reviewed:,} reviewed with an audit stream (every 10), "
              f"a rest sample of {args.sample}; {args.pairs} interleaved pairs each; CPU = user + sys of the child; "
              + (f"bytecode cached in {args.bytecode_cache}" if args.bytecode_cache else
                 f"PYTHONDONTWRITEBYTECODE={env.get('PYTHONDONTWRITEBYTECODE', '')!r}"))
        for name, command in commands.items():
            mine, base, ratios = interleaved(command, baseline, env, args.pairs)
            print(f"{name:13s} CPU s: {spread(mine)}")
            print(f"{base_name:13s} CPU s: {spread(base)}")
            print(f"{name:13s} ratio: {spread(ratios)}  (target <= {target})")


if __name__ == "__main__":
    main()
