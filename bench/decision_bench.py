"""CPU of the decision (issue 38, item 7): ``reviewdepth report TOPIC`` and ``reviewdepth watch TOPIC --once`` on
the demo topic with an audit stream, against importing the stack they stand on
(``python -c "import numpy, sqlalchemy.orm, scipy.special, typer, rich, pydantic_settings"``).

The topic is `reviewdepth demo`'s (CLEF TAR 2017 CD008803, Waterloo's ranking: 1,000 reviewed in rank order and a
rest sample of 400), then an audit stream with one audit document after every 5 ranked and 200 documents served by
``next_documents`` and judged as served (the qrels' labels), built through the services in a temporary SQLite
database. Each command runs in interleaved pairs with the stack import (which one goes first alternates, so
machine load hits both alike); CPU is the child's user + system time. Prints min / median / max of each and the
median of the per-pair ratios. Target (issue 38): ratio <= 1.3 for both. Always exits 0.

    python bench/decision_bench.py [--pairs 15] [--keep DIR] [--plan] [--bytecode-cache DIR]

``--plan`` also times ``report --plan`` (the stop plan's replays for the answer's "to certify").
``--bytecode-cache DIR`` runs every child with ``PYTHONPYCACHEPREFIX=DIR`` and without ``PYTHONDONTWRITEBYTECODE``,
so reviewdepth's own modules load from cached bytecode as from an installed wheel (as `bench/status_bench.py`).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from status_bench import cpu, interleaved, spread  # the status bench's timing, shared

TOPIC = "CD008803"
STACK = "import numpy, sqlalchemy.orm, scipy.special, typer, rich, pydantic_settings"


def build_topic(url: str, served: int = 200, every: int = 5, seed: int = 1) -> None:
    """The demo topic with an audit stream, as the module docstring says, in the database at ``url``."""
    from reviewdepth.services.demo import demo_labels, run_demo
    from reviewdepth.services.review.audit_stream import create_stream, next_documents
    from reviewdepth.services.review.judgments import record_judgments
    from reviewdepth.store import migrate
    from reviewdepth.store.engine import create_engine_for

    engine = create_engine_for(url)
    try:
        migrate.upgrade(engine)
        run_demo(engine)
        labels = demo_labels()
        create_stream(engine, TOPIC, every=every, seed=seed, reviewer="bench")
        done = 0
        while done < served:
            batch = next_documents(engine, TOPIC, count=20)
            if not batch.documents:
                break
            for role in ("review", "audit"):
                docs = [d.doc_id for d in batch.documents if d.role == role]
                if docs:
                    record_judgments(engine, TOPIC, [(d, labels.get(d, "0")) for d in docs], reviewer="bench",
                                     role=role)
            done += len(batch.documents)
    finally:
        engine.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=15)
    parser.add_argument("--keep", metavar="DIR", help="build the database in DIR and keep it (reused if present)")
    parser.add_argument("--plan", action="store_true", help="also time report --plan")
    parser.add_argument("--bytecode-cache", metavar="DIR", help="load every module from bytecode cached in DIR")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(args.keep) if args.keep else Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "decision.sqlite3"
        url = f"sqlite:///{path}"
        if not path.exists():
            build_topic(url)
        exe = str(Path(sys.executable).parent / "reviewdepth")
        env = dict(os.environ, REVIEWDEPTH_DATABASE_URL=url)
        if args.bytecode_cache:
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            env["PYTHONPYCACHEPREFIX"] = args.bytecode_cache
        baseline = [sys.executable, "-c", STACK]
        commands = {"report": [exe, "report", TOPIC], "watch --once": [exe, "watch", TOPIC, "--once"]}
        if args.plan:
            commands["report --plan"] = [exe, "report", TOPIC, "--plan"]
        for command in (*commands.values(), baseline):  # warm the page cache and any bytecode caches once
            cpu(command, env)
        print(f"topic: {TOPIC} (the demo) with an audit stream; {args.pairs} interleaved pairs each against "
              f"`python -c \"{STACK}\"`; CPU = user + sys of the child; "
              + (f"bytecode cached in {args.bytecode_cache}" if args.bytecode_cache else
                 f"PYTHONDONTWRITEBYTECODE={env.get('PYTHONDONTWRITEBYTECODE', '')!r}"))
        for name, command in commands.items():
            mine, base, ratios = interleaved(command, baseline, env, args.pairs)
            verdict = "met" if statistics.median(ratios) <= 1.3 else "NOT met"
            print(f"{name:14s} CPU s: {spread(mine)}")
            print(f"{'stack import':14s} CPU s: {spread(base)}")
            print(f"{name:14s} ratio: {spread(ratios)}  (target <= 1.3: {verdict})")


if __name__ == "__main__":
    main()
