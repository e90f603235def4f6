"""The verified API keys an application instance keeps for a short while (`KeyCache`), shared by the request gate
(`reviewdepth.api.gate`), which checks a key before a body is read, and the routes' dependency
(`reviewdepth.api.auth`)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from reviewdepth.services.admin.keys import key_changes
from reviewdepth.services.evidence.access import KeyRecord


class KeyCache:
    """Active keys verified in the last ``ttl`` seconds, by digest, for one application instance.

    Semantics of revocation:

    * a key revoked **in this process** (`reviewdepth.services.admin.keys.revoke_key` on any engine, e.g. an admin
      tool or a test running in the server's process) is refused from the next request on: while `watch` is on,
      every ``UPDATE``/``DELETE`` of ``api_keys`` executed through SQLAlchemy in the process empties the cache,
      once when the statement runs and again when its connection goes back to the pool (after the commit), and
      a lookup that overlapped either moment is not cached;
    * a key revoked **by another process** (``reviewdepth keys revoke`` against a running server, another
      worker) is refused at most ``ttl`` seconds later, when its cache entry expires;
    * unknown and revoked keys are never cached (each such request looks the key up), so a key created a moment
      ago works at once;
    * ``ttl <= 0`` turns the cache off: every request looks its key up.
    """

    def __init__(self, ttl: float, max_entries: int = 10_000, clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl = ttl
        self.max_entries = max_entries
        self.clock = clock
        self.generation = 0
        self._entries: dict[str, tuple[float, KeyRecord]] = {}
        self._lock = threading.Lock()
        self._changes = key_changes(self.invalidate)

    def get(self, digest: str) -> KeyRecord | None:
        entry = self._entries.get(digest)
        if entry is None:
            return None
        if entry[0] <= self.clock():
            self._entries.pop(digest, None)
            return None
        return entry[1]

    def put(self, digest: str, record: KeyRecord, generation: int) -> None:
        """Cache ``record`` (looked up when the cache was at ``generation``) unless keys changed meanwhile."""
        if self.ttl <= 0 or not record.active:
            return
        with self._lock:
            if generation != self.generation:
                return
            if len(self._entries) >= self.max_entries:
                self._entries.clear()
            self._entries[digest] = (self.clock() + self.ttl, record)

    def invalidate(self) -> None:
        with self._lock:
            self.generation += 1
            self._entries.clear()

    # in-process revocation: `reviewdepth.store.table_changes` calls `invalidate` when api_keys changes
    def watch(self) -> None:
        """Listen to every engine and pool of the process for changes of ``api_keys``, until as many `unwatch`
        calls (one per running lifespan of the application)."""
        self._changes.watch()

    def unwatch(self) -> None:
        self._changes.unwatch()
        self.invalidate()
