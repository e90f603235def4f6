"""``/topics/{topic}/samples``: drawn samples, the sample plan, the audit stream and ``/next``, which serves it."""

from __future__ import annotations

import dataclasses
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Request

from reviewdepth.api import schemas
from reviewdepth.api.routers.common import (
    READ,
    WRITE,
    Admin,
    CertifiableTargetQuery,
    ConfidenceQuery,
    EngineDep,
    Reader,
    Writer,
)
from reviewdepth.estimation.target import DEFAULT_TARGET
from reviewdepth.services.answers.sample_plan import PlanFrame
from reviewdepth.store.labels import LabelPolicy


def sample_dict(record: Any) -> dict[str, object]:
    data: dict[str, object] = dataclasses.asdict(record.view())
    return data


def post_sample(topic: str, body: schemas.SampleIn, engine: EngineDep, _key: Writer) -> dict[str, object]:
    """Draw documents without replacement from a frame of the queue; the seed and frame are stored."""
    from reviewdepth.services.review.samples import draw_sample

    return sample_dict(draw_sample(engine, topic, body.size, frame=body.frame, queue=body.queue,
                                   seed=body.seed))


def get_sample_plan(topic: str, engine: EngineDep, _key: Reader, queue: str | None = None,
                    target: CertifiableTargetQuery = DEFAULT_TARGET,
                    confidence: ConfidenceQuery = 0.95,
                    frame: Annotated[PlanFrame, Query(description="unreviewed or all.")] = "unreviewed",
                    power: Annotated[float, Query(gt=0, lt=1)] = 0.8,
                    elusion_rate: Annotated[float | None, Query(ge=0, le=1)] = None) -> dict[str, Any]:
    """The sample size that would certify the target recall at the current depth, the outcome that certifies
    it, and its chance if the current estimate is right (same as `reviewdepth sample plan --format json`)."""
    from reviewdepth.report.model import json_safe
    from reviewdepth.services.answers.sample_plan import plan_sample

    plan: dict[str, Any] = json_safe(plan_sample(engine, topic, queue=queue, target=target,
                                                 confidence=confidence, frame=frame, power=power,
                                                 rate=elusion_rate))
    return plan


async def get_stop_plan(topic: str, request: Request, engine: EngineDep, _key: Reader, queue: str | None = None,
                  target: CertifiableTargetQuery = DEFAULT_TARGET,
                  confidence: ConfidenceQuery = 0.95,
                  power: Annotated[float, Query(gt=0, lt=1)] = 0.8,
                  review_cost: Annotated[float, Query(gt=0, le=1e6)] = 1.0,
                  sample_cost: Annotated[float, Query(gt=0, le=1e6)] = 1.0,
                  produce_cost: Annotated[float | None, Query(ge=0, le=1e6, description=(
                      "Cost of a document produced without being reviewed. Given, the plan offers the "
                      "production-cutoff (TAR 1.0) path: produce the top of the ranking unreviewed, certified by "
                      "the two-phase recall bound (as the report's produce_to); left out, no path produces an "
                      "unreviewed document."))] = None,
                  previous: Annotated[Literal["planned", "audit_stream", "sample_now", "review_then_sample",
                                              "produce_cutoff"] | None, Query(description=(
                      "The path the team's last plan recommended: kept while still open and within 10 % of the "
                      "cheapest, else the plan says what changed (`reviewdepth plan --previous`)."))] = None
                  ) -> dict[str, Any]:
    """The cheapest defensible stop now: the floor, every certified path with its expected cost, range and
    chance, the recommended path and the target × confidence table (as `reviewdepth plan --cost
    review=R,sample=S,produce=P`). Its replays run one at a time per process with the reports, in a worker thread
    (`api/single_flight.py`); identical requests meanwhile share one computation."""
    from reviewdepth.report.model import json_safe
    from reviewdepth.report.stop_plan_render import as_data
    from reviewdepth.services.answers.stop_plan import topic_stop_plan

    def computed() -> dict[str, Any]:
        data: dict[str, Any] = json_safe(as_data(topic_stop_plan(
            engine, topic, queue=queue, target=target, confidence=confidence, power=power,
            review_cost=review_cost, sample_cost=sample_cost, produce_cost=produce_cost, previous=previous)))
        return data

    result: dict[str, Any] = await request.app.state.renders.run(
        ("plan", topic, queue, target.text, confidence, power, review_cost, sample_cost, produce_cost, previous),
        computed)
    return result


