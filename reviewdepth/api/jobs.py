"""Where a server process runs its simulation jobs (``POST /simulations``): `JobRunner`, one per application,
started and closed by its lifespan.

Not in FastAPI's background tasks: those run inside the request's own task, after the response, and uvicorn's
graceful shutdown waits for every request task, so a SIGTERM during a long job waited for the whole job (the
server needed SIGKILL). The runner's thread is a daemon outside uvicorn's tasks; at shutdown `JobRunner.close` asks
the running job to stop (it does after its current chunk of replicates), waits at most ``grace_seconds`` for it,
and marks whatever it could not finish ``interrupted`` in the store, queued jobs included, so that no job of a
stopped server stays ``running`` and each can be run again
(`reviewdepth.services.simulation.simulation_jobs.rerun_job`).
A server killed outright (SIGKILL) cannot do that: the runner renews each held job's heartbeat every few seconds,
and a job whose heartbeat has gone stale is marked ``interrupted`` when the jobs are next read.

Jobs run one at a time per process, in the order they were posted (the others wait as ``queued``): each is CPU
work that more threads of one process would only share, and a bound on it keeps the process answering requests.
"""

from __future__ import annotations

import logging
import queue
import threading

from sqlalchemy import Engine

log = logging.getLogger(__name__)

# how long a stopping server waits for its running job to reach the end of a chunk: with uvicorn's own wait for
# requests (`cli.api_cmds.SHUTDOWN_REQUEST_SECONDS`) well within the 10 s a container manager gives after SIGTERM
STOP_GRACE_SECONDS = 3.0
# how often the runner renews the heartbeat of its jobs: far below the stale limit that marks a job lost
# (`reviewdepth.services.simulation.simulation_jobs.STALE_SECONDS`, 60 s)
HEARTBEAT_SECONDS = 5.0


class JobRunner:
    """Runs the simulation jobs ``submit`` is given, one at a time in a daemon thread (see the module docstring)."""

    def __init__(self, engine: Engine, grace_seconds: float = STOP_GRACE_SECONDS,
                 heartbeat_seconds: float = HEARTBEAT_SECONDS) -> None:
        self.engine = engine
        self.grace_seconds = grace_seconds
        self.heartbeat_seconds = heartbeat_seconds
        self._waiting: queue.SimpleQueue[int | None] = queue.SimpleQueue()
        self._stop = threading.Event()
        self._current: int | None = None
        self._held: set[int] = set()  # submitted and not finished: their heartbeat is renewed
        self._held_lock = threading.Lock()
        self._thread = threading.Thread(target=self._work, name="reviewdepth simulation jobs", daemon=True)
        self._thread.start()
        self._beating = threading.Thread(target=self._beat, name="reviewdepth job heartbeat", daemon=True)
        self._beating.start()

    def submit(self, job_id: int) -> None:
        """Run the queued job ``job_id`` after those submitted before it."""
        with self._held_lock:
            self._held.add(job_id)
        self._waiting.put(job_id)

    def _beat(self) -> None:
        """Renew the heartbeat of the jobs this process holds: a server killed outright stops renewing it, and
        its jobs are then marked interrupted when read (`simulation_jobs.expire_stale_jobs`)."""
        from reviewdepth.services.simulation.simulation_jobs import heartbeat

        while not self._stop.wait(self.heartbeat_seconds):
            with self._held_lock:
                held = set(self._held)
            try:
                heartbeat(self.engine, held)
            except Exception:  # a database away for a moment: the next beat tries again
                log.warning("simulation jobs %s: could not renew their heartbeat", sorted(held))

    def _work(self) -> None:
        from reviewdepth.services.simulation.simulation_jobs import run_job

        while (job_id := self._waiting.get()) is not None:
            self._current = job_id
            try:
                run_job(self.engine, job_id, stop=self._stop)  # once stopping, it marks the job interrupted
            except Exception:  # the store itself failed (the job's own errors make it failed): go on with the next
                log.exception("simulation job %s: the store failed", job_id)
            finally:
                self._current = None
                with self._held_lock:
                    self._held.discard(job_id)

    def close(self) -> None:
        """Stop: the running job at the end of its chunk, within ``grace_seconds``; every job not finished by
        then (running or still queued) is marked ``interrupted``."""
        from reviewdepth.services.simulation.simulation_jobs import interrupt_jobs

        self._stop.set()
        self._waiting.put(None)
        self._thread.join(self.grace_seconds)
        unfinished = [] if self._current is None else [self._current]
        while not self._waiting.empty():
            job_id = self._waiting.get_nowait()
            if job_id is not None:
                unfinished.append(job_id)
        try:
            interrupt_jobs(self.engine, unfinished)
        except Exception:  # a database that is gone must not hold the shutdown
            log.exception("simulation jobs %s: could not mark them interrupted", unfinished)
