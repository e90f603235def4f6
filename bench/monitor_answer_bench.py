"""Server CPU of ``GET /topics/{topic}/monitor`` on an unchanged topic (issue 44, item 5), against a real
``reviewdepth serve``.

    python bench/monitor_answer_bench.py [--requests 40] [--keep DIR] [--checkout DIR]

The topic is `bench/status_bench.py`'s (10,000 documents, 3,000 reviewed through an audit stream, a rest sample
of 400), in a SQLite file (``--keep DIR``: built there once and reused). The server (tests/api/server.py, one
worker) runs the code of ``--checkout`` (through PYTHONPATH; default: this checkout). One client then sends
one monitor request (nothing kept yet), three blocks of ``--requests`` sequential requests for the unchanged topic,
one judgment, and one more request; the server's CPU (user + system of its processes, from /proc) is read around
each block. Prints the first request's CPU, the unchanged requests' CPU per request (median of the blocks) and
the first request after the write. Goal (issue 44): <= 5 ms of server CPU for an unchanged topic.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

import httpx
from api_bench import _process_cpu

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from status_bench import TOPIC, build_topic  # the status bench's topic

from reviewdepth.services.admin.keys import create_key
from reviewdepth.store.engine import create_engine_for
from tests.api.server import started_server


def server_cpu(pid: int) -> float:
    """CPU seconds of the server and its workers (/proc's clock ticks: 10 ms, so blocks of requests are timed)."""
    return _process_cpu(pid)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=40)
    parser.add_argument("--keep", metavar="DIR")
    parser.add_argument("--checkout", metavar="DIR")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(args.keep) if args.keep else Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "status.sqlite3"
        url = f"sqlite:///{path}"
        if not path.exists():
            build_topic(url, 10_000, 3_000, 400)
        engine = create_engine_for(url)
        reader = create_key(engine, "bench-reader", "read")[1]
        writer = create_key(engine, "bench-writer", "write")[1]
        engine.dispose()
        env = {"OPENBLAS_NUM_THREADS": "1", **({"PYTHONPATH": args.checkout} if args.checkout else {})}
        with started_server(url, Path(tmp), env=env) as server, \
                httpx.Client(base_url=server.base, timeout=120) as client:
            pid = server.process.pid

            def monitors(count: int) -> float:
                """Server CPU seconds per request over ``count`` sequential requests."""
                before = server_cpu(pid)
                for _ in range(count):
                    response = client.get(f"/topics/{TOPIC}/monitor", headers={"Authorization": f"Bearer {reader}"})
                    assert response.status_code == 200, response.text[:300]
                return (server_cpu(pid) - before) / count

            first = monitors(1)
            unchanged = [monitors(args.requests) for _ in range(3)]
            response = client.post(f"/topics/{TOPIC}/judgments", headers={"Authorization": f"Bearer {writer}"},
                                   json={"judgments": [{"doc_id": "doc009999", "label": "0"}]})
            assert response.status_code == 201, response.text[:300]
            after_write = monitors(1)
        ms = [1000 * c for c in unchanged]
        print(f"server CPU per GET /topics/{TOPIC}/monitor ({args.checkout or 'this checkout'}): first "
              f"{1000 * first:.0f} ms; unchanged topic {statistics.median(ms):.1f} ms a request (blocks of "
              f"{args.requests}: {', '.join(f'{m:.1f}' for m in ms)}); first after a judgment {1000 * after_write:.0f} "
              "ms (goal: unchanged <= 5 ms; /proc counts 10 ms ticks, so single requests are rough)")


if __name__ == "__main__":
    main()
