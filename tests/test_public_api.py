"""The public surface of ``import reviewdepth as rd``: its names, their signatures and the fields of their results
are pinned here, so that changing any of them is a deliberate edit of this file. And ``import reviewdepth`` stays
light: none of the heavy packages is imported until a function is called."""

from __future__ import annotations

import dataclasses
import inspect
import subprocess
import sys

import reviewdepth as rd

EXPORTED = ["Client", "ComparisonCell", "ComparisonResult", "EvaluationResult", "ReviewResult", "__version__",
            "assess", "compare", "depth", "evaluate", "monitor", "plan", "sample_ranks", "simulate"]

SIGNATURES = {
    "evaluate": "(qrels: 'QrelsLike', run: 'RunLike', measures: 'Sequence[str] | str' = (), per_query: 'bool' = False, "
                "*, suite: 'str' = 'trec', relevance_level: 'int' = 1, complete: 'bool' = False, max_docs: "
                "'int | None' = None, judged_only: 'bool' = False, trec_eval_version: 'int' = 9, compat: 'str' = "
                "'none', num_docs: 'int | None' = None, run_format: 'str' = 'auto') -> 'EvaluationResult'",
    "compare": "(qrels: 'QrelsLike', runs: 'Mapping[str, RunLike] | Sequence[RunLike]', measures: 'Sequence[str]' = "
               "(), *, test: 'str' = 't', correction: 'str' = 'holm', alpha: 'float' = 0.05, permutations: 'int' = "
               "10000, seed: 'int' = 42, suite: 'str' = 'trec', relevance_level: 'int' = 1, compat: 'str' = 'none')"
               " -> 'ComparisonResult'",
    "depth": "(labels: 'Labels', target: 'float | str | Sequence[float | str]' = (0.8, 0.9, 0.95, 0.99), *, "
             "confidence: 'float' = 0.95, doc_ids: 'Sequence[str] | None' = None) -> 'ReviewResult'",
    "assess": "(labels: 'Labels', *, reviewed: 'int | None' = None, sample_size: 'int' = 0, seed: 'int | None' = "
              "None, target: 'float | str | Sequence[float | str]' = (0.8, 0.9, 0.95, 0.99), confidence: 'float' = "
              "0.95, interval: 'str' = 'hypergeometric', doc_ids: 'Sequence[str] | None' = None) -> 'ReviewResult'",
    "plan": "(labels: 'Labels', *, reviewed: 'int | None' = None, sample_size: 'int' = 0, seed: 'int | None' = None, "
            "target: 'float | str' = 0.95, confidence: 'float' = 0.95, power: 'float' = 0.8, review_cost: 'float' = "
            "1.0, sample_cost: 'float' = 1.0, produce_cost: 'float | None' = None, doc_ids: 'Sequence[str] | None' "
            "= None) -> 'ReviewResult'",
    "monitor": "(labels: 'Labels', *, reviewed: 'int | None' = None, sample_size: 'int' = 0, seed: 'int | None' = "
               "None, audit_every: 'int' = 0, audit_seed: 'int | None' = None, target: 'float | str' = 0.95, "
               "confidence: 'float' = 0.95, doc_ids: 'Sequence[str] | None' = None) -> 'ReviewResult'",
    "sample_ranks": "(labels: 'Labels', sample_size: 'int', seed: 'int', *, reviewed: 'int | None' = None) -> "
                    "'list[int]'",
    "simulate": "(rankings: 'Any' = None, *, qrels: 'str | os.PathLike[str] | None' = None, run: "
                "'str | os.PathLike[str] | None' = None, order: 'str' = 'given', design: 'str' = 'none', rules: "
                "'Sequence[str]' = (), target: 'float | str' = 0.95, confidence: 'float' = 0.95, look_every: 'int' = "
                "100, replicates: 'int' = 100, seed: 'int' = 0, sample_size: 'int' = 0, every: 'int' = 0, "
                "review_cost: 'float' = 1.0, sample_cost: 'float' = 1.0, workers: 'int' = 1) -> 'ReviewResult'",
}

