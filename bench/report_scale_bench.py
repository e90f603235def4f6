"""`reviewdepth report` on a 10,000,000-entry queue (issue 44, item 4), on SQLite and PostgreSQL.

    python bench/report_scale_bench.py build --db URL [--queue 10000000] [--judged 245000] [--folder /tmp]
    python bench/report_scale_bench.py measure --db URL [--checkout DIR]... [--rounds 3] [--out-folder DIR]

``build`` fills an empty database (a SQLite file, or a PostgreSQL database created when missing) with
report_bench.py's shape at a larger queue: topic ``1`` ranking ``--queue`` documents (scores falling with the
rank), its top ``--judged`` documents judged in rank order (relevant with chance 0.3·exp(-rank/80,000), seed 7),
and a judged random sample of 1,000 from the unreviewed rest (seed 3). The run file is written under
``--folder``.

``measure`` runs ``reviewdepth report 1 --format json --db URL`` in a child process once per ``--checkout``
(the code imported through PYTHONPATH; none: this checkout) per round, the checkouts taking turns, and prints
each run's wall seconds, CPU seconds (user + system of the child) and the SHA-256 of its output; with
``--out-folder`` the outputs are kept there as ``<checkout index>.json``. The database server's own CPU is not
in the child's CPU: wall minus CPU is mostly waiting on it (or on the disk). Always exits 0 unless a report
fails.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def write_run(path: Path, documents: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as out:
        for start in range(0, documents, 100_000):
            out.write("".join(f"1 Q0 doc{i:08d} {i + 1} {documents - i} bench\n"
                              for i in range(start, min(start + 100_000, documents))))


def build(url: str, queue: int, judged: int, folder: Path) -> None:
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    from reviewdepth.services.files.imports import import_qrels, import_run
    from reviewdepth.services.review.judgments import record_judgments
    from reviewdepth.services.review.samples import draw_sample
    from reviewdepth.store import migrate
    from reviewdepth.store.engine import create_engine_for

    parsed = make_url(url)
    if parsed.get_backend_name() == "postgresql":
        admin = create_engine(parsed.set(database="postgres"), isolation_level="AUTOCOMMIT")
        with admin.connect() as conn:
            if conn.execute(text("SELECT 1 FROM pg_database WHERE datname = :n"),
                            {"n": parsed.database}).first() is None:
                conn.execute(text(f'CREATE DATABASE "{parsed.database}"'))
        admin.dispose()
    run = folder / f"report-scale-{queue}.run"
    if not run.exists():
        write_run(run, queue)
    engine = create_engine_for(url)
    migrate.upgrade(engine)
    started = time.perf_counter()
    import_run(engine, str(run))
    print(f"run imported in {time.perf_counter() - started:.1f} s", flush=True)
    rng = np.random.default_rng(7)
    rel = rng.random(judged) < 0.3 * np.exp(-np.arange(judged) / 80_000)
    qrels = folder / f"report-scale-{queue}-{judged}.qrels"
    qrels.write_text("".join(f"1 0 doc{i:08d} {int(r)}\n" for i, r in enumerate(rel)))
    import_qrels(engine, str(qrels))
    sample = draw_sample(engine, "1", 1000, frame="unreviewed", seed=3)
    record_judgments(engine, "1", [(d, "1" if rng.random() < 0.002 else "0") for d in sample.doc_ids],
                     reviewer="sampler", role="sample")
    engine.dispose()
    print(f"built: queue {queue:,} entries, {judged + 1000:,} judgments in {url}")


# Run in the child before the CLI: each time a PostgreSQL connection goes back to the pool, its server process's
# CPU so far (user + system, from /proc: the server runs on this machine) is written to the file named by
# REPORT_SCALE_SERVER_CPU, so the file ends with the whole report's server CPU (the report uses one connection).
SERVER_CPU_HOOK = """
import os
from sqlalchemy import event
from sqlalchemy.pool import Pool
def _cpu_of(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
def _checkin(dbapi_connection, record):
    pid = getattr(dbapi_connection, "info", None) and getattr(dbapi_connection.info, "backend_pid", None)
    if pid and os.path.exists(f"/proc/{pid}/stat"):
        with open(os.environ["REPORT_SCALE_SERVER_CPU"], "a") as out:
            out.write(f"{pid} {_cpu_of(pid)}\\n")
event.listen(Pool, "checkin", _checkin)
"""


def server_cpu(path: Path) -> float:
    """The server CPU of the connections a child recorded (the last figure of each server process)."""
    last: dict[str, float] = {}
    if path.exists():
        for pid, seconds in (line.split() for line in path.read_text().splitlines() if line.strip()):
            last[pid] = float(seconds)
    return sum(last.values())


def measure(url: str, checkouts: list[str | None], rounds: int, out_folder: Path | None) -> None:
    cli = [sys.executable, "-c", SERVER_CPU_HOOK + "import sys; from reviewdepth.cli.app import main; sys.exit(main())"]
    order = list(range(len(checkouts)))
    for round_no in range(rounds):
        turn = order if round_no % 2 == 0 else order[::-1]
        for index in turn:
            cpu_file = Path(tempfile.mkdtemp()) / "server-cpu"
            env = dict(os.environ, OPENBLAS_NUM_THREADS="1", REPORT_SCALE_SERVER_CPU=str(cpu_file))
            if checkouts[index]:
                env["PYTHONPATH"] = str(checkouts[index])
            with tempfile.TemporaryFile() as sink, tempfile.TemporaryFile() as errors:
                started = time.perf_counter()
                # run from / : the current directory comes first on sys.path, before PYTHONPATH
                child = subprocess.Popen([*cli, "report", "1", "--format", "json", "--db", url], env=env, cwd="/",
                                         stdout=sink, stderr=errors)
                _, status, usage = os.wait4(child.pid, 0)
                wall = time.perf_counter() - started
                if os.waitstatus_to_exitcode(status):
                    errors.seek(0)
                    sys.exit(f"report failed ({checkouts[index] or 'this checkout'}): {errors.read().decode()[-2000:]}")
                sink.seek(0)
                output = sink.read()
            cpu = usage.ru_utime + usage.ru_stime
            if out_folder is not None:
                out_folder.mkdir(parents=True, exist_ok=True)
                (out_folder / f"{index}.json").write_bytes(output)
            server = server_cpu(cpu_file)
            cpu_file.unlink(missing_ok=True)
            cpu_file.parent.rmdir()
            print(f"round {round_no + 1}  {checkouts[index] or 'this checkout':40s}  wall {wall:6.2f} s  "
                  f"cpu {cpu:6.2f} s  server cpu {server:5.2f} s  sha256 {hashlib.sha256(output).hexdigest()[:16]}",
                  flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    build_cmd = sub.add_parser("build")
    build_cmd.add_argument("--db", required=True)
    build_cmd.add_argument("--queue", type=int, default=10_000_000)
    build_cmd.add_argument("--judged", type=int, default=245_000)
    build_cmd.add_argument("--folder", type=Path, default=Path("/tmp"))
    measure_cmd = sub.add_parser("measure")
    measure_cmd.add_argument("--db", required=True)
    measure_cmd.add_argument("--checkout", action="append", default=[])
    measure_cmd.add_argument("--rounds", type=int, default=3)
    measure_cmd.add_argument("--out-folder", type=Path)
    args = parser.parse_args()
    if args.command == "build":
        build(args.db, args.queue, args.judged, args.folder)
    else:
        measure(args.db, args.checkout or [None], args.rounds, args.out_folder)


if __name__ == "__main__":
    main()
