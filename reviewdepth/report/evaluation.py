"""Render an `Evaluation` as trec_eval text, JSON, CSV or a Rich table. No computation happens here."""

from __future__ import annotations

import csv
import io
import json
from typing import TYPE_CHECKING

from reviewdepth.measures.suite import COUNT_MEASURES, Evaluation

if TYPE_CHECKING:
    from rich.table import Table


def _trec_value(name: str, value: float | int | str) -> str:
    if name == "runid":
        return str(value)
    if name in COUNT_MEASURES:
        return "%ld" % int(value)
    return "%6.4f" % float(value)


def render_trec(evaluation: Evaluation, per_query: bool) -> str:
    """Exactly trec_eval's output: ``%-22s\\t%s\\t%6.4f`` lines, per-query blocks in strcmp order, then ``all``."""
    lines: list[str] = []
    if per_query:
        for qid, values in evaluation.per_query.items():
            for name, value in values.items():
                lines.append("%-22s\t%s\t%s" % (name, qid, _trec_value(name, value)))
    for name, total in evaluation.summary.items():
        lines.append("%-22s\t%s\t%s" % (name, "all", _trec_value(name, total)))
    return "\n".join(lines) + "\n"


def to_json_dict(evaluation: Evaluation, per_query: bool) -> dict[str, object]:
    return {"per_query": evaluation.per_query if per_query else {}, "all": evaluation.summary}


def render_json(evaluation: Evaluation, per_query: bool) -> str:
    """``{"per_query": {qid: {measure: value}}, "all": {measure: value}}`` with full-precision floats."""
    return json.dumps(to_json_dict(evaluation, per_query), indent=2) + "\n"


def render_csv(evaluation: Evaluation, per_query: bool) -> str:
    """Long CSV: ``measure,query,value`` (full precision)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["measure", "query", "value"])
    if per_query:
        for qid, values in evaluation.per_query.items():
            for name, value in values.items():
                writer.writerow([name, qid, repr(value) if isinstance(value, float) else value])
    for name, total in evaluation.summary.items():
        writer.writerow([name, "all", repr(total) if isinstance(total, float) else total])
    return buffer.getvalue()


def render_table(evaluation: Evaluation, per_query: bool) -> Table:
    """A Rich table for people: one row per measure, one column per query shown."""
    from rich.table import Table

    queries = list(evaluation.per_query) if per_query else []
    table = Table(title=f"run {evaluation.summary.get('runid', '')}", show_lines=False)
    table.add_column("measure", style="bold")
    for qid in queries:
        table.add_column(qid, justify="right")
    table.add_column("all", justify="right", style="cyan")
    for name in evaluation.measures:
        if name == "runid":
            continue
        row = [name]
        for qid in queries:
            value = evaluation.per_query[qid].get(name)
            row.append("" if value is None else _trec_value(name, value))
        row.append(_trec_value(name, evaluation.summary[name]))
        table.add_row(*row)
    return table
