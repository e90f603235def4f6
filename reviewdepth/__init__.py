"""reviewdepth: review depth to target recall, with trec_eval-exact measures underneath.

The Python library: ``import reviewdepth as rd``. Every name in ``__all__`` is public and stable; everything
else in the package is private and may change. The names load on first use (PEP 562), so ``import reviewdepth``
imports neither numpy nor SQLAlchemy, FastAPI, matplotlib or SciPy.

- `evaluate`, `compare`: trec_eval-exact measures and paired tests of runs (``reviewdepth eval`` / ``compare``).
- `depth`, `assess`, `plan`, `monitor`: the depth report, the stop plan and the monitor's status of a review from
  its labels in review order (``reviewdepth report`` / ``plan`` / ``watch``).
- `simulate`: stopping rules replayed on fully judged rankings (``reviewdepth simulate``).
- `Client`: the HTTP API (``reviewdepth serve``) from Python.
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

__all__ = [
    "Client",
    "ComparisonCell",
    "ComparisonResult",
    "EvaluationResult",
    "ReviewResult",
    "__version__",
    "assess",
    "compare",
    "depth",
    "evaluate",
    "monitor",
    "plan",
    "sample_ranks",
    "simulate",
]

# public name -> the private module defining it (loaded by name, on first use; `__init__.pyi` gives type checkers
# the same names, so no import statement here makes the lower layers, which read `__version__`, depend on them)
_WHERE = {
    "evaluate": "evaluation", "compare": "evaluation",
    "EvaluationResult": "results", "ComparisonResult": "results", "ComparisonCell": "results",
    "ReviewResult": "results",
    "depth": "review", "assess": "review", "plan": "review", "monitor": "review",
    "sample_ranks": "review",
    "simulate": "simulation",
    "Client": "client",
}


def __getattr__(name: str) -> object:  # typed in __init__.pyi; `typing` is not imported (~8 ms)
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}._library.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
