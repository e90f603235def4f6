"""Runs drawn from files, with no database: several runs' curves for one topic on one chart
(`reviewdepth plot --run`), each in the order the TAR suite reviews it."""

from __future__ import annotations

import numpy as np

from reviewdepth.report.charts import MEDIA_TYPES, ChartFormat, ChartKind, Plot, chart_title, render_overlay
from reviewdepth.report.model import Gain, PrecisionRecall
from reviewdepth.report.tar_model import TarEvaluation
from reviewdepth.services.errors import Invalid
from reviewdepth.services.evaluation.evaluate import EvalInput, EvalRequest, evaluate


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
    it (`services.evaluation.evaluate`, ``--suite tar``: file order for CLEF runs, by score for TREC runs), R from the
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
