"""Bearer API keys: every endpoint but ``/health`` and the OpenAPI document needs one; writes need ``write``.

Verified keys are cached per application (`KeyCache`) so that a request does not cost a key lookup in the
database; see `KeyCache` for when a revoked key is refused.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from fastapi import Request, Security
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy import Engine
from starlette.concurrency import run_in_threadpool

from reviewdepth.api.gate import KEY_STATE
from reviewdepth.api.key_cache import KeyCache
from reviewdepth.api.problems import ApiProblem
from reviewdepth.services.admin.keys import authenticate, key_digest
from reviewdepth.services.evidence.access import KeyRecord

bearer = HTTPBearer(auto_error=False, description="An API key from `reviewdepth keys create`.")
CHALLENGE = {"WWW-Authenticate": 'Bearer realm="reviewdepth"'}
INVALID = {"WWW-Authenticate": 'Bearer realm="reviewdepth", error="invalid_token"'}


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
