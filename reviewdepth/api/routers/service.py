"""``/health`` and ``/whoami``: the service itself."""

from __future__ import annotations

from typing import Annotated

import anyio.to_thread
from fastapi import APIRouter, Depends, Query, Request

from reviewdepth import __version__
from reviewdepth.api import schemas
from reviewdepth.api.auth import current_key
from reviewdepth.api.problems import ApiProblem, problem_responses
from reviewdepth.api.routers.common import AUTH
from reviewdepth.services.evidence.access import KeyRecord


async def health(request: Request, database: Annotated[bool, Query(description=(
        "Also check that the database answers and is at the latest schema (503 if not): the container "
        "health check."))] = False) -> schemas.Health:
    """Liveness, and with ``database=true`` readiness: no key needed. Plain liveness is answered on the event
    loop, so a threadpool busy with long requests does not delay it; the database check runs in a thread of its
    own on a connection of its own, outside the threadpool and the pool, so it answers while every pooled
    connection is in use (100 concurrent reads made it answer 503 for a database that was fine)."""
    if database:
        from reviewdepth.services.admin.database import database_problem

        state = request.app.state
        problem = await anyio.to_thread.run_sync(database_problem, state.health_engine, limiter=state.health_thread)
        if problem is not None:
            raise ApiProblem(503, problem)
    return schemas.Health(status="ok", version=__version__)


def whoami(key: Annotated[KeyRecord, Depends(current_key)]) -> dict[str, object]:
    """The key the request was made with (its reviewer and scope)."""
    return key.as_dict()


def add_routes(router: APIRouter) -> None:
    router.add_api_route("/health", health, methods=["GET"], response_model=schemas.Health, tags=["service"],
                         responses=problem_responses(503))
    router.add_api_route("/whoami", whoami, methods=["GET"], response_model=schemas.KeyOut, responses=AUTH,
                         tags=["service"])
