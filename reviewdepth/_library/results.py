"""The library's result types: frozen, typed, with ``to_dict()``, ``to_pandas()`` (pandas imported only then) and
``_repr_html_`` for notebooks. Each keeps the result the use case returned, so its other renderings (trec_eval's
lines, the report's HTML) are the renderer set's, the same text the CLI prints."""

from __future__ import annotations

import html
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the report's modules load when a result is rendered, not when the library is imported
    from reviewdepth.report.status_model import TopicStatus

Value = float | int | str


def _frozen(mapping: Mapping[str, Any]) -> Mapping[str, Any]:
    return MappingProxyType(dict(mapping))


def _cell(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.4f}"
    return html.escape("" if value is None else str(value))


def _html_table(columns: list[str], rows: list[list[object]], caption: str = "") -> str:
    head = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
    body = "".join("<tr>" + "".join(f"<td>{_cell(v)}</td>" for v in row) + "</tr>" for row in rows)
    title = f"<caption>{html.escape(caption)}</caption>" if caption else ""
    return f"<table>{title}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


@dataclass(frozen=True)
class EvaluationResult:
    """The measures of one run: ``summary`` (measure -> value over the queries, trec_eval's ``all`` line) and, when
    asked for, ``per_query`` (query -> measure -> value), in trec_eval's order. ``result["map"]`` is the summary's
    value. The values are the very numbers ``reviewdepth eval`` prints (at full precision here)."""

    suite: str
    run_id: str
    measures: tuple[str, ...]
    summary: Mapping[str, Value]
    per_query: Mapping[str, Mapping[str, Value]]
    raw: Any = field(default=None, repr=False, compare=False)

    def __getitem__(self, measure: str) -> Value:
        return self.summary[measure]

    def to_dict(self) -> dict[str, Any]:
        """Plain data: suite, run_id, measures, summary and per_query."""
        return {"suite": self.suite, "run_id": self.run_id, "measures": list(self.measures),
                "summary": dict(self.summary), "per_query": {q: dict(v) for q, v in self.per_query.items()}}

    def to_pandas(self) -> Any:
        """A DataFrame, one row per query (``all`` last: the summary) and one column per measure."""
        import pandas as pd

        rows = {q: dict(v) for q, v in self.per_query.items()}
        rows["all"] = dict(self.summary)
        frame = pd.DataFrame.from_dict(rows, orient="index")
        frame.index.name = "query_id"
        return frame[[m for m in self.measures if m in frame.columns]]

    def to_trec(self) -> str:
        """trec_eval's lines, as ``reviewdepth eval`` prints them (``-q`` when per-query values were asked for)."""
        from reviewdepth.report.render import render

        if self.raw is None:
            raise ValueError("to_trec: this result came from the HTTP API, whose JSON lacks trec_eval's runid line")
        return render(self.raw, "trec", per_query=bool(self.per_query))

    def _repr_html_(self) -> str:
        measures = [m for m in self.measures if m in self.summary]
        rows: list[list[object]] = [[q, *(v.get(m) for m in measures)] for q, v in self.per_query.items()]
        rows.append(["all", *(self.summary.get(m) for m in measures)])
        return _html_table(["query", *measures], rows, f"{self.suite} suite, run {self.run_id}")


@dataclass(frozen=True)
class ComparisonCell:
    """One run on one measure: its mean over the shared queries and, for a run other than the baseline, the paired
    test against the baseline (difference, effect size d_z, statistic, p-value, corrected p-value, significant)."""

    measure: str
    run: str
    mean: float
    difference: float | None
    effect_size: float | None
    statistic: float | None
    p_value: float | None
    p_adjusted: float | None
    significant: bool


