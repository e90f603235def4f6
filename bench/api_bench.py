"""Throughput and latency of the HTTP API against a running ``reviewdepth serve`` (started here on a free
127.0.0.1 port).

    python bench/api_bench.py [--db sqlite:///tmp/api.db | postgresql://...] [--workers N] [--big]

Prints judgments/s and p50/p99 latency for single-judgment posts from 20 concurrent clients, and for
1,000-judgment batches; with ``--big``, uploads a 2,000,000-document ranking and times the report fetch.
``--repeat N`` measures N rounds (singles, then batches) on the same server and prints each round and the
min/median/max. Targets: single posts p99 < 50 ms at 20 clients on both databases, and ≥ 500 judgments/s on
SQLite (issues 6 and 16); ≥ 50,000 judgments/s in batches on SQLite and ≥ 60,000 on PostgreSQL (issue 16);
report for the 2,000,000-document queue ≤ 1.5 s. Each summary line says met / NOT met (on the medians).

Each client is a thread with one keep-alive connection (``http.client``: a request costs it ~0.3 ms of CPU,
a quarter of what httpx costs) and its own write key; request bodies are encoded before the clock starts, and
each client sends ``--warmup`` untimed requests first (its key gets verified and cached). The client shares the
machine with the server: every line also gives the CPU seconds the server's processes, this client and the
rest of the machine used meanwhile (``others``: PostgreSQL's own processes when it is the database; on SQLite,
well above zero means the figures are disturbed), and how many cores the machine has.
"""

from __future__ import annotations

import argparse
import http.client
import json
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
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import httpx

from reviewdepth.services.admin.keys import create_key
from reviewdepth.services.admin.topics import create_topic
from reviewdepth.services.files.rankings import RankedDocument, store_ranking
from reviewdepth.store import migrate
from reviewdepth.store.engine import create_engine_for

TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


