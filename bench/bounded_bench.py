"""Memory and event-loop stalls of the heavy requests (issue 26, item 1), against a real ``reviewdepth serve``.

    python bench/bounded_bench.py [--db URL] [--queue 1000000] [--judged 100000] [--batch 300000]
                                  [--replicates 100000] [--sim-docs 5000] [--upload-lines 6000000] [--only TEXT]

Builds, in a fresh database (a SQLite file in a temporary folder unless ``--db`` names an empty, migrated or
new one), topic ``big`` with a ``--queue``-entry queue whose first ``--judged`` documents are judged (one in ten
relevant), and topic ``sim``, a fully judged ``--sim-docs``-document queue for the simulation; then starts the
server (tests/api/server.py) and, for each case, probes ``GET /health`` every 50 ms from another thread (one
keep-alive connection) while sampling the server's resident memory (VmRSS, server and workers) as often:

* ``dashboard, cold``: ``GET /`` with nothing cached;
* ``dashboard, warm``: again, nothing changed (the topics' monitors come from the cache);
* ``3 dashboards at once``: three concurrent ``GET /`` after a judgment of ``big`` (one render, shared);
* ``batch POST``: ``--batch`` judgments of ``big`` in one request;
* ``simulation``: ``POST /simulations`` of ``sim`` with ``--replicates``, polled until done;
* ``run upload``: ``PUT /topics/up/queues/q`` of a gzip run of ``--upload-lines`` lines (6,000,000 by default:
  about 40 MB compressed, 244 MB of text, under the 256 MiB cap), streamed from a file.

Prints one line per case: wall seconds, the server's RSS before it (idle), its peak above that, and the slowest
``/health`` answer (with the number of probes). Goal (issue 26): every case under idle + 300 MB, ``/health``
under 200 ms throughout. The bench shares the machine's cores with the server: run it on a quiet machine.
"""

from __future__ import annotations

import argparse
import http.client
import json
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import httpx
from api_bench import process_tree

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/api/server.py, as the tests start a server

from reviewdepth.services.admin.keys import create_key
from reviewdepth.services.admin.topics import create_topic
from reviewdepth.services.files.rankings import RankedDocument, store_ranking
from reviewdepth.services.review.batches import BatchItem, record_batch
from reviewdepth.store import migrate
from reviewdepth.store.engine import create_engine_for
from tests.api.server import started_server

PROBE_SECONDS = 0.05
CHUNK = 20_000


def rss_mb(pid: int) -> float:
    """Resident memory of ``pid`` and its children (the workers), MB."""
    total = 0
    for p in process_tree(pid):
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return total / 1024


@dataclass
class Probe:
    """``/health`` every PROBE_SECONDS and the server's RSS as often, from a thread, until stopped."""

    base: str
    pid: int
    slowest: float = 0.0
    probes: int = 0
    peak: float = 0.0
    failures: int = 0
    _stop: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        parts = urlsplit(self.base)
        conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=120)
        while not self._stop.is_set():
            started = time.perf_counter()
            try:
                conn.request("GET", "/health")
                response = conn.getresponse()
                response.read()
                if response.status != 200:
                    self.failures += 1
            except (OSError, http.client.HTTPException):
                self.failures += 1
                conn.close()
                conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=120)
            self.slowest = max(self.slowest, time.perf_counter() - started)
            self.probes += 1
            self.peak = max(self.peak, rss_mb(self.pid))
            self._stop.wait(PROBE_SECONDS)
        conn.close()


@contextmanager
def probed(base: str, pid: int) -> Iterator[Probe]:
    probe = Probe(base, pid)
    thread = threading.Thread(target=probe.run, daemon=True)
    thread.start()
    try:
        yield probe
    finally:
        probe._stop.set()
        thread.join()


def build(url: str, args: argparse.Namespace) -> None:
    engine = create_engine_for(url)
    migrate.upgrade(engine)
    started = time.perf_counter()
    create_topic(engine, "big")
    store_ranking(engine, "big", "q", [RankedDocument(f"doc{i:08d}", float(-i)) for i in range(args.queue)])
    for start in range(0, args.judged, CHUNK):
        items = [BatchItem(f"doc{i:08d}", "1" if i % 10 == 0 else "0")
                 for i in range(start, min(args.judged, start + CHUNK))]
        record_batch(engine, "big", items, reviewer="ana", source="bench")
    create_topic(engine, "sim")
    store_ranking(engine, "sim", "q", [RankedDocument(f"s{i:06d}", float(-i)) for i in range(args.sim_docs)])
    for start in range(0, args.sim_docs, CHUNK):
        items = [BatchItem(f"s{i:06d}", "1" if i % 40 == 0 or (i < 200 and i % 3 == 0) else "0")
                 for i in range(start, min(args.sim_docs, start + CHUNK))]
        record_batch(engine, "sim", items, reviewer="ana", source="bench")
    create_topic(engine, "up")
    engine.dispose()
    print(f"built: big {args.queue:,} entries, {args.judged:,} judged; sim {args.sim_docs:,} judged "
          f"({time.perf_counter() - started:.0f} s)", flush=True)


