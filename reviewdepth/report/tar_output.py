"""Render a `TarEvaluation`: the CLEF TAR line format, trec_eval-style lines, JSON, CSV or a Rich table.

Nothing is computed here; values are only rounded for display as the official scripts print them:
``r3`` = Python ``round(v, 3)`` (2017 and clean), ``auto`` = 2018 script (< 1 → 3 decimals, else 0),
``r0`` = ``round(v, 0)``; integers print as integers, floats with Python's ``str`` (``6222.0``, ``0.7``).
"""

from __future__ import annotations

import csv
import io
import json
from typing import TYPE_CHECKING

from reviewdepth.measures.tar_suite import Style, Value
from reviewdepth.report.tar_model import TarEvaluation

if TYPE_CHECKING:
    from rich.table import Table

LABEL_KEYS = frozenset({"topic_id"})


def format_value(value: Value, style: Style) -> str:
    """One value as the CLEF scripts print it."""
    if isinstance(value, str) or style == "raw":
        return str(value)
    if style == "r0":
        return str(round(value, 0))
    if isinstance(value, int):
        return str(value)
    if style == "auto" and value >= 1:
        return str(round(value, 0))
    return str(round(value, 3))


def render_tar(evaluation: TarEvaluation) -> str:
    """The official scripts' output: notices and ``topic<TAB>measure<TAB>value`` blocks in run order, then the
    ``ALL`` block (per-topic blocks are always printed, as the scripts do)."""
    lines: list[str] = []
    for kind, text in evaluation.events:
        if kind != "topic":
            lines.append(text)
            continue
        values = evaluation.per_query[text]
        lines.extend(f"{text}\t{name}\t{format_value(values[key], style)}" for name, key, style in evaluation.layout)
    lines.extend(f"ALL\t{name}\t{format_value(evaluation.summary[key], style)}"
                 for name, key, style in evaluation.layout)
    return "\n".join(lines) + "\n"


def _numeric(values: dict[str, Value]) -> dict[str, Value]:
    return {k: v for k, v in values.items() if k not in LABEL_KEYS}


def _trec_line(name: str, qid: str, value: Value) -> str:
    if isinstance(value, int):
        return "%-22s\t%s\t%ld" % (name, qid, value)
    return "%-22s\t%s\t%6.4f" % (name, qid, float(value))


def render_trec_lines(evaluation: TarEvaluation, per_query: bool) -> str:
    """trec_eval's ``%-22s\\t%s\\t%6.4f`` lines (integers as integers), per-topic blocks first with ``-q``."""
    lines: list[str] = []
    if per_query:
        for qid, values in evaluation.per_query.items():
            lines.extend(_trec_line(k, qid, v) for k, v in _numeric(values).items())
    lines.extend(_trec_line(k, "all", v) for k, v in _numeric(evaluation.summary).items())
    return "\n".join(lines) + "\n"


def render_json(evaluation: TarEvaluation, per_query: bool) -> str:
    """``{"per_query": {topic: {measure: value}}, "all": {measure: value}}`` at full precision, as the trec
    suite."""
    body = {
        "per_query": {q: _numeric(v) for q, v in evaluation.per_query.items()} if per_query else {},
        "all": _numeric(evaluation.summary),
    }
    return json.dumps(body, indent=2) + "\n"


def render_csv(evaluation: TarEvaluation, per_query: bool) -> str:
    """Long CSV ``measure,query,value`` (full precision)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["measure", "query", "value"])
    rows: list[tuple[str, dict[str, Value]]] = list(evaluation.per_query.items()) if per_query else []
    rows.append(("all", evaluation.summary))
    for qid, values in rows:
        for name, value in _numeric(values).items():
            writer.writerow([name, qid, repr(value) if isinstance(value, float) else value])
    return buffer.getvalue()


def render_table(evaluation: TarEvaluation, per_query: bool) -> Table:
    """A Rich table: one row per measure, one column per topic shown, then ``all``."""
    from rich.table import Table

    queries = list(evaluation.per_query) if per_query else []
    table = Table(title=f"run {evaluation.run_id} (tar suite, --compat {evaluation.compat})")
    table.add_column("measure", style="bold")
    for qid in queries:
        table.add_column(qid, justify="right")
    table.add_column("all", justify="right", style="cyan")
    for name in evaluation.measures:
        row = [name]
        for qid in queries:
            value = evaluation.per_query[qid].get(name)
            row.append("" if value is None else format_value(value, "r3"))
        row.append(format_value(evaluation.summary[name], "r3"))
        table.add_row(*row)
    return table
