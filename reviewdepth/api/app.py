"""``create_app(settings)``: the FastAPI application factory. The engine lives in the lifespan."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import Depends, FastAPI

from reviewdepth import __version__
from reviewdepth.api.access_log import redact_access_log
from reviewdepth.api.calls import Writes
from reviewdepth.api.docs_pages import install_docs_pages
from reviewdepth.api.gate import RequestGate
from reviewdepth.api.jobs import JobRunner
from reviewdepth.api.key_cache import KeyCache
from reviewdepth.api.openapi import install_complete_openapi
from reviewdepth.api.parameters import checked_media_type, checked_parameters
from reviewdepth.api.problems import Problem, install_problem_handlers
from reviewdepth.api.routers import add_all
from reviewdepth.api.settings import api_settings
from reviewdepth.api.single_flight import SingleFlight
from reviewdepth.settings import Settings

DESCRIPTION = """Queues, judgments, samples and depth reports for review teams.

Every endpoint but `/health` and this document needs `Authorization: Bearer <key>` (keys come from
`reviewdepth keys create`); writes need scope `write`. Errors are `application/problem+json`. The dashboard at
`/` is for browsers: sign in on the page it shows without a key (or open `/?key=<key>` once) and GET requests then
take the key from an HttpOnly cookie."""


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    """The application's engine and per-process state, from startup to shutdown (over ``app.state.settings``,
    which `create_app` sets)."""
    from anyio import CapacityLimiter
    from sqlalchemy import create_engine
    from sqlalchemy.pool import NullPool

    from reviewdepth.services.admin.database import open_store
    from reviewdepth.services.answers.monitor import MonitorCache
    from reviewdepth.services.answers.monitor_answers import MonitorAnswers

    engine = open_store(app.state.settings)
    app.state.engine = engine
    app.state.writes = writes = Writes(engine)
    app.state.jobs = jobs = JobRunner(engine)
    app.state.dashboards = SingleFlight[str]()  # one dashboard render at a time (api/single_flight.py)
    app.state.renders = SingleFlight[Any]()  # one report or chart at a time, shared by identical requests
    app.state.monitor_cache = MonitorCache()  # per topic, while its change marker holds (services/monitor.py)
    app.state.monitor_answers = MonitorAnswers()  # GET /topics/{t}/monitor, while the topic is unchanged
    # the readiness check's own connection (opened per check, no pool) and thread: it answers while the pool and
    # the threadpool are busy with other requests
    app.state.health_engine = create_engine(engine.url, poolclass=NullPool)
    app.state.health_thread = CapacityLimiter(1)
    key_cache: KeyCache = app.state.key_cache
    key_cache.watch()
    try:
        yield
    finally:
        jobs.close()  # within its grace: a stopping server leaves no job running (api/jobs.py)
        key_cache.unwatch()
        writes.close()
        app.state.health_engine.dispose()
        engine.dispose()


def create_app(settings: Settings) -> FastAPI:
    """A new application over the database of ``settings``; it opens the engine at startup (the database must
    be at the latest schema: `reviewdepth db upgrade`) and disposes it at shutdown."""
    config = api_settings(settings)
    redact_access_log()  # the dashboard's ?key= would otherwise be written to the access log

    # FastAPI's /docs and /redoc would load Swagger UI and ReDoc from a CDN: install_docs_pages serves them here
    app = FastAPI(title="reviewdepth", version=__version__, description=DESCRIPTION, lifespan=lifespan,
                  docs_url=None, redoc_url=None,
                  dependencies=[Depends(checked_parameters), Depends(checked_media_type)],
                  responses={500: {"model": Problem, "description": "Internal Server Error",
                                   "content": {"application/problem+json": {
                                       "schema": {"$ref": "#/components/schemas/Problem"}}}}})
    app.state.settings = config
    app.state.key_cache = KeyCache(config.key_cache_seconds)
    install_problem_handlers(app)
    docs = install_docs_pages(app)
    public = {path for path in (app.openapi_url,) if path} | docs.public | {"/health"}
    app.add_middleware(RequestGate, settings=config, public_paths=public,  # type: ignore[arg-type]
                       pages_without_policy=docs.pages)
    add_all(app.router)
    install_complete_openapi(app)
    return app


def app_from_environment() -> FastAPI:
    """Factory for ``uvicorn --factory`` (several workers): settings from ``REVIEWDEPTH_*``. A bad value stops the
    server before it binds, with one line naming the variable on stderr and exit status 2 (as the CLI does)."""
    import sys

    from pydantic import ValidationError

    from reviewdepth.api.settings import ApiSettings
    from reviewdepth.settings import settings_problem

    try:
        settings = ApiSettings()
    except ValidationError as exc:
        print(f"reviewdepth: {settings_problem(exc)}", file=sys.stderr)
        raise SystemExit(2) from None
    return create_app(settings)