def write_gzip_run(path: Path, lines: int) -> None:
    """A one-topic (``up``) gzip run of ``lines`` lines, about 40 bytes a line unpacked."""
    import gzip

    with gzip.open(path, "wt", compresslevel=6) as handle:
        for start in range(0, lines, 100_000):
            handle.write("".join(f"up Q0 D{i:07d} {i + 1} {(lines - i) / 7:.4f} tagA\n"
                                 for i in range(start, min(lines, start + 100_000))))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db")
    parser.add_argument("--queue", type=int, default=1_000_000)
    parser.add_argument("--judged", type=int, default=100_000)
    parser.add_argument("--batch", type=int, default=300_000)
    parser.add_argument("--replicates", type=int, default=100_000)
    parser.add_argument("--sim-docs", type=int, default=5_000)
    parser.add_argument("--upload-lines", type=int, default=6_000_000)
    parser.add_argument("--only", action="append", default=[],
                        help="run only the cases whose name contains this text (repeatable)")
    args = parser.parse_args()
    if args.judged + args.batch >= args.queue:
        parser.error("--judged + --batch must be below --queue (the batch judges the next documents)")
    with tempfile.TemporaryDirectory(prefix="bounded-bench-") as folder:
        url = args.db or f"sqlite:///{folder}/bench.db"
        build(url, args)
        run_path = Path(folder) / "up.run.gz"
        if not args.only or any(word in "run upload" for word in args.only):
            write_gzip_run(run_path, args.upload_lines)
        engine = create_engine_for(url)
        key = create_key(engine, "ana", "write")[1]
        engine.dispose()
        headers = {"Authorization": f"Bearer {key}"}
        with started_server(url, Path(folder), startup_seconds=120) as server:
            base, pid = server.base, server.process.pid
            client = httpx.Client(base_url=base, headers=headers, timeout=600)
            body = json.dumps({"judgments": [
                {"doc_id": f"doc{i:08d}", "label": "1" if i % 25 == 0 else "0"}
                for i in range(args.judged, args.judged + args.batch)]}).encode()

            def dashboard() -> None:
                response = client.get("/")
                assert response.status_code == 200, response.text[:300]

            def dashboards() -> None:
                last = f"doc{args.queue - 1:08d}"  # a change to big, outside the batch: its monitor is built again
                client.post("/topics/big/judgments", json={"judgments": [{"doc_id": last, "label": "0"}]})
                threads = [threading.Thread(target=dashboard) for _ in range(3)]
                for t in threads:
                    t.start()
                for t in threads:
                    t.join()

            def batch() -> None:
                response = client.post("/topics/big/judgments", content=body,
                                       headers={"Content-Type": "application/json"})
                assert response.status_code == 201, response.text[:300]

            def simulation() -> None:
                response = client.post("/simulations", json={"topics": ["sim"], "replicates": args.replicates})
                assert response.status_code == 202, response.text[:300]
                job = response.headers["Location"]
                while True:
                    state = client.get(job).json()
                    if state["status"] not in ("queued", "running"):
                        assert state["status"] == "done", state
                        return
                    time.sleep(0.5)

            def upload() -> None:
                with run_path.open("rb") as handle:
                    response = client.put("/topics/up/queues/q", content=handle,
                                          headers={"Content-Type": "text/plain"})
                assert response.status_code == 201, response.text[:300]

            cases: list[tuple[str, Callable[[], None]]] = [
                ("dashboard, cold", dashboard), ("dashboard, warm", dashboard),
                ("3 dashboards at once", dashboards), (f"batch POST ({args.batch:,})", batch),
                ("dashboard after the batch", dashboard),
                (f"simulation ({args.replicates:,} replicates)", simulation),
                (f"run upload (gzip, {args.upload_lines:,} lines)", upload)]
            cases = [(name, case) for name, case in cases if not args.only or any(w in name for w in args.only)]
            print(f"{'case':<34} {'seconds':>8} {'idle MB':>8} {'peak +MB':>9} {'slowest /health':>16} "
                  f"{'probes':>7}", flush=True)
            for name, case in cases:
                time.sleep(1.0)
                idle = rss_mb(pid)
                with probed(base, pid) as probe:
                    started = time.perf_counter()
                    case()
                    elapsed = time.perf_counter() - started
                failed = f" ({probe.failures} failed)" if probe.failures else ""
                print(f"{name:<34} {elapsed:>8.1f} {idle:>8.0f} {max(0.0, probe.peak - idle):>9.0f} "
                      f"{probe.slowest * 1000:>13.0f} ms {probe.probes:>7}{failed}", flush=True)
            client.close()


if __name__ == "__main__":
    main()
