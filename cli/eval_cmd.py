"""`reviewdepth eval`: trec_eval-exact evaluation (``--suite trec``) or recall-oriented review measures
(``--suite tar``: CLEF TAR / ASReview) of a run file against a qrels file."""

from __future__ import annotations

import sys
from enum import StrEnum
from typing import Annotated

import typer

from .common import fail, write_result


class EvalFormat(StrEnum):
    trec = "trec"
    tar = "tar"
    json = "json"
    table = "table"
    csv = "csv"
    html = "html"


class Suite(StrEnum):
    trec = "trec"
    tar = "tar"


class Compat(StrEnum):
    none = "none"
    clef2017 = "clef2017"
    clef2019 = "clef2019"
    asreview = "asreview"


class RunFormat(StrEnum):
    auto = "auto"
    clef = "clef"
    trec = "trec"


def register_eval(app: typer.Typer) -> None:
    """Add the ``eval`` command to ``app``."""

    @app.command("eval")
    def eval_command(
        qrels: Annotated[str, typer.Argument(help="TREC qrels file (gzip ok, '-' for stdin).")],
        run: Annotated[str, typer.Argument(help="TREC or CLEF TAR run file (gzip ok, '-' for stdin).")],
        measure: Annotated[
            list[str] | None,
            typer.Option("-m", "--measure", help="Measure or group (map, P_10, P.5,10, official, all). Repeatable."),
        ] = None,
        per_query: Annotated[bool, typer.Option("-q", help="Print per-query values too.")] = False,
        complete: Annotated[
            bool, typer.Option("-c", help="Average over all qrels queries; missing ones score 0.")
        ] = False,
        level: Annotated[int, typer.Option("-l", help="Relevance level: qrels value >= N is relevant.")] = 1,
        max_docs: Annotated[
            int | None, typer.Option("-M", help="Evaluate only the first N ranked documents per query.")
        ] = None,
        judged_only: Annotated[
            bool, typer.Option("-J", help="Evaluate only the judged documents: unjudged ones leave the ranking "
                                          "(after -M), as trec_eval -J.")
        ] = False,
        output_format: Annotated[
            EvalFormat | None,
            typer.Option("--format", help="Output format (default: trec for --suite trec, tar for --suite tar)."),
        ] = None,
        trec_eval_version: Annotated[
            int, typer.Option("--trec-eval-version", help="Reproduce trec_eval 9 (9.0.8) or 10 (10.0).")
        ] = 9,
        suite: Annotated[
            Suite, typer.Option("--suite", help="trec: trec_eval measures; tar: recall-oriented review measures.")
        ] = Suite.trec,
        compat: Annotated[
            Compat,
            typer.Option("--compat", help="tar suite: clean definitions (none), or reproduce the CLEF 2017 / "
                                          "2018-2019 scripts or asreview-insights."),
        ] = Compat.none,
        num_docs: Annotated[
            int | None, typer.Option("-N", "--num-docs", help="Documents in the collection: trec suite, trec_eval's "
                                                              "-N (utility); tar suite, the collection size of "
                                                              "every topic (default: from the qrels, as CLEF).")
        ] = None,
        run_format: Annotated[
            RunFormat,
            typer.Option("--run-format", help="tar suite: clef = file order is the ranking; trec = rank by score; "
                                              "auto = clef when column 2 holds CLEF actions or 0/1 flags."),
        ] = RunFormat.auto,
    ) -> None:
        """Evaluate RUN against QRELS: exactly as trec_eval (--suite trec) or with the CLEF TAR / ASReview
        recall-oriented measures (--suite tar)."""
        from reviewdepth.formats.errors import InputError
        from reviewdepth.measures.suite import MeasureError
        from reviewdepth.report.tar_model import TarEvaluation
        from reviewdepth.services.evaluate import EvalInput, EvalRequest, SuiteMismatch, evaluate

        if suite is Suite.trec and output_format is EvalFormat.tar:
            fail("--format tar needs --suite tar")
        request = EvalRequest(suite=suite.value, relevance_level=level, measures=list(measure or []),
                              complete=complete, max_docs=max_docs, version=trec_eval_version, compat=compat.value,
                              num_docs=num_docs, run_format=run_format.value, judged_only=judged_only)
        try:
            result = evaluate(EvalInput(qrels), EvalInput(run), request)
        except SuiteMismatch as exc:
            fail("-m, -c, -M, -J and --trec-eval-version apply to --suite trec only" if exc.suite == "tar"
                 else "--compat and --run-format apply to --suite tar only")
        except InputError as exc:
            fail(exc.describe())
        except (MeasureError, ValueError) as exc:
            fail(str(exc))
        chosen = output_format or (EvalFormat.tar if suite is Suite.tar else EvalFormat.trec)
        if isinstance(result, TarEvaluation) and chosen is not EvalFormat.tar:
            # notices (skipped topics, duplicates) go to stderr unless the output is the CLEF line format,
            # which prints them where the official scripts do
            for notice in result.notices:
                sys.stderr.write(f"reviewdepth: note: {notice}\n")
        write_result(result, chosen.value, per_query=per_query)
