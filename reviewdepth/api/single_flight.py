"""`SingleFlight`: one computation at a time per process for an expensive page, shared by the requests that ask
for the same thing meanwhile.

A request whose key is being computed waits for that computation and answers with its result (or its error)
instead of starting its own; a request with another key waits until the one running has finished. So a browser
tab that reloads (the dashboard refreshes itself every 60 s), or several tabs, never pile up renders: the
process holds one render's memory at a time, and the threadpool's other threads stay free for other requests.
The callers run in worker threads (plain ``def`` routes), never on the event loop.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

T = TypeVar("T")


class _Flight(Generic[T]):
    def __init__(self) -> None:
        self.done = threading.Event()
        self.result: list[T] = []
        self.error: BaseException | None = None


class SingleFlight(Generic[T]):
    """Run ``compute`` for ``key`` once for all the callers that ask while it runs, one key at a time."""

    def __init__(self) -> None:
        self._lock = threading.Lock()  # guards _flights
        self._running = threading.Lock()  # held by the one computation running
        self._flights: dict[Hashable, _Flight[T]] = {}
        self.computed = 0
        self.shared = 0

    def run(self, key: Hashable, compute: Callable[[], T]) -> T:
        with self._lock:
            flight = self._flights.get(key)
            leader = flight is None
            if flight is None:
                flight = self._flights[key] = _Flight()
            else:
                self.shared += 1
        if not leader:
            flight.done.wait()
            if flight.error is not None:
                raise flight.error
            return flight.result[0]
        try:
            with self._running:
                self.computed += 1
                flight.result.append(compute())
        except BaseException as exc:
            flight.error = exc
            raise
        finally:
            with self._lock:
                del self._flights[key]
            flight.done.set()
        return flight.result[0]
