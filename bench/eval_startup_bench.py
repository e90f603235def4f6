"""Start-up cost of ``reviewdepth eval`` on a tiny file against a process that only imports numpy.

Runs the two commands in interleaved pairs (so machine load hits both alike; which one goes first alternates) and
prints min/median/max wall and CPU time of each and of the per-pair gap. CPU time is the children's user + system
time: numpy's OpenBLAS threads add to it, so it can exceed the wall time. Issue 16 item 2 asks for a median gap
within 0.06 s.

    python bench/eval_startup_bench.py [--pairs 15] [QRELS RUN]

Without files it evaluates the first 3 qrels lines and 5 run lines of ../shared/data/trec_eval-test. Both
commands run from the same virtualenv (``sys.executable`` and the ``reviewdepth`` console script beside it), so
both pay the same interpreter start-up, including an editable install's import finder.

``--bytecode-cache DIR`` runs both with ``PYTHONPYCACHEPREFIX=DIR`` and without ``PYTHONDONTWRITEBYTECODE``, so that
every module, reviewdepth's included, loads from cached bytecode as in an installed wheel (with
``PYTHONDONTWRITEBYTECODE=1`` and an editable install, reviewdepth's modules are compiled from source on every
run while numpy's come from the site-packages' caches, unless a ``__pycache__`` is already in the source tree:
Python still reads one); the prefix keeps the cache out of the source tree.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "trec_eval-test"


def wall(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall time and CPU time (user + system) of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, env=env)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return elapsed, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def spread(values: list[float]) -> str:
    return f"min {min(values):.3f}  median {statistics.median(values):.3f}  max {max(values):.3f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=15)
    parser.add_argument("--bytecode-cache", metavar="DIR", help="load every module from bytecode cached in DIR")
    parser.add_argument("files", nargs="*", help="QRELS RUN (default: a tiny slice of trec_eval's test data)")
    args = parser.parse_args()
    env = dict(os.environ)
    if args.bytecode_cache:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = args.bytecode_cache
    with tempfile.TemporaryDirectory() as tmp:
        if args.files:
            qrels, run = args.files
        else:
            qrels, run = str(Path(tmp) / "tq"), str(Path(tmp) / "tr")
            Path(qrels).write_bytes(b"".join((DATA / "qrels.test").open("rb").readlines()[:3]))
            Path(run).write_bytes(b"".join((DATA / "results.test").open("rb").readlines()[:5]))
        script = str(Path(sys.executable).parent / "reviewdepth")
        evaluate = [script, "eval", qrels, run]
        floor = [sys.executable, "-c", "import numpy"]
        wall(evaluate, env), wall(floor, env)  # warm the page cache (and the bytecode cache)
        evals, floors = [], []
        for i in range(args.pairs):
            # the second run of a pair is ~10 ms slower here (measured with two identical commands): alternate
            # which one goes first so that neither side carries that
            if i % 2:
                floors.append(wall(floor, env))
                evals.append(wall(evaluate, env))
            else:
                evals.append(wall(evaluate, env))
                floors.append(wall(floor, env))
    gaps = [(e[0] - f[0], e[1] - f[1]) for e, f in zip(evals, floors, strict=True)]
    cache = f"bytecode cached in {args.bytecode_cache}" if args.bytecode_cache else \
        f"PYTHONDONTWRITEBYTECODE={env.get('PYTHONDONTWRITEBYTECODE', '')!r}"
    print(f"{args.pairs} interleaved pairs, {cache}, load average {os.getloadavg()[0]:.2f}")
    for label, runs in (("reviewdepth eval", evals), ("python -c 'import numpy'", floors), ("gap (per pair)", gaps)):
        print(f"{label:26} wall {spread([r[0] for r in runs])}   CPU {spread([r[1] for r in runs])}")


if __name__ == "__main__":
    main()
