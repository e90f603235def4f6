"""`SingleFlight`: one computation at a time per process for an expensive page, shared by the requests that ask
for the same thing meanwhile.

A request whose key is being computed awaits that computation and answers with its result (or its error)
instead of starting its own; a request with another key waits until the one running has finished. So a browser
tab that reloads (the dashboard refreshes itself every 60 s), or several tabs, never pile up renders: the
process holds one render's memory at a time. The computation runs in a worker thread; the requests wait on the
event loop, holding no thread of the threadpool (which other requests need), and a request that goes away does
not cancel the computation the others wait for.

The line is bounded: with ``limit`` different computations already running or waiting, a request for yet another
answers 503 with ``Retry-After`` at once (a burst of distinct heavy reads waited minutes and timed out silently),
while identical requests still join the one they match.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

import anyio.to_thread

T = TypeVar("T")


class SingleFlight(Generic[T]):
    """Run ``compute`` for ``key`` once for all the callers that ask while it runs, one key at a time. Create it
    on the event loop that will use it (the application's lifespan)."""

    def __init__(self, limit: int = 16, retry_after: int = 10) -> None:
        self._flights: dict[Hashable, asyncio.Task[T]] = {}
        self.limit = limit
        self.retry_after = retry_after
        self.refused = 0
        self._running = asyncio.Lock()
        self.computed = 0
        self.shared = 0

    async def run(self, key: Hashable, compute: Callable[[], T]) -> T:
        task = self._flights.get(key)
        if task is None:
            if len(self._flights) >= self.limit:
                from reviewdepth.api.problems import ApiProblem

                self.refused += 1
                raise ApiProblem(503, f"the server is computing or queueing {len(self._flights)} heavy reads "
                                 "(reports, monitors, plans, charts, validation documents), its limit: try again "
                                 "shortly", headers={"Retry-After": str(self.retry_after)})
            task = self._flights[key] = asyncio.ensure_future(self._computed(key, compute))
        else:
            self.shared += 1
        return await asyncio.shield(task)

    async def _computed(self, key: Hashable, compute: Callable[[], T]) -> T:
        try:
            async with self._running:
                self.computed += 1
                return await anyio.to_thread.run_sync(compute)
        finally:
            del self._flights[key]