@contextmanager
def started(command: list[str], folder: Path, log_name: str, env: dict[str, str] | None = None,
            ) -> Iterator[tuple[str, int]]:
    """``command`` (given ``--port PORT`` on a free port) as a server in ``folder``: its base URL and process id,
    once ``/health`` answers 200; stopped on exit."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    log = (folder / log_name).open("wb")
    process = subprocess.Popen([*command, "--port", str(port)], cwd=folder, stdout=log, stderr=subprocess.STDOUT,
                               env=env)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):
            try:
                if httpx.get(base + "/health").status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.1)
        yield base, process.pid
    finally:
        process.terminate()
        process.wait()


@contextmanager
def server(db: str, workers: int, folder: Path) -> Iterator[tuple[str, int]]:
    """``reviewdepth serve`` over ``db`` on a free port: its base URL and process id."""
    with started([sys.executable, "-m", "reviewdepth.cli.app", "serve", "--workers", str(workers), "--no-access-log"],
                 folder, "server.log", {**os.environ, "REVIEWDEPTH_DATABASE_URL": db}) as running:
        yield running


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def process_tree(pid: int) -> list[int]:
    """``pid`` and its children (the workers), from /proc; just ``pid`` where /proc does not say."""
    try:
        return [pid, *(int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split())]
    except OSError:
        return [pid]


def _process_cpu(pid: int) -> float:
    """CPU seconds (user + system) of ``pid`` and its children (the workers), from /proc; 0 elsewhere."""
    total = 0
    for p in process_tree(pid):
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])
    return total / TICKS


def _machine_cpu() -> float:
    """CPU seconds the whole machine has spent busy (not idle or waiting for I/O), from /proc/stat."""
    try:
        fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    except OSError:
        return 0.0
    return (sum(fields[:8]) - fields[3] - fields[4]) / TICKS


@dataclass
class Run:
    elapsed: float
    latencies: list[float]
    server_cpu: float
    client_cpu: float
    others_cpu: float

    def cpu(self) -> str:
        return (f"CPU s: server {self.server_cpu:.1f}, client {self.client_cpu:.1f}, others {self.others_cpu:.1f} "
                f"in {self.elapsed:.1f} s on {os.cpu_count()} cores")


def run_clients(base: str, server_pid: int, secrets: list[str], requests_per_client: int, batch: int, tag: str,
                warmup: int) -> Run:
    address = urlsplit(base)
    host, port = address.hostname or "127.0.0.1", address.port or 80

    def bodies(c: int, count: int, prefix: str) -> list[bytes]:
        return [json.dumps({"judgments": [{"doc_id": f"{prefix}-{c}-{r}-{i}", "label": "1" if i % 7 == 0 else "0"}
                                          for i in range(batch)]}).encode() for r in range(count)]

    def work(c: int, timed: list[bytes], untimed: list[bytes]) -> list[float]:
        headers = {"Authorization": f"Bearer {secrets[c]}", "Content-Type": "application/json"}
        connection = http.client.HTTPConnection(host, port, timeout=120)
        out = []
        try:
            for number, body in enumerate(untimed + timed):
                start = time.perf_counter()
                connection.request("POST", "/topics/bench/judgments", body, headers)
                response = connection.getresponse()
                text = response.read()
                if number >= len(untimed):
                    out.append(time.perf_counter() - start)
                assert response.status == 201, text
        finally:
            connection.close()
        return out

    clients = range(len(secrets))
    timed = [bodies(c, requests_per_client, tag) for c in clients]
    untimed = [bodies(c, warmup, tag + "w") for c in clients]
    with ThreadPoolExecutor(len(secrets)) as pool:
        list(pool.map(lambda c: work(c, [], untimed[c]), clients))
        server0, client0, machine0 = _process_cpu(server_pid), time.process_time(), _machine_cpu()
        start = time.perf_counter()
        parts = list(pool.map(lambda c: work(c, timed[c], []), clients))
        elapsed = time.perf_counter() - start
        server_cpu, client_cpu = _process_cpu(server_pid) - server0, time.process_time() - client0
        machine_cpu = _machine_cpu() - machine0
    return Run(elapsed, [x for part in parts for x in part], server_cpu, client_cpu,
               max(0.0, machine_cpu - server_cpu - client_cpu))


def spread(values: list[float], fmt: str) -> str:
    return "/".join(fmt.format(v) for v in (min(values), statistics.median(values), max(values)))


def load() -> str:
    try:
        return "load average " + " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "load average unknown"


def server_cpu(run: Run) -> str:
    """The server's CPU per request: what the issue asks to cut (the client's and the database's apart)."""
    return f"server {run.server_cpu / max(1, len(run.latencies)) * 1000:.2f} ms CPU/request"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", help="database URL (default: a fresh SQLite file)")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--singles", type=int, default=200, help="single-judgment posts per client")
    parser.add_argument("--batches", type=int, default=100, help="1,000-judgment batches (4 clients)")
    parser.add_argument("--warmup", type=int, default=5, help="untimed requests per client first")
    parser.add_argument("--big", action="store_true", help="also time the report on a 2,000,000-document queue")
    parser.add_argument("--repeat", type=int, default=1, help="rounds of singles then batches on one server")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="reviewdepth-api-bench-"))
    db = args.db or f"sqlite:///{folder / 'api.db'}"
    engine = create_engine_for(db)
    migrate.upgrade(engine)
    create_topic(engine, "bench")
    # every document the clients post is in a queue of the topic, as in a real review: each post pays the check
    # that refuses documents in no queue (reviewdepth.services.evidence.served_queues)
    per = max(1, args.batches // 4)
    posted = [f"{kind}r{n}{tag}-{c}-{r}-0" for n in range(args.repeat)
              for kind, tag, count in (("s", "", args.singles), ("s", "w", args.warmup))
              for c in range(args.clients) for r in range(count)]
    posted += [f"{kind}r{n}{tag}-{c}-{r}-{i}" for n in range(args.repeat)
               for kind, tag, count in (("b", "", per), ("b", "w", min(args.warmup, 1)))
               for c in range(4) for r in range(count) for i in range(1000)]
    store_ranking(engine, "bench", "bench", [RankedDocument(d) for d in posted])
    secrets = [create_key(engine, f"bench-{i}", "write")[1] for i in range(args.clients)]
    engine.dispose()
    backend = db.split(":", 1)[0]
    print(f"{backend}, {args.workers} worker(s), {args.clients} clients, {os.cpu_count()} cores; {load()}")
    singles: list[tuple[float, float]] = []  # (judgments/s, p99 s) per round
    batches: list[float] = []
    with server(db, args.workers, folder) as (base, pid):
        for round_ in range(args.repeat):
            tag = f"r{round_}"
            run = run_clients(base, pid, secrets, args.singles, 1, "s" + tag, args.warmup)
            lat = run.latencies
            singles.append((len(lat) / run.elapsed, percentile(lat, 0.99)))
            print(f"{backend}, {args.workers} worker(s): single posts, {args.clients} clients: "
                  f"{len(lat) / run.elapsed:,.0f} judgments/s, p50 {percentile(lat, 0.5) * 1000:.1f} ms, "
                  f"p99 {percentile(lat, 0.99) * 1000:.1f} ms ({len(lat):,} requests; {run.cpu()}; {server_cpu(run)})")
            run = run_clients(base, pid, secrets[:4], per, 1000, "b" + tag, min(args.warmup, 1))
            lat = run.latencies
            batches.append(len(lat) * 1000 / run.elapsed)
            print(f"{backend}: 1,000-judgment batches, 4 clients: {len(lat) * 1000 / run.elapsed:,.0f} judgments/s, "
                  f"p50 {statistics.median(lat) * 1000:.0f} ms, p99 {percentile(lat, 0.99) * 1000:.0f} ms "
                  f"({len(lat)} batches; {run.cpu()})")
        rate, p99 = statistics.median(r for r, _ in singles), statistics.median(p for _, p in singles)
        target_rate = 500 if backend == "sqlite" else 0
        print(f"SUMMARY {backend}, {args.workers} worker(s), {args.clients} clients, {args.repeat} round(s): single "
              f"posts {spread([r for r, _ in singles], '{:,.0f}')} judgments/s, p99 "
              f"{spread([p * 1000 for _, p in singles], '{:.1f}')} ms (min/median/max); target p99 < 50 ms"
              f"{f' and >= {target_rate} judgments/s' if target_rate else ''}: "
              f"{'met' if p99 < 0.05 and rate >= target_rate else 'NOT met'}")
        batch_target = 50_000 if backend == "sqlite" else 60_000
        print(f"SUMMARY {backend}, {args.workers} worker(s): 1,000-judgment batches "
              f"{spread(batches, '{:,.0f}')} judgments/s (min/median/max); target >= {batch_target:,}: "
              f"{'met' if statistics.median(batches) >= batch_target else 'NOT met'}; {load()}")
        if args.big:
            headers = {"Authorization": f"Bearer {secrets[0]}"}
            ranking = folder / "big.run"
            with ranking.open("w") as handle:
                for i in range(2_000_000):
                    handle.write(f"bench Q0 DOC{i:08d} {i + 1} {2_000_000 - i} big\n")
            with httpx.Client(base_url=base, headers=headers, timeout=3600) as http, ranking.open("rb") as body:
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
