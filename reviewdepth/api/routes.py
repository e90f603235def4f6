"""The endpoints: thin adapters that parse, call `reviewdepth.services` and shape the reply."""

from __future__ import annotations

import tempfile
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import quote

from fastapi import APIRouter, Depends, File, Form, Query, Request, Response, UploadFile
from fastapi.exceptions import RequestValidationError
from pydantic import TypeAdapter, ValidationError
from sqlalchemy import Engine
from starlette.concurrency import run_in_threadpool

from reviewdepth import __version__
from reviewdepth.api import schemas
from reviewdepth.api.auth import admin_key, current_key, engine_of, read_key, write_key
from reviewdepth.api.problems import ApiProblem, problem_responses
from reviewdepth.api.recording import FastJudgmentsRoute, recorded
from reviewdepth.report.model import json_safe
from reviewdepth.services.keys import KeyRecord
from reviewdepth.store.validation import INT32_MAX as INT32
from reviewdepth.store.validation import INT64_MAX

EngineDep = Annotated[Engine, Depends(engine_of)]
Reader = Annotated[KeyRecord, Depends(read_key)]
Writer = Annotated[KeyRecord, Depends(write_key)]
Admin = Annotated[KeyRecord, Depends(admin_key)]
AUTH = problem_responses(401, 403)
READ = {**AUTH, **problem_responses(404, 422)}
WRITE = {**AUTH, **problem_responses(404, 409, 413, 422)}
JSON = "application/json"


class PlotKind(StrEnum):
    gain = "gain"
    pr = "pr"


class PlotFormat(StrEnum):
    svg = "svg"
    png = "png"


