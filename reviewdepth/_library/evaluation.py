"""`evaluate` and `compare`: the use cases behind ``reviewdepth eval`` and ``reviewdepth compare``
(`reviewdepth.services.evaluation.evaluate`, `reviewdepth.services.evaluation.compare`) called with qrels and runs as
Python data."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from reviewdepth._library.inputs import (
    QrelsLike,
    RunLike,
    named_runs,
    qrels_columns,
    qrels_input,
    run_columns,
    run_input,
)
from reviewdepth._library.results import ComparisonCell, ComparisonResult, EvaluationResult


def evaluate(qrels: QrelsLike, run: RunLike, measures: Sequence[str] | str = (), per_query: bool = False, *,
             suite: str = "trec", relevance_level: int = 1, complete: bool = False, max_docs: int | None = None,
             judged_only: bool = False, trec_eval_version: int = 9, compat: str = "none",
             num_docs: int | None = None, run_format: str = "auto") -> EvaluationResult:
    """Evaluate ``run`` against ``qrels``, exactly as ``reviewdepth eval`` does.

    Args:
        qrels: a TREC qrels path (gzip ok), ``{query_id: {doc_id: relevance}}``, a pandas or polars DataFrame with
            query, document and relevance columns (``query_id``/``qid``, ``doc_id``/``docno``,
            ``relevance``/``rel``), or records such as ir_measures' ``Qrel``.
        run: a TREC or CLEF TAR run path, ``{query_id: {doc_id: score}}``, a DataFrame with query, document and
            score columns, or records such as ir_measures' ``ScoredDoc``.
        measures: trec_eval measure names or groups, as ``eval -m`` (``"map"``, ``"P.5,10"``, ``"official"``,
            ``"all_trec"``); none: trec_eval's default set. The tar suite takes none (it computes its own).
        per_query: keep each query's values (``eval -q``) besides the summary.
        suite: ``"trec"`` (trec_eval's measures) or ``"tar"`` (the recall-oriented review measures).
        relevance_level: a qrels value >= this is relevant (``-l``).
        complete: average over every qrels query, missing ones scoring 0 (``-c``).
        max_docs: evaluate the first N documents of each query (``-M``).
        judged_only: drop unjudged documents from the ranking (``-J``).
        trec_eval_version: 9 (9.0.8) or 10 (10.0) rules.
        compat: tar suite only: ``none``, ``clef2017``, ``clef2019`` or ``asreview``.
        num_docs: ``-N``, the documents in the collection.
        run_format: tar suite only: ``auto``, ``clef`` (file order ranks) or ``trec`` (scores rank).

    Returns:
        The summary (and per-query) values, identical to the CLI's.

    Raises:
        ValueError: a bad option, measure name or input (the message names the file or row, line and field).
    """
    from reviewdepth.formats.errors import InputError
    from reviewdepth.measures.suite import MeasureError
    from reviewdepth.services.evaluation.evaluate import EvalRequest
    from reviewdepth.services.evaluation.evaluate import evaluate as evaluate_use_case

    chosen = [measures] if isinstance(measures, str) else list(measures)
    request = EvalRequest(suite=suite, relevance_level=relevance_level, measures=chosen, complete=complete,
                          max_docs=max_docs, version=trec_eval_version, compat=compat, num_docs=num_docs,
                          run_format=run_format, judged_only=judged_only)
    try:
        if suite == "trec" and not (_is_path(qrels) and _is_path(run)):
            result: Any = _evaluate_columns(qrels, run, request)
        else:
            result = evaluate_use_case(qrels_input(qrels), run_input(run), request)
    except InputError as exc:
        raise ValueError(exc.describe()) from None
    except MeasureError as exc:
        raise ValueError(str(exc)) from None
    run_id = str(result.summary.get("runid", getattr(result, "run_id", "")))
    return EvaluationResult(
        suite=suite, run_id=run_id, measures=tuple(result.measures), summary=_frozen(result.summary),
        per_query=_frozen({q: _frozen(v) for q, v in result.per_query.items()}) if per_query else _frozen({}),
        raw=result)


def _is_path(value: Any) -> bool:
    return isinstance(value, (str, os.PathLike))


def _evaluate_columns(qrels: QrelsLike, run: RunLike, request: Any) -> Any:
    """The trec suite of `reviewdepth.services.evaluation.evaluate.evaluate` with data in place of files: the same
    option
    checks, then the data as the columns the readers make of a file (a path still read by the reader) and the
    same join and measures (`rank_columns`, `measure_ranked`)."""
    from reviewdepth.formats.prescan import EVAL_SCAN_HASHES
    from reviewdepth.formats.trec import parse_qrels, parse_run
    from reviewdepth.services.evaluation.evaluate import (
        EvalInput,
        EvalOptions,
        SuiteMismatch,
        measure_ranked,
        rank_columns,
    )

    misplaced = request.misplaced()
    if misplaced:
        raise SuiteMismatch(request.suite, misplaced)
    options = EvalOptions(relevance_level=request.relevance_level, complete=request.complete,
                          max_docs=request.max_docs, version=request.version, measures=list(request.measures),
                          judged_only=request.judged_only, num_docs=request.num_docs)
    options.validate()
    comments = options.version >= 10
    qrels_data = (EvalInput(os.fspath(qrels)).parse(parse_qrels, allow_comments=comments, hashes=EVAL_SCAN_HASHES,
                                                    narrow_rel=True)
                  if _is_path(qrels) else qrels_columns(qrels))
    run_data = (EvalInput(os.fspath(run)).parse(parse_run, allow_comments=comments, hashes=EVAL_SCAN_HASHES)
                if _is_path(run) else run_columns(run))
    return measure_ranked(rank_columns(qrels_data, run_data, options))


def _frozen(mapping: Mapping[str, Any]) -> Mapping[str, Any]:
    from types import MappingProxyType

    return MappingProxyType(dict(mapping))


def compare(qrels: QrelsLike, runs: Mapping[str, RunLike] | Sequence[RunLike], measures: Sequence[str] = (), *,
            test: str = "t", correction: str = "holm", alpha: float = 0.05, permutations: int = 10_000,
            seed: int = 42, suite: str = "trec", relevance_level: int = 1,
            compat: str = "none") -> ComparisonResult:
    """Compare ``runs`` on ``qrels``, exactly as ``reviewdepth compare`` does: each measure's mean per run over the
    queries every run has, and a paired test of each run against the first (the baseline), corrected over each
    measure's comparisons.

    Args:
        qrels: as `evaluate` takes it.
        runs: a mapping of names to runs (its order kept, the first the baseline) or a sequence of runs (paths
            keep their file names, the others are named ``run1``, ``run2``, …); each run as `evaluate` takes it.
        measures: as ``compare -m``; none: ``map Rprec bpref P_10 recall_1000`` (trec suite) or the tar suite's
            defaults.
        test: ``t`` (paired Student t), ``wilcoxon`` or ``randomization``.
        correction: ``holm``, ``bonferroni`` or ``none``.
        alpha: significance level of the mark.
        permutations: randomization test: sign vectors drawn.
        seed: randomization test: random seed.
        suite: ``trec`` or ``tar``.
        relevance_level: a qrels value >= this is relevant.
        compat: tar suite: as `evaluate`.

    Returns:
        The means and the tests, the same numbers as ``reviewdepth compare --format json``.

    Raises:
        ValueError: a bad option or input.
    """
    from reviewdepth.formats.errors import InputError
    from reviewdepth.services.errors import ServiceError
    from reviewdepth.services.evaluation.compare import CompareRequest
    from reviewdepth.services.evaluation.compare import compare as compare_use_case

    request = CompareRequest(suite=suite, measures=[measures] if isinstance(measures, str) else list(measures),
                             test=test, correction=correction, alpha=alpha, permutations=permutations, seed=seed,
                             relevance_level=relevance_level, compat=compat)
    try:
        result = compare_use_case(qrels_input(qrels), named_runs(runs), request)
    except InputError as exc:
        raise ValueError(exc.describe()) from None
    except ServiceError as exc:
        raise ValueError(str(exc)) from None
    cells = tuple(ComparisonCell(measure=c.measure, run=c.run, mean=c.mean, difference=c.difference,
                                 effect_size=c.effect_size, statistic=c.statistic, p_value=c.p_value,
                                 p_adjusted=c.p_adjusted, significant=c.significant) for c in result.cells)
    return ComparisonResult(suite=result.suite, test=result.test, correction=result.correction, alpha=result.alpha,
                            runs=tuple(result.runs), measures=tuple(result.measures), queries=tuple(result.queries),
                            cells=cells, notes=tuple(result.notes), raw=result)
