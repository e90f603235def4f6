"""Simulations run in the background (``POST /simulations``): a job row holds the request, its status
(queued → running → done | failed | interrupted; cancelled is reserved for a job stopped before it ran), its
progress and, when done, the `SimulationReport` as JSON (the bytes of ``reviewdepth simulate --format json``).

A job belongs to the API key that posted it: `get_job` and `rerun_job` given a ``viewer`` key show it to that key
and to admin keys only, and answer any other key as they answer an id that does not exist (so ids cannot be
probed). Jobs stored before keys were recorded are seen by admin keys only.

A job is ``interrupted`` when the process running it stops (``stop`` of `run_job`, `interrupt_jobs`): it is never
left ``running`` by a server that shut down, and `rerun_job` queues it again.

The request is checked when the job is created (the plan through `services.simulation.simulate.build_plan`, the topics
through `services.simulation.simulate.store_source`), so a bad request is refused with nothing stored; what can still go
wrong while the job runs (the topics changed meanwhile, say) makes it ``failed`` with a one-line ``error``.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Collection
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Engine, insert, or_, update
from sqlalchemy.orm import Session

from reviewdepth.services.errors import Conflict, Invalid, NotFound
from reviewdepth.services.evidence.access import ADMIN, KeyRecord
from reviewdepth.store import validation
from reviewdepth.store.ingest import as_utc, utc_now
from reviewdepth.store.models import SimulationJob

MAX_TOPICS = 1_000
MAX_REPLICATES = 100_000
INTERRUPTED = "interrupted: the server stopped before the job finished; run it again"


@dataclass(frozen=True)
class SimulationRequest:
    """What to replay: the store's topics (none: every fully judged topic), the design (``sample_size`` for
    rest and population, ``every`` for audit), the rules (none: every rule of the design), target, confidence,
    documents between two looks, replicates and seed, and the per-role costs (as ``simulate --cost``)."""

    topics: tuple[str, ...] = ()
    design: str = "none"
    sample_size: int = 0
    every: int = 0
    rules: tuple[str, ...] = ()
    target: str = "0.95"
    confidence: float = 0.95
    looks: int = 100
    replicates: int = 100
    seed: int = 0
    # per-role costs of a document (`reviewdepth.services.simulation.costs.RoleCosts`); a job stored before them has
    # none: 1
    review_cost: float = 1.0
    sample_cost: float = 1.0
    produce_cost: float = 1.0

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["topics"], data["rules"] = list(self.topics), list(self.rules)
        return data

    def plan(self) -> Any:
        """The checked `ReplayPlan` (`Invalid` naming the field)."""
        from reviewdepth.services.simulation.simulate import build_plan

        if len(self.topics) > MAX_TOPICS:
            raise Invalid(f"topics: at most {MAX_TOPICS:,} topics in one simulation")
        if isinstance(self.replicates, int) and self.replicates > MAX_REPLICATES:
            raise Invalid(f"replicates: at most {MAX_REPLICATES:,} in one simulation")
        return build_plan(design=self.design, rules=self.rules, target=self.target, confidence=self.confidence,
                          look_every=self.looks, replicates=self.replicates, seed=self.seed,
                          sample_size=self.sample_size, every=self.every, review_cost=self.review_cost,
                          sample_cost=self.sample_cost, produce_cost=self.produce_cost)


@dataclass
class JobRecord:
    """A simulation job as stored; ``result`` is the report's JSON object once the job is done."""

    id: int
    status: str
    request: dict[str, Any]
    created_by: str
    created_at: datetime
    started_at: datetime | None = None
    finished_at: datetime | None = None
    progress_done: int = 0
    progress_total: int | None = None
    error: str | None = None
    result: dict[str, Any] | None = field(default=None, repr=False)

    def as_dict(self) -> dict[str, Any]:
        def when(value: datetime | None) -> str | None:
            return None if value is None else as_utc(value).isoformat()

        return {"id": self.id, "status": self.status, "request": self.request, "created_by": self.created_by,
                "created_at": when(self.created_at), "started_at": when(self.started_at),
                "finished_at": when(self.finished_at),
                "progress": {"done": self.progress_done, "total": self.progress_total},
                "error": self.error, "result": self.result}


def create_job(engine: Engine, request: SimulationRequest, *, reviewer: str, key_id: int | None = None) -> JobRecord:
    """Check the request (plan and topics: unknown or not fully judged topics are refused here) and store a
    ``queued`` job of ``reviewer``, posted with the API key ``key_id``; nothing is stored when the request is
    refused."""
    from reviewdepth.services.simulation.simulate import store_source

    reviewer = validation.reviewer_name(reviewer)
    request.plan()
    store_source(engine, request.topics)
    now = utc_now()
    with engine.begin() as conn:
        new_id = conn.execute(insert(SimulationJob).values(
            status="queued", request=json.dumps(request.as_dict(), ensure_ascii=False), created_by=reviewer,
            created_by_key_id=key_id, created_at=now, heartbeat_at=now).returning(SimulationJob.id)).scalar_one()
    return get_job(engine, int(new_id))


# a queued or running job whose heartbeat is older than this lost its server (which renews it every
# `reviewdepth.api.jobs.HEARTBEAT_SECONDS`): it is marked interrupted when the jobs are next read
STALE_SECONDS = 60.0
LOST = ("interrupted: the server holding the job stopped without a word (no heartbeat for {seconds:g} s, e.g. "
        "killed); run it again")


def heartbeat(engine: Engine, job_ids: Collection[int]) -> None:
    """Renew the heartbeat of the jobs of ``job_ids`` that are still queued or running (their server lives)."""
    if job_ids:
        with engine.begin() as conn:
            conn.execute(update(SimulationJob).where(SimulationJob.id.in_(list(job_ids)),
                                                     SimulationJob.status.in_(("queued", "running")))
                         .values(heartbeat_at=utc_now()))


