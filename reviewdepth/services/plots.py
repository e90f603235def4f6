"""The report's charts as files: one use case behind `reviewdepth plot` and ``GET /topics/{t}/plots/{kind}.{fmt}``."""

from __future__ import annotations

import dataclasses
from typing import Literal

from sqlalchemy import Engine

from reviewdepth.report.charts import ChartFormat, ChartKind, chart_title, render_chart, render_overlay
from reviewdepth.report.depth_render import main_target
from reviewdepth.services.errors import Invalid
from reviewdepth.services.report import ReportOptions, build_report

MEDIA_TYPES: dict[str, str] = {"svg": "image/svg+xml", "png": "image/png"}


@dataclasses.dataclass(frozen=True)
class Plot:
    content: bytes
    media_type: Literal["image/svg+xml", "image/png"] | str


def build_plot(engine: Engine, topic: str, kind: ChartKind, fmt: ChartFormat, *, queue: str | None = None,
               policy: str = "latest", as_of: int | None = None) -> Plot:
    """Recall against depth (``gain``) or precision-recall (``pr``) of the topic's default report, as SVG or PNG."""
    report = build_report(engine, topic, ReportOptions(queue=queue, policy=policy, as_of=as_of))
    content = render_chart(kind, report.gain, report.precision_recall, main_target(report),
                           chart_title(kind, topic), fmt, report.settings.get("confidence"))
    return Plot(content, MEDIA_TYPES[fmt])


def build_queues_plot(engine: Engine, topic: str, kind: ChartKind, fmt: ChartFormat, queues: list[str], *,
                      policy: str = "latest", as_of: int | None = None) -> Plot:
    """Several queues of one topic on one chart: each queue's default report (the same policy and as-of point),
    its recall against depth (``gain``) or interpolated precision against recall (``pr``)."""
    if len(set(queues)) < 2:
        raise Invalid("--queue: give two or more different queues to draw them on one chart")
    series = []
    for queue in dict.fromkeys(queues):
        report = build_report(engine, topic, ReportOptions(queue=queue, policy=policy, as_of=as_of))
        series.append((queue, report.gain if kind == "gain" else report.precision_recall))
    content = render_overlay(kind, series, chart_title(kind, topic), fmt)
    return Plot(content, MEDIA_TYPES[fmt])