@dataclass(frozen=True)
class ComparisonResult:
    """Several runs tested against the first (the baseline), as ``reviewdepth compare`` computes them."""

    suite: str
    test: str
    correction: str
    alpha: float
    runs: tuple[str, ...]
    measures: tuple[str, ...]
    queries: tuple[str, ...]
    cells: tuple[ComparisonCell, ...]
    notes: tuple[str, ...]
    raw: Any = field(default=None, repr=False, compare=False)

    def cell(self, measure: str, run: str) -> ComparisonCell:
        """The cell of ``run`` on ``measure``."""
        for c in self.cells:
            if c.measure == measure and c.run == run:
                return c
        raise KeyError((measure, run))

    def to_dict(self) -> dict[str, Any]:
        """The JSON ``reviewdepth compare --format json`` prints, as data."""
        if self.raw is None:  # from the HTTP API: its JSON held these fields
            return {"suite": self.suite, "runs": list(self.runs), "measures": list(self.measures), "test": self.test,
                    "correction": self.correction, "alpha": self.alpha, "queries": list(self.queries),
                    "notes": list(self.notes), "cells": [dict(c.__dict__) for c in self.cells]}
        data: dict[str, Any] = json.loads(self.raw.to_json())
        return data

    def to_pandas(self) -> Any:
        """A DataFrame with one row per (measure, run) cell."""
        import pandas as pd

        return pd.DataFrame([c.__dict__ for c in self.cells])

    def to_markdown(self) -> str:
        """The table ``reviewdepth compare --format markdown`` prints."""
        from reviewdepth.report.render import render

        return render(self.raw, "markdown")

    def to_latex(self) -> str:
        """The table ``reviewdepth compare --format latex`` prints."""
        from reviewdepth.report.render import render

        return render(self.raw, "latex")

    def _repr_html_(self) -> str:
        rows: list[list[object]] = []
        for c in self.cells:
            mark = "*" if c.significant else ""
            rows.append([c.measure, c.run, c.mean, c.difference, c.p_adjusted, mark])
        return _html_table(["measure", "run", "mean", "difference", "p (corrected)", f"p < {self.alpha}"], rows,
                           f"{self.test} test, {self.correction} correction, {len(self.queries)} shared queries; "
                           f"baseline {self.runs[0]}")


@dataclass(frozen=True)
class ReviewResult:
    """A review result the CLI renders — the depth report (``kind`` ``report``), the stop plan (``plan``), the
    monitor's status (``monitor``) or a simulation (``simulation``) — with its typed model in ``model`` (the
    CLI's own object: `reviewdepth.report.model.Report`, `reviewdepth.services.answers.stop_plan.TopicStopPlan`,
    `reviewdepth.report.monitor_model.MonitorReport`, `reviewdepth.report.simulation_model.SimulationReport`).
    Attributes not found here are read from the model (``result.status``, ``result.plan``)."""

    kind: str
    model: Any = field(repr=False)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name == "model":  # `model` itself missing: a copy or unpickling in progress
            raise AttributeError(name)
        return getattr(self.model, name)

    @property
    def decision(self) -> TopicStatus | None:
        """The topic's one status (`reviewdepth.report.status_model.TopicStatus`, the report's and the monitor's
        alike), the decision every door prints; None for a plan or a simulation."""
        if self.kind == "report":
            status: TopicStatus = self.model.answer.topic_status
            return status
        if self.kind == "monitor":
            status = self.model.topic_status
            return status
        return None

    def to_dict(self) -> dict[str, Any]:
        """The JSON the CLI prints with ``--format json``, as data."""
        if self.kind == "plan":
            from reviewdepth.report.model import json_safe
            from reviewdepth.report.stop_plan_render import as_data

            data: dict[str, Any] = json.loads(json.dumps(json_safe(as_data(self.model)), ensure_ascii=False))
            return data
        data = json.loads(self.model.to_json())
        return data

    def to_json(self) -> str:
        """`to_dict` as JSON text."""
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False) + "\n"

    def to_text(self) -> str:
        """The table the CLI prints (plain text)."""
        if self.kind == "plan":
            from reviewdepth.report.stop_plan_render import render_text

            return str(render_text(self.model))
        from reviewdepth.report.render import render

        return render(self.model, "table")

    def to_html(self) -> str:
        """The HTML page the CLI writes with ``--format html`` (the monitor, which has none, as preformatted
        text)."""
        if self.kind == "plan":
            from reviewdepth.report.stop_plan_render import render_html

            return str(render_html(self.model))
        if self.kind == "monitor":
            return f"<pre>{html.escape(self.to_text())}</pre>"
        from reviewdepth.report.render import render

        return render(self.model, "html")

    def _repr_html_(self) -> str:
        return self.to_html()

    def __repr__(self) -> str:
        return f"<reviewdepth {self.kind} result>\n{self.to_text()}"
