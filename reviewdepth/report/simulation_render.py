"""Render a `SimulationReport`: a Rich table, CSV (one row per rule), and a self-contained HTML page (inline CSS and
SVG charts, no scripts) from templates/simulation.html.j2. Formatting only; JSON is the report's own."""

from __future__ import annotations

import csv
import dataclasses
import io
import math
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from reviewdepth.estimation.plural import counted
from reviewdepth.report.simulation_model import QUANTILES, SimulationChart, SimulationReport, SimulationRule
from reviewdepth.report.wording import KIND_LABELS, SHORT_KINDS

if TYPE_CHECKING:
    from rich.console import Group

CSV_COLUMNS = ("rule", "kind", "topics", "runs", "stops", "never_stopped", "failures", "failure_rate",
               "failure_low", "failure_high", *(f"recall_{q}" for q in QUANTILES), "reviewed_ratio_median",
               "total_ratio_median", "false_stop_rate", "false_stop_low", "false_stop_high", "cost_ratio_median")
# the terminal's columns (it must fit 80); the HTML page has room for the long names
TABLE_HEADERS = ("Rule", "Kind", "Failure rate\n[CI]", "Stops", "False/run\n[CI]", "Recall\np05",
                 "Cost / d*\nrev/+smp")
HTML_HEADERS = ("Rule", "Kind", "Failure rate", "Clopper–Pearson interval", "Stops / runs", "Never stopped",
                "False stops per run [interval]",
                "Recall at stop p05 · p50 · p95", "Reviewed / oracle depth", "(Reviewed + sampled) / oracle depth",
                "Cost / oracle review cost")
KIND_NOTE = ("cert.: certified; heur.: heuristic, no guarantee; inv.*: invalid as used, a one-look rule used at "
             "every look, which its guarantee does not cover; False/run: false stops per run with its "
             "Clopper–Pearson interval (what a certified rule's guarantee bounds by 1 − confidence); d*: the oracle "
             "depth (the smallest depth holding the target's share of the relevant documents); rev: reviewed, "
             "+smp: reviewed + sampled; cost (in place of +smp when --cost is not 1 each): (review cost × reviewed + "
             "sample cost × sampled) / (review cost × d*); all: medians over every run (a run that never "
             "stopped reviewed the whole queue); the recall at stop of a run that never stopped is 1")


def _number(value: Any, places: int = 3) -> str:
    if value is None or (isinstance(value, float) and value != value):
        return "—"
    return f"{value:.{places}f}"


def settings_line(report: SimulationReport) -> str:
    s = report.settings
    design: str = s.design
    if s.sample_size:
        design += f" (sample {s.sample_size:,})"
    if s.every:
        design += f" (every {s.every:,}th document audited)"
    done = f"{s.replicates_done:,} of {s.replicates:,}" if s.partial else f"{s.replicates:,}"
    produce = ("" if s.produce_cost == 1 else f", produced unreviewed {s.produce_cost:g}")
    costs = ("" if s.review_cost == s.sample_cost == s.produce_cost == 1 else
             f" · costs review {s.review_cost:g}, sample {s.sample_cost:g}{produce} per document"
             + (" (a replayed review produces nothing unreviewed)" if produce else ""))
    return (f"target recall {s.target} · confidence {s.confidence:g} · design {design} · looks every "
            f"{s.looks_every:,} documents · {done} replicates per topic · seed {s.seed} · "
            f"{counted(s.topics, 'topic')} from {s.source}{costs}")


def rule_cells(rule: SimulationRule) -> list[str]:
    """The HTML table's cells of one rule, in `HTML_HEADERS` order."""
    q = rule.recall_at_stop
    return [rule.rule, KIND_LABELS.get(rule.kind, rule.kind), _number(rule.failure_rate),
            f"[{_number(rule.failure_low)}, {_number(rule.failure_high)}]",
            f"{rule.stops:,} / {rule.runs:,}", f"{rule.never_stopped:,}",
            f"{_number(rule.false_stop_rate)} [{_number(rule.false_stop_low)}, "
            f"{_number(rule.false_stop_high)}]",
            " · ".join(_number(getattr(q, k)) for k in ("p05", "p50", "p95")),
            _number(rule.reviewed_ratio_median, 2), _number(rule.total_ratio_median, 2),
            _number(rule.cost_ratio_median, 2)]


