"""``POST /evaluate``: `reviewdepth eval` over uploaded files (the same use case,
`services.evaluation.evaluate.evaluate`)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, File, Form, Request, Response, UploadFile

from reviewdepth.api import schemas
from reviewdepth.api.problems import ApiProblem, problem_responses
from reviewdepth.api.routers.common import AUTH, JSON, Reader, measure_problems, upload_bytes
from reviewdepth.measures.tar_suite import CompatMode
from reviewdepth.services.evaluation.evaluate import Suite
from reviewdepth.services.evaluation.evaluate_tar import RunFormat
from reviewdepth.store.validation import INT32_MAX as INT32
from reviewdepth.store.validation import INT64_MAX

# how the API names the options of the other suite (the CLI names them by their flags)
OPTION_NAMES = {"measures": "measure", "complete": "complete", "max_docs": "max_docs",
                "version": "trec_eval_version", "compat": "compat", "num_docs": "num_docs", "run_format": "run_format",
                "judged_only": "judged_only"}


def evaluate(qrels: Annotated[UploadFile, File(description="TREC qrels (gzip ok).")],
             run: Annotated[UploadFile, File(description="TREC or CLEF TAR run (gzip ok).")],
             request: Request, _key: Reader,
             measure: Annotated[list[str] | None, Form(description="-m, repeatable")] = None,
             per_query: Annotated[bool, Form(description="-q")] = False,
             complete: Annotated[bool, Form(description="-c")] = False,
             level: Annotated[int, Form(description="-l", ge=-INT32, le=INT32)] = 1,
             max_docs: Annotated[int | None, Form(description="-M", ge=1, le=INT64_MAX)] = None,
             trec_eval_version: Annotated[int, Form(ge=9, le=10)] = 9,
             suite: Annotated[Suite, Form()] = "trec",
             compat: Annotated[CompatMode, Form()] = "none",
             num_docs: Annotated[int | None, Form(description="trec: -N, documents in the collection; tar: "
                                                             "collection size of every topic",
                                                 ge=0, le=INT64_MAX)] = None,
             run_format: Annotated[RunFormat, Form()] = "auto",
             judged_only: Annotated[bool, Form(description="-J")] = False) -> Response:
    """Evaluate a run against qrels exactly as `reviewdepth eval QRELS RUN --format json` with the same
    options (``suite=tar`` for the recall-oriented measures)."""
    from reviewdepth.report.render import render
    from reviewdepth.services.evaluation.evaluate import EvalInput, EvalRequest, SuiteMismatch
    from reviewdepth.services.evaluation.evaluate import evaluate as service

    names = (qrels.filename or "qrels", run.filename or "run")
    limit = request.app.state.settings.max_decompressed_bytes
    qrels_input = EvalInput(names[0], upload_bytes(qrels, names[0], limit))
    run_input = EvalInput(names[1], upload_bytes(run, names[1], limit))
    options = EvalRequest(suite=suite, relevance_level=level, measures=list(measure or []), complete=complete,
                          max_docs=max_docs, version=trec_eval_version, compat=compat, num_docs=num_docs,
                          run_format=run_format, judged_only=judged_only)
    with measure_problems():  # a SuiteMismatch (a ValueError) is answered here first, in the options' names
        try:
            result = service(qrels_input, run_input, options)
        except SuiteMismatch as exc:
            named = [OPTION_NAMES[o] for o in (("measures", "complete", "max_docs", "version", "judged_only")
                                               if exc.suite == "tar" else ("compat", "run_format"))]
            tail = "apply to suite trec" if exc.suite == "tar" else "apply to suite tar only"
            raise ApiProblem(422, f"{', '.join(named[:-1])} and {named[-1]} {tail}") from None
    return Response(render(result, "json", per_query=per_query), media_type=JSON)


def add_routes(router: APIRouter) -> None:
    router.add_api_route("/evaluate", evaluate, methods=["POST"], response_class=Response, tags=["evaluate"],
                         responses={**AUTH, **problem_responses(413, 422),
                                    200: {"description": "`reviewdepth eval --format json` output.",
                                          "content": schemas.body_content(schemas.EvaluationOut)}})

