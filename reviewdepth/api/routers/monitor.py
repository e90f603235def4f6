"""The monitor (``GET /topics/{topic}/monitor``) and the dashboard (``GET /``): thin over
`reviewdepth.services.answers.monitor`.

The dashboard is a page for browsers, which cannot easily send an ``Authorization`` header: besides the header,
`reviewdepth.api.gate.RequestGate` accepts the key from the ``reviewdepth_key`` cookie on GET and HEAD requests,
and ``GET /?key=KEY`` sets that cookie and redirects to ``/`` at once (docs/api.md, "Dashboard")."""

from __future__ import annotations

from typing import Annotated, Any

import anyio.to_thread
from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse

from reviewdepth.api import schemas
from reviewdepth.api.problems import problem_responses
from reviewdepth.api.routers.common import ConfidenceQuery, EngineDep, Reader, TargetQuery
from reviewdepth.estimation.target import DEFAULT_TARGET
from reviewdepth.services.answers.monitor import DASHBOARD_PAGE, DASHBOARD_PAGE_MAX
from reviewdepth.store.labels import LabelPolicy
from reviewdepth.store.validation import INT64_MAX, TOPIC_LENGTH

READ = problem_responses(401, 403, 404, 409, 422)


async def get_monitor(topic: str, request: Request, engine: EngineDep, _key: Reader, queue: str | None = None,
                      target: TargetQuery = DEFAULT_TARGET, confidence: ConfidenceQuery = 0.95,
                      policy: LabelPolicy = "latest",
                      as_of: Annotated[int | None, Query(ge=0, le=INT64_MAX, description="Judgment id.")] = None,
                      ) -> dict[str, Any]:
    """Can we stop now? The anytime-valid stop signal from the topic's audit stream, valid however often
    it is asked: status (``stop certified`` / ``continue``), the recall lower bound, documents to go, audit
    documents still needed, and the one-look tests beside it, each labelled "valid for one look only". The
    same object as `reviewdepth watch TOPIC --once --format json`. 409 when the audit stream's documents no
    longer match its stored digest. Computed one at a time per process with the reports and charts, in a worker
    thread (`api/single_flight.py`): identical requests meanwhile share one computation, so a monitor of a
    queue of millions holds its memory once, whoever polls it."""
    from reviewdepth.services.answers.monitor import build_monitor
    from reviewdepth.services.answers.monitor_answers import topic_marker

    key = ("monitor", topic, queue, target.text, confidence, policy, as_of)
    answers = request.app.state.monitor_answers
    # the answer kept from an earlier request while the topic is unchanged (services/monitor_answers.py)
    marker = await anyio.to_thread.run_sync(topic_marker, engine, topic)
    if marker is not None:
        kept: dict[str, Any] | None = answers.get(key, marker)
        if kept is not None:
            return kept

    def computed() -> dict[str, Any]:
        answer = build_monitor(engine, topic, queue=queue, target=target, confidence=confidence, policy=policy,
                               as_of=as_of).to_dict()
        if marker is not None:
            answers.put(key, marker, answer)
        return answer

    result: dict[str, Any] = await request.app.state.renders.run(key, computed)
    return result


async def dashboard(request: Request, engine: EngineDep, _key: Reader, target: TargetQuery = DEFAULT_TARGET,
                    confidence: ConfidenceQuery = 0.95,
                    page: Annotated[int, Query(ge=1, le=INT64_MAX, description="The page of topics, from 1.")] = 1,
                    limit: Annotated[int, Query(ge=1, le=DASHBOARD_PAGE_MAX, description="Topics on a page.")]
                    = DASHBOARD_PAGE,
                    q: Annotated[str, Query(max_length=TOPIC_LENGTH,
                                            description="Only topics whose name contains this (ignoring case).")] = "",
                    judged: Annotated[bool, Query(description="Only topics with at least one judgment.")] = False,
                    ) -> HTMLResponse:
    """One page of the topics (the most recently judged first, then those never judged, each by name;
    ``limit`` a page, links to the next and previous) with each one's status, progress along its newest
    queue, recall lower bound, last activity, and links to its report and monitor; a filter form on the page
    sets ``q`` and ``judged``. Server-rendered HTML, no scripts. One render
    at a time per process, in a worker thread: requests meanwhile for the same page wait for it and share
    its page; a topic's monitor is reused while the topic is unchanged. A read key suffices; browsers may
    open ``/?key=KEY`` once (the key is then kept in an HttpOnly cookie for the browser session and the
    address bar loses it)."""
    from reviewdepth.report.monitor_render import render_dashboard
    from reviewdepth.services.answers.monitor import build_dashboard

    state = request.app.state
    html: str = await state.dashboards.run(
        (target.text, confidence, page, limit, q, judged),
        lambda: render_dashboard(build_dashboard(engine, target=target, confidence=confidence, page=page,
                                                 limit=limit, cache=state.monitor_cache, name_contains=q,
                                                 judged_only=judged)))
    return HTMLResponse(html, headers={"Cache-Control": "no-store", "Referrer-Policy": "no-referrer"})


def add_routes(router: APIRouter) -> None:
    router.add_api_route("/topics/{topic}/monitor", get_monitor, methods=["GET"], response_model=schemas.MonitorOut,
                         responses=READ, tags=["report"])
    router.add_api_route("/", dashboard, methods=["GET"], response_class=HTMLResponse, tags=["service"],
                         responses={**problem_responses(401, 403, 422),
                                    200: {"description": "The dashboard page.",
                                          "content": {"text/html": {"schema": {"type": "string"}}}}})
