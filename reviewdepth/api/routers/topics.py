"""``/topics``: create, list and show topics."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, Query, Request, Response

from reviewdepth.api import schemas
from reviewdepth.api.problems import problem_responses
from reviewdepth.api.routers.common import AUTH, READ, ConfidenceQuery, EngineDep, Reader, TargetQuery, Writer
from reviewdepth.estimation.target import DEFAULT_TARGET, Target

STATUS_LIMIT = 200


def create_topic(body: schemas.TopicIn, response: Response, engine: EngineDep, _key: Writer) -> dict[str, object]:
    """Create a topic (an information need), optionally with N, the size of its collection."""
    from reviewdepth.services.admin.topics import create_topic as service

    record = service(engine, body.name, body.population_size)
    if body.screening_order != "queue":
        from reviewdepth.services.admin.topics import declare_screening_order as declare_order

        record = declare_order(engine, record.name, body.screening_order)
    response.headers["Location"] = f"/topics/{quote(record.name, safe='')}"
    return record.as_dict()


async def list_topics(request: Request, engine: EngineDep, _key: Reader, offset: Annotated[int, Query(ge=0)] = 0,
                limit: Annotated[int | None, Query(ge=1, le=10_000, description="Topics per page (default "
                                                   "1000; with the status, the default, at most 200 are "
                                                   "returned).")] = None,
                status: Annotated[bool, Query(description="Each topic's status (the dashboard's and "
                                                          "`reviewdepth topics`'s; at most 200 topics then); "
                                                          "status=false lists without it, up to 10,000 a "
                                                          "page.")] = True,
                target: TargetQuery = DEFAULT_TARGET, confidence: ConfidenceQuery = 0.95) -> dict[str, object]:
    """The topics in creation order, each with its queues, judgments logged and last judgment time, and its
    newest queue's size, reviewed set (as the report counts it) and relevant documents in it, and (unless
    ``status=false``) its status word, line and next step at ``target`` and ``confidence`` (a page is then at most
    200 topics: each status is a monitor, cached while the topic is unchanged); the rows of ``reviewdepth
    topics --format json``."""
    from reviewdepth.services.admin.topics import list_topics as service

    if limit is None:
        limit = 1000
    if status:
        limit = min(limit, STATUS_LIMIT)  # a page of at most 200 with statuses (stated in the document)
    page_limit = limit

    def listed() -> dict[str, object]:
        records = service(engine, offset=offset, limit=page_limit)
        if status:
            _with_status(request, engine, records, target, confidence)
        return {"topics": [t.as_dict() for t in records]}

    # each topic's figures read its newest queue's labels: a burst of listings shares one computation and waits in
    # the heavy reads' line (20 at once on a 2,000,000-entry topic each read the queue: +1.4 GB)
    return await _one_at_a_time(request, ("topics", offset, page_limit, status, target.text, confidence), listed)


def _with_status(request: Request, engine: Any, records: list[Any], target: Target, confidence: float) -> None:
    from reviewdepth.services.answers.monitor import topic_statuses

    found = topic_statuses(engine, [t.name for t in records], target=target, confidence=confidence,
                           cache=request.app.state.monitor_cache)
    for record in records:
        record.status, record.status_text = found.get(record.name, (None, None))


async def get_topic(topic: str, request: Request, engine: EngineDep, _key: Reader,
              status: Annotated[bool, Query(description="The topic's status (as in the list); status=false "
                                                        "leaves it out.")] = True,
              target: TargetQuery = DEFAULT_TARGET, confidence: ConfidenceQuery = 0.95) -> dict[str, object]:
    """One topic, described as in the list, with its status unless ``status=false``."""
    from reviewdepth.services.admin.topics import get_topic as service

    def described() -> dict[str, object]:
        record = service(engine, topic)
        if status:
            _with_status(request, engine, [record], target, confidence)
        return record.as_dict()

    return await _one_at_a_time(request, ("topic", topic, status, target.text, confidence), described)


async def _one_at_a_time(request: Request, key: tuple[object, ...], compute: Callable[[], dict[str, object]]
                         ) -> dict[str, object]:
    """``compute`` in the heavy reads' line (`SingleFlight`: identical requests share one computation, a bounded
    number wait, more answer 503 with Retry-After); its answer is shared, so it is copied for each caller."""
    return dict(await request.app.state.renders.run(key, compute))


def declare_screening_order(topic: str, body: schemas.ScreeningOrderIn, engine: EngineDep,
                            _key: Writer) -> dict[str, object]:
    """Declare how the team screens the topic: ``random`` (a uniformly random order fixed before screening;
    the screened set is then a random sample of the queue and every estimate from it says so) or ``queue``
    (the default). ``reviewdepth screening-order TOPIC random``; never guessed from the data."""
    from reviewdepth.services.admin.topics import declare_screening_order as service

    return service(engine, topic, body.screening_order).as_dict()


def get_screening(topic: str, engine: EngineDep, _key: Reader) -> dict[str, object]:
    """The topic's exclusion reasons (those its excludes may carry) and its conflict rule."""
    from reviewdepth.services.review.screening import screening_settings

    return screening_settings(engine, topic).as_dict()


