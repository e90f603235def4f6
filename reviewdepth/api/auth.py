"""Bearer API keys: every endpoint but ``/health`` and the OpenAPI document needs one; writes need ``write``.

Verified keys are cached per application (`KeyCache`) so that a request does not cost a key lookup in the
database; see `KeyCache` for when a revoked key is refused.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Awaitable, Callable

from fastapi import Request, Security
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy import Engine
from starlette.concurrency import run_in_threadpool

from reviewdepth.api.gate import KEY_STATE
from reviewdepth.api.problems import ApiProblem
from reviewdepth.services.keys import KeyRecord, authenticate, key_changes, key_digest

bearer = HTTPBearer(auto_error=False, description="An API key from `reviewdepth keys create`.")
CHALLENGE = {"WWW-Authenticate": 'Bearer realm="reviewdepth"'}
INVALID = {"WWW-Authenticate": 'Bearer realm="reviewdepth", error="invalid_token"'}


class KeyCache:
    """Active keys verified in the last ``ttl`` seconds, by digest, for one application instance.

    Semantics of revocation:

    * a key revoked **in this process** (`reviewdepth.services.keys.revoke_key` on any engine, e.g. an admin
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


async def engine_of(request: Request) -> Engine:
    engine: Engine = request.app.state.engine
    return engine


async def verified_key(request: Request, credentials: HTTPAuthorizationCredentials | None) -> KeyRecord:
    """The key of ``credentials``, as `reviewdepth.api.gate.RequestGate` verified it before the body was read,
    else from the app's `KeyCache` or the database; 401 when missing, unknown or revoked."""
    verified: KeyRecord | None = request.scope.get("state", {}).get(KEY_STATE)
    if verified is not None:
        return verified
    if credentials is None or not credentials.credentials:
        raise ApiProblem(401, "missing API key: send 'Authorization: Bearer <key>'", CHALLENGE)
    secret = credentials.credentials
    cache: KeyCache = request.app.state.key_cache
    digest = key_digest(secret)
    key = cache.get(digest)
    if key is not None:
        return key
    generation = cache.generation
    key = await run_in_threadpool(authenticate, request.app.state.engine, secret)
    if key is None:
        raise ApiProblem(401, "unknown API key", INVALID)
    if not key.active:
        raise ApiProblem(401, f"API key {key.prefix}… (id {key.id}) was revoked", INVALID)
    cache.put(digest, key, generation)
    return key


async def current_key(request: Request,
                      credentials: HTTPAuthorizationCredentials | None = Security(bearer)) -> KeyRecord:
    """The caller's key; 401 (with ``WWW-Authenticate: Bearer``) when missing, unknown or revoked."""
    return await verified_key(request, credentials)


def require(scope: str) -> Callable[..., Awaitable[KeyRecord]]:
    """A dependency: the caller's key, which must allow ``scope`` (403 otherwise). One dependency level, not
    two: each level costs every request some work in FastAPI."""

    async def check(request: Request,
                    credentials: HTTPAuthorizationCredentials | None = Security(bearer)) -> KeyRecord:
        key = await verified_key(request, credentials)
        if not key.allows(scope):
            raise ApiProblem(403, f"this API key has scope {key.scope!r}; this request needs {scope!r}")
        return key

    return check


read_key = require("read")
write_key = require("write")
admin_key = require("admin")
