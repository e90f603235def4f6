"""`reviewdepth eval`: trec_eval-exact evaluation of a run file against a qrels file."""

from __future__ import annotations

import sys
from enum import StrEnum
from typing import Annotated

import typer

from .common import fail


class EvalFormat(StrEnum):
    trec = "trec"
    json = "json"
    table = "table"
    csv = "csv"


def register_eval(app: typer.Typer) -> None:
    """Add the ``eval`` command to ``app``."""

    @app.command("eval")
    def eval_command(
        qrels: Annotated[str, typer.Argument(help="TREC qrels file (gzip ok, '-' for stdin).")],
        run: Annotated[str, typer.Argument(help="TREC run file (gzip ok, '-' for stdin).")],
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
        output_format: Annotated[EvalFormat, typer.Option("--format", help="Output format.")] = EvalFormat.trec,
        trec_eval_version: Annotated[
            int, typer.Option("--trec-eval-version", help="Reproduce trec_eval 9 (9.0.8) or 10 (10.0).")
        ] = 9,
    ) -> None:
        """Evaluate RUN against QRELS exactly as trec_eval does (same numbers, same output format)."""
        from reviewdepth.formats.errors import InputError
        from reviewdepth.measures.suite import MeasureError
        from reviewdepth.report import evaluation as render
        from reviewdepth.services.evaluate import EvalOptions, evaluate_files

        options = EvalOptions(relevance_level=level, complete=complete, max_docs=max_docs,
                              version=trec_eval_version, measures=list(measure or []))
        try:
            result = evaluate_files(qrels, run, options)
        except InputError as exc:
            fail(exc.describe())
        except (MeasureError, ValueError) as exc:
            fail(str(exc))
        if output_format is EvalFormat.trec:
            sys.stdout.write(render.render_trec(result, per_query))
        elif output_format is EvalFormat.json:
            sys.stdout.write(render.render_json(result, per_query))
        elif output_format is EvalFormat.csv:
            sys.stdout.write(render.render_csv(result, per_query))
        else:
            from rich.console import Console

            Console().print(render.render_table(result, per_query))