def change_screening(topic: str, body: schemas.ScreeningSettingsIn, engine: EngineDep,
                     _key: Writer) -> dict[str, object]:
    """Add or remove exclusion reasons and set the conflict rule, all or nothing (``reviewdepth topic reasons``,
    ``reviewdepth topic conflict-rule``): a reason already listed (409), one to remove that a judgment carries
    (409) or that is not listed (422) refuses the request."""
    from reviewdepth.services.review.screening import screening_settings

    return screening_settings(engine, topic, add=body.add_reasons, remove=body.remove_reasons,
                              conflict_rule=body.conflict_rule).as_dict()


def get_protocol(topic: str, engine: EngineDep, _key: Reader) -> dict[str, object]:
    """The topic's protocol fields (``reviewdepth topic protocol TOPIC``): what a TAR protocol discloses; a field
    absent was not recorded (the validation packet prints it so)."""
    from reviewdepth.services.answers.protocol import get_protocol as service

    return service(engine, topic).as_dict()


def put_protocol(topic: str, body: schemas.ProtocolFields, engine: EngineDep, key: Writer) -> dict[str, object]:
    """Enter the topic's protocol fields, replacing those recorded (a field left out is then not recorded),
    recorded as the key's reviewer. A change is chained with the topic in the evidence chain (``audit verify``
    names a protocol changed behind the application's back); the same fields again record nothing."""
    from reviewdepth.services.answers.protocol import set_protocol

    return set_protocol(engine, topic, body.model_dump(exclude_none=True), recorded_by=key.reviewer).as_dict()


def add_routes(router: APIRouter) -> None:
    router.add_api_route("/topics/{topic}/protocol", get_protocol, methods=["GET"],
                         response_model=schemas.ProtocolOut, responses=READ, tags=["topics"])
    router.add_api_route("/topics/{topic}/protocol", put_protocol, methods=["PUT"],
                         response_model=schemas.ProtocolOut, tags=["topics"],
                         responses={**AUTH, **problem_responses(404, 413, 422)})
    router.add_api_route("/topics", create_topic, methods=["POST"], status_code=201, response_model=schemas.TopicOut,
                         tags=["topics"], responses={**AUTH, **problem_responses(409, 413, 422)})
    router.add_api_route("/topics", list_topics, methods=["GET"], response_model=schemas.TopicList,
                         responses=problem_responses(401, 403, 422), tags=["topics"])
    router.add_api_route("/topics/{topic}", get_topic, methods=["GET"], response_model=schemas.TopicOut,
                         responses=READ, tags=["topics"])
    router.add_api_route("/topics/{topic}/screening", get_screening, methods=["GET"],
                         response_model=schemas.ScreeningSettingsOut, responses=READ, tags=["topics"])
    router.add_api_route("/topics/{topic}/screening", change_screening, methods=["PATCH"],
                         response_model=schemas.ScreeningSettingsOut, tags=["topics"],
                         responses={**AUTH, **problem_responses(404, 409, 413, 422)})
    router.add_api_route("/topics/{topic}/screening-order", declare_screening_order, methods=["PUT"],
                         response_model=schemas.TopicOut, tags=["topics"],
                         responses={**AUTH, **problem_responses(404, 413, 422)})
