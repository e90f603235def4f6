"""The report's charts as files: one use case behind `reviewdepth plot` and ``GET /topics/{t}/plots/{kind}.{fmt}``."""

from __future__ import annotations

import dataclasses
from typing import Literal

import numpy as np
from sqlalchemy import Engine

from reviewdepth.report.charts import ChartFormat, ChartKind, chart_title, render_chart, render_overlay
from reviewdepth.report.model import Gain, PrecisionRecall
from reviewdepth.report.tar_model import TarEvaluation
from reviewdepth.services.errors import Invalid
from reviewdepth.services.evaluate import EvalInput, EvalRequest, evaluate
from reviewdepth.services.report import ReportOptions, build_curves

MEDIA_TYPES: dict[str, str] = {"svg": "image/svg+xml", "png": "image/png"}


@dataclasses.dataclass(frozen=True)
class Plot:
    content: bytes
    media_type: Literal["image/svg+xml", "image/png"] | str


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


def run_curves(order: list[int], num_rels: int) -> tuple[Gain, PrecisionRecall]:
    """A run's gain and precision-recall curves for one topic from its review order (1 = relevant) and R:
    ``found(k) = Σ_{i ≤ k} rel_i``, ``recall(k) = found(k) / R``, ``precision(k) = found(k) / k`` and the
    interpolated precision ``max_{j ≥ k} precision(j)``."""
    found = np.cumsum(np.asarray(order, dtype=np.int64))
    depth = np.arange(1, len(found) + 1)
    precision = found / depth
    interpolated = np.maximum.accumulate(precision[::-1])[::-1]
    gain = Gain(depth=depth.tolist(), found=found.tolist(), relevant_estimate=num_rels)
    pr = PrecisionRecall(recall=(found / num_rels).tolist(), precision=precision.tolist(),
                         interpolated_precision=interpolated.tolist())
    return gain, pr


def build_runs_plot(qrels: EvalInput, runs: list[EvalInput], topic: str, kind: ChartKind, fmt: ChartFormat, *,
                    relevance_level: int = 1) -> Plot:
    """Several runs' curves for one topic on one chart, from files: each run in the order the tar suite reviews
    it (`services.evaluate`, ``--suite tar``: file order for CLEF runs, by score for TREC runs), R from the
    qrels. No database."""
    if not runs:
        raise Invalid("--run: give one or more run files")
    qrels = EvalInput(qrels.name, qrels.read())  # read once: it may be standard input
    series: list[tuple[str, Gain | PrecisionRecall]] = []
    for run in runs:
        result = evaluate(qrels, run, EvalRequest(suite="tar", relevance_level=relevance_level))
        assert isinstance(result, TarEvaluation)
        if topic not in result.review_order:
            raise Invalid(f"{run.name}: topic {topic!r} has no run lines with relevant documents in {qrels.name}")
        order, num_rels = result.review_order[topic]
        gain, pr = run_curves(order, num_rels)
        series.append((run.name.rsplit("/", 1)[-1].removesuffix(".gz"), gain if kind == "gain" else pr))
    content = render_overlay(kind, series, chart_title(kind, topic), fmt, known_r=True)
    return Plot(content, MEDIA_TYPES[fmt])
