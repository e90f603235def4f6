"""``/topics/{topic}/imports/{format}`` and ``/topics/{topic}/export``: a review platform's file in, as
``reviewdepth import FORMAT``, and the topic's labels (or its judgment log, or a queue) out, as ``reviewdepth
export``; the same services, the same checks and the same refusals.

An import's request body is the file itself (not a form), with a content type the operation lists
(``application/octet-stream`` always; gzip is recognised by its magic number and decompressed, capped at
``REVIEWDEPTH_MAX_DECOMPRESSED_BYTES``). The importers read a file whole, as the CLI does, so a file (after
gunzip) is refused past ``REVIEWDEPTH_MAX_IMPORT_BYTES`` (413), and a zip (an ``.asreview`` project, an ``.xlsx``
workbook) whose members would decompress to more than ``REVIEWDEPTH_MAX_DECOMPRESSED_BYTES`` is refused before
it is opened. Errors name the file by its format (``csv:12: field label: …``), as a run upload names ``run``.
"""

from __future__ import annotations

import dataclasses
import io
from collections.abc import Callable
from typing import Annotated, Any, Literal, TypeVar
from urllib.parse import quote

from fastapi import APIRouter, File, Form, Query, Request, Response, UploadFile
from starlette.concurrency import run_in_threadpool

from reviewdepth.api import schemas
from reviewdepth.api.calls import write_call
from reviewdepth.api.problems import ApiProblem, problem_responses
from reviewdepth.api.routers.common import READ, WRITE, EngineDep, Reader, Writer, upload_bytes
from reviewdepth.formats.exports import LabelFormat, RunFormat
from reviewdepth.formats.importers import BY_NAME, DECISIONS_OPTIONS, XLSX, ImportFormat, body_formats
from reviewdepth.report.prisma_model import SourceType
from reviewdepth.store.labels import LabelPolicy
from reviewdepth.store.validation import INT32_MAX, INT32_MIN

T = TypeVar("T")
Again = Annotated[bool, Query(description="Import a file already imported (the same bytes), as `--again`.")]
AllowUnqueued = Annotated[bool, Query(description="Record documents that are in no queue of the topic.")]


def file_body(types: tuple[str, ...], example: str | None = None) -> dict[str, Any]:
    """The OpenAPI request body of an import: the file's bytes under each media type it takes."""
    binary: dict[str, Any] = {"schema": {"type": "string", "format": "binary"}}
    content = {media: dict(binary) for media in types}
    if example is not None:
        for media in types:
            if media.startswith("text/"):
                content[media] = {"schema": {"type": "string"}, "example": example}
    return {"requestBody": {"required": True, "content": content}}


async def uploaded_file(request: Request, name: str, types: tuple[str, ...]) -> bytes:
    """The request's body, the file to import (module docstring): 415 for a media type the operation does not
    take, 413 past the limits, gzip decompressed, and an empty body refused as an empty file."""
    from reviewdepth.formats.compressed import DecompressingWriter, check_zip_size
    from reviewdepth.formats.errors import InputError

    media = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if media not in types:
        raise ApiProblem(415, f"send the {name} file as the request body with a content type of "
                              f"{', '.join(types)}, not {media or 'no content type'!r}")
    settings = request.app.state.settings
    limit: int = settings.max_import_bytes
    declared = request.headers.get("content-length", "")
    too_large = f"the {name} file is larger than the limit of {limit:,} bytes (REVIEWDEPTH_MAX_IMPORT_BYTES)"
    if declared.isdigit() and int(declared) > limit:
        raise ApiProblem(413, too_large)
    buffer = io.BytesIO()
    writer = DecompressingWriter(buffer, name, settings.max_decompressed_bytes)
    async for chunk in request.stream():
        if writer.compressed:  # inflating may take a while: off the event loop
            await run_in_threadpool(writer.write, chunk)
        else:
            writer.write(chunk)
        if buffer.tell() > limit:
            raise ApiProblem(413, too_large)
    writer.close()
    if buffer.tell() > limit:
        raise ApiProblem(413, too_large)

    def whole() -> bytes:  # a copy of up to the limit, and a zip's directory read: off the event loop
        data = buffer.getvalue()
        if not data or data.isspace():
            raise InputError(name, None, None, "empty file: send the file as the request body")
        check_zip_size(data, name, settings.max_decompressed_bytes)
        return data

    return await run_in_threadpool(whole)


