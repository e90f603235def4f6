"""A topic's charts as files: the use case behind `reviewdepth plot TOPIC` and ``GET /topics/{t}/plots/{kind}.{fmt}``
(run files drawn without a database: `reviewdepth.services.evaluation.run_plots`)."""

from __future__ import annotations

from sqlalchemy import Engine

from reviewdepth.report.charts import (
    MEDIA_TYPES,
    ChartFormat,
    ChartKind,
    Plot,
    chart_title,
    render_chart,
    render_overlay,
)
from reviewdepth.report.model import Gain, PrecisionRecall
from reviewdepth.services.answers.report import ReportOptions, build_curves
from reviewdepth.services.errors import Invalid


def build_plot(engine: Engine, topic: str, kind: ChartKind, fmt: ChartFormat, *, queue: str | None = None,
               policy: str = "latest", as_of: int | None = None) -> Plot:
    """Recall against depth (``gain``) or precision-recall (``pr``) of the topic's default report, as SVG or PNG."""
    # the chart's curves only: not the whole report (its plan replays, topic status and review quality)
    curves = build_curves(engine, topic, ReportOptions(queue=queue, policy=policy, as_of=as_of))
    content = render_chart(kind, curves.gain, curves.precision_recall, curves.target, chart_title(kind, topic), fmt,
                           curves.confidence)
    return Plot(content, MEDIA_TYPES[fmt])


def build_queues_plot(engine: Engine, topic: str, kind: ChartKind, fmt: ChartFormat, queues: list[str], *,
                      policy: str = "latest", as_of: int | None = None) -> Plot:
    """Several queues of one topic on one chart: each queue's default report (the same policy and as-of point),
    its recall against depth (``gain``) or interpolated precision against recall (``pr``)."""
    if len(set(queues)) < 2:
        raise Invalid("--queue: give two or more different queues to draw them on one chart")
    series: list[tuple[str, Gain | PrecisionRecall]] = []
    for queue in dict.fromkeys(queues):
        curves = build_curves(engine, topic, ReportOptions(queue=queue, policy=policy, as_of=as_of))
        series.append((queue, curves.gain if kind == "gain" else curves.precision_recall))
    content = render_overlay(kind, series, chart_title(kind, topic), fmt)
    return Plot(content, MEDIA_TYPES[fmt])
