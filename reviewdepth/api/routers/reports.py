"""``/topics/{topic}/report``, ``/topics/{topic}/plots`` and ``/topics/{topic}/prisma``: the depth report, its
charts and the PRISMA 2020 counts and flow diagram."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Request, Response

from reviewdepth.api import schemas
from reviewdepth.api.problems import ApiProblem, problem_responses
from reviewdepth.api.routers.common import (
    JSON,
    READ,
    AsOfId,
    CertifiableTargetQuery,
    ConfidenceQuery,
    EngineDep,
    Reader,
    TargetValue,
)
from reviewdepth.estimation.assessment import ReportInterval
from reviewdepth.estimation.target import DEFAULT_TARGET
from reviewdepth.measures.depth import TargetRule
from reviewdepth.report.charts import ChartFormat, ChartKind
from reviewdepth.report.prisma_model import PrismaCounts
from reviewdepth.store.labels import LabelPolicy
from reviewdepth.store.validation import INT64_MAX


def report_content() -> dict[int | str, dict[str, Any]]:
    """The report's 200 response; its JSON schema is generated from the `Report` dataclass the service returns
    and the result types of its sections (`schemas.ReportOut`)."""
    return {200: {"description": "The depth report (JSON, as `reviewdepth report --format json`).",
                  "content": {**schemas.body_content(schemas.ReportOut), "text/html": {"schema": {"type": "string"}},
                              "text/csv": {"schema": {"type": "string"}}}}}


PLOT_CONTENT: dict[int | str, dict[str, Any]] = {200: {
    "description": "The chart.",
    "content": {"image/svg+xml": {"schema": {"type": "string"}},
                "image/png": {"schema": {"type": "string", "format": "binary"}}}}}


PRISMA_CONTENT: dict[int | str, dict[str, Any]] = {200: {
    "description": "The PRISMA 2020 counts (JSON, the bytes of `reviewdepth prisma --format json`) or the flow "
                   "diagram drawn from them (SVG, PNG, or an HTML page holding the SVG).",
    # the report's `prisma` section: its component, generated from `PrismaCounts`
    "content": {JSON: {"schema": {"$ref": f"#/components/schemas/{schemas.section_model(PrismaCounts).__name__}"}},
                "image/svg+xml": {"schema": {"type": "string"}},
                "image/png": {"schema": {"type": "string", "format": "binary"}},
                "text/html": {"schema": {"type": "string"}}}}}


async def get_report(topic: str, request: Request, engine: EngineDep, _key: Reader, queue: str | None = None,
                     target: Annotated[list[TargetValue] | None, Query(
                         description="Target recall in (0, 1], as a decimal; repeat.", max_length=20)] = None,
                     confidence: ConfidenceQuery = 0.95, interval: Annotated[ReportInterval, Query(
                         description="hypergeometric (exact, default) or clopper-pearson.")] = "hypergeometric",
                     policy: LabelPolicy = "latest",
                     as_of: AsOfId = None, target_rule: TargetRule = "ceil",
                     relevant: Annotated[int | None, Query(ge=0, description="|R| when known.")] = None,
                     scores_are_probabilities: Annotated[bool, Query(
                         description="The queue's scores are the current model's probabilities of relevance: show "
                                     "the Quant and QuantCI rows (heuristics).")] = False,
                     independent: Annotated[bool | None, Query(
                         description="Whether reviewers screened independently (stated, for PRISMA).")] = None,
                     format: Annotated[Literal["json", "html", "csv"] | None, Query(
                         description="The format, overriding the Accept header (for links).")] = None,
                     produce_to: Annotated[int | None, Query(
                         ge=1, le=INT64_MAX, description="Add the two-phase (TAR 1.0) section at this rank cutoff: "
                         "documents ranked 1..produce_to are produced whether reviewed or not (as "
                         "`reviewdepth report --produce-to`).")] = None,
                     plan: Annotated[bool, Query(
                         description="Replay the stop plan for the answer's certify figure (its recommended path "
                                     "and expected cost; `reviewdepth report --plan`).")] = False,
                     ) -> Response:
    """How deep to review for each target recall, how sure that is, and the stopping evidence: the same
    bytes as `reviewdepth report --format json`; ``Accept: text/html`` (or ``format=html``, as the
    dashboard links it) gives the HTML report, ``text/csv`` (``format=csv``) the CSV. One report or chart
    is computed at a time per process, in a worker thread (`api/single_flight.py`): identical requests
    meanwhile share it, others wait, so the memory held is one report's at a time."""
    from reviewdepth.report.render import render
    from reviewdepth.services.answers.report import DEFAULT_TARGETS, ReportOptions, build_report

    accept = request.headers.get("accept", "") if format is None else {"json": JSON, "html": "text/html",
                                                                        "csv": "text/csv"}[format]
    media = ("text/html; charset=utf-8" if "text/html" in accept and JSON not in accept else
             "text/csv; charset=utf-8" if "text/csv" in accept and JSON not in accept else JSON)
    options = ReportOptions(
        queue=queue, targets=target or DEFAULT_TARGETS, confidence=confidence, interval=interval,
        policy=policy, as_of=as_of, target_rule=target_rule, known_relevant=relevant,
        scores_are_probabilities=scores_are_probabilities, independent=independent, produce_to=produce_to,
        with_plan=plan)

    fmt: Literal["json", "html", "csv"] = ("html" if media.startswith("text/html") else
                                           "csv" if media.startswith("text/csv") else "json")

    def rendered() -> bytes | str:
        # the renderers `reviewdepth report --format` uses (`report.render.RENDERERS`)
        return render(build_report(engine, topic, options), fmt)

    key = ("report", topic, queue, tuple(t.text for t in target or ()), confidence, interval, policy, as_of,
           target_rule, relevant, independent, media, produce_to, plan)
    return Response(await request.app.state.renders.run(key, rendered), media_type=media)