def build_router(router: APIRouter | None = None) -> APIRouter:
    """The endpoints, added to ``router`` (the application's own router, so that a request is matched once)."""
    router = router if router is not None else APIRouter()

    @router.get("/health", response_model=schemas.Health, tags=["service"], responses=problem_responses(503))
    def health(request: Request, database: Annotated[bool, Query(description=(
            "Also check that the database answers and is at the latest schema (503 if not): the container "
            "health check."))] = False) -> schemas.Health:
        """Liveness, and with ``database=true`` readiness: no key needed."""
        if database:
            from reviewdepth.services.database import database_problem

            problem = database_problem(request.app.state.engine)
            if problem is not None:
                raise ApiProblem(503, problem)
        return schemas.Health(status="ok", version=__version__)

    @router.get("/whoami", response_model=schemas.KeyOut, responses=AUTH, tags=["service"])
    def whoami(key: Annotated[KeyRecord, Depends(current_key)]) -> dict[str, object]:
        """The key the request was made with (its reviewer and scope)."""
        return key.as_dict()

    # topics ---------------------------------------------------------------------------------------------------
    @router.post("/topics", status_code=201, response_model=schemas.TopicOut, tags=["topics"],
                 responses={**AUTH, **problem_responses(409, 413, 422)})
    def create_topic(body: schemas.TopicIn, response: Response, engine: EngineDep, _key: Writer) -> dict[str, object]:
        """Create a topic (an information need), optionally with N, the size of its collection."""
        from reviewdepth.services.topics import create_topic as service

        record = service(engine, body.name, body.population_size)
        response.headers["Location"] = f"/topics/{quote(record.name, safe='')}"
        return record.as_dict()

    @router.get("/topics", response_model=schemas.TopicList, responses=problem_responses(401, 403, 422),
                tags=["topics"])
    def list_topics(engine: EngineDep, _key: Reader, offset: Annotated[int, Query(ge=0)] = 0,
                    limit: Annotated[int, Query(ge=1, le=10_000)] = 1000) -> dict[str, object]:
        from reviewdepth.services.topics import list_topics as service

        return {"topics": [t.as_dict() for t in service(engine, offset=offset, limit=limit)]}

    @router.get("/topics/{topic}", response_model=schemas.TopicOut, responses=READ, tags=["topics"])
    def get_topic(topic: str, engine: EngineDep, _key: Reader) -> dict[str, object]:
        from reviewdepth.services.topics import get_topic as service

        return service(engine, topic).as_dict()

    # queues ---------------------------------------------------------------------------------------------------
    ranking_body = {"requestBody": {"required": True, "content": {
        JSON: {"schema": {"$ref": "#/components/schemas/RankingIn"}},
        "text/plain": {"schema": {"type": "string"},
                       "example": "301 Q0 FBIS3-10082 1 12.5 myrun\n301 Q0 FBIS3-10169 2 11.9 myrun\n"}}}}

    @router.put("/topics/{topic}/queues/{queue}", status_code=201, response_model=schemas.QueueSummaryOut,
                responses={**WRITE, **problem_responses(415)}, tags=["queues"], openapi_extra=ranking_body)
    async def put_queue(topic: str, queue: str, request: Request, engine: EngineDep, _key: Writer,
                        order: Annotated[str, Query(pattern="^(given|trec_eval)$",
                                                    description="Run files: file order or trec_eval's.")] = "given",
                        ) -> dict[str, object]:
        """Store a ranking as a new queue of the topic: JSON ``{"documents": [...]}`` in rank order, or a
        TREC/CLEF TAR run of this topic as ``text/plain`` (streamed to disk; millions of lines are fine).
        All or nothing: a bad line or a duplicate doc id stores nothing."""
        from reviewdepth.services.judgments import topic_id_of
        from reviewdepth.services.queues import queue_summary
        from reviewdepth.services.rankings import RankedDocument, store_ranking, store_run_file

        content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if content_type == JSON or content_type.endswith("+json"):
            raw = await request.body()
            try:
                ranking = TypeAdapter(schemas.RankingIn).validate_json(raw)
            except ValidationError as exc:
                raise RequestValidationError([{**e, "loc": ("body", *e["loc"])} for e in exc.errors(
                    include_url=False, include_context=False)]) from None
            documents = [RankedDocument(d.doc_id, d.score) for d in ranking.documents]
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

    @router.get("/topics/{topic}/queues/{queue}", response_model=schemas.QueueSummaryOut, responses=READ,
                tags=["queues"])
    def get_queue(topic: str, queue: str, engine: EngineDep, _key: Reader, policy: str = "latest",
                  as_of: str | None = None) -> dict[str, object]:
        """Size, judged, relevant found, deepest judged rank and trec_eval measures of the stored queue."""
        from reviewdepth.services.queues import queue_summary

        return json_safe(queue_summary(engine, topic, queue, policy=policy, as_of=as_of).as_dict())  # type: ignore[no-any-return]

    @router.get("/topics/{topic}/queues/{queue}/entries", response_model=schemas.EntryPage, responses=READ,
                tags=["queues"])
    def get_entries(topic: str, queue: str, engine: EngineDep, _key: Reader,
                    offset: Annotated[int, Query(ge=0)] = 0, limit: Annotated[int, Query(ge=1, le=10_000)] = 100,
                    policy: str = "latest", as_of: str | None = None) -> dict[str, object]:
        """A page of the ranking, each entry with its current label under the policy."""
        from reviewdepth.services.rankings import ranking_page

        page = ranking_page(engine, topic, queue, offset=offset, limit=limit, policy=policy, as_of=as_of)
        return {"topic": topic, "queue": queue, "total": page.total, "offset": page.offset, "limit": limit,
                "entries": json_safe(page.entries)}

    # judgments ------------------------------------------------------------------------------------------------
    async def post_judgments(topic: str, body: schemas.JudgmentBatchIn, request: Request, key: Writer) -> Response:
        """Record judgments as the key's reviewer, all or nothing. With ``idempotency_key``, sending the same
        request again returns the first result (header ``Idempotent-Replayed: true``) and records nothing."""
        from reviewdepth.services.batches import BatchItem

        if body.reviewer is not None and body.reviewer != key.reviewer:
            raise ApiProblem(403, f"reviewer: this API key records as {key.reviewer!r}, not {body.reviewer!r}")
        items = [BatchItem(j.doc_id, j.label, j.role, j.note, j.queue) for j in body.judgments]
        return await recorded(request, topic, key, items, body.idempotency_key, body.queue, body.allow_unqueued)

    # the standard handler of this endpoint, behind a fast path for the common request (api/recording.py)
    router.add_api_route("/topics/{topic}/judgments", post_judgments, methods=["POST"], status_code=201,
                         response_model=schemas.JudgmentBatchOut, responses=WRITE, tags=["judgments"],
                         route_class_override=FastJudgmentsRoute)

    @router.get("/topics/{topic}/judgments", response_model=schemas.JudgmentPage, responses=READ,
                tags=["judgments"])
    def get_judgments(topic: str, engine: EngineDep, _key: Reader, as_of: str | None = None,
                      reviewer: str | None = None, offset: Annotated[int, Query(ge=0)] = 0,
                      limit: Annotated[int, Query(ge=1, le=10_000)] = 1000) -> dict[str, object]:
        """The topic's judgment log in recording order, up to ``as_of`` (judgment id or ISO time)."""
        from reviewdepth.services.judgments import list_judgments

        records = list_judgments(engine, topic, as_of=as_of, reviewer=reviewer, offset=offset, limit=limit)
        return {"topic": topic, "offset": offset, "limit": limit, "judgments": [r.as_dict() for r in records]}

    @router.get("/topics/{topic}/conflicts", response_model=schemas.ConflictList, responses=READ,
                tags=["judgments"])
    def get_conflicts(topic: str, engine: EngineDep, _key: Reader,
                      status: Annotated[Literal["open", "resolved", "all"], Query()] = "all",
                      as_of: Annotated[int | None, Query(ge=0, description="Judgment id.")] = None,
                      ) -> dict[str, object]:
        """Documents whose reviewers disagree (each reviewer's latest decision is their vote) with who said
        what; an adjudication recorded after the last vote resolves one. The same list as `reviewdepth
        conflicts --format json`."""
        from reviewdepth.services.conflicts import list_conflicts

        found = list_conflicts(engine, topic, status=status, as_of=None if as_of is None else str(as_of))
        return {"topic": topic, "status": status, "conflicts": [c.as_dict() for c in found]}

    # samples --------------------------------------------------------------------------------------------------
    def sample_dict(record: Any) -> dict[str, object]:
        data: dict[str, object] = record.as_dict()
        data["status"] = "complete" if record.complete else "incomplete"
        return data

    @router.post("/topics/{topic}/samples", status_code=201, response_model=schemas.SampleOut, responses=WRITE,
                 tags=["samples"])
    def post_sample(topic: str, body: schemas.SampleIn, engine: EngineDep, _key: Writer) -> dict[str, object]:
        """Draw documents without replacement from a frame of the queue; the seed and frame are stored."""
        from reviewdepth.services.samples import draw_sample

        return sample_dict(draw_sample(engine, topic, body.size, frame=body.frame, queue=body.queue,
                                       seed=body.seed))

    @router.get("/topics/{topic}/samples/plan", responses=READ, tags=["samples"])
    def get_sample_plan(topic: str, engine: EngineDep, _key: Reader, queue: str | None = None,
                        target: Annotated[str, Query(description="Target recall to certify, in (0, 1).")] = "0.95",
                        confidence: Annotated[float, Query(gt=0, lt=1)] = 0.95,
                        frame: Annotated[str, Query(description="unreviewed or all.")] = "unreviewed",
                        power: Annotated[float, Query(gt=0, lt=1)] = 0.8,
                        elusion_rate: Annotated[float | None, Query(ge=0, le=1)] = None) -> dict[str, Any]:
        """The sample size that would certify the target recall at the current depth, the outcome that certifies
        it, and its chance if the current estimate is right (same as `reviewdepth sample plan --format json`)."""
        from reviewdepth.report.model import json_safe
        from reviewdepth.services.sample_plan import plan_sample

        plan: dict[str, Any] = json_safe(plan_sample(engine, topic, queue=queue, target=target,
                                                     confidence=confidence, frame=frame, power=power,
                                                     rate=elusion_rate))
        return plan

    # the audit stream (before /samples/{sample_id}, which would take "stream" for an id)
    @router.post("/topics/{topic}/samples/stream", status_code=201, response_model=schemas.StreamOut,
                 responses=WRITE, tags=["samples"])
    def post_stream(topic: str, body: schemas.StreamIn, engine: EngineDep, key: Writer) -> dict[str, object]:
        """Start the topic's audit stream: a seeded random permutation of the queue's distinct documents, served
        by ``POST /topics/{topic}/next`` between the ranked documents (one after every ``every`` reviewed, or a
        share ``rate`` of all served) and judged with role ``audit``. Give exactly one of ``every`` and ``rate``.
        409 when the topic already has an active stream."""
        from reviewdepth.services.audit_stream import create_stream

        return create_stream(engine, topic, every=body.every, rate=body.rate, seed=body.seed, queue=body.queue,
                             reviewer=key.reviewer).as_dict()

    @router.get("/topics/{topic}/samples/stream", response_model=schemas.StreamOut, responses=READ,
                tags=["samples"])
    def get_stream(topic: str, engine: EngineDep, _key: Reader, policy: str = "latest") -> dict[str, object]:
        """The topic's audit stream: seed, population, pace, position, served, and its evidence (the judged
        prefix of the permutation, its relevant documents, the documents still waiting). 404 when none."""
        from reviewdepth.services.audit_stream import show_stream

        return show_stream(engine, topic, policy=policy).as_dict()

    @router.post("/topics/{topic}/samples/stream/void", response_model=schemas.StreamOut, responses=WRITE,
                 tags=["samples"])
    def post_stream_void(topic: str, body: schemas.StreamVoidIn, engine: EngineDep,
                         key: Admin) -> dict[str, object]:
        """Stop the topic's active audit stream (admin keys only): kept for the record, never served or used as
        evidence again. 404 when there is no active stream."""
        from reviewdepth.services.audit_stream import void_stream

        return void_stream(engine, topic, reason=body.reason, reviewer=key.reviewer).as_dict()

    @router.post("/topics/{topic}/next", response_model=schemas.NextOut, responses=WRITE, tags=["judgments"])
    def post_next(topic: str, body: schemas.NextIn, engine: EngineDep, _key: Writer) -> dict[str, object]:
        """The next documents to judge: the queue's next unjudged documents in rank order (role ``review``) with
        the audit stream's documents due at its pace interleaved (role ``audit``); an audit document served
        before and still unjudged comes first again. Advances the stream (a write: the same as `reviewdepth
        next --format json`)."""
        from reviewdepth.services.audit_stream import next_documents

        return next_documents(engine, topic, queue=body.queue, count=body.count).as_dict()

    @router.get("/topics/{topic}/samples/{sample_id}", response_model=schemas.SampleOut, responses=READ,
                tags=["samples"])
    def get_sample(topic: str, sample_id: int, engine: EngineDep, _key: Reader,
                   policy: str = "latest") -> dict[str, object]:
        """Which drawn documents are judged, which relevant, which still missing."""
        from reviewdepth.services.sample_status import sample_status

        return sample_dict(sample_status(engine, topic, sample_id, policy=policy))

    @router.post("/topics/{topic}/samples/{sample_id}/void", response_model=schemas.SampleOut,
                 responses=WRITE, tags=["samples"])
    def post_sample_void(topic: str, sample_id: int, body: schemas.SampleVoidIn, engine: EngineDep,
                         key: Admin) -> dict[str, object]:
        """Void a sample drawn by mistake (admin keys only): it is kept, with the reason, and logged in the topic's
        judgment chain as a row of role ``void`` recorded as the key's reviewer; no estimate uses it from then
        on. 409 when it is already voided."""
        from reviewdepth.services.sample_void import void_sample

        return sample_dict(void_sample(engine, topic, sample_id, reason=body.reason, reviewer=key.reviewer,
                                       source="api"))

    # report and plots -----------------------------------------------------------------------------------------
    report_content: dict[int | str, dict[str, Any]] = {200: {
        "description": "The depth report (JSON, as `reviewdepth report --format json`).",
        "content": {JSON: {"schema": {"type": "object"}}, "text/html": {"schema": {"type": "string"}},
                    "text/csv": {"schema": {"type": "string"}}}}}

    def report_of(engine: Engine, topic: str, queue: str | None, targets: list[str] | None, confidence: float,
                  interval: str, policy: str, as_of: int | None, target_rule: str, relevant: int | None,
                  independent: bool | None = None) -> Any:
        from reviewdepth.services.report import DEFAULT_TARGETS, ReportOptions, build_report

        return build_report(engine, topic, ReportOptions(
            queue=queue, targets=targets or DEFAULT_TARGETS, confidence=confidence, interval=interval,
            policy=policy, as_of=as_of, target_rule=target_rule, known_relevant=relevant, independent=independent))

    @router.get("/topics/{topic}/report", response_class=Response, responses={**READ, **report_content},
                tags=["report"])
    def get_report(topic: str, request: Request, engine: EngineDep, _key: Reader, queue: str | None = None,
                   target: Annotated[list[str] | None, Query(description="Target recall in (0, 1]; repeat.")] = None,
                   confidence: float = 0.95, interval: Annotated[str, Query(
                       description="hypergeometric (exact, default) or clopper-pearson.")] = "hypergeometric",
                   policy: str = "latest",
                   as_of: int | None = None, target_rule: str = "ceil",
                   relevant: Annotated[int | None, Query(ge=0, description="|R| when known.")] = None,
                   independent: Annotated[bool | None, Query(
                       description="Whether reviewers screened independently (stated, for PRISMA).")] = None,
                   format: Annotated[Literal["json", "html", "csv"] | None, Query(
                       description="The format, overriding the Accept header (for links).")] = None,
                   ) -> Response:
        """How deep to review for each target recall, how sure that is, and the stopping evidence: the same
        bytes as `reviewdepth report --format json`; ``Accept: text/html`` (or ``format=html``, as the
        dashboard links it) gives the HTML report, ``text/csv`` (``format=csv``) the CSV."""
        from reviewdepth.report.depth_render import render_csv, render_html

        report = report_of(engine, topic, queue, target, confidence, interval, policy, as_of, target_rule,
                           relevant, independent)
        accept = request.headers.get("accept", "") if format is None else {"json": JSON, "html": "text/html",
                                                                            "csv": "text/csv"}[format]
        if "text/html" in accept and JSON not in accept:
            return Response(render_html(report), media_type="text/html; charset=utf-8")
        if "text/csv" in accept and JSON not in accept:
            return Response(render_csv(report), media_type="text/csv; charset=utf-8")
        return Response(report.to_json(), media_type=JSON)

    plot_content: dict[int | str, dict[str, Any]] = {200: {
        "description": "The chart.",
        "content": {"image/svg+xml": {"schema": {"type": "string"}},
                    "image/png": {"schema": {"type": "string", "format": "binary"}}}}}

    @router.get("/topics/{topic}/plots/{kind}.{fmt}", response_class=Response,
                responses={**READ, **plot_content, **problem_responses(501)}, tags=["report"])
    def get_plot(topic: str, kind: PlotKind, fmt: PlotFormat, engine: EngineDep, _key: Reader,
                 queue: str | None = None, policy: str = "latest", as_of: int | None = None) -> Response:
        """Recall against depth (``gain``) or precision-recall (``pr``), as SVG or PNG (PNG needs matplotlib)."""
        from reviewdepth.report.charts import gain_svg, png_from_series, precision_recall_svg
        from reviewdepth.report.depth_render import main_target

        report = report_of(engine, topic, queue, None, 0.95, "hypergeometric", policy, as_of, "ceil", None)
        title = f"{'recall against depth' if kind is PlotKind.gain else 'precision-recall'} ({topic})"
        if fmt is PlotFormat.svg:
            svg = gain_svg(report.gain, main_target(report), title) if kind is PlotKind.gain else \
                precision_recall_svg(report.precision_recall, title)
            return Response(svg, media_type="image/svg+xml")
        with tempfile.TemporaryDirectory(prefix="reviewdepth-plot-") as folder:
            target = Path(folder) / "plot.png"
            try:
                png_from_series(kind.value, report.gain, report.precision_recall, main_target(report), title,
                                str(target))
            except ImportError as exc:
                raise ApiProblem(501, f"PNG plots need matplotlib on the server: {exc}") from None
            return Response(target.read_bytes(), media_type="image/png")

    # evaluation -----------------------------------------------------------------------------------------------
    @router.post("/evaluate", response_class=Response, tags=["evaluate"],
                 responses={**AUTH, **problem_responses(413, 422),
                            200: {"description": "`reviewdepth eval --format json` output.",
                                  "content": {JSON: {"schema": {"type": "object"}}}}})
    def evaluate(qrels: Annotated[UploadFile, File(description="TREC qrels (gzip ok).")],
                 run: Annotated[UploadFile, File(description="TREC or CLEF TAR run (gzip ok).")],
                 request: Request, _key: Reader,
                 measure: Annotated[list[str] | None, Form(description="-m, repeatable")] = None,
                 per_query: Annotated[bool, Form(description="-q")] = False,
                 complete: Annotated[bool, Form(description="-c")] = False,
                 level: Annotated[int, Form(description="-l", ge=-INT32, le=INT32)] = 1,
                 max_docs: Annotated[int | None, Form(description="-M", ge=0, le=INT64_MAX)] = None,
                 trec_eval_version: Annotated[int, Form(ge=9, le=10)] = 9,
                 suite: Annotated[str, Form(pattern="^(trec|tar)$")] = "trec",
                 compat: Annotated[str, Form()] = "none",
                 num_docs: Annotated[int | None, Form(ge=0, le=INT64_MAX)] = None,
                 run_format: Annotated[str, Form()] = "auto") -> Response:
        """Evaluate a run against qrels exactly as `reviewdepth eval QRELS RUN --format json` with the same
        options (``suite=tar`` for the recall-oriented measures)."""
        from reviewdepth.formats.trec import parse_qrels, parse_run
        from reviewdepth.measures.suite import MeasureError

        names = (qrels.filename or "qrels", run.filename or "run")
        limit = request.app.state.settings.max_decompressed_bytes
        qrels_data = _upload_bytes(qrels, names[0], limit)
        run_data = _upload_bytes(run, names[1], limit)
        try:
            if suite == "tar":
                if measure or complete or max_docs is not None or trec_eval_version != 9:
                    raise ApiProblem(422, "measure, complete, max_docs and trec_eval_version apply to suite trec")
                from reviewdepth.report import tar_output
                from reviewdepth.services.evaluate_tar import TarOptions, evaluate_tar_columns

                tar_options = TarOptions(compat=compat, num_docs=num_docs, run_format=run_format,
                                         relevance_level=level)
                tar_options.validate()
                tar_result = evaluate_tar_columns(parse_qrels(qrels_data, names[0]), run_data, names[1],
                                                  tar_options)
                return Response(tar_output.render_json(tar_result, per_query), media_type=JSON)
            if num_docs is not None or compat != "none" or run_format != "auto":
                raise ApiProblem(422, "compat, num_docs and run_format apply to suite tar only")
            from reviewdepth.report.evaluation import render_json
            from reviewdepth.services.evaluate import EvalOptions, evaluate_columns

            options = EvalOptions(relevance_level=level, complete=complete, max_docs=max_docs,
                                  version=trec_eval_version, measures=list(measure or []))
            options.validate()
            comments = trec_eval_version >= 10
            result = evaluate_columns(parse_qrels(qrels_data, names[0], allow_comments=comments),
                                      parse_run(run_data, names[1], allow_comments=comments), options)
            return Response(render_json(result, per_query), media_type=JSON)
        except MeasureError as exc:
            raise ApiProblem(422, f"measure: {exc}") from None
        except ValueError as exc:
            from reviewdepth.formats.errors import InputError

            if isinstance(exc, InputError):
                raise
            raise ApiProblem(422, str(exc)) from None

    return router


def _upload_bytes(upload: UploadFile, name: str, limit: int) -> bytes:
    """The bytes of an uploaded file, gzip decompressed through a temporary file with at most ``limit``
    decompressed bytes (`DecompressedTooLarge` → 413), so a gzip bomb never fills memory."""
    from reviewdepth.formats.compressed import GZIP_MAGIC, copy_decompressed

    source = upload.file
    source.seek(0)
    if source.read(len(GZIP_MAGIC)) != GZIP_MAGIC:
        source.seek(0)
        return source.read()
    source.seek(0)
    with tempfile.TemporaryFile(prefix="reviewdepth-gunzip-") as spool:
        copy_decompressed(source, spool, name, limit)  # type: ignore[arg-type]
        spool.seek(0)
        return spool.read()