def short_cells(rule: SimulationRule, costed: bool = False) -> list[str]:
    """The terminal table's cells of one rule, in `TABLE_HEADERS` order (``costed``: the cost ratio at the
    per-role costs in place of the unit total, so the table keeps its width)."""
    q = rule.recall_at_stop
    second = rule.cost_ratio_median if costed else rule.total_ratio_median
    return [rule.rule, SHORT_KINDS.get(rule.kind, rule.kind),
            f"{_number(rule.failure_rate)}\n[{_number(rule.failure_low)}–{_number(rule.failure_high)}]",
            # the rate the guarantee bounds, with its exact interval (on a second line: the table keeps 80 columns)
            f"{rule.stops:,}", f"{_number(rule.false_stop_rate)}\n[{_number(rule.false_stop_low)}–"
                               f"{_number(rule.false_stop_high)}]", _number(q.p05, 2),
            f"{_number(rule.reviewed_ratio_median, 2)}/{_number(second, 2)}"]


def headline(report: SimulationReport) -> str:
    if report.partial:
        return (f"PARTIAL: interrupted after {report.settings.replicates_done:,} of "
                f"{report.settings.replicates:,} replicates per topic")
    return "Stopping rules replayed on completed reviews"


def render_table(report: SimulationReport) -> Group:
    from rich import box
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    runs = report.rules[0].runs if report.rules else 0
    table = Table(title=f"per rule, over {runs:,} runs (topics × replicates)", title_justify="left",
                  box=box.SIMPLE_HEAD, padding=(0, 1, 0, 0), show_edge=False)
    costed = not report.settings.review_cost == report.settings.sample_cost == 1
    headers = (*TABLE_HEADERS[:-1], "Cost / d*\nrev/cost") if costed else TABLE_HEADERS
    for i, header in enumerate(headers):
        # figures never wrap; a long rule name folds (every figure of the row stays whole at 80 columns)
        table.add_column(header, overflow="fold", justify="left" if i < 2 else "right", no_wrap=i > 0)
    for rule in report.rules:
        table.add_row(*short_cells(rule, costed))
    parts: list[Any] = [Text(headline(report), style="bold yellow" if report.partial else "bold"),
                        Text(settings_line(report)), table, Text(report.failure_meaning), Text(KIND_NOTE)]
    parts.extend(Text(f"note: {n}") for n in report.notes)
    return Group(*parts)


def render_csv(report: SimulationReport) -> str:
    """One row per rule, full precision; the settings as ``# key=value`` lines would not be CSV, so they are
    columns repeated on each row (``design``, ``target``, ``confidence``, ``replicates_done``, ``partial``)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    extra = ("design", "target", "confidence", "looks_every", "replicates_done", "seed", "partial", "review_cost",
             "sample_cost", "produce_cost")
    writer.writerow([*CSV_COLUMNS, *extra])
    for rule in report.rules:
        fields = dataclasses.asdict(rule)
        values = {**fields, **{f"recall_{k}": v for k, v in fields["recall_at_stop"].items()}}
        row = [_csv_cell(values.get(c)) for c in CSV_COLUMNS]
        writer.writerow([*row, *(getattr(report.settings, k) for k in extra)])
    return buffer.getvalue()


def _csv_cell(value: Any) -> Any:
    """Full precision; no value (None, or NaN: a failure rate with no stop) is an empty cell."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return repr(value) if isinstance(value, float) else value


def render_html(report: SimulationReport) -> str:
    from markupsafe import Markup

    from reviewdepth.report.charts import recall_cost_svg
    from reviewdepth.report.templating import templates

    target = float(Fraction(report.settings.target))
    charts = []
    by_rule = {c.rule: c for c in report.charts}
    for rule in report.rules:
        points = by_rule.get(rule.rule, SimulationChart(rule.rule, [], []))
        kind = KIND_LABELS.get(rule.kind, rule.kind)
        # the SVG comes from matplotlib, not from report text: its only text is titles and labels it escaped
        charts.append({"rule": rule.rule, "kind": kind, "svg": Markup(recall_cost_svg(
            points.cost, points.recall, target, f"{rule.rule}: {kind}"))})
    context = {"headline": headline(report), "settings_line": settings_line(report), "partial": report.partial,
               "failure_meaning": report.failure_meaning, "headers": HTML_HEADERS,
               "rules": [{"cells": rule_cells(r), "kind": r.kind, "description": r.description}
                         for r in report.rules],
               "topics": report.topics, "charts": charts, "notes": report.notes}
    text: str = templates().get_template("simulation.html.j2").render(**context)
    return text
