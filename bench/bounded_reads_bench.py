"""Issue 40's attack cases against a real ``reviewdepth serve``: memory, ``/health`` and status codes per case.

    python bench/bounded_reads_bench.py [--db URL] [--queue 2000000] [--judged 200000] [--batch 300000]

Builds (as bench/bounded_bench.py does) topic ``big`` with a ``--queue``-entry queue whose first ``--judged``
documents are judged, then starts the server and, for each case, probes ``GET /health`` every 50 ms from another
thread while sampling the server's resident memory:

* ``zip bomb ×1`` / ``×4``: an ASReview project (``POST /topics/zb/imports/asreview``) of about 250 KiB whose one
  member inflates to 250 MiB, once, then four at once;
* ``monitor`` and ``report`` of ``big``;
* ``3 dashboards at once`` after a judgment of ``big``;
* ``100 mixed reads``: 60 page reads (``/topics``, ``/topics/big``, ``/health?database=true``), 20 reports and 20
  monitors at distinct targets (so none share a computation), all at once;
* ``batch POST``: ``--batch`` judgments of ``big`` in one request.

Prints per case: seconds, the server's idle RSS, its peak above that, the slowest ``/health`` and the status codes
answered. Goal (issue 40): ≤ +300 MB and ``/health`` ≤ 500 ms in every case, no 5xx but a 503 with Retry-After.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import tempfile
import threading
import time
import zipfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import httpx
from bounded_bench import build, probed, rss_mb

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/api/server.py, as the tests start a server

from reviewdepth.services.admin.keys import create_key
from reviewdepth.store.engine import create_engine_for
from tests.api.server import started_server


def zip_bomb() -> bytes:
    """An .asreview-shaped zip whose one member (a project.json) inflates to 250 MiB of spaces."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        with archive.open("project.json", "w", force_zip64=True) as member:
            chunk = b" " * (1 << 20)
            for _ in range(250):
                member.write(chunk)
    return out.getvalue()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db")
    parser.add_argument("--queue", type=int, default=2_000_000)
    parser.add_argument("--judged", type=int, default=200_000)
    parser.add_argument("--batch", type=int, default=300_000)
    parser.add_argument("--skip-build", action="store_true", help="--db already holds the topics")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bounded-reads-") as folder:
        url = args.db or f"sqlite:///{folder}/bench.db"
        if not args.skip_build:
            build(url, argparse.Namespace(queue=args.queue, judged=args.judged, sim_docs=100))
        engine = create_engine_for(url)
        key = create_key(engine, "ana", "write")[1]
        engine.dispose()
        bomb = zip_bomb()
        headers = {"Authorization": f"Bearer {key}"}
        with started_server(url, Path(folder), startup_seconds=120) as server:
            base, pid = server.base, server.process.pid
            codes: Counter[str] = Counter()
            lock = threading.Lock()

            def call(method: str, path: str, **kwargs: object) -> httpx.Response | None:
                try:
                    with httpx.Client(base_url=base, headers=headers, timeout=300) as client:
                        response = client.request(method, path, **kwargs)  # type: ignore[arg-type]
                    label = str(response.status_code)
                    if response.status_code == 503:
                        label += " (Retry-After)" if "retry-after" in response.headers else " (no Retry-After)"
                except httpx.HTTPError as error:
                    response, label = None, type(error).__name__
                with lock:
                    codes[label] += 1
                return response

            def together(calls: list[Callable[[], object]]) -> None:
                threads = [threading.Thread(target=c) for c in calls]
                for t in threads:
                    t.start()
                for t in threads:
                    t.join()

            def bomb_once() -> None:
                call("POST", "/topics/zb/imports/asreview", content=bomb,
                     headers={**headers, "Content-Type": "application/zip"})

            body = json.dumps({"judgments": [
                {"doc_id": f"doc{i:08d}", "label": "1" if i % 25 == 0 else "0"}
                for i in range(args.judged, args.judged + args.batch)]}).encode()

            def dashboards() -> None:
                call("POST", "/topics/big/judgments",
                     json={"judgments": [{"doc_id": f"doc{args.queue - 1:08d}", "label": "0"}]})
                codes.clear()
                together([lambda: call("GET", "/") for _ in range(3)])

            def mixed() -> None:
                pages = ["/topics", "/topics/big", "/health?database=true"]
                calls: list[Callable[[], object]] = [
                    (lambda p=pages[i % 3]: call("GET", p)) for i in range(60)]
                calls += [(lambda t=f"0.{80 + i}": call("GET", f"/topics/big/report?target={t}")) for i in range(20)]
                calls += [(lambda t=f"0.{60 + i}": call("GET", f"/topics/big/monitor?target={t}")) for i in range(20)]
                together(calls)

            cases: list[tuple[str, Callable[[], None]]] = [
                (f"zip bomb ×1 ({len(bomb) // 1024} KiB)", bomb_once),
                ("zip bomb ×4", lambda: together([bomb_once for _ in range(4)])),
                (f"monitor ({args.queue:,} entries)", lambda: (call("GET", "/topics/big/monitor"), None)[1]),
                (f"report ({args.queue:,} entries)", lambda: (call("GET", "/topics/big/report"), None)[1]),
                ("3 dashboards at once", dashboards),
                ("20 reports, distinct targets", lambda: together(
                    [(lambda t=f"0.{70 + i}": call("GET", f"/topics/big/report?target={t}")) for i in range(20)])),
                ("20 monitors, distinct targets", lambda: together(
                    [(lambda t=f"0.{50 + i}": call("GET", f"/topics/big/monitor?target={t}")) for i in range(20)])),
                ("100 mixed reads at once", mixed),
                (f"batch POST ({args.batch:,})", lambda: (call(
                    "POST", "/topics/big/judgments", content=body,
                    headers={**headers, "Content-Type": "application/json"}), None)[1]),
            ]
            print(f"database: {url.split(':', 1)[0]}; queue {args.queue:,} entries, {args.judged:,} judged")
            print(f"{'case':<32} {'seconds':>8} {'idle MB':>8} {'peak +MB':>9} {'slowest /health':>16}  status codes",
                  flush=True)
            for name, case in cases:
                time.sleep(1.0)
                codes.clear()
                idle = rss_mb(pid)
                with probed(base, pid) as probe:
                    started = time.perf_counter()
                    case()
                    elapsed = time.perf_counter() - started
                failed = f" ({probe.failures} /health failed)" if probe.failures else ""
                answered = ", ".join(f"{n}× {c}" for c, n in sorted(codes.items()))
                print(f"{name:<32} {elapsed:>8.1f} {idle:>8.0f} {max(0.0, probe.peak - idle):>9.0f} "
                      f"{probe.slowest * 1000:>13.0f} ms  {answered}{failed}", flush=True)


if __name__ == "__main__":
    main()