async def get_plot(topic: str, kind: ChartKind, fmt: ChartFormat, request: Request, engine: EngineDep,
                   _key: Reader, queue: str | None = None, policy: LabelPolicy = "latest",
                   as_of: AsOfId = None) -> Response:
    """Recall against depth (``gain``) or precision-recall (``pr``), as SVG or PNG: the chart `reviewdepth
    plot` writes (one report or chart at a time per process, as the report)."""
    from reviewdepth.services.answers.plots import build_plot

    try:
        chart = await request.app.state.renders.run(
            ("plot", topic, kind, fmt, queue, policy, as_of),
            lambda: build_plot(engine, topic, kind, fmt, queue=queue, policy=policy, as_of=as_of))
    except ImportError as exc:
        raise ApiProblem(501, f"plots need matplotlib on the server: {exc}") from None
    return Response(chart.content, media_type=chart.media_type)


def get_prisma(topic: str, engine: EngineDep, _key: Reader, queue: str | None = None,
               policy: Annotated[LabelPolicy, Query(description="Label policy for included/excluded (default "
                                                    "latest, as the report's).")] = "latest",
               as_of: AsOfId = None,
               independent: Annotated[bool | None, Query(
                   description="Whether reviewers screened independently (stated).")] = None,
               format: Annotated[Literal["json", "svg", "png", "html"], Query(
                   description="json: the counts; svg, png, html: the flow diagram drawn from them.")] = "json",
               ) -> Response:
    """PRISMA 2020 screening counts of the topic, as `reviewdepth prisma --format json` prints them (the same
    bytes, and the same default label policy as it and the report, ``latest``), or the PRISMA 2020 flow diagram
    drawn from those counts alone (``format=svg|png|html``, as `reviewdepth prisma --format svg|png|html`)."""
    import json

    from reviewdepth.report.model import json_safe
    from reviewdepth.services.answers.prisma import topic_prisma, topic_prisma_diagram

    as_of_text = None if as_of is None else str(as_of)
    if format == "json":
        counts = topic_prisma(engine, topic, queue=queue, policy=policy, as_of=as_of_text, independent=independent)
        body = json.dumps(json_safe(counts.as_dict()), indent=2, ensure_ascii=False, allow_nan=False) + "\n"
        return Response(body.encode("utf-8"), media_type=JSON)
    figure = topic_prisma_diagram(engine, topic, format, queue=queue, policy=policy, as_of=as_of_text,
                                  independent=independent)
    return Response(figure.content, media_type=figure.media_type)


VALIDATION_MEDIA = {"pdf": "application/pdf", "html": "text/html; charset=utf-8", "json": JSON}
VALIDATION_CONTENT: dict[int | str, dict[str, Any]] = {200: {
    "description": "The validation document (as `reviewdepth validation TOPIC --format FORMAT`, byte for byte).",
    "content": {"application/pdf": {"schema": {"type": "string", "format": "binary"}},
                "text/html": {"schema": {"type": "string"}}, **schemas.body_content(schemas.ValidationOut)}}}