def post_stream(topic: str, body: schemas.StreamIn, engine: EngineDep, key: Writer) -> dict[str, object]:
    """Start the topic's audit stream: a seeded random permutation of the queue's distinct documents, served
    by ``POST /topics/{topic}/next`` between the ranked documents (one after every ``every`` reviewed, or a
    share ``rate`` of all served) and judged with role ``audit``. Give exactly one of ``every`` and ``rate``.
    409 when the topic already has an active stream."""
    from reviewdepth.services.review.audit_stream import create_stream

    return create_stream(engine, topic, every=body.every, rate=body.rate, seed=body.seed, queue=body.queue,
                         reviewer=key.reviewer).as_dict()


def get_stream(topic: str, engine: EngineDep, _key: Reader, policy: LabelPolicy = "latest") -> dict[str, object]:
    """The topic's audit stream: seed, population, pace, position, served, and its evidence (the judged
    prefix of the permutation, its relevant documents, the documents still waiting). 404 when none."""
    from reviewdepth.services.review.audit_stream import show_stream

    return show_stream(engine, topic, policy=policy).as_dict()


def post_stream_void(topic: str, body: schemas.StreamVoidIn, engine: EngineDep,
                     key: Admin) -> dict[str, object]:
    """Stop the topic's active audit stream (admin keys only): kept for the record, never served or used as
    evidence again. 404 when there is no active stream."""
    from reviewdepth.services.review.audit_stream import void_stream

    return void_stream(engine, topic, reason=body.reason, reviewer=key.reviewer).as_dict()


def post_next(topic: str, body: schemas.NextIn, engine: EngineDep, _key: Writer) -> dict[str, object]:
    """The next documents to judge: the queue's next unjudged documents in rank order (role ``review``) with
    the audit stream's documents due at its pace interleaved (role ``audit``); an audit document served
    before and still unjudged comes first again. Advances the stream (a write: the same as `reviewdepth
    next --format json`)."""
    from reviewdepth.services.review.audit_stream import next_documents

    return next_documents(engine, topic, queue=body.queue, count=body.count).as_dict()


def get_sample(topic: str, sample_id: int, engine: EngineDep, _key: Reader,
               policy: LabelPolicy = "latest") -> dict[str, object]:
    """Which drawn documents are judged, which relevant, which still missing."""
    from reviewdepth.services.review.sample_status import sample_status

    return sample_dict(sample_status(engine, topic, sample_id, policy=policy))


def post_sample_void(topic: str, sample_id: int, body: schemas.SampleVoidIn, engine: EngineDep,
                     key: Admin) -> dict[str, object]:
    """Void a sample drawn by mistake (admin keys only): it is kept, with the reason, and logged in the topic's
    judgment chain as a row of role ``void`` recorded as the key's reviewer; no estimate uses it from then
    on. 409 when it is already voided."""
    from reviewdepth.services.review.sample_void import void_sample

    return sample_dict(void_sample(engine, topic, sample_id, reason=body.reason, reviewer=key.reviewer,
                                   source="api"))


def add_routes(router: APIRouter) -> None:
    router.add_api_route("/topics/{topic}/samples", post_sample, methods=["POST"], status_code=201,
                         response_model=schemas.SampleOut, responses=WRITE, tags=["samples"])
    router.add_api_route("/topics/{topic}/samples/plan", get_sample_plan, methods=["GET"], response_model=None,
                         tags=["samples"], responses={**READ, 200: {
                             "description": "The plan.", "content": schemas.body_content(schemas.SamplePlanOut)}})
    router.add_api_route("/topics/{topic}/plan", get_stop_plan, methods=["GET"], response_model=None,
                         tags=["samples"], responses={**READ, 200: {
                             "description": "The stop plan (as `reviewdepth plan --format json`).",
                             "content": schemas.body_content(schemas.StopPlanOut)}})
    # the audit stream (before /samples/{sample_id}, which would take "stream" for an id)
    router.add_api_route("/topics/{topic}/samples/stream", post_stream, methods=["POST"], status_code=201,
                         response_model=schemas.StreamOut, responses=WRITE, tags=["samples"])
    router.add_api_route("/topics/{topic}/samples/stream", get_stream, methods=["GET"],
                         response_model=schemas.StreamOut, responses=READ, tags=["samples"])
    router.add_api_route("/topics/{topic}/samples/stream/void", post_stream_void, methods=["POST"],
                         response_model=schemas.StreamOut, responses=WRITE, tags=["samples"])
    # what to judge next: the ranked queue with the audit stream's documents interleaved
    router.add_api_route("/topics/{topic}/next", post_next, methods=["POST"], response_model=schemas.NextOut,
                         responses=WRITE, tags=["judgments"])
    router.add_api_route("/topics/{topic}/samples/{sample_id}", get_sample, methods=["GET"],
                         response_model=schemas.SampleOut, responses=READ, tags=["samples"])
    router.add_api_route("/topics/{topic}/samples/{sample_id}/void", post_sample_void, methods=["POST"],
                         response_model=schemas.SampleOut, responses=WRITE, tags=["samples"])
