"""The judgment write path against its floor (issue 30): ``reviewdepth serve`` and a minimal FastAPI + SQLAlchemy
app with one INSERT per request, side by side on the same machine, the same kind of database and the same
uvicorn settings, measured in interleaved rounds.

    python bench/api_floor_bench.py [--db sqlite | postgresql://postgres@127.0.0.1:5432/postgres] [--repeat 3]
                                    [--raw-floor]   (SQLite: the raw-driver floor, `raw_floor_app`)

The floor (`floor_app`, here in bench/ only) answers ``POST /topics/{topic}/judgments`` with the body
`api_bench` sends (``{"judgments": [{"doc_id", "label"}, …]}``) through a pydantic model, a synchronous endpoint
(FastAPI's threadpool) and one ``INSERT … RETURNING id`` executemany of the rows into a table with a primary key
and nothing else, in its own transaction, and replies 201 with the ids. It skips everything reviewdepth must do:
the key check, the label's reading, the queue-membership check, the chain hash and its tail check, the
foreign keys and the log's indexes. Its database gets the same engine settings as reviewdepth's (SQLite: WAL,
synchronous NORMAL, foreign keys on; PostgreSQL: the same server), so the difference is the application's work.

Each round posts single judgments from ``--clients`` keep-alive clients, then 1,000-judgment batches from 4,
to each server in turn (which goes first alternates by round), and records the server processes' CPU
(`api_bench.run_clients`). Targets (issue 30): server CPU per single post <= 1.3x the floor's, 1,000-judgment
batches >= 0.6x the floor's throughput (judgments/s); the summary gives both ratios per round and their medians
with met / NOT met, and also the CPU ratio per batch. ``others`` is the rest of the machine's CPU meanwhile: on
PostgreSQL its own backends (reported apart, not in the target), on SQLite a sign the figures are disturbed.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from api_bench import Run, load, run_clients, server, started
from fastapi import Request, Response  # (module level: the raw floor's endpoint annotations are resolved here)
from pydantic import BaseModel

from reviewdepth.services.admin.keys import create_key
from reviewdepth.services.admin.topics import create_topic
from reviewdepth.services.files.rankings import RankedDocument, store_ranking
from reviewdepth.store import migrate
from reviewdepth.store.engine import create_engine_for

FLOOR_TABLE = "floor_judgments"
BATCH = 1000
BATCH_CLIENTS = 4


class JudgmentIn(BaseModel):
    doc_id: str
    label: str


class BatchIn(BaseModel):
    judgments: list[JudgmentIn]


class BatchOut(BaseModel):
    topic: str
    recorded: int
    ids: list[int]


def floor_app(url: str) -> Any:
    """The floor: FastAPI, pydantic, SQLAlchemy Core, one INSERT (module docstring)."""
    from fastapi import FastAPI
    from sqlalchemy import Column, DateTime, Integer, MetaData, String, Table, insert

    from reviewdepth.store.ingest import utc_now

    engine = create_engine_for(url)  # the same engine settings (pragmas, pool) as reviewdepth's
    table = Table(FLOOR_TABLE, MetaData(), Column("id", Integer, primary_key=True), Column("topic", String(200)),
                  Column("doc_id", String(200)), Column("label", String(50)), Column("recorded_at", DateTime(True)))

    app = FastAPI()

    @app.get("/health")
    def health() -> dict[str, str]:
        return {"status": "ok"}

    @app.post("/topics/{topic}/judgments", status_code=201, response_model=BatchOut)
    def post_judgments(topic: str, body: BatchIn) -> dict[str, object]:
        now = utc_now()
        rows = [{"topic": topic, "doc_id": j.doc_id, "label": j.label, "recorded_at": now} for j in body.judgments]
        with engine.begin() as conn:
            ids = [int(i) for i in conn.execute(insert(table).returning(table.c.id), rows).scalars()]
        return {"topic": topic, "recorded": len(ids), "ids": ids}

    return app


def raw_floor_app(url: str) -> Any:
    """The raw-driver floor (SQLite only): FastAPI, the body read with ``json.loads`` (no model), and one
    ``executemany`` INSERT through the sqlite3 driver in its own ``BEGIN IMMEDIATE`` transaction (WAL, synchronous
    NORMAL, as reviewdepth's connections), in a worker thread; the ids from the last row id (one writer)."""
    import json
    import sqlite3
    import threading

    from fastapi import FastAPI
    from starlette.concurrency import run_in_threadpool

    from reviewdepth.store.ingest import utc_now

    path = url.split("///", 1)[1]
    local = threading.local()
    lock = threading.Lock()

    def connection() -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(local, "conn", None)
        if conn is None:
            conn = local.conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA busy_timeout=10000")
        return conn

    def write(topic: str, judgments: list[dict[str, str]]) -> list[int]:
        now = utc_now().isoformat()
        conn = connection()
        with lock:
            conn.execute("BEGIN IMMEDIATE")
            cursor = conn.executemany(f"INSERT INTO {FLOOR_TABLE} (topic, doc_id, label, recorded_at) VALUES "
                                      "(?, ?, ?, ?)", [(topic, j["doc_id"], j["label"], now) for j in judgments])
            last = conn.execute("SELECT last_insert_rowid()").fetchone()[0]
            conn.execute("COMMIT")
        count = cursor.rowcount
        return list(range(last - count + 1, last + 1))

    app = FastAPI()

    @app.get("/health")
    def health() -> dict[str, str]:
        return {"status": "ok"}

    @app.post("/topics/{topic}/judgments", status_code=201)
    async def post_judgments(topic: str, request: Request) -> Response:
        judgments = json.loads(await request.body())["judgments"]
        ids = await run_in_threadpool(write, topic, judgments)
        return Response(json.dumps({"topic": topic, "recorded": len(ids), "ids": ids}), status_code=201,
                        media_type="application/json")

    return app


def serve_floor(url: str, port: int, raw: bool = False) -> None:
    """Run the floor under uvicorn as ``reviewdepth serve`` runs the API (one worker, no access log)."""
    import uvicorn

    uvicorn.run(raw_floor_app(url) if raw else floor_app(url), host="127.0.0.1", port=port, access_log=False)


@contextmanager
def floor_server(url: str, folder: Path, raw: bool = False) -> Iterator[tuple[str, int]]:
    """The floor on a free port: its base URL and process id."""
    with started([sys.executable, __file__, "--serve-floor", url, *(["--raw-floor"] if raw else [])], folder,
                 "floor.log") as running:
        yield running


def fresh_database(kind: str, folder: Path, name: str) -> str:
    """A new empty database: a SQLite file in ``folder``, or a PostgreSQL database named ``name`` created
    through the server of ``kind`` (a postgresql:// URL)."""
    if kind == "sqlite":
        return f"sqlite:///{folder / (name + '.db')}"
    from sqlalchemy import create_engine, text

    admin = create_engine(kind, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{name}"'))
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    admin.dispose()
    return kind.rsplit("/", 1)[0] + "/" + name


def drop_database(kind: str, name: str) -> None:
    if kind == "sqlite":
        return
    from sqlalchemy import create_engine, text

    admin = create_engine(kind, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


def prepare_reviewdepth(url: str, clients: int, rounds: int, singles: int, batches: int, warmup: int) -> list[str]:
    """The schema, topic ``bench`` with a queue holding every document the clients will post (each post pays
    the queue-membership check, as in a real review), and one write key per client: their secrets."""
    engine = create_engine_for(url)
    migrate.upgrade(engine)
    create_topic(engine, "bench")
    docs = [f"sr{n}{tag}-{c}-{r}-0" for n in range(rounds) for tag, count in (("", singles), ("w", warmup))
            for c in range(clients) for r in range(count)]
    docs += [f"br{n}{tag}-{c}-{r}-{i}" for n in range(rounds) for tag, count in (("", batches), ("w", 1))
             for c in range(BATCH_CLIENTS) for r in range(count) for i in range(BATCH)]
    store_ranking(engine, "bench", "bench", [RankedDocument(d) for d in docs])
    secrets = [create_key(engine, f"bench-{i}", "write")[1] for i in range(clients)]
    engine.dispose()
    return secrets


def prepare_floor(url: str) -> None:
    from sqlalchemy import Column, DateTime, Integer, MetaData, String, Table

    engine = create_engine_for(url)
    Table(FLOOR_TABLE, MetaData(), Column("id", Integer, primary_key=True), Column("topic", String(200)),
          Column("doc_id", String(200)), Column("label", String(50)),
          Column("recorded_at", DateTime(True))).create(engine)
    engine.dispose()


def per_request_ms(run: Run) -> float:
    return run.server_cpu / max(1, len(run.latencies)) * 1000


def line(name: str, what: str, run: Run, judgments_each: int) -> str:
    rate = len(run.latencies) * judgments_each / run.elapsed
    return (f"  {name:11s} {what}: server {per_request_ms(run):7.2f} ms CPU/request, {rate:9,.0f} judgments/s, "
            f"p50 {statistics.median(run.latencies) * 1000:6.1f} ms; CPU s: client {run.client_cpu:.1f}, "
            f"others {run.others_cpu:.1f} in {run.elapsed:.1f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", default="sqlite",
                        help="sqlite, or a postgresql:// URL of a server where databases may be created")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--singles", type=int, default=150, help="single-judgment posts per client per round")
    parser.add_argument("--batches", type=int, default=10, help="1,000-judgment batches per client per round")
    parser.add_argument("--warmup", type=int, default=5, help="untimed requests per client before each run")
    parser.add_argument("--repeat", type=int, default=3, help="interleaved rounds")
    parser.add_argument("--raw-floor", action="store_true",
                        help="(SQLite) the floor reads the body with json.loads and writes with the sqlite3 driver's "
                             "executemany, no pydantic and no SQLAlchemy (issue 44's raw-driver floor)")
    parser.add_argument("--serve-floor", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_floor:
        serve_floor(args.serve_floor, args.port, args.raw_floor)
        return
    if args.raw_floor and args.db != "sqlite":
        parser.error("--raw-floor is written for SQLite")
    folder = Path(tempfile.mkdtemp(prefix="reviewdepth-floor-bench-"))
    suffix = f"{os.getpid()}"
    rd_url = fresh_database(args.db, folder, f"floorbench_rd_{suffix}")
    floor_url = fresh_database(args.db, folder, f"floorbench_floor_{suffix}")
    kind = "sqlite" if args.db == "sqlite" else "postgresql"
    try:
        secrets = prepare_reviewdepth(rd_url, args.clients, args.repeat, args.singles, args.batches, args.warmup)
        prepare_floor(floor_url)
        floor_kind = "raw-driver floor" if args.raw_floor else "floor"
        print(f"{kind}: reviewdepth vs the {floor_kind}, {args.clients} clients for single posts ({args.singles} "
              f"each), "
              f"{BATCH_CLIENTS} for 1,000-judgment batches ({args.batches} each), {args.repeat} interleaved rounds, "
              f"{os.cpu_count()} cores; {load()}")
        single_cpu: list[float] = []
        batch_cpu: list[float] = []
        batch_rate: list[float] = []
        single_rate: list[float] = []
        with server(rd_url, 1, folder) as (rd_base, rd_pid), \
                floor_server(floor_url, folder, args.raw_floor) as (fl_base, fl_pid):
            servers = {"reviewdepth": (rd_base, rd_pid), "floor": (fl_base, fl_pid)}
            for round_ in range(args.repeat):
                order = ["reviewdepth", "floor"] if round_ % 2 == 0 else ["floor", "reviewdepth"]
                print(f"round {round_ + 1} ({' then '.join(order)}):")
                singles: dict[str, Run] = {}
                batches: dict[str, Run] = {}
                for name in order:
                    base, pid = servers[name]
                    singles[name] = run_clients(base, pid, secrets, args.singles, 1, f"sr{round_}", args.warmup)
                    print(line(name, "single posts ", singles[name], 1))
                for name in order:
                    base, pid = servers[name]
                    batches[name] = run_clients(base, pid, secrets[:BATCH_CLIENTS], args.batches, BATCH,
                                                f"br{round_}", 1)
                    print(line(name, "1,000 batches", batches[name], BATCH))
                single_cpu.append(per_request_ms(singles["reviewdepth"]) / per_request_ms(singles["floor"]))
                single_rate.append((len(singles["reviewdepth"].latencies) / singles["reviewdepth"].elapsed)
                                   / (len(singles["floor"].latencies) / singles["floor"].elapsed))
                batch_cpu.append(per_request_ms(batches["reviewdepth"]) / per_request_ms(batches["floor"]))
                batch_rate.append(batches["floor"].elapsed / batches["reviewdepth"].elapsed)
                print(f"  ratios: single posts {single_cpu[-1]:.2f}x the floor's server CPU "
                      f"({single_rate[-1]:.2f}x its throughput); batches {batch_rate[-1]:.2f}x its throughput "
                      f"({batch_cpu[-1]:.2f}x its server CPU)")

        def spread(values: list[float]) -> str:
            return "/".join(f"{v:.2f}" for v in (min(values), statistics.median(values), max(values)))

        cpu, rate = statistics.median(single_cpu), statistics.median(batch_rate)
        print(f"SUMMARY {kind}: single posts' server CPU {spread(single_cpu)}x the floor's (min/median/max; "
              f"throughput {spread(single_rate)}x); target <= 1.3x: {'met' if cpu <= 1.3 else 'NOT met'}")
        print(f"SUMMARY {kind}: 1,000-judgment batches' throughput {spread(batch_rate)}x the floor's (server CPU "
              f"{spread(batch_cpu)}x); target >= 0.6x: {'met' if rate >= 0.6 else 'NOT met'}; {load()}")
    finally:
        if kind != "sqlite":
            drop_database(args.db, f"floorbench_rd_{suffix}")
            drop_database(args.db, f"floorbench_floor_{suffix}")


if __name__ == "__main__":
    main()
