"""Errors as RFC 9457 ``application/problem+json`` bodies, and the request body size limit."""

from __future__ import annotations

import json
import logging
import math
import uuid
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from http import HTTPStatus
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ConfigDict
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect
from starlette.responses import Response

from reviewdepth.formats.compressed import DecompressedTooLarge
from reviewdepth.formats.errors import InputError
from reviewdepth.services.errors import Conflict, Invalid, NotFound, ServiceError
from reviewdepth.store.busy import DatabaseBusy, DatabaseFull, driver_error_types, transient_error
from reviewdepth.store.chain import ChainBroken
from reviewdepth.store.validation import InvalidValue

PROBLEM_TYPE = "application/problem+json"
LOG = logging.getLogger("reviewdepth.api")
# a busy database: the request already waited REVIEWDEPTH_BUSY_TIMEOUT_SECONDS on the server before the 503
RETRY_AFTER_SECONDS = 1
# an unavailable database answers at once: a restarting PostgreSQL takes a few seconds to accept connections
UNAVAILABLE_RETRY_AFTER_SECONDS = 5

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class Problem(BaseModel):
    """An error: ``detail`` says what was wrong and where (field, file line); extra members add specifics."""

    model_config = ConfigDict(extra="allow")

    type: str = "about:blank"
    title: str
    status: int
    detail: str


def problem_response(status: int, detail: str, *, headers: Mapping[str, str] | None = None,
                     **extra: Any) -> Response:
    body: dict[str, Any] = {"type": "about:blank", "title": HTTPStatus(status).phrase, "status": status,
                            "detail": detail}
    body.update({k: v for k, v in extra.items() if v is not None})
    return Response(json.dumps(body, ensure_ascii=False), status_code=status, media_type=PROBLEM_TYPE,
                    headers=headers)


