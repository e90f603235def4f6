"""``/topics/{topic}/queues``: the topic's queues; store a ranking as a queue, its summary and its entries."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

from fastapi import APIRouter, Query, Request
from fastapi.exceptions import RequestValidationError
from pydantic import TypeAdapter, ValidationError
from starlette.concurrency import run_in_threadpool

from reviewdepth.api import schemas
from reviewdepth.api.problems import ApiProblem, problem_responses
from reviewdepth.api.routers.common import JSON, READ, WRITE, EngineDep, Reader, Writer
from reviewdepth.report.model import json_safe
from reviewdepth.services.files.imports import RunOrder
from reviewdepth.store.labels import LabelPolicy
from reviewdepth.store.validation import INT64_MAX

if TYPE_CHECKING:
    from reviewdepth.services.files.rankings import RankedDocument

RANKING_BODY = {"requestBody": {"required": True, "content": {
    JSON: {"schema": {"$ref": "#/components/schemas/RankingIn"}},
    "text/plain": {"schema": {"type": "string"},
                   "example": "301 Q0 FBIS3-10082 1 12.5 myrun\n301 Q0 FBIS3-10169 2 11.9 myrun\n"}}}}


def ranking_documents(raw: bytes) -> list[RankedDocument]:
    """The documents of a JSON ranking body (`schemas.RankingIn`) in rank order; `RequestValidationError` (422,
    each error under ``body``) when it does not validate. Run in a worker thread: a body may be large."""
    from reviewdepth.services.files.rankings import RankedDocument

    try:
        ranking = TypeAdapter(schemas.RankingIn).validate_json(raw)
    except ValidationError as exc:
        raise RequestValidationError([{**e, "loc": ("body", *e["loc"])} for e in exc.errors(
            include_url=False, include_context=False)]) from None
    return [RankedDocument(d.doc_id, d.score) for d in ranking.documents]


def list_queues(topic: str, engine: EngineDep, _key: Reader) -> dict[str, object]:
    """The topic's queues, oldest first, each with its size, ordering, source, run tag and stopping point,
    when it was stored, and whether it is the newest (the queue judgments are served from unless they name
    another); as ``reviewdepth queue list TOPIC --format json``."""
    from reviewdepth.services.answers.queues import list_queues as service

    return {"queues": [q.as_dict() for q in service(engine, topic)]}


async def put_queue(topic: str, queue: str, request: Request, engine: EngineDep, _key: Writer,
                    order: Annotated[RunOrder, Query(description="Run files: file order or trec_eval's.")]
                    = "given") -> dict[str, object]:
    """Store a ranking as a new queue of the topic: JSON ``{"documents": [...]}`` in rank order, or a
    TREC/CLEF TAR run of this topic as ``text/plain`` (streamed to disk; millions of lines are fine).
    All or nothing: a bad line or a duplicate doc id stores nothing."""
    from reviewdepth.services.answers.queues import queue_summary
    from reviewdepth.services.files.rankings import store_ranking, store_run_file
    from reviewdepth.services.review.judgments import topic_id_of

    content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if content_type == JSON or content_type.endswith("+json"):
        raw = await request.body()
        documents = await run_in_threadpool(ranking_documents, raw)  # up to 16 MiB of JSON: not on the loop
        await run_in_threadpool(store_ranking, engine, topic, queue, documents)
    elif content_type in ("text/plain", "application/octet-stream"):
        from reviewdepth.formats.compressed import DecompressingWriter
        from reviewdepth.formats.errors import InputError

        await run_in_threadpool(topic_id_of, engine, topic)  # 404 before reading a large body
        limit = request.app.state.settings.max_decompressed_bytes
        with tempfile.TemporaryDirectory(prefix="reviewdepth-upload-") as folder:
            path = Path(folder) / f"{queue.replace('/', '_')[:100] or 'queue'}.run"
            with path.open("wb") as handle:
                # gzip is decompressed here, capped, so the reader never sees more than the limit
                writer = DecompressingWriter(handle, "run", limit)
                async for chunk in request.stream():
                    if writer.compressed:  # inflating may take a while: off the event loop
                        await run_in_threadpool(writer.write, chunk)
                    else:
                        writer.write(chunk)
                writer.close()
            try:
                await run_in_threadpool(store_run_file, engine, topic, queue, str(path), order=order)
            except InputError as exc:  # the reader names the server's temporary file: the client sent "run"
                if exc.path != str(path):
                    raise
                raise InputError("run", exc.line, exc.field, exc.message) from None
    else:
        raise ApiProblem(415, f"send the ranking as {JSON} or as a text/plain run file, not "
                              f"{content_type or 'no content type'!r}")
    summary = await run_in_threadpool(queue_summary, engine, topic, queue)
    return json_safe(summary.as_dict())  # type: ignore[no-any-return]


def get_queue(topic: str, queue: str, engine: EngineDep, _key: Reader, policy: LabelPolicy = "latest",
              as_of: str | None = None) -> dict[str, object]:
    """Size, judged, relevant found, deepest judged rank and trec_eval measures of the stored queue."""
    from reviewdepth.services.answers.queues import queue_summary

    return json_safe(queue_summary(engine, topic, queue, policy=policy, as_of=as_of).as_dict())  # type: ignore[no-any-return]


def get_entries(topic: str, queue: str, engine: EngineDep, _key: Reader,
                offset: Annotated[int, Query(ge=0, le=INT64_MAX)] = 0,
                limit: Annotated[int, Query(ge=1, le=10_000)] = 100,
                policy: LabelPolicy = "latest", as_of: str | None = None) -> dict[str, object]:
    """A page of the ranking, each entry with its current label under the policy."""
    from reviewdepth.services.files.rankings import ranking_page

    page = ranking_page(engine, topic, queue, offset=offset, limit=limit, policy=policy, as_of=as_of)
    return {"topic": topic, "queue": queue, "total": page.total, "offset": page.offset, "limit": limit,
            "entries": json_safe(page.entries)}


def add_routes(router: APIRouter) -> None:
    router.add_api_route("/topics/{topic}/queues", list_queues, methods=["GET"], response_model=schemas.QueueList,
                         responses=READ, tags=["queues"])
    router.add_api_route("/topics/{topic}/queues/{queue}", put_queue, methods=["PUT"], status_code=201,
                         response_model=schemas.QueueSummaryOut, responses={**WRITE, **problem_responses(415)},
                         tags=["queues"], openapi_extra=RANKING_BODY)
    router.add_api_route("/topics/{topic}/queues/{queue}", get_queue, methods=["GET"],
                         response_model=schemas.QueueSummaryOut, responses=READ, tags=["queues"])
    router.add_api_route("/topics/{topic}/queues/{queue}/entries", get_entries, methods=["GET"],
                         response_model=schemas.EntryPage, responses=READ, tags=["queues"])
