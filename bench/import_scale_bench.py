"""Peak memory and time of ``reviewdepth import run`` on a large one-topic run (issue 44, item 3).

    python bench/import_scale_bench.py [--lines 10000000] [--db sqlite|postgresql://USER@HOST:PORT/ADMIN_DB]
                                       [--checkout DIR]... [--rounds 1] [--folder /tmp]

Writes a TREC run of ``--lines`` lines for one topic (``T0 Q0 D00000000 1 <score> runA``, about 40 bytes a line)
under ``--folder`` (not in the repository), then imports it with the CLI into a fresh database per run (a new
SQLite file, or a database created for the run on the PostgreSQL server and dropped after), once per
``--checkout`` (the code imported through PYTHONPATH; none: this checkout) per round, the checkouts taking turns.
Prints, per import, the wall seconds, the CPU seconds of the import process and its peak resident memory
(``ru_maxrss`` of the child: the high-water mark of the whole process, interpreter and imports included).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path


def write_run(path: Path, lines: int) -> None:
    with path.open("w") as handle:
        for start in range(0, lines, 100_000):
            handle.write("".join(f"T0 Q0 D{i:08d} {i + 1} {(lines - i) / 7:.4f} runA\n"
                                 for i in range(start, min(lines, start + 100_000))))


def import_once(run: Path, url: str, checkout: str | None) -> tuple[float, float, float, int]:
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    if checkout:
        env["PYTHONPATH"] = checkout
    cli = [sys.executable, "-c", "import sys; from reviewdepth.cli.app import main; sys.exit(main())"]
    # run from the run's folder: the current directory comes first on sys.path, before PYTHONPATH
    subprocess.run([*cli, "db", "upgrade", "--db", url], env=env, cwd=run.parent, check=True, capture_output=True)
    started = time.perf_counter()
    child = subprocess.Popen([*cli, "import", "run", str(run), "--db", url], env=env, cwd=run.parent,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode:
        sys.stderr.write(child.stderr.read().decode() if child.stderr else "")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, child.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lines", type=int, default=10_000_000)
    parser.add_argument("--db", default="sqlite")
    parser.add_argument("--checkout", action="append", default=[])
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--folder", default="/tmp")
    args = parser.parse_args()
    folder = Path(args.folder)
    run = folder / f"import-scale-{args.lines}.run"
    if not run.exists():
        write_run(run, args.lines)
    checkouts = args.checkout or [None]
    print(f"{args.lines:,} lines ({run.stat().st_size / 1e6:.0f} MB), {args.db.split(':')[0]}", flush=True)
    for round_number in range(args.rounds):
        for checkout in checkouts:
            name = f"import_scale_{uuid.uuid4().hex[:8]}"
            if args.db == "sqlite":
                db_path = folder / f"{name}.db"
                url = f"sqlite:///{db_path}"
            else:
                import psycopg

                admin = args.db.replace("postgresql+psycopg://", "postgresql://")
                with psycopg.connect(admin, autocommit=True) as conn:
                    conn.execute(f"CREATE DATABASE {name}")
                url = admin.rsplit("/", 1)[0] + f"/{name}"
            try:
                wall, cpu, peak, code = import_once(run, url, checkout)
            finally:
                if args.db == "sqlite":
                    for suffix in ("", "-wal", "-shm", ".api-write.lock"):
                        Path(f"{db_path}{suffix}").unlink(missing_ok=True)
                else:
                    with psycopg.connect(admin, autocommit=True) as conn:
                        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
            print(f"round {round_number + 1} {checkout or 'this checkout':<24} wall {wall:7.1f} s  cpu {cpu:7.1f} s  "
                  f"peak RSS {peak:7.0f} MB  exit {code}", flush=True)


if __name__ == "__main__":
    main()