async def imported(request: Request, service: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``service(*args, **kwargs)``, an import (one transaction, all or nothing), run off the event loop."""
    return await write_call(request, False, service, *args, **kwargs)


# where a population import's records were identified (`reviewdepth.services.files.imports.checked_source`)
SourceTypeQuery = Annotated[SourceType | None, Query(
    description="Where the records were identified (PRISMA 2020's boxes): database, register or other (websites, "
                "organisations, citation searching). With source_name, the records are added to the topic's "
                "population, in a queue named after the source unless queue names it.")]
SourceNameQuery = Annotated[str | None, Query(
    description="The source's name as the PRISMA diagram shows it (MEDLINE, ClinicalTrials.gov); with "
                "source_type.")]


def summary_body(summary: Any) -> dict[str, object]:
    return dataclasses.asdict(summary)


async def import_asreview(topic: str, request: Request, engine: EngineDep, _key: Writer,
                          queue: Annotated[str | None, Query(
                              description="Name of the queue of ASReview's review order (default: asreview).")] = None,
                          reviewer: Annotated[str, Query(
                              description="Reviewer of decisions without an ASReview user (user N: "
                                          "REVIEWER-user-N).")] = "asreview",
                          again: Again = False) -> dict[str, object]:
    """Store an ASReview LAB project file (``.asreview``) in the topic (created when missing), as `reviewdepth
    import asreview FILE --topic TOPIC`: a queue in ASReview's review order and its decisions as judgments with
    their reviewer and time. The counts are those the CLI prints. ASReview's CSV export is an ``imports/csv``."""
    from reviewdepth.services.files.asreview_import import import_asreview as service

    data = await uploaded_file(request, "asreview", BY_NAME["asreview"].media_types)
    return summary_body(await imported(request, service, engine, "asreview", topic=topic, queue_name=queue,
                                       reviewer=reviewer, again=again, data=data))


async def import_ris(topic: str, request: Request, engine: EngineDep, _key: Writer,
                     queue: Annotated[str | None, Query(
                         description="Name of the queue of the records in file order (default: records).")] = None,
                     reviewer: Annotated[str, Query(
                         description="Reviewer of the labels in ASReview's notes (N1 ASReview_relevant / "
                                     "_irrelevant).")] = "asreview",
                     ids: Annotated[Literal["auto", "position", "tag"], Query(
                         description="Document ids: auto (ID, else AN, tags when every record has one and none "
                                     "repeats; else 0-based positions), position, or tag.")] = "auto",
                     again: Again = False, source_type: SourceTypeQuery = None,
                     source_name: SourceNameQuery = None) -> dict[str, object]:
    """Store a RIS file's records as the topic's population (created when missing), as `reviewdepth import ris`:
    its size, a queue of the records in file order, and the labels in ASReview's notes and Rayyan's (each
    member's decision, a Maybe a maybe decision) as judgments. With ``source_type`` and ``source_name`` the
    records are added to the topic's population (a queue per source) and counted per source by ``prisma``."""
    from reviewdepth.services.files.ris_import import import_ris as service

    data = await uploaded_file(request, "ris", BY_NAME["ris"].media_types)
    return summary_body(await imported(request, service, engine, "ris", topic=topic, queue_name=queue,
                                       reviewer=reviewer, again=again, data=data, ids=ids, source_type=source_type,
                                       source_name=source_name))


async def import_records(topic: str, request: Request, engine: EngineDep, _key: Writer,
                         queue: Annotated[str | None, Query(
                             description="Store the records as the topic's population, a queue of this name in file "
                                         "order (default for a new topic or one without a queue: records).")] = None,
                         ids: Annotated[str, Query(
                             description="Document ids: auto (the id column when its values are present and "
                                         "distinct, else 0-based positions, as ASReview's record_id), position, "
                                         "or a column's name.")] = "auto",
                         reviewer: Annotated[str, Query(
                             description="Reviewer of the labels in the file's label column (asreview_label, "
                                         "included, label, final_included, label_included …).")] = "asreview",
                         again: Again = False, source_type: SourceTypeQuery = None,
                         source_name: SourceNameQuery = None) -> dict[str, object]:
    """Store a records file (CSV, TSV or .xlsx: Scopus, Embase, SYNERGY, ASReview datasets) as `reviewdepth import
    records`: as the topic's population (a new topic, one without a queue, or with ``queue``) and a queue in file
    order, its labels as judgments; into a topic that has a queue, the bibliographic fields of its documents. With
    ``source_type`` and ``source_name`` the records are added to the topic's population (a queue per source) and
    counted per source by ``prisma``."""
    from reviewdepth.services.files.records_import import import_records as service

    data = await uploaded_file(request, "records", BY_NAME["records"].media_types)
    return summary_body(await imported(request, service, engine, "records", topic=topic, queue_name=queue, ids=ids,
                                       reviewer=reviewer, again=again, data=data, source_type=source_type,
                                       source_name=source_name))


async def import_rayyan(topic: str, request: Request, engine: EngineDep, _key: Writer,
                        queue: Annotated[str | None, Query(
                            description="Name of the queue of the articles in file order (default: rayyan).")] = None,
                        add_reasons: Annotated[bool, Query(
                            description="Add the file's exclusion reasons the topic lacks to its list (true), or "
                                        "refuse the file at the first exclusion whose reason it lacks (false).")]
                        = True,
                        again: Again = False) -> dict[str, object]:
    """Store a Rayyan export (``articles.csv``) as `reviewdepth import rayyan`: its articles as the topic's
    population (created when missing) and a queue in file order, each member's decision as that member's
    judgment (Included 1, Excluded 0, Maybe a maybe decision), an article's first exclusion reason as its
    exclusions' reason."""
    from reviewdepth.services.files.rayyan_import import import_rayyan as service

    data = await uploaded_file(request, "rayyan", BY_NAME["rayyan"].media_types)
    return summary_body(await imported(request, service, engine, "rayyan", topic=topic, queue_name=queue,
                                       add_reasons=add_reasons, again=again, data=data))


async def import_csv(topic: str, request: Request, engine: EngineDep, _key: Writer,
                     map: Annotated[str | None, Query(
                         description="doc=COL,label=COL[,topic=COL,rank=COL,score=COL,reviewer=COL,time=COL,"
                                     "role=COL], as `--map` (default: the columns recognised by their names).")
                     ] = None,
                     reviewer: Annotated[str, Query(description="Reviewer when no column names one.")] = "import",
                     level: Annotated[int, Query(ge=INT32_MIN, le=INT32_MAX,
                                                 description="Numeric labels >= N are relevant.")] = 1,
                     role: Annotated[schemas.Role, Query(description="Role when no role column is mapped.")]
                     = "review",
                     queue: Annotated[str | None, Query(
                         description="The queue the judgments were served from (default: the topic's newest); "
                                     "with a rank column, the name of the queue the file stores (default: csv).")
                     ] = None,
                     allow_unqueued: AllowUnqueued = False,
                     date_format: Annotated[str | None, Query(
                         description="Format of the time column in strftime syntax (default: ISO 8601, or "
                                     "day/month/year or month/day/year when a day above 12 decides).")] = None,
                     again: Again = False) -> dict[str, object]:
    """Store a screening or review-platform CSV/TSV export (ASReview's CSV export among them) as `reviewdepth
    import csv FILE --topic TOPIC`: one judgment per labelled row; a rank column (ASReview's asreview_ranking)
    also stores the rows as a queue. Rows of another topic refuse the file."""
    from reviewdepth.services.files.imports import import_csv as service

    data = await uploaded_file(request, "csv", BY_NAME["csv"].media_types)
    return summary_body(await imported(request, service, engine, "csv", mapping=map, topic=topic,
                                       reviewer=reviewer, level=level, again=again, role=role, queue_name=queue,
                                       allow_unqueued=allow_unqueued, date_format=date_format, data=data))


async def import_xlsx(topic: str, request: Request, engine: EngineDep, key: Writer,
                      reviewer: Annotated[str | None, Query(
                          description="Reviewer of rows with no reviewer cell (default: the key's).")] = None,
                      role: Annotated[schemas.Role, Query(description="Role of rows with no role cell.")] = "review",
                      queue: Annotated[str | None, Query(
                          description="Queue of rows with no queue cell (default: the topic's newest).")] = None,
                      allow_unqueued: AllowUnqueued = False,
                      add_reasons: Annotated[bool, Query(
                          description="Add the reason column's exclusion reasons the topic lacks to its list "
                                      "(true), or refuse the workbook at the first row whose reason it lacks "
                                      "(false).")] = False,
                      again: Again = False) -> dict[str, object]:
    """Record the judgments of an Excel workbook's first sheet (columns doc and label; reviewer, role, note,
    queue, reason, stage optional: those `GET /topics/{topic}/judgments/export` writes) in the existing topic,
    as `reviewdepth import xlsx`: one transaction, a bad row refuses the workbook naming its row and column."""
    from reviewdepth.services.files.judgment_files import record_judgment_file

    data = await uploaded_file(request, "xlsx", BY_NAME["xlsx"].media_types)
    ids = await imported(request, record_judgment_file, engine, topic, "xlsx", reviewer=reviewer or key.reviewer,
                         role=role, queue=queue, allow_unqueued=allow_unqueued, again=again, source="xlsx",
                         data=data, add_reasons=add_reasons)
    return {"topic": topic, "file": "xlsx", "stored": len(ids), "first_id": ids[0], "last_id": ids[-1]}


COVIDENCE_LISTS = ("screen", "irrelevant", "fulltext", "excluded", "included")


def import_covidence(topic: str, request: Request, engine: EngineDep, _key: Writer,
                     screen: Annotated[UploadFile | None, File(description="The screen list's export.")] = None,
                     irrelevant: Annotated[UploadFile | None, File(
                         description="The irrelevant list's export.")] = None,
                     fulltext: Annotated[UploadFile | None, File(description="The full text list's export.")] = None,
                     excluded: Annotated[UploadFile | None, File(description="The excluded list's export.")] = None,
                     included: Annotated[UploadFile | None, File(description="The included list's export.")] = None,
                     level: Annotated[Literal["final", "abstract"], Form(
                         description="final (included 1; excluded, irrelevant 0) or abstract (included, excluded, "
                                     "fulltext 1; irrelevant 0).")] = "final",
                     reviewer: Annotated[str, Form(description="Reviewer of the lists' decisions.")] = "covidence",
                     queue: Annotated[str | None, Form(
                         description="Name of the queue of the studies (default: covidence).")] = None,
                     again: Annotated[bool, Form(description="Import files already imported.")] = False,
                     ) -> dict[str, object]:
    """Store a Covidence review's list exports together, one form field per list (screen, irrelevant, fulltext,
    excluded, included; at least one), as `reviewdepth import covidence LIST=FILE… --topic TOPIC`: their
    studies as the topic's population (created when missing) and a queue, each study's list as its label."""
    from reviewdepth.formats.errors import InputError
    from reviewdepth.services.files.covidence_import import import_covidence as service

    uploads = dict(zip(COVIDENCE_LISTS, (screen, irrelevant, fulltext, excluded, included), strict=True))
    given = [(name, upload) for name, upload in uploads.items() if upload is not None]
    if not given:
        raise InputError("covidence", None, "list", f"send at least one list's export (form fields "
                                                    f"{', '.join(COVIDENCE_LISTS)})")
    settings = request.app.state.settings
    contents = []
    for name, upload in given:
        too_large = ApiProblem(413, f"the {name} list's file is larger than the limit of "
                                    f"{settings.max_import_bytes:,} bytes (REVIEWDEPTH_MAX_IMPORT_BYTES)")
        if (upload.size or 0) > settings.max_import_bytes:  # as sent (spooled to disk): refused before it is read
            raise too_large
        data = upload_bytes(upload, f"{name}.csv", settings.max_decompressed_bytes)
        if len(data) > settings.max_import_bytes:  # gunzipped
            raise too_large
        contents.append(data)
    summary = service(engine, [f"{name}={name}.csv" for name, _ in given], topic=topic, queue_name=queue,
                      reviewer=reviewer, level=level, again=again, contents=contents)
    return summary_body(summary)


EXPORT_MEDIA = {"csv": "text/csv; charset=utf-8", "asreview": "text/csv; charset=utf-8",
                "overlay": "text/csv; charset=utf-8", "ris": "application/x-research-info-systems; charset=utf-8"}
EXPORT_SUFFIX = {"csv": "labels.csv", "asreview": "asreview.csv", "overlay": "overlay.csv", "ris": "ris"}
EXPORT_CONTENT: dict[int | str, dict[str, Any]] = {200: {
    "description": "The file `reviewdepth export labels|ris` writes, as an attachment: labels as CSV (csv, "
                   "asreview, overlay) or RIS with ASReview's label notes (ris).",
    "content": {"text/csv": {"schema": {"type": "string"}},
                "application/x-research-info-systems": {"schema": {"type": "string"}}}}}
LOG_EXPORT_CONTENT: dict[int | str, dict[str, Any]] = {200: {
    "description": "The judgment log as the workbook `reviewdepth export xlsx` writes, as an attachment.",
    "content": {XLSX: {"schema": {"type": "string", "format": "binary"}}}}}
QUEUE_EXPORT_CONTENT: dict[int | str, dict[str, Any]] = {200: {
    "description": "The queue as a run file (`reviewdepth export queue`), as an attachment.",
    "content": {"text/plain": {"schema": {"type": "string"}}}}}


def attachment(name: str) -> str:
    """A ``Content-Disposition`` naming the file ``name``: an ASCII fallback, and the name itself (RFC 6266)."""
    fallback = "".join(c if c.isascii() and (c.isalnum() or c in "-_.") else "_" for c in name)
    return f"attachment; filename=\"{fallback}\"; filename*=UTF-8''{quote(name, safe='')}"


def export_topic(topic: str, engine: EngineDep, _key: Reader,
                 format: Annotated[LabelFormat | Literal["ris"], Query(
                     description="csv (topic,doc_id,label), asreview (record_id,asreview_label), overlay (Control "
                                 "Number,Responsiveness), or ris (RIS with ASReview's N1 label notes).")] = "csv",
                 policy: Annotated[LabelPolicy, Query(description="Label policy of the labels.")] = "latest",
                 as_of: str | None = None) -> Response:
    """The topic's documents with their labels under ``policy`` as of ``as_of``, the bytes `reviewdepth export
    labels TOPIC --format FORMAT` (or `reviewdepth export ris TOPIC`) writes, as an attachment named after the
    topic. ``imports/csv`` (``imports/ris``) reads the file back with the same labels."""
    from reviewdepth.services.review import exports
    if format == "ris":
        try:
            exported = exports.export_ris(engine, topic, policy=policy, as_of=as_of)
        except ImportError as exc:
            raise ApiProblem(501, f"ris needs rispy on the server: {exc}") from None
    else:
        exported = exports.export_labels(engine, topic, format, policy=policy, as_of=as_of)
    return Response(exported.text.encode("utf-8"), media_type=EXPORT_MEDIA[format],
                    headers={"Content-Disposition": attachment(f"{topic}.{EXPORT_SUFFIX[format]}")})


def export_judgments(topic: str, engine: EngineDep, _key: Reader,
                     format: Annotated[Literal["xlsx"], Query(description="xlsx, an Excel workbook.")] = "xlsx",
                     as_of: str | None = None) -> Response:
    """The topic's judgment log as of ``as_of``, one row per judgment in recording order (doc, label, reviewer,
    role, note, queue, reason, stage): the workbook `reviewdepth export xlsx` writes, as an attachment.
    ``imports/xlsx`` into a topic holding the same queues and reasons records the same judgments."""
    from reviewdepth.services.review.exports import export_xlsx

    try:
        workbook = export_xlsx(engine, topic, as_of=as_of)
    except ImportError as exc:
        raise ApiProblem(501, f"xlsx needs openpyxl on the server: {exc}") from None
    return Response(workbook.data, media_type=XLSX,
                    headers={"Content-Disposition": attachment(f"{topic}.judgments.{format}")})


def export_queue(topic: str, queue: str, engine: EngineDep, _key: Reader,
                 format: Annotated[RunFormat, Query(
                     description="trec (qid Q0 doc rank score tag) or clef (threshold flag 0/1, or the run's own "
                                 "action codes, in column 2).")] = "trec") -> Response:
    """The queue as a run file that trec_eval and `reviewdepth eval` rank in the queue's order (`reviewdepth
    export queue TOPIC --queue QUEUE`); ``PUT /topics/{topic}/queues/{queue}`` reads it back."""
    from reviewdepth.services.review.exports import export_queue as service

    exported = service(engine, topic, format, queue=queue)
    return Response(exported.text.encode("utf-8"), media_type="text/plain; charset=utf-8",
                    headers={"Content-Disposition": attachment(f"{topic}.{queue}.{format}.run")})


IMPORT_RESPONSES = {**WRITE, **problem_responses(415)}
# the formats with an endpoint of their own (the others store decisions: `decisions_endpoint`) and its response
ENDPOINTS: dict[str, tuple[Callable[..., Any], type[Any]]] = {
    "asreview": (import_asreview, schemas.AsreviewImportOut), "ris": (import_ris, schemas.RisImportOut),
    "records": (import_records, schemas.RecordsImportOut), "rayyan": (import_rayyan, schemas.RayyanImportOut),
    "csv": (import_csv, schemas.ImportOut), "xlsx": (import_xlsx, schemas.JudgmentFileImportOut)}


# the shared route's options, at module level: the annotations are read by name from this module's globals
DecisionsQueue = Annotated[str | None, Query(
    description=next(o.help for o in DECISIONS_OPTIONS if o.name == "queue_name"))]


def decisions_endpoint(entry: ImportFormat) -> Callable[..., Any]:
    """The route of a format whose reader gives decided records (`reviewdepth.services.files.importers`)."""

    async def endpoint(topic: str, request: Request, engine: EngineDep, _key: Writer, queue: DecisionsQueue = None,
                       again: Again = False) -> dict[str, object]:
        from reviewdepth.services.files.importers import use_case

        data = await uploaded_file(request, entry.name, entry.media_types)
        return summary_body(await imported(request, use_case(entry), engine, entry.name, format=entry.name,
                                           topic=topic, queue_name=queue, again=again, data=data))

    endpoint.__doc__ = f"Store {entry.description}, as `reviewdepth import {entry.name} FILE --topic TOPIC`."
    endpoint.__name__ = f"import_{entry.name}"
    return endpoint


def add_routes(router: APIRouter) -> None:
    formats = {entry.name: entry for entry in body_formats()}  # reviewdepth.formats.importers
    # the routes that predate the registry keep their place in the API document (ENDPOINTS' order, so the
    # published OpenAPI document does not reorder); a format added since follows in the registry's order
    ordered = [formats[name] for name in ENDPOINTS if name in formats]
    ordered += [entry for name, entry in formats.items() if name not in ENDPOINTS]
    for entry in ordered:
        if entry.name in ENDPOINTS:
            endpoint, model = ENDPOINTS[entry.name]
        elif entry.stores == "decisions":
            endpoint, model = decisions_endpoint(entry), schemas.DecisionsImportOut
        else:  # a programming error, caught by every API test: the format needs its own route
            raise LookupError(f"import format {entry.name!r} has no route")
        router.add_api_route(f"/topics/{{topic}}/imports/{entry.name}", endpoint, methods=["POST"], status_code=201,
                             response_model=model, responses=IMPORT_RESPONSES, tags=["files"],
                             openapi_extra=file_body(entry.media_types, entry.example))
    router.add_api_route("/topics/{topic}/imports/covidence", import_covidence, methods=["POST"], status_code=201,
                         response_model=schemas.CovidenceImportOut, responses=WRITE, tags=["files"])
    router.add_api_route("/topics/{topic}/export", export_topic, methods=["GET"], response_class=Response,
                         responses={**READ, **EXPORT_CONTENT, **problem_responses(501)}, tags=["files"])
    router.add_api_route("/topics/{topic}/judgments/export", export_judgments, methods=["GET"],
                         response_class=Response, responses={**READ, **LOG_EXPORT_CONTENT, **problem_responses(501)},
                         tags=["files"])
    router.add_api_route("/topics/{topic}/queues/{queue}/export", export_queue, methods=["GET"],
                         response_class=Response, responses={**READ, **QUEUE_EXPORT_CONTENT}, tags=["files"])