def expire_stale_jobs(engine: Engine, stale_seconds: float = STALE_SECONDS) -> int:
    """Mark ``interrupted`` every queued or running job whose heartbeat is older than ``stale_seconds`` (or that
    has none: stored before heartbeats); how many. Its server died without marking it (SIGKILL, a lost
    machine); a live server renews the heartbeat of each job it holds far more often."""
    limit = utc_now() - timedelta(seconds=stale_seconds)
    with engine.begin() as conn:
        done = conn.execute(update(SimulationJob).where(
            SimulationJob.status.in_(("queued", "running")),
            or_(SimulationJob.heartbeat_at.is_(None), SimulationJob.heartbeat_at < limit))
            .values(status="interrupted", error=LOST.format(seconds=stale_seconds), finished_at=utc_now()))
    return int(done.rowcount or 0)


def get_job(engine: Engine, job_id: int, *, viewer: KeyRecord | None = None,
            stale_seconds: float = STALE_SECONDS) -> JobRecord:
    """The job ``job_id``; `NotFound` when there is none, or when ``viewer`` (an API key; None: anyone) is
    neither the key that posted it nor an admin key. Jobs whose server died are marked interrupted first
    (`expire_stale_jobs`)."""
    validation.integer(job_id, "job id", minimum=1)
    expire_stale_jobs(engine, stale_seconds)
    with Session(engine) as session:
        row = session.get(SimulationJob, job_id)
    if row is None or (viewer is not None and not viewer.allows(ADMIN) and row.created_by_key_id != viewer.id):
        raise NotFound(f"unknown simulation job {job_id}")
    return JobRecord(int(row.id), row.status, json.loads(row.request), row.created_by, row.created_at,
                     row.started_at, row.finished_at, int(row.progress_done),
                     None if row.progress_total is None else int(row.progress_total), row.error,
                     None if row.result is None else json.loads(row.result))


def _set(engine: Engine, job_id: int, *, only_if: str | None = None, **values: Any) -> bool:
    stmt = update(SimulationJob).where(SimulationJob.id == job_id)
    if only_if is not None:
        stmt = stmt.where(SimulationJob.status == only_if)
    with engine.begin() as conn:
        return bool(conn.execute(stmt.values(**values)).rowcount)


def one_line(exc: BaseException) -> str:
    """An exception as one line: its message's first line, or its type's name when it has none."""
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


def run_job(engine: Engine, job_id: int, *, workers: int = 1, stop: threading.Event | None = None) -> JobRecord:
    """Run a queued job to the end: ``running`` with its start time, progress after each replayed chunk, then
    ``done`` with the report's JSON, or ``failed`` with the one-line reason of whatever went wrong, or
    ``interrupted`` when ``stop`` is set before it finishes (checked after each chunk); the job never stays
    ``running``. A job that is not queued (already taken, cancelled, interrupted) is left alone, and a job marked
    otherwise meanwhile (`interrupt_jobs` by a server that could not wait for it) keeps that status."""
    from reviewdepth.services.simulation.simulate import run_simulation, store_source

    if stop is not None and stop.is_set():
        interrupt_jobs(engine, [job_id])
        return get_job(engine, job_id)
    if not _set(engine, job_id, only_if="queued", status="running", started_at=utc_now()):
        return get_job(engine, job_id)
    try:
        request = SimulationRequest(**{**(raw := get_job(engine, job_id).request),
                                       "topics": tuple(raw["topics"]), "rules": tuple(raw["rules"])})
        plan = request.plan()
        source = store_source(engine, request.topics)

        def progress(done: int, total: int) -> None:
            _set(engine, job_id, only_if="running", progress_done=done, progress_total=total)
            if stop is not None and stop.is_set():
                raise KeyboardInterrupt  # run_simulation's signal to stop after this chunk

        report = run_simulation(source, plan, workers=workers, progress=progress)
        if report.partial:
            interrupt_jobs(engine, [job_id])
        else:
            _set(engine, job_id, only_if="running", status="done", result=report.to_json(), finished_at=utc_now())
    except Exception as exc:  # a job that raises is a failed job with its reason, never one left running
        _set(engine, job_id, only_if="running", status="failed", error=one_line(exc), finished_at=utc_now())
    return get_job(engine, job_id)


def interrupt_jobs(engine: Engine, job_ids: Collection[int]) -> int:
    """Mark the jobs of ``job_ids`` that are queued or running ``interrupted`` (their process is stopping and
    will not finish them); how many were."""
    if not job_ids:
        return 0
    stmt = update(SimulationJob).where(SimulationJob.id.in_(list(job_ids)),
                                       SimulationJob.status.in_(("queued", "running")))
    with engine.begin() as conn:
        return int(conn.execute(stmt.values(status="interrupted", error=INTERRUPTED, finished_at=utc_now()))
                   .rowcount)


def rerun_job(engine: Engine, job_id: int, *, viewer: KeyRecord | None = None) -> JobRecord:
    """Queue an interrupted job again, from the start (its progress, times and reason cleared); `Conflict` for a
    job in any other status, `NotFound` for an unknown one or one ``viewer`` may not see (`get_job`)."""
    job = get_job(engine, job_id, viewer=viewer)
    if not _set(engine, job_id, only_if="interrupted", status="queued", started_at=None, finished_at=None,
                error=None, result=None, progress_done=0, progress_total=None, heartbeat_at=utc_now()):
        raise Conflict(f"simulation job {job_id} is {job.status}: only an interrupted job can be run again")
    return get_job(engine, job_id)