CLIENT_METHODS = {
    "__init__": "(self, url: 'str', key: 'str | None' = None, *, timeout: 'float' = 60.0) -> 'None'",
    "health": "(self) -> 'Any'",
    "topics": "(self) -> 'Any'",
    "create_topic": "(self, name: 'str', population_size: 'int | None' = None) -> 'Any'",
    "put_ranking": "(self, topic: 'str', queue: 'str', doc_ids: 'Sequence[str]') -> 'Any'",
    "judge": "(self, topic: 'str', judgments: 'Mapping[str, Any] | Iterable[tuple[str, Any]]', *, role: 'str' = "
             "'review') -> 'Any'",
    "draw_sample": "(self, topic: 'str', size: 'int', *, frame: 'str' = 'unreviewed', seed: 'int | None' = None) -> "
                   "'Any'",
    "report": "(self, topic: 'str', *, target: 'float | str | Sequence[float | str] | None' = None, confidence: "
              "'float | None' = None, **params: 'Any') -> 'Any'",
    "plan": "(self, topic: 'str', *, target: 'float | str | None' = None, confidence: 'float | None' = None, "
            "**params: 'Any') -> 'Any'",
    "monitor": "(self, topic: 'str', *, target: 'float | str | None' = None, confidence: 'float | None' = None, "
               "**params: 'Any') -> 'Any'",
    "evaluate": "(self, qrels: 'Any', run: 'Any', measures: 'Sequence[str]' = (), per_query: 'bool' = False, *, "
                "suite: 'str' = 'trec') -> 'EvaluationResult'",
    "compare": "(self, qrels: 'Any', runs: 'Mapping[str, Any]', measures: 'Sequence[str]' = (), *, test: 'str' = "
               "'t', correction: 'str' = 'holm', alpha: 'float' = 0.05, suite: 'str' = 'trec') -> 'ComparisonResult'",
    "request": "(self, method: 'str', path: 'str', *, params: 'Mapping[str, Any] | None' = None, json_body: 'Any' = "
               "None, body: 'bytes | None' = None, content_type: 'str | None' = None) -> 'Any'",
}

RESULT_FIELDS = {
    "EvaluationResult": ["suite", "run_id", "measures", "summary", "per_query", "raw"],
    "ComparisonResult": ["suite", "test", "correction", "alpha", "runs", "measures", "queries", "cells", "notes",
                         "raw"],
    "ComparisonCell": ["measure", "run", "mean", "difference", "effect_size", "statistic", "p_value", "p_adjusted",
                       "significant"],
    "ReviewResult": ["kind", "model"],
}

RESULT_METHODS = {
    "EvaluationResult": {"to_dict", "to_pandas", "to_trec", "_repr_html_"},
    "ComparisonResult": {"to_dict", "to_pandas", "to_markdown", "to_latex", "_repr_html_", "cell"},
    "ReviewResult": {"to_dict", "to_json", "to_text", "to_html", "_repr_html_", "decision"},
}


def test_the_exported_names_are_pinned() -> None:
    assert sorted(rd.__all__) == EXPORTED
    for name in rd.__all__:
        assert getattr(rd, name) is not None
    assert set(EXPORTED) <= set(dir(rd))


def test_the_signatures_are_pinned() -> None:
    for name, expected in SIGNATURES.items():
        assert str(inspect.signature(getattr(rd, name))) == expected, name
    public = {name for name, _ in inspect.getmembers(rd.Client, inspect.isfunction) if not name.startswith("_")}
    assert public | {"__init__"} == set(CLIENT_METHODS)
    for name, expected in CLIENT_METHODS.items():
        assert str(inspect.signature(getattr(rd.Client, name))) == expected, name


def test_the_result_fields_are_pinned_and_frozen() -> None:
    for name, fields in RESULT_FIELDS.items():
        cls = getattr(rd, name)
        assert [f.name for f in dataclasses.fields(cls)] == fields, name
        assert cls.__dataclass_params__.frozen, name
    for name, methods in RESULT_METHODS.items():
        assert methods <= set(dir(getattr(rd, name))), name


def test_every_public_function_has_a_docstring() -> None:
    for name in rd.__all__:
        if name != "__version__":
            assert inspect.getdoc(getattr(rd, name)), name


def test_an_unknown_name_is_an_attribute_error() -> None:
    try:
        rd.no_such_name  # type: ignore[attr-defined]  # noqa: B018
    except AttributeError as exc:
        assert "no_such_name" in str(exc)
    else:
        raise AssertionError("rd.no_such_name did not raise")


HEAVY = ("sqlalchemy", "fastapi", "starlette", "matplotlib", "scipy", "scipy.stats", "pandas", "numpy", "alembic",
         "typer", "pydantic")


def test_import_reviewdepth_imports_no_heavy_package() -> None:
    probe = ("import sys, reviewdepth; print(' '.join(m for m in " + repr(HEAVY) + " if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120)
    assert done.stdout.split() == []
    # and the names do load on first use
    probe = "import sys, reviewdepth as rd; rd.evaluate; print('sqlalchemy' in sys.modules, 'numpy' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120)
    assert done.stdout.split() == ["False", "True"]
