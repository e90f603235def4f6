"""``POST /compare``: `reviewdepth compare` over uploaded files (the same use case,
`services.evaluation.compare.compare`).

`reviewdepth compare` compares run files against a qrels file, with paired tests over the queries (topics) the runs
share; so does this endpoint, over uploaded files, as ``POST /evaluate`` evaluates one. A topic's stored queues are
not what it compares: a paired test needs several queries, and a topic is one.
"""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, File, Form, Request, UploadFile

from reviewdepth.api import schemas
from reviewdepth.api.problems import ApiProblem, problem_responses
from reviewdepth.api.routers.common import AUTH, Reader, measure_problems, upload_bytes
from reviewdepth.measures.compare import CORRECTIONS, TESTS
from reviewdepth.measures.tar_suite import CompatMode
from reviewdepth.services.evaluation.evaluate import Suite
from reviewdepth.services.evaluation.evaluate_tar import RunFormat
from reviewdepth.store.validation import INT32_MAX as INT32

MAX_RUNS = 50  # runs in one comparison: each is evaluated and tested against the baseline on every measure
MAX_PERMUTATIONS = 100_000  # the randomization test's draws, per measure and run (the CLI's default is 10,000)
assert TESTS == ("t", "wilcoxon", "randomization") and CORRECTIONS == ("holm", "bonferroni", "none"), \
    "the literals below are the core's vocabularies"


def compare(qrels: Annotated[UploadFile, File(description="TREC qrels (gzip ok).")],
            run: Annotated[list[UploadFile], File(description="Run files (gzip ok), at least two; the first is the "
                                                              f"baseline; at most {MAX_RUNS}.")],
            request: Request, _key: Reader,
            measure: Annotated[list[str] | None, Form(
                description="Measure (trec: as eval's -m; tar: a tar-suite name such as ap, wss_95), repeatable. "
                            "Default: map Rprec bpref P_10 recall_1000 (trec), ap last_rel norm_last_rel wss_95 "
                            "wss_100 norm_area NCG@20 total_cost (tar).")] = None,
            test: Annotated[Literal["t", "wilcoxon", "randomization"], Form(
                description="t (paired Student t), wilcoxon (signed-rank) or randomization (paired sign-flip).")]
            = "t",
            correction: Annotated[Literal["holm", "bonferroni", "none"], Form(
                description="Over each measure's comparisons with the baseline.")] = "holm",
            alpha: Annotated[float, Form(gt=0, lt=1, description="Significance level of the mark.")] = 0.05,
            permutations: Annotated[int, Form(ge=1, le=MAX_PERMUTATIONS, description=(
                "Randomization test: sign vectors drawn (exact enumeration when 2^n is fewer)."))] = 10_000,
            seed: Annotated[int, Form(ge=0, le=2**32 - 1, description="Randomization test: random seed.")] = 42,
            suite: Annotated[Suite, Form(description="trec: trec_eval measures over queries; tar: review measures "
                                                     "over topics.")] = "trec",
            level: Annotated[int, Form(ge=-INT32, le=INT32, description="-l: qrels value >= N is relevant.")] = 1,
            compat: Annotated[CompatMode, Form(description="tar suite: as eval's compat.")] = "none",
            run_format: Annotated[RunFormat, Form(description="tar suite: the runs' format.")] = "auto",
            ) -> dict[str, object]:
    """Compare the runs on the qrels exactly as `reviewdepth compare QRELS RUN… --format json` with the same
    options: each measure's mean per run over the queries (topics) every run has, and a paired test of each run
    against the first (the baseline), corrected for the comparisons. Runs are named by their file names."""
    from reviewdepth.services.evaluation.compare import CompareRequest
    from reviewdepth.services.evaluation.compare import compare as service
    from reviewdepth.services.evaluation.evaluate import EvalInput

    if len(run) < 2:
        raise ApiProblem(422, "run: compare needs at least two runs (the first is the baseline)")
    if len(run) > MAX_RUNS:
        raise ApiProblem(422, f"run: at most {MAX_RUNS} runs in one comparison, not {len(run)}")
    if suite == "trec" and (compat != "none" or run_format != "auto"):
        raise ApiProblem(422, "compat and run_format apply to suite tar only")
    limit = request.app.state.settings.max_decompressed_bytes
    names = [upload.filename or "run" for upload in run]
    # runs are named by their file names: two of the same name are told apart by their position
    names = [f"{name}#{position}" if names.count(name) > 1 else name for position, name in enumerate(names, 1)]
    qrels_input = EvalInput(qrels.filename or "qrels", upload_bytes(qrels, qrels.filename or "qrels", limit))
    runs = [EvalInput(name, upload_bytes(upload, name, limit)) for name, upload in zip(names, run, strict=True)]
    options = CompareRequest(suite=suite, measures=list(measure or []), test=test, correction=correction,
                             alpha=alpha, permutations=permutations, seed=seed, relevance_level=level,
                             compat=compat, run_format=run_format)
    with measure_problems():
        result = service(qrels_input, runs, options)
    return result.to_dict()


def add_routes(router: APIRouter) -> None:
    router.add_api_route("/compare", compare, methods=["POST"], response_model=schemas.ComparisonOut,
                         tags=["evaluate"], responses={**AUTH, **problem_responses(413, 422)})
