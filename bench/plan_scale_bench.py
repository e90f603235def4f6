"""CPU and wall of ``reviewdepth plan`` as the queue grows (issue 44, item 1): goals ≤ 10 s at 2 M entries, ≤ 60 s
at 10 M, and a fitted exponent (log-log slope of CPU against entries) ≤ 1.2.

    python bench/plan_scale_bench.py [--sizes 500000,1000000,2000000,10000000] [--judged-share 0.1]
                                     [--core] [--db sqlite|postgresql://USER@HOST:PORT/ADMIN_DB] [--folder /tmp]
                                     [--checkout DIR]

The state, at every size N: one topic ``T0`` whose queue is N documents in rank order, the first 10 % judged in
review (``--judged-share``), document i relevant when frac(i·φ) < 0.1·e^(−20 i/N) (φ the golden ratio's
fraction: an even, seed-free spread of a ranking that front-loads, so the review has found most of what the top
held and the rest still yields about 1.4 % per document where it stops). No rest sample, no audit stream.

``--core``: `stop_plan.plan_stop` on those labels in this process (the pure core: no database, no loading),
CPU (process time) and wall per size. ``--db``: the queue imported with ``reviewdepth import run`` (a TREC run
written under ``--folder``) and the judgments with ``reviewdepth judge --file`` into a fresh database per size
(a SQLite file under ``--folder``, or a database ``plan44_<size>`` created on the PostgreSQL server and dropped
after), then ``reviewdepth plan T0`` timed as a child process (its user + system CPU, and wall). The build is not
timed. ``--checkout DIR``: the code imported through PYTHONPATH (none: this checkout), to time another version.
Prints one line per size and the fitted exponent over the sizes measured.
"""

from __future__ import annotations

import argparse
import math
import os
import resource
import subprocess
import sys
import time
from fractions import Fraction
from pathlib import Path

import numpy as np

GOLDEN = 0.6180339887498949


def labels_for(size: int, judged: int) -> np.ndarray:
    """The judged prefix's labels (module docstring)."""
    i = np.arange(judged, dtype=np.float64)
    chance = 0.1 * np.exp(-20.0 * i / size)
    return (np.modf(i * GOLDEN)[0] < chance).astype(np.int8)


def core_once(size: int, judged: int) -> tuple[float, float, str]:
    from reviewdepth.estimation.stop_plan import ReviewEvidence, plan_stop

    prefix = labels_for(size, judged)
    cpu, wall = time.process_time(), time.perf_counter()
    plan = plan_stop(ReviewEvidence(prefix, size), Fraction("0.95"), 0.95)
    return time.process_time() - cpu, time.perf_counter() - wall, str(plan.recommended)


def _cli(checkout: str | None) -> tuple[list[str], dict[str, str]]:
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    if checkout:
        env["PYTHONPATH"] = checkout
    return [sys.executable, "-c", "import sys; from reviewdepth.cli.app import main; sys.exit(main())"], env


def build(url: str, size: int, judged: int, folder: Path, checkout: str | None) -> None:
    cli, env = _cli(checkout)
    run, judgments = folder / f"plan_scale_{size}.run", folder / f"plan_scale_{size}.tsv"
    with run.open("w") as handle:
        for start in range(0, size, 100_000):
            handle.write("".join(f"T0 Q0 D{i:08d} {i + 1} {(size - i) / 7:.4f} runA\n"
                                 for i in range(start, min(size, start + 100_000))))
    prefix = labels_for(size, judged)
    with judgments.open("w") as handle:
        handle.write("doc\tlabel\n")
        handle.write("".join(f"D{i:08d}\t{int(label)}\n" for i, label in enumerate(prefix.tolist())))
    for args in (["db", "upgrade"], ["import", "run", str(run)],
                 ["judge", "T0", "--file", str(judgments), "--reviewer", "bench"]):
        subprocess.run([*cli, *args, "--db", url], env=env, cwd=folder, check=True, capture_output=True)
    run.unlink()
    judgments.unlink()


def plan_once(url: str, folder: Path, checkout: str | None) -> tuple[float, float, str]:
    cli, env = _cli(checkout)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = time.perf_counter()
    done = subprocess.run([*cli, "plan", "T0", "--db", url], env=env, cwd=folder, check=True, capture_output=True,
                          text=True)
    wall = time.perf_counter() - wall
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    recommended = next((line.strip() for line in done.stdout.splitlines() if "recommend" in line.lower()), "")
    return cpu, wall, recommended[:70]


def _postgres(admin: str, name: str, action: str) -> str:
    import sqlalchemy as sa

    engine = sa.create_engine(admin.replace("postgresql://", "postgresql+psycopg://"), isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        conn.execute(sa.text(f"DROP DATABASE IF EXISTS {name}"))
        if action == "create":
            conn.execute(sa.text(f"CREATE DATABASE {name}"))
    engine.dispose()
    base = admin.rsplit("/", 1)[0]
    return f"{base}/{name}".replace("postgresql://", "postgresql+psycopg://")


def slope(sizes: list[int], seconds: list[float]) -> float:
    x, y = np.log(np.array(sizes, dtype=np.float64)), np.log(np.array(seconds, dtype=np.float64))
    return float(np.polyfit(x, y, 1)[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="500000,1000000,2000000,10000000")
    parser.add_argument("--judged-share", type=float, default=0.1)
    parser.add_argument("--core", action="store_true", help="plan_stop in process on arrays (no database)")
    parser.add_argument("--db", default="sqlite")
    parser.add_argument("--folder", default="/tmp")
    parser.add_argument("--checkout")
    args = parser.parse_args()
    if args.checkout:
        sys.path.insert(0, args.checkout)
    sizes = [int(s) for s in args.sizes.split(",")]
    folder = Path(args.folder)
    print(f"plan scale: {'core plan_stop on arrays' if args.core else args.db}, {args.judged_share:.0%} judged "
          f"(target 0.95, confidence 0.95); code: {args.checkout or 'this checkout'}", flush=True)
    cpus: list[float] = []
    for size in sizes:
        judged = int(size * args.judged_share)
        if args.core:
            cpu, wall, recommended = core_once(size, judged)
        elif args.db == "sqlite":
            path = folder / f"plan_scale_{size}.sqlite3"
            path.unlink(missing_ok=True)
            url = f"sqlite:///{path}"
            build(url, size, judged, folder, args.checkout)
            cpu, wall, recommended = plan_once(url, folder, args.checkout)
            path.unlink()
        else:
            name = f"plan44_{size}"
            url = _postgres(args.db, name, "create")
            try:
                build(url, size, judged, folder, args.checkout)
                cpu, wall, recommended = plan_once(url, folder, args.checkout)
            finally:
                _postgres(args.db, name, "drop")
        cpus.append(cpu)
        print(f"{size:>12,} entries  {judged:>10,} judged  cpu {cpu:8.1f} s  wall {wall:8.1f} s  {recommended}",
              flush=True)
    if len(sizes) > 1:
        print(f"fitted exponent (log-log slope of CPU against entries): {slope(sizes, cpus):.2f}"
              f"{'' if all(math.isfinite(c) for c in cpus) else ' (incomplete)'}")


if __name__ == "__main__":
    main()
