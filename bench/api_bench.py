"""Throughput and latency of the HTTP API against a running ``reviewdepth serve`` (started here on a free
127.0.0.1 port unless ``--url`` points at one).

    python bench/api_bench.py [--db sqlite:///tmp/api.db | postgresql://...] [--workers N] [--big]

Prints judgments/s and p50/p99 latency for single-judgment posts from 20 concurrent clients, and for
1,000-judgment batches; with ``--big``, uploads a 2,000,000-document ranking and times the report fetch.
Targets (issue 6): ≥ 500 single judgments/s with p99 < 50 ms on SQLite; ≥ 50,000 judgments/s in batches;
report for the 2,000,000-document queue ≤ 1.5 s.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import httpx

from reviewdepth.services.keys import create_key
from reviewdepth.services.topics import create_topic
from reviewdepth.store import migrate
from reviewdepth.store.engine import create_engine_for


@contextmanager
def server(db: str, workers: int, folder: Path) -> Iterator[str]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    log = (folder / "server.log").open("wb")
    process = subprocess.Popen([sys.executable, "-m", "reviewdepth.cli.app", "serve", "--port", str(port),
                                "--workers", str(workers), "--no-access-log"], cwd=folder, stdout=log,
                               stderr=subprocess.STDOUT, env={**os.environ, "REVIEWDEPTH_DATABASE_URL": db})
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):
            try:
                if httpx.get(base + "/health").status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.1)
        yield base
    finally:
        process.terminate()
        process.wait()


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def run_clients(base: str, secrets: list[str], requests_per_client: int, batch: int, tag: str) -> tuple[float,
                                                                                                       list[float]]:
    def work(c: int) -> list[float]:
        out = []
        with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {secrets[c]}"}, timeout=120) as http:
            for r in range(requests_per_client):
                body = {"judgments": [{"doc_id": f"{tag}-{c}-{r}-{i}", "label": "1" if i % 7 == 0 else "0"}
                                      for i in range(batch)]}
                start = time.perf_counter()
                response = http.post("/topics/bench/judgments", json=body)
                out.append(time.perf_counter() - start)
                assert response.status_code == 201, response.text
        return out

    start = time.perf_counter()
    with ThreadPoolExecutor(len(secrets)) as pool:
        latencies = [x for part in pool.map(work, range(len(secrets))) for x in part]
    return time.perf_counter() - start, latencies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", help="database URL (default: a fresh SQLite file)")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--singles", type=int, default=200, help="single-judgment posts per client")
    parser.add_argument("--batches", type=int, default=20, help="1,000-judgment batches (4 clients)")
    parser.add_argument("--big", action="store_true", help="also time the report on a 2,000,000-document queue")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="reviewdepth-api-bench-"))
    db = args.db or f"sqlite:///{folder / 'api.db'}"
    engine = create_engine_for(db)
    migrate.upgrade(engine)
    create_topic(engine, "bench")
    secrets = [create_key(engine, f"bench-{i}", "write")[1] for i in range(args.clients)]
    engine.dispose()
    backend = db.split(":", 1)[0]
    with server(db, args.workers, folder) as base:
        elapsed, lat = run_clients(base, secrets, args.singles, 1, "s")
        print(f"{backend}, {args.workers} worker(s): single posts, {args.clients} clients: {len(lat) / elapsed:,.0f} "
              f"judgments/s, p50 {percentile(lat, 0.5) * 1000:.1f} ms, p99 {percentile(lat, 0.99) * 1000:.1f} ms "
              f"({len(lat):,} requests)")
        per = max(1, args.batches // 4)
        elapsed, lat = run_clients(base, secrets[:4], per, 1000, "b")
        print(f"{backend}: 1,000-judgment batches, 4 clients: {len(lat) * 1000 / elapsed:,.0f} judgments/s, "
              f"p50 {statistics.median(lat) * 1000:.0f} ms, p99 {percentile(lat, 0.99) * 1000:.0f} ms "
              f"({len(lat)} batches)")
        if args.big:
            headers = {"Authorization": f"Bearer {secrets[0]}"}
            run = folder / "big.run"
            with run.open("w") as handle:
                for i in range(2_000_000):
                    handle.write(f"bench Q0 DOC{i:08d} {i + 1} {2_000_000 - i} big\n")
            with httpx.Client(base_url=base, headers=headers, timeout=3600) as http, run.open("rb") as body:
                start = time.perf_counter()
                r = http.put("/topics/bench/queues/big", content=body, headers={"Content-Type": "text/plain"})
                assert r.status_code == 201, r.text
                print(f"{backend}: upload of a 2,000,000-line run: {time.perf_counter() - start:.1f} s")
                judged = [{"doc_id": f"DOC{i:08d}", "label": "1" if i % 9 == 0 else "0"} for i in range(245_000)]
                for s in range(0, len(judged), 5000):
                    assert http.post("/topics/bench/judgments", json={"judgments": judged[s:s + 5000]}
                                     ).status_code == 201
                times = []
                for _ in range(3):
                    start = time.perf_counter()
                    r = http.get("/topics/bench/report", params={"queue": "big"})
                    times.append(time.perf_counter() - start)
                    assert r.status_code == 200, r.text
                print(f"{backend}: report of the 2,000,000-document queue (245,000 judged): median "
                      f"{statistics.median(times):.2f} s")


if __name__ == "__main__":
    main()
