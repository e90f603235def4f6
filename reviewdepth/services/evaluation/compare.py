"""Compare runs against the first (the baseline): the use case behind ``reviewdepth compare``. Each run is
evaluated by `services.evaluation.evaluate.evaluate` (the one evaluation use case, trec or tar suite); the per-query (or
per-topic) values of the queries every run shares then go through the paired tests of `measures.compare`."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from reviewdepth.measures.compare import (
    CORRECTIONS,
    DEFAULT_PERMUTATIONS,
    DEFAULT_SEED,
    TESTS,
    adjust,
    paired_test,
)
from reviewdepth.measures.suite import Evaluation, MeasureError
from reviewdepth.report.compare_model import Comparison, ComparisonCell
from reviewdepth.report.tar_model import TarEvaluation
from reviewdepth.services.errors import Invalid
from reviewdepth.services.evaluation.evaluate import EvalInput, EvalRequest, evaluate

# the measures compared when -m is not given: the trec suite's ranking summaries, and the tar suite's
# recall-oriented ones (those the chosen --compat has)
DEFAULT_TREC_MEASURES: tuple[str, ...] = ("map", "Rprec", "bpref", "P_10", "recall_1000")
DEFAULT_TAR_MEASURES: tuple[str, ...] = ("ap", "last_rel", "norm_last_rel", "wss_95", "wss_100", "norm_area",
                                         "NCG@20", "total_cost")


@dataclass
class CompareRequest:
    """The suite and its options (as ``eval`` takes them), the measures, the test, the correction and the
    significance level; ``permutations`` and ``seed`` are the randomization test's."""

    suite: str = "trec"
    measures: list[str] = field(default_factory=list)
    test: str = "t"
    correction: str = "holm"
    alpha: float = 0.05
    permutations: int = DEFAULT_PERMUTATIONS
    seed: int = DEFAULT_SEED
    relevance_level: int = 1
    compat: str = "none"
    run_format: str = "auto"

    def validate(self) -> None:
        if self.test not in TESTS:
            raise Invalid(f"--test must be one of {', '.join(TESTS)}, not {self.test!r}")
        if self.correction not in CORRECTIONS:
            raise Invalid(f"--correction must be one of {', '.join(CORRECTIONS)}, not {self.correction!r}")
        if not 0.0 < self.alpha < 1.0:
            raise Invalid(f"--alpha must be between 0 and 1, not {self.alpha}")
        if self.permutations < 1:
            raise Invalid(f"--permutations must be >= 1, not {self.permutations}")


def run_labels(names: list[str]) -> list[str]:
    """Each run's label: its file name (less ``.gz``), with the parent folders added where two names are the same."""
    paths = [Path(n) for n in names]
    labels = [p.name.removesuffix(".gz") for p in paths]
    if len(set(labels)) < len(labels):
        labels = [str(p) for p in paths]
    return labels


def _numeric(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def _chosen_measures(result: Evaluation | TarEvaluation, requested: list[str], suite: str) -> list[str]:
    """The compared measures: for the trec suite those the evaluation has per query (runid, num_q and gm_map are
    summaries only); for the tar suite the requested names, checked against the result's measures."""
    sample = next(iter(result.per_query.values()), {})
    numeric = [m for m in result.measures if m in sample and _numeric(sample[m]) is not None]
    if suite == "tar":
        if not requested:
            return [m for m in DEFAULT_TAR_MEASURES if m in numeric]
        names = [n for raw in requested for n in raw.split(",") if n]
        for name in names:
            if name not in numeric:
                raise Invalid(f"-m: unknown tar measure {name!r}; known: {', '.join(numeric)}")
        return list(dict.fromkeys(names))
    chosen = [m for m in result.measures if m in numeric]
    if not chosen:
        raise Invalid("-m: none of the requested measures has per-query values (runid, num_q and gm_map are "
                      "summaries only)")
    return chosen


def compare(qrels: EvalInput, runs: list[EvalInput], request: CompareRequest) -> Comparison:
    """Evaluate every run, keep the queries all of them have, and test each run against ``runs[0]`` on every
    measure. Raises `Invalid` for a bad request (fewer than two runs, unknown test, measure or correction, no
    shared queries), `InputError` for a bad file."""
    request.validate()
    if len(runs) < 2:
        raise Invalid("compare needs at least two runs (the first is the baseline)")
    qrels = EvalInput(qrels.name, qrels.read())  # read once: it may be standard input
    trec_measures = list(request.measures or DEFAULT_TREC_MEASURES) if request.suite == "trec" else []
    eval_request = EvalRequest(suite=request.suite, relevance_level=request.relevance_level,
                               measures=trec_measures, compat=request.compat, run_format=request.run_format)
    results: list[Evaluation | TarEvaluation] = []
    for run in runs:
        try:
            results.append(evaluate(qrels, run, eval_request))
        except MeasureError as exc:
            raise Invalid(f"-m: {exc}") from None
    labels = run_labels([r.name for r in runs])
    measures = _chosen_measures(results[0], request.measures, request.suite)

    notes: list[str] = []
    shared = set(results[0].per_query)
    for label, result in zip(labels[1:], results[1:], strict=True):
        common = shared & set(result.per_query)
        if not common:
            raise Invalid(f"run {label} has no queries in common with the runs before it "
                          f"(baseline {labels[0]})")
        shared = common
    queries = [q for q in results[0].per_query if q in shared]
    unit = "topics" if request.suite == "tar" else "queries"
    left_out = list(dict.fromkeys(q for result in results for q in result.per_query if q not in shared))
    if left_out:
        lacking = [label for label, result in zip(labels, results, strict=True)
                   if any(q not in result.per_query for q in left_out)]
        named = ", ".join(left_out[:8]) + (", …" if len(left_out) > 8 else "")
        notes.append(f"{len(left_out)} {unit} left out, not in every run ({named}); missing from "
                     f"{', '.join(lacking)}")

    def scores(result: Evaluation | TarEvaluation, measure: str) -> np.ndarray:
        values = [_numeric(result.per_query[q].get(measure)) for q in queries]
        return np.array([math.nan if v is None else v for v in values], dtype=np.float64)

    cells: list[ComparisonCell] = []
    for measure in measures:
        base = scores(results[0], measure)
        cells.append(ComparisonCell(measure=measure, run=labels[0], mean=float(np.mean(base))))
        tested = []
        for label, result in zip(labels[1:], results[1:], strict=True):
            other = scores(result, measure)
            tested.append((label, other, paired_test(base, other, request.test,
                                                     permutations=request.permutations, seed=request.seed)))
        adjusted = adjust([t.p_value for _, _, t in tested], request.correction)
        for (label, other, t), p_adj in zip(tested, adjusted, strict=True):
            cells.append(ComparisonCell(
                measure=measure, run=label, mean=float(np.mean(other)), difference=t.mean_difference,
                effect_size=t.effect_size, statistic=t.statistic, p_value=t.p_value, p_adjusted=p_adj,
                significant=not math.isnan(p_adj) and p_adj < request.alpha))
    randomized = request.test == "randomization"
    return Comparison(suite=request.suite, test=request.test, correction=request.correction, alpha=request.alpha,
                      runs=labels, measures=measures, queries=queries, cells=cells,
                      permutations=request.permutations if randomized else None,
                      seed=request.seed if randomized else None, notes=notes)
