"""Where the endpoints run the services' blocking database writes (`write_call`).

On SQLite a write runs **inline on the event loop**: SQLite has a single writer, a write takes well under a
millisecond, and handing it to a worker thread costs more than the write (a thread switch each way, and GIL
hand-offs between the busy event loop and the thread, which gives the GIL up in every SQLite call; several such
threads also wait for each other's write lock in SQLite's busy handler, which polls with sleeps of 1 to 100 ms).
One process thus writes one request at a time, in arrival order. Two guards keep the loop from waiting on others:

* API workers of one database take an advisory file lock (`reviewdepth.store.write_gate.WriteGate`,
  ``<database>.api-write.lock``) around each inline write, so they queue in the kernel (woken at once) rather
  than in SQLite's busy handler;
* an inline write runs with SQLite's busy timeout at 0 (`reviewdepth.store.write_gate.FailFastWrites`): when
  another process (a CLI import, say) holds the write lock, it fails at once, before anything is written, and
  is run again in the threadpool, which waits for the lock with the engine's usual timeout while the loop
  serves other requests.

A write runs inline only when it is known to be short (`write_call` with ``inline=True``; the judgment endpoint
passes batches up to `INLINE_JUDGMENTS`: a 1,000-judgment batch takes ~15 ms); a longer one runs in the
threadpool like any write that found the database locked, so the loop goes on serving reads meanwhile.

On PostgreSQL (concurrent writers, network round trips) writes run in the threadpool, at most as many at once
as the engine's pool keeps connections (5 by default): more would only wait for the topic's row lock (the
hash chain serialises the writers of a topic) while making the pool open and close overflow connections, and
each new PostgreSQL connection costs a backend process.
"""

from __future__ import annotations

import functools
import sqlite3
import time
from collections.abc import Callable
from typing import ParamSpec, TypeVar

import anyio.to_thread
from anyio import CapacityLimiter
from fastapi import Request
from sqlalchemy import Engine
from sqlalchemy.exc import OperationalError

from reviewdepth.api.problems import ApiProblem
from reviewdepth.store.engine import WRITE_DEADLINE
from reviewdepth.store.write_gate import FailFastWrites, is_busy

P = ParamSpec("P")
T = TypeVar("T")

INLINE_JUDGMENTS = 5_000  # judgments in one request recorded on the event loop at most (~75 ms)


class Writes:
    """How one application runs its writes (see the module docstring); ``fallbacks`` counts inline writes that
    found the database locked and went to the threadpool."""

    def __init__(self, engine: Engine) -> None:
        self.fail_fast = FailFastWrites(engine)
        self.inline = self.fail_fast.enabled
        self.fallbacks = 0
        size = getattr(engine.pool, "size", None)
        self.limiter = CapacityLimiter(max(1, size() if callable(size) else 5))

    def close(self) -> None:
        self.fail_fast.close()


async def write_call(request: Request, inline: bool, function: Callable[P, T], *args: P.args,
                     **kwargs: P.kwargs) -> T:
    """``function(*args, **kwargs)``, a database write that is all or nothing (it may run a second time when
    the first attempt found SQLite locked), run as the app's `Writes` say; ``inline=False`` (a long write) always
    runs it in the threadpool."""
    writes: Writes = request.app.state.writes
    if inline and writes.inline:
        try:
            with writes.fail_fast.fail_fast():
                return function(*args, **kwargs)
        except (OperationalError, sqlite3.OperationalError) as exc:
            if not is_busy(exc):
                raise
            writes.fallbacks += 1
    # the documented bound holds for the whole wait: the turn among this process's writers and the lock together
    # (a writer fifth in line behind a held topic lock waited 39 s where 10 s is promised)
    bound = float(request.app.state.settings.busy_timeout_seconds)
    deadline = time.monotonic() + bound
    with anyio.move_on_after(bound) as waited:
        await writes.limiter.acquire()
    if waited.cancelled_caught:
        raise ApiProblem(503, f"database busy: {request.method} {request.url.path} waited {bound:g} s for its turn "
                         "among this server's writes; nothing was written (a judgment batch with an "
                         "idempotency_key is safe to resend)", headers={"Retry-After": "1"})

    call = functools.partial(function, *args, **kwargs)

    @functools.wraps(call)
    def bounded() -> T:
        token = WRITE_DEADLINE.set(deadline)  # this worker thread's context: the lock waits get what is left
        try:
            return call()
        finally:
            WRITE_DEADLINE.reset(token)

    try:
        return await anyio.to_thread.run_sync(bounded)
    finally:
        writes.limiter.release()
