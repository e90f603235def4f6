"""``/topics/{topic}/judgments`` and ``/conflicts``: recording judgments and reading them back."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request, Response

from reviewdepth.api import schemas
from reviewdepth.api.problems import ApiProblem
from reviewdepth.api.recording import FastJudgmentsRoute, recorded
from reviewdepth.api.routers.common import READ, WRITE, EngineDep, Reader, Writer
from reviewdepth.services.answers.conflicts import ConflictStatus


async def post_judgments(topic: str, body: schemas.JudgmentBatchIn, request: Request, key: Writer) -> Response:
    """Record judgments as the key's reviewer, all or nothing. With ``idempotency_key``, sending the same
    request again returns the first result (header ``Idempotent-Replayed: true``) and records nothing."""
    from reviewdepth.services.review.batches import BatchItem

    if body.reviewer is not None and body.reviewer != key.reviewer:
        raise ApiProblem(403, f"reviewer: this API key records as {key.reviewer!r}, not {body.reviewer!r}")
    items = [BatchItem(j.doc_id, j.label, j.role, j.note, j.queue, j.reason, j.stage) for j in body.judgments]
    return await recorded(request, topic, key, items, body.idempotency_key, body.queue, body.allow_unqueued)


def get_judgments(topic: str, engine: EngineDep, _key: Reader, as_of: str | None = None,
                  reviewer: str | None = None, offset: Annotated[int, Query(ge=0)] = 0,
                  limit: Annotated[int, Query(ge=1, le=10_000)] = 1000) -> dict[str, object]:
    """The topic's judgment log in recording order, up to ``as_of`` (judgment id or ISO time)."""
    from reviewdepth.services.review.judgments import list_judgments

    records = list_judgments(engine, topic, as_of=as_of, reviewer=reviewer, offset=offset, limit=limit)
    return {"topic": topic, "offset": offset, "limit": limit, "judgments": [r.as_dict() for r in records]}


def get_conflicts(topic: str, engine: EngineDep, _key: Reader,
                  status: Annotated[ConflictStatus, Query()] = "all",
                  as_of: Annotated[int | None, Query(ge=0, description="Judgment id.")] = None,
                  ) -> dict[str, object]:
    """Documents whose reviewers disagree (each reviewer's latest decision is their vote) with who said
    what; an adjudication recorded after the last vote resolves one. The same list as `reviewdepth
    conflicts --format json`."""
    from reviewdepth.services.answers.conflicts import list_conflicts

    found = list_conflicts(engine, topic, status=status, as_of=None if as_of is None else str(as_of))
    return {"topic": topic, "status": status, "conflicts": [c.as_dict() for c in found]}


def add_routes(router: APIRouter) -> None:
    # the standard handler of this endpoint, behind a fast path for the common request (api/recording.py)
    router.add_api_route("/topics/{topic}/judgments", post_judgments, methods=["POST"], status_code=201,
                         response_model=schemas.JudgmentBatchOut, responses=WRITE, tags=["judgments"],
                         route_class_override=FastJudgmentsRoute)
    router.add_api_route("/topics/{topic}/judgments", get_judgments, methods=["GET"],
                         response_model=schemas.JudgmentPage, responses=READ, tags=["judgments"])
    router.add_api_route("/topics/{topic}/conflicts", get_conflicts, methods=["GET"],
                         response_model=schemas.ConflictList, responses=READ, tags=["judgments"])