async def get_validation(topic: str, request: Request, engine: EngineDep, _key: Reader, queue: str | None = None,
                         target: CertifiableTargetQuery = DEFAULT_TARGET, confidence: ConfidenceQuery = 0.95,
                         interval: Annotated[ReportInterval, Query(
                             description="hypergeometric (exact, default) or clopper-pearson.")] = "hypergeometric",
                         policy: LabelPolicy = "latest", as_of: AsOfId = None,
                         format: Annotated[Literal["pdf", "html", "json"], Query(
                             description="pdf (default), html or json.")] = "pdf",
                         produce_to: Annotated[int | None, Query(
                             ge=1, le=INT64_MAX, description="Two-phase (TAR 1.0) validation at this rank cutoff: "
                             "documents ranked 1..produce_to are produced whether reviewed or not.")] = None,
                         ) -> Response:
    """The validation document of the topic's stop decision at one target: protocol settings, the samples (seeds,
    sizes, coders, times) and audit stream, recall, elusion and precision with their intervals, the cutoff and
    discard pile, the rule that certified the stop, the chain head, provenance and caveats. The same bytes as
    `reviewdepth validation`; computed one at a time per process, as the report."""
    from reviewdepth.report.validation_render import render_document
    from reviewdepth.services.answers.report import ReportOptions
    from reviewdepth.services.answers.validation import build_validation

    options = ReportOptions(queue=queue, targets=[target], confidence=confidence, interval=interval,
                            policy=policy, as_of=as_of)

    def rendered() -> bytes:
        return render_document(build_validation(engine, topic, options, produce_to=produce_to), format)

    key = ("validation", topic, queue, target.text, confidence, interval, policy, as_of, format, produce_to)
    return Response(await request.app.state.renders.run(key, rendered), media_type=VALIDATION_MEDIA[format])


METHODS_MEDIA = {"text": "text/plain; charset=utf-8", "markdown": "text/markdown; charset=utf-8", "json": JSON}
METHODS_CONTENT: dict[int | str, dict[str, Any]] = {200: {
    "description": "The methods text (as `reviewdepth methods TOPIC --style STYLE --format FORMAT`).",
    "content": {"text/plain": {"schema": {"type": "string"}}, "text/markdown": {"schema": {"type": "string"}},
                **schemas.body_content(schemas.MethodsOut)}}}


def get_methods(topic: str, engine: EngineDep, _key: Reader, queue: str | None = None,
                target: CertifiableTargetQuery = DEFAULT_TARGET, confidence: ConfidenceQuery = 0.95,
                as_of: AsOfId = None,
                style: Annotated[Literal["prisma", "raise", "protocol"], Query(
                    description="prisma (default), raise or protocol.")] = "prisma",
                format: Annotated[Literal["text", "markdown", "json"], Query(
                    description="text (default), markdown or json (with each figure's source field).")] = "text",
                ) -> Response:
    """The methods text of the topic's screening and stop, written from its evidence: tool and version, dates, the
    ranking's source, the stopping rule with its parameters and kind, records screened by reviewers against those
    left by the stop, the validation evidence with its interval and the limitations; the same text as
    `reviewdepth methods`. As JSON, every figure names the field it was read from."""
    from reviewdepth.report.methods_text import render_methods
    from reviewdepth.services.answers.methods import methods_of
    from reviewdepth.services.answers.report import ReportOptions

    text = methods_of(engine, topic, ReportOptions(queue=queue, targets=[target], confidence=confidence,
                                                   as_of=as_of), style)
    return Response(render_methods(text, format), media_type=METHODS_MEDIA[format])


def add_routes(router: APIRouter) -> None:
    router.add_api_route("/topics/{topic}/methods", get_methods, methods=["GET"], response_class=Response,
                         responses={**READ, **METHODS_CONTENT}, tags=["report"])
    router.add_api_route("/topics/{topic}/validation", get_validation, methods=["GET"], response_class=Response,
                         responses={**READ, **VALIDATION_CONTENT}, tags=["report"])
    router.add_api_route("/topics/{topic}/report", get_report, methods=["GET"], response_class=Response,
                         responses={**READ, **report_content()}, tags=["report"])
    router.add_api_route("/topics/{topic}/plots/{kind}.{fmt}", get_plot, methods=["GET"], response_class=Response,
                         responses={**READ, **PLOT_CONTENT, **problem_responses(501)}, tags=["report"])
    router.add_api_route("/topics/{topic}/prisma", get_prisma, methods=["GET"], response_class=Response,
                         responses={**READ, **PRISMA_CONTENT}, tags=["report"])
