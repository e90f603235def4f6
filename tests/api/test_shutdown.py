"""SIGTERM ends a real server (``reviewdepth serve``) within 10 s (issue 26), on SQLite and PostgreSQL: with a
simulation job running and another queued behind it, which are then ``interrupted`` in the store (never left
``running`` or ``queued``), and after a job has finished, which stays ``done``. A server that waited for its
background job needed SIGKILL."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import Engine

from reviewdepth.services.admin.keys import create_key
from reviewdepth.services.admin.topics import create_topic
from reviewdepth.services.files.rankings import RankedDocument, store_ranking
from reviewdepth.services.review.batches import BatchItem, record_batch
from reviewdepth.services.simulation.simulation_jobs import get_job

from .server import Server, started_server

STOP_SECONDS = 10
# two topics, 100,000 replicates each: the better part of a minute on the 2-core reference machine
LONG_JOB: dict[str, Any] = {"design": {"kind": "rest", "sample_size": 20}, "replicates": 100_000, "looks": 10}
SHORT_JOB: dict[str, Any] = {**LONG_JOB, "replicates": 2}


def seeded(engine: Engine) -> dict[str, str]:
    """Two fully judged topics, and a write key's header."""
    for name, size in (("A", 300), ("B", 200)):
        docs = [f"{name}{i:03d}" for i in range(size)]
        create_topic(engine, name)
        store_ranking(engine, name, "q", [RankedDocument(d, float(-i)) for i, d in enumerate(docs)])
        record_batch(engine, name, [BatchItem(d, str(int(i % 7 == 0))) for i, d in enumerate(docs)],
                     reviewer="ana", source="test")
    return {"Authorization": f"Bearer {create_key(engine, 'ana', 'write')[1]}"}


def job_when(client: httpx.Client, job_id: int, wanted: Any, seconds: float = 60.0) -> dict[str, Any]:
    deadline = time.monotonic() + seconds
    while True:
        job: dict[str, Any] = client.get(f"/simulations/{job_id}").json()
        if wanted(job) or time.monotonic() > deadline:
            return job
        time.sleep(0.05)


def seconds_to_stop(server: Server) -> float:
    """SIGTERM, then the seconds until the process ended (infinite when it needed SIGKILL after 20 s)."""
    started = time.monotonic()
    server.process.send_signal(signal.SIGTERM)
    try:
        server.process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        server.process.kill()
        server.process.wait()
        return float("inf")
    return time.monotonic() - started


def test_sigterm_during_a_job_stops_within_10_s_and_the_job_is_interrupted(
        engine: Engine, empty_db_url: str, tmp_path: Path) -> None:
    key = seeded(engine)
    with started_server(empty_db_url, tmp_path) as server, httpx.Client(base_url=server.base, headers=key) as client:
        posted = client.post("/simulations", json=LONG_JOB)
        assert posted.status_code == 202, posted.text
        job_id = posted.json()["id"]
        behind = client.post("/simulations", json=LONG_JOB).json()["id"]
        running = job_when(client, job_id, lambda job: job["progress"]["done"] >= 1)
        assert running["status"] == "running", running
        assert client.get(f"/simulations/{behind}").json()["status"] == "queued"  # one job at a time
        took = seconds_to_stop(server)
        assert took < STOP_SECONDS, (took, server.log_text()[-3000:])
    print(f"\n{engine.dialect.name}: SIGTERM during a job: stopped in {took:.2f} s; the running job "
          f"{get_job(engine, job_id).status}, the queued one {get_job(engine, behind).status}")
    for stored in (get_job(engine, job_id), get_job(engine, behind)):
        assert stored.status == "interrupted", (stored, server.log_text()[-3000:])
        assert stored.finished_at is not None and stored.result is None
        assert stored.error is not None and "interrupted" in stored.error


def test_sigterm_after_a_job_stops_within_10_s_and_the_job_stays_done(
        engine: Engine, empty_db_url: str, tmp_path: Path) -> None:
    key = seeded(engine)
    with started_server(empty_db_url, tmp_path) as server, httpx.Client(base_url=server.base, headers=key) as client:
        job_id = client.post("/simulations", json=SHORT_JOB).json()["id"]
        assert job_when(client, job_id, lambda job: job["status"] not in ("queued", "running"))["status"] == "done"
        took = seconds_to_stop(server)
        assert took < STOP_SECONDS, (took, server.log_text()[-3000:])
    print(f"\n{engine.dialect.name}: SIGTERM after a job: stopped in {took:.2f} s; "
          f"the job {get_job(engine, job_id).status}")
    assert get_job(engine, job_id).status == "done"


def test_sigkill_leaves_no_job_running_for_ever(engine: Engine, empty_db_url: str, tmp_path: Path) -> None:
    """Issue 26: a server killed outright cannot mark its jobs; its heartbeat stops instead, and once it is stale
    the jobs read as interrupted (with the reason) and can be run again. While the server lived, the heartbeat
    of its running job was renewed."""
    from sqlalchemy import select

    from reviewdepth.services.simulation.simulation_jobs import rerun_job
    from reviewdepth.store.models import SimulationJob

    def beat(job_id: int) -> Any:
        with engine.connect() as conn:
            return conn.execute(select(SimulationJob.heartbeat_at).where(SimulationJob.id == job_id)).scalar_one()

    key = seeded(engine)
    with started_server(empty_db_url, tmp_path) as server, httpx.Client(base_url=server.base, headers=key) as client:
        job_id = client.post("/simulations", json=LONG_JOB).json()["id"]
        behind = client.post("/simulations", json=LONG_JOB).json()["id"]
        assert job_when(client, job_id, lambda job: job["progress"]["done"] >= 1)["status"] == "running"
        first = beat(job_id)
        deadline = time.monotonic() + 20
        while beat(job_id) == first and time.monotonic() < deadline:
            time.sleep(0.2)
        assert beat(job_id) > first and beat(behind) > first  # renewed, the queued job's too
        server.process.kill()  # SIGKILL: no shutdown, nothing marked
        server.process.wait()
    # within the stale limit the job still reads as running: its server might be alive
    assert get_job(engine, job_id).status == "running"
    time.sleep(1.5)
    for lost in (get_job(engine, job_id, stale_seconds=1), get_job(engine, behind, stale_seconds=1)):
        assert lost.status == "interrupted" and lost.error is not None and "no heartbeat" in lost.error
        assert lost.finished_at is not None and lost.result is None
    again = rerun_job(engine, job_id)
    assert again.status == "queued" and get_job(engine, job_id, stale_seconds=1).status == "queued"
