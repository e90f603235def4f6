"""The one layout `Evaluation` (trec suite) and `TarEvaluation` (tar suite) share, and its renderers.

Both results are a grid of measure values, one column per query and one for ``all``; they differ only in which
keys are labels rather than measures, the measure rows a table shows, how a value prints in a table and the
title. `ScoreSheet` holds that view; each format is written once over it. Nothing is computed here.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from reviewdepth.measures.suite import Evaluation
from reviewdepth.report.templating import templates

if TYPE_CHECKING:  # trec_eval's lines need neither the tar suite's types nor the depth report's
    from rich.table import Table

    from reviewdepth.report.tar_model import TarEvaluation

Cell = float | int | str
# keys of a TAR topic's values that name it rather than measure it: left out of every grid format
TAR_LABEL_KEYS = frozenset({"topic_id"})


@dataclass(frozen=True)
class ScoreSheet:
    """Measure values per query (output order) and for ``all``, as every grid format prints them.

    ``rows``: the measures a table shows, in order (JSON, CSV and trec lines print every key of the dicts);
    ``table_value``: one value as a table cell.
    """

    title: str
    rows: list[str]
    per_query: Mapping[str, Mapping[str, Cell]]
    summary: Mapping[str, Cell]
    table_value: Callable[[Cell], str]


def trec_value(value: Cell) -> str:
    """A value as trec_eval prints it: counts as integers (``%ld``), text as is, the rest ``%6.4f``."""
    if isinstance(value, str):
        return value
    if isinstance(value, int):
        return "%ld" % value
    number = float(value)
    if math.isnan(number):  # C's printf keeps a NaN's sign (x86-64's 0/0 is "-nan"); Python's % drops it
        return ("-nan" if math.copysign(1.0, number) < 0 else "nan").rjust(6)
    return "%6.4f" % number


def sheet(result: Evaluation | TarEvaluation) -> ScoreSheet:
    """The grid view of either evaluation result."""
    if isinstance(result, Evaluation):
        return ScoreSheet(title=f"run {result.summary.get('runid', '')}",
                          rows=[name for name in result.measures if name != "runid"],
                          per_query=result.per_query, summary=result.summary, table_value=trec_value)

    from reviewdepth.report.tar_output import format_value

    def measured(values: Mapping[str, Cell]) -> dict[str, Cell]:
        return {k: v for k, v in values.items() if k not in TAR_LABEL_KEYS}

    return ScoreSheet(title=f"run {result.run_id} (tar suite, --compat {result.compat})", rows=result.measures,
                      per_query={q: measured(v) for q, v in result.per_query.items()},
                      summary=measured(result.summary), table_value=lambda v: format_value(v, "r3"))


def _blocks(scores: ScoreSheet, per_query: bool) -> list[tuple[str, Mapping[str, Cell]]]:
    """(query, values) in print order: every query with ``-q``, then ``all``."""
    blocks: list[tuple[str, Mapping[str, Cell]]] = list(scores.per_query.items()) if per_query else []
    blocks.append(("all", scores.summary))
    return blocks


def render_trec(scores: ScoreSheet, per_query: bool) -> str:
    """trec_eval's output: ``%-22s\\t%s\\t%6.4f`` lines, per-query blocks (``-q``) in order, then ``all``."""
    lines = ["%-22s\t%s\t%s" % (name, qid, trec_value(value))
             for qid, values in _blocks(scores, per_query) for name, value in values.items()]
    return "\n".join(lines) + "\n"


def render_json(scores: ScoreSheet, per_query: bool) -> str:
    """``{"per_query": {qid: {measure: value}}, "all": {measure: value}}`` with full-precision floats; a NaN
    (trec_eval's ``-nan``: 0/0 in a measure's C code) is ``null``, since JSON has no NaN."""
    import json

    from reviewdepth.report.model import json_safe

    body = json_safe({"per_query": scores.per_query if per_query else {}, "all": scores.summary})
    return json.dumps(body, indent=2, allow_nan=False) + "\n"


def render_csv(scores: ScoreSheet, per_query: bool) -> str:
    """Long CSV ``measure,query,value`` (floats at full precision, as ``repr``)."""
    import csv
    import io

    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["measure", "query", "value"])
    for qid, values in _blocks(scores, per_query):
        for name, value in values.items():
            writer.writerow([name, qid, repr(value) if isinstance(value, float) else value])
    return buffer.getvalue()


def _grid(scores: ScoreSheet, per_query: bool) -> tuple[list[str], list[list[str]]]:
    """Column heads and rows of the people's views (table and HTML): a row per measure, a column per query."""
    queries = list(scores.per_query) if per_query else []
    rows = []
    for name in scores.rows:
        cells = [name]
        for qid in queries:
            value = scores.per_query[qid].get(name)
            cells.append("" if value is None else scores.table_value(value))
        cells.append(scores.table_value(scores.summary[name]))
        rows.append(cells)
    return ["measure", *queries, "all"], rows


def render_table(scores: ScoreSheet, per_query: bool) -> Table:
    """A Rich table for people: one row per measure, one column per query shown, then ``all``."""
    from rich.table import Table

    heads, rows = _grid(scores, per_query)
    table = Table(title=scores.title)
    table.add_column(heads[0], style="bold")
    for qid in heads[1:-1]:
        table.add_column(qid, justify="right")
    table.add_column(heads[-1], justify="right", style="cyan")
    for row in rows:
        table.add_row(*row)
    return table


def render_html(scores: ScoreSheet, per_query: bool) -> str:
    """A self-contained page with the table's rows and columns (templates/scores.html.j2, autoescaped)."""
    heads, rows = _grid(scores, per_query)
    page: str = templates().get_template("scores.html.j2").render(title=scores.title, heads=heads, rows=rows)
    return page
