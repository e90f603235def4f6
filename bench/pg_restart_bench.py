"""PostgreSQL restarted under writers (issue 26): every refusal a 503 with ``Retry-After``, no 500, nothing partial.

    python bench/pg_restart_bench.py [--server postgresql://postgres@127.0.0.1:5432] [--cluster main]
                                     [--writers 4] [--seconds 30] [--restart-at 8] [--batch 50]

Makes a throwaway database on ``--server``, a topic ``t`` with a queue of documents, and starts
``reviewdepth serve`` (tests/api/server.py). ``--writers`` threads then post judgment batches of ``--batch``
documents, each batch with its own documents and its own ``idempotency_key``; a batch that is refused is sent again
with the same key after the ``Retry-After`` it was given, until it is acknowledged. After ``--restart-at`` seconds
the PostgreSQL cluster is restarted (``pg_ctlcluster --skip-systemctl-redirect VERSION CLUSTER restart``: it stops
every other user of that cluster for a few seconds too; a cluster of its own keeps other work out of it:
``pg_createcluster 15 bench --port 5433``, trust auth, then ``--server postgresql://postgres@127.0.0.1:5433
--cluster bench``).

Prints the answers by status, how many 503s carried ``Retry-After`` and a problem body, and then checks the store:
every acknowledged batch stored exactly once and whole, nothing stored of a batch never acknowledged.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from pathlib import Path

import httpx
from sqlalchemy import create_engine, text

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/api/server.py, as the tests start a server

from reviewdepth.services.admin.keys import create_key
from reviewdepth.services.admin.topics import create_topic
from reviewdepth.services.files.rankings import RankedDocument, store_ranking
from reviewdepth.store import migrate
from reviewdepth.store.engine import create_engine_for
from tests.api.server import started_server


def restart_cluster(cluster: str) -> float:
    version = sorted(p.name for p in Path("/etc/postgresql").iterdir())[-1]
    started = time.perf_counter()
    subprocess.run(["pg_ctlcluster", "--skip-systemctl-redirect", version, cluster, "restart"], check=True,
                   capture_output=True)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--server", default="postgresql://postgres@127.0.0.1:5432")
    parser.add_argument("--writers", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--restart-at", type=float, default=8.0)
    parser.add_argument("--batch", type=int, default=50)
    parser.add_argument("--cluster", default="main", help="the pg_ctlcluster name of --server's cluster")
    args = parser.parse_args()
    name = f"restart_bench_{uuid.uuid4().hex[:8]}"
    # pre-ping: the restart ends the pooled connection that made the database, and the clean-up needs a live one
    admin = create_engine(f"{args.server}/postgres", isolation_level="AUTOCOMMIT", pool_pre_ping=True)
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    url = f"{args.server}/{name}"
    documents = args.writers * 100_000  # each writer judges its own 100,000 documents, a batch at a time
    try:
        engine = create_engine_for(url)
        migrate.upgrade(engine)
        create_topic(engine, "t")
        store_ranking(engine, "t", "q", [RankedDocument(f"d{i:07d}") for i in range(documents)])
        key = create_key(engine, "ana", "write")[1]
        engine.dispose()
        statuses: Counter[str] = Counter()
        refusals_ok = Counter[str]()
        acknowledged: list[range] = []
        pending: list[range] = []
        lock = threading.Lock()
        stop = threading.Event()
        with tempfile.TemporaryDirectory(prefix="restart-bench-") as folder, \
                started_server(url, Path(folder)) as server:

            def writer(number: int) -> None:
                client = httpx.Client(base_url=server.base, headers={"Authorization": f"Bearer {key}"},
                                      timeout=60)
                sequence = 0
                while not stop.is_set():
                    first = number * 100_000 + sequence * args.batch
                    sequence += 1
                    if first + args.batch > (number + 1) * 100_000:
                        break
                    docs = range(first, first + args.batch)
                    body = {"judgments": [{"doc_id": f"d{i:07d}", "label": "1" if i % 7 == 0 else "0"}
                                          for i in docs], "idempotency_key": f"w{number}-{sequence}"}
                    while True:
                        try:
                            response = client.post("/topics/t/judgments", json=body)
                            status = str(response.status_code)
                        except httpx.TransportError as exc:
                            response, status = None, f"connection: {type(exc).__name__}"
                        with lock:
                            statuses[status] += 1
                        if response is not None and response.status_code == 201:
                            with lock:
                                acknowledged.append(docs)
                            break
                        wait = 1.0
                        if response is not None and response.status_code == 503:
                            retry_after = response.headers.get("retry-after")
                            problem = response.headers.get("content-type", "").startswith("application/problem+json")
                            with lock:
                                refusals_ok["503 with Retry-After and a problem body"
                                            if retry_after and problem else "503 without them"] += 1
                            wait = float(retry_after or 1)
                        if stop.is_set():
                            with lock:
                                pending.append(docs)  # never acknowledged: must not be stored, or stored whole
                            break
                        time.sleep(min(wait, 2.0))
                client.close()

            threads = [threading.Thread(target=writer, args=(n,)) for n in range(args.writers)]
            started = time.perf_counter()
            for t in threads:
                t.start()
            time.sleep(args.restart_at)
            took = restart_cluster(args.cluster)
            print(f"restarted PostgreSQL at {args.restart_at:.0f} s (pg_ctlcluster took {took:.1f} s)", flush=True)
            time.sleep(max(0.0, args.seconds - (time.perf_counter() - started)))
            stop.set()
            for t in threads:
                t.join()
        engine = create_engine_for(url)
        with engine.connect() as conn:
            stored = Counter(int(doc[1:]) for (doc,) in conn.execute(text("SELECT doc_id FROM judgments")))
        engine.dispose()
        twice = sum(1 for count in stored.values() if count > 1)
        partial = sum(1 for docs in acknowledged if sum(1 for i in docs if stored[i]) != len(docs))
        unacked_partial = sum(1 for docs in pending if 0 < sum(1 for i in docs if stored[i]) < len(docs))
        expected = sum(len(d) for d in acknowledged) + sum(len(d) for d in pending if all(stored[i] for i in d))
        print(f"{args.writers} writers, {args.seconds:.0f} s: answers {dict(sorted(statuses.items()))}")
        print(f"503s: {dict(refusals_ok)}")
        print(f"acknowledged batches {len(acknowledged)}, each stored whole: {partial == 0} ({partial} not); "
              f"unacknowledged batches {len(pending)}, stored partly: {unacked_partial}; "
              f"judgments stored {sum(stored.values())} (expected {expected}), stored twice: {twice}")
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


if __name__ == "__main__":
    main()
