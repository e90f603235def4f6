"""`reviewdepth compare`: several runs against one qrels file, each tested against the first (the baseline)."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from .common import fail, write_result
from .eval_cmd import Compat, Suite


class CompareTest(StrEnum):
    """The paired test of each run against the baseline (`reviewdepth.measures.compare.TESTS`)."""

    t = "t"
    wilcoxon = "wilcoxon"
    randomization = "randomization"


class Correction(StrEnum):
    """The multiple-comparison correction (`reviewdepth.measures.compare.CORRECTIONS`)."""

    holm = "holm"
    bonferroni = "bonferroni"
    none = "none"


class CompareFormat(StrEnum):
    table = "table"
    json = "json"
    csv = "csv"
    latex = "latex"
    markdown = "markdown"


def compare_command(
    qrels: Annotated[str, typer.Argument(help="TREC qrels file (gzip ok, '-' for stdin).")],
    runs: Annotated[list[str], typer.Argument(help="Run files; the first is the baseline.")],
    measure: Annotated[
        list[str] | None,
        typer.Option("-m", "--measure", help="Measure (trec: as eval's -m; tar: a tar-suite name such as ap, "
                                             "wss_95, last_rel). Repeatable. Default: map Rprec bpref P_10 "
                                             "recall_1000 (trec), ap last_rel norm_last_rel wss_95 wss_100 "
                                             "norm_area NCG@20 total_cost (tar)."),
    ] = None,
    test: Annotated[CompareTest, typer.Option(
        "--test", help="t (paired Student t), wilcoxon (signed-rank) or randomization (paired sign-flip).")
    ] = CompareTest.t,
    correction: Annotated[Correction, typer.Option(
        "--correction", help="holm, bonferroni or none, over each measure's comparisons with the baseline.")
    ] = Correction.holm,
    alpha: Annotated[float, typer.Option("--alpha", help="Significance level of the * mark.")] = 0.05,
    permutations: Annotated[int, typer.Option(
        "--permutations", help="Randomization test: sign vectors drawn (exact enumeration when 2^n is "
                               "fewer).")] = 10_000,
    seed: Annotated[int, typer.Option("--seed", help="Randomization test: random seed.")] = 42,
    suite: Annotated[Suite, typer.Option(
        "--suite", help="trec: trec_eval measures over queries; tar: review measures over topics.")
    ] = Suite.trec,
    level: Annotated[int, typer.Option("-l", help="Relevance level: qrels value >= N is relevant.")] = 1,
    compat: Annotated[Compat, typer.Option(
        "--compat", help="tar suite: as eval --compat.")] = Compat.none,
    output_format: Annotated[CompareFormat, typer.Option("--format")] = CompareFormat.table,
    output: Annotated[Path | None, typer.Option("-o", "--output", help="Write to FILE.")] = None,
) -> None:
    """Compare RUNS on QRELS: each measure's mean per run over the queries (topics) every run has, and a
    paired test of each run against the first (the baseline), corrected for the comparisons."""
    from reviewdepth.formats.errors import InputError
    from reviewdepth.services.errors import ServiceError
    from reviewdepth.services.evaluation.compare import CompareRequest, compare
    from reviewdepth.services.evaluation.evaluate import EvalInput

    if suite is Suite.trec and compat is not Compat.none:
        fail("--compat applies to --suite tar only")
    request = CompareRequest(suite=suite.value, measures=list(measure or []), test=test, correction=correction,
                             alpha=alpha, permutations=permutations, seed=seed, relevance_level=level,
                             compat=compat.value)
    try:
        result = compare(EvalInput(qrels), [EvalInput(r) for r in runs], request)
    except InputError as exc:
        fail(exc.describe())
    except (ServiceError, ValueError) as exc:
        fail(str(exc))
    write_result(result, output_format.value, output=output)


def register_compare(app: typer.Typer) -> None:
    """Add the ``compare`` command to ``app``."""
    app.command("compare")(compare_command)
