"""Bearer API keys: every endpoint but ``/health`` and the OpenAPI document needs one; writes need ``write``."""

from __future__ import annotations

from collections.abc import Callable

from fastapi import Depends, Request, Security
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy import Engine

from reviewdepth.api.problems import ApiProblem
from reviewdepth.services.keys import KeyRecord, authenticate

bearer = HTTPBearer(auto_error=False, description="An API key from `reviewdepth keys create`.")
CHALLENGE = {"WWW-Authenticate": 'Bearer realm="reviewdepth"'}


def engine_of(request: Request) -> Engine:
    engine: Engine = request.app.state.engine
    return engine


def current_key(request: Request,
                credentials: HTTPAuthorizationCredentials | None = Security(bearer)) -> KeyRecord:
    """The caller's key; 401 (with ``WWW-Authenticate: Bearer``) when missing, unknown or revoked."""
    if credentials is None or not credentials.credentials:
        raise ApiProblem(401, "missing API key: send 'Authorization: Bearer <key>'", CHALLENGE)
    key = authenticate(engine_of(request), credentials.credentials)
    if key is None:
        raise ApiProblem(401, "unknown API key", {"WWW-Authenticate": 'Bearer realm="reviewdepth", '
                                                                      'error="invalid_token"'})
    if not key.active:
        raise ApiProblem(401, f"API key {key.prefix}… (id {key.id}) was revoked",
                         {"WWW-Authenticate": 'Bearer realm="reviewdepth", error="invalid_token"'})
    return key


def require(scope: str) -> Callable[[KeyRecord], KeyRecord]:
    """A dependency: the caller's key, which must allow ``scope`` (403 otherwise)."""

    def check(key: KeyRecord = Depends(current_key)) -> KeyRecord:
        if not key.allows(scope):
            raise ApiProblem(403, f"this API key has scope {key.scope!r}; this request needs {scope!r}")
        return key

    return check


read_key = require("read")
write_key = require("write")