class ApiProblem(HTTPException):
    """Raised by endpoints and dependencies for a problem response with a status, detail and headers."""

    def __init__(self, status: int, detail: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(status_code=status, detail=detail, headers=headers)


class BodyTooLarge(ApiProblem):
    def __init__(self, limit: int, setting: str) -> None:
        super().__init__(413, f"request body larger than the limit of {limit:,} bytes ({setting})")


class BodyTooSlow(ApiProblem):
    """No part of the body within the body timeout: 408, and the connection closes (the rest of the body is
    not waited for)."""

    def __init__(self, seconds: float) -> None:
        super().__init__(408, f"the request's body did not arrive within {seconds:g} s "
                              "(REVIEWDEPTH_BODY_TIMEOUT_SECONDS)", headers={"Connection": "close"})


def _location(loc: Any) -> str:
    parts = [str(p) for p in loc]
    out = ""
    for part in parts:
        if part.isdigit():
            out += f"[{part}]"
        else:
            out += ("." if out else "") + part
    return out


def _plain(value: Any) -> Any:
    if isinstance(value, (str, int, bool)) or value is None:
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return str(value)


def transient_database_response(exc: BaseException, request: Request | Scope) -> Response | None:
    """The 503 (with ``Retry-After``) for ``exc`` when it says the database is busy or unavailable
    (`reviewdepth.store.busy`), naming the request; None for any other error. The endpoints' exception handler
    and the request gate's key lookup both answer with it."""
    trouble = transient_error(exc)
    if trouble is None:
        return None
    scope = request.scope if isinstance(request, Request) else request
    settings = scope["app"].state.settings
    trouble = trouble.during(f"{scope['method']} {scope['path']}", settings.busy_timeout_seconds)
    wait = RETRY_AFTER_SECONDS if isinstance(trouble, DatabaseBusy) else UNAVAILABLE_RETRY_AFTER_SECONDS
    # 507 Insufficient Storage: the store is full, not busy; the same request succeeds once space is freed
    status = 507 if isinstance(trouble, DatabaseFull) else 503
    return problem_response(status, f"{trouble} (a judgment batch with an idempotency_key is safe to resend)",
                            headers={"Retry-After": str(wait)})


def allowed_methods(request: Request) -> list[str]:
    """The methods of every route of the request's path (``Allow`` of a 405: one path is often several routes,
    ``GET /topics`` and ``POST /topics``)."""
    from starlette.routing import Match

    methods: set[str] = set()
    for route in request.app.router.routes:
        match, _ = route.matches({**request.scope, "method": "GET"}) if hasattr(route, "matches") else (None, None)
        if match in (Match.FULL, Match.PARTIAL):
            methods.update(getattr(route, "methods", None) or ())
    return sorted(methods)


INT64_LIMIT = 2**63


def out_of_store_range(exc: BaseException) -> bool:
    """Whether ``exc`` says a number was beyond the database's 64-bit integers: PostgreSQL's SQLSTATE 22003
    (numeric_value_out_of_range), SQLite's driver refusing a Python int over int64."""
    seen: BaseException | None = exc
    for _ in range(5):  # the error, the driver's under it, and their causes
        if seen is None:
            break
        if getattr(seen, "sqlstate", None) == "22003" or getattr(seen, "pgcode", None) == "22003":
            return True
        if isinstance(seen, OverflowError) and "SQLite INTEGER" in str(seen):
            return True
        seen = getattr(seen, "orig", None) or seen.__cause__
    return False


def install_problem_handlers(app: FastAPI) -> None:
    """Every 4xx/5xx leaves as problem+json."""

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        headers = exc.headers
        if exc.status_code == 405:  # Starlette names the methods of the first route of the path only
            headers = {**(headers or {}), "Allow": ", ".join(allowed_methods(request))}
        return problem_response(exc.status_code, str(exc.detail), headers=headers)

    async def validation_error(_request: Request, exc: Exception) -> Response:
        assert isinstance(exc, RequestValidationError)
        errors = [{"loc": _plain(list(e.get("loc", ()))), "field": _location(e.get("loc", ())),
                   "message": str(e.get("msg", "")), "type": str(e.get("type", ""))} for e in exc.errors()]
        detail = "; ".join(f"{e['field']}: {e['message']}" for e in errors[:5]) or "invalid request"
        if len(errors) > 5:
            detail += f"; and {len(errors) - 5} more"
        return problem_response(422, detail, errors=errors)

    async def service_error(_request: Request, exc: Exception) -> Response:
        status = 404 if isinstance(exc, NotFound) else 409 if isinstance(exc, Conflict) else 422
        return problem_response(status, str(exc))

    async def input_error(_request: Request, exc: Exception) -> Response:
        assert isinstance(exc, InputError)
        return problem_response(422, exc.describe(), file=exc.path, line=exc.line, field=exc.field)

    async def too_large(_request: Request, exc: Exception) -> Response:
        assert isinstance(exc, DecompressedTooLarge)
        return problem_response(413, f"{exc} (REVIEWDEPTH_MAX_DECOMPRESSED_BYTES)", file=exc.name)

    async def invalid_value(_request: Request, exc: Exception) -> Response:
        assert isinstance(exc, InvalidValue)
        return problem_response(422, str(exc), field=exc.field)

    async def chain_broken(_request: Request, exc: Exception) -> Response:
        return problem_response(409, str(exc))

    async def database_error(request: Request, exc: Exception) -> Response:
        return transient_database_response(exc, request) or await server_error(request, exc)

    async def server_error(request: Request, exc: Exception) -> Response:
        if out_of_store_range(exc):
            # a number the request carried that the database cannot hold (PostgreSQL's "bigint out of range",
            # SQLite's int64): the request's fault, answered as such rather than as a 500
            return problem_response(422, "a number in the request is beyond what the store holds (whole numbers "
                                    f"from {-INT64_LIMIT:,} to {INT64_LIMIT - 1:,}); nothing was written")
        # the body says nothing about the exception (its class would name the database driver) but carries a
        # request id, and the server's log one line with the same id, so an operator can find what happened
        request_id = uuid.uuid4().hex[:16]
        first_line = (str(exc).splitlines() or [""])[0][:300]
        LOG.error("request %s: %s %s failed: %s: %s", request_id, request.method, request.url.path,
                  type(exc).__name__, first_line)
        # sent from outside the app's middleware (Starlette's ServerErrorMiddleware): its own security header
        return problem_response(500, f"internal error; the request was not completed (request id {request_id})",
                                headers={"X-Content-Type-Options": "nosniff", "X-Request-ID": request_id},
                                request_id=request_id)

    async def client_gone(request: Request, _exc: Exception) -> Response:
        # the client closed the connection before its request was read: nothing to answer and nothing wrong with
        # the server; one line, not a traceback (nothing was stored: a body is read whole before any write)
        LOG.info("client disconnected: %s %s (nothing was done)", request.method, request.url.path)
        return problem_response(400, "the client disconnected before the request was read")

    app.add_exception_handler(ClientDisconnect, client_gone)
    app.add_exception_handler(HTTPException, http_error)
    app.add_exception_handler(RequestValidationError, validation_error)
    app.add_exception_handler(ServiceError, service_error)
    app.add_exception_handler(Invalid, service_error)
    app.add_exception_handler(InputError, input_error)
    app.add_exception_handler(InvalidValue, invalid_value)
    app.add_exception_handler(ChainBroken, chain_broken)
    app.add_exception_handler(DecompressedTooLarge, too_large)
    for kind in driver_error_types():
        app.add_exception_handler(kind, database_error)
    app.add_exception_handler(Exception, server_error)


def problem_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI declarations of the problem responses an operation can give."""
    ref = {"$ref": "#/components/schemas/Problem"}
    return {s: {"model": Problem, "description": HTTPStatus(s).phrase,
                "content": {PROBLEM_TYPE: {"schema": ref}}} for s in statuses}
