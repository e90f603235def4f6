"""One renderer interface for every result the doors print: ``render(result, fmt) -> str``.

The results: `Evaluation` (``eval``, trec suite), `TarEvaluation` (``eval --suite tar``) and `Report` (the
depth report) each take ``table``, ``json``, ``csv`` and ``html``; the evaluations also take ``trec``
(trec_eval's lines) and a `TarEvaluation` ``tar`` (the CLEF scripts' lines). `MonitorReport` (``watch``) takes
``table`` and ``json`` (its HTML is a fragment of the dashboard, `monitor_render`); `SimulationReport`
(``simulate``) ``table``, ``json``, ``csv`` and ``html``; `Comparison` (``compare``) ``table``, ``json``,
``csv``, ``latex`` and ``markdown``. The CLI and the API call `render` (and `rich_view` for a table printed to
a console); a format a result does not have is a `ValueError` naming it. One table, `RENDERERS`, keyed by result
type and format, says which function renders what: the CLI, the API and `formats_of` all read it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal, get_args

# The other result types load when a result is not an `Evaluation`: each one's module is loaded by whoever built
# the result, and trec_eval's lines (``eval``) need none of them.
if TYPE_CHECKING:
    from rich.console import RenderableType

    from reviewdepth.measures.suite import Evaluation
    from reviewdepth.report.compare_model import Comparison
    from reviewdepth.report.model import Report
    from reviewdepth.report.monitor_model import MonitorReport
    from reviewdepth.report.simulation_model import SimulationReport
    from reviewdepth.report.tar_model import TarEvaluation

    Result = Evaluation | TarEvaluation | Report | MonitorReport | SimulationReport | Comparison


def __getattr__(name: str) -> Any:
    """`Result` at run time, for callers that evaluate annotations."""
    if name == "Result":
        from reviewdepth.measures.suite import Evaluation
        from reviewdepth.report.compare_model import Comparison
        from reviewdepth.report.model import Report
        from reviewdepth.report.monitor_model import MonitorReport
        from reviewdepth.report.simulation_model import SimulationReport
        from reviewdepth.report.tar_model import TarEvaluation

        return Evaluation | TarEvaluation | Report | MonitorReport | SimulationReport | Comparison
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


Format = Literal["table", "json", "csv", "html", "trec", "tar", "latex", "markdown"]
FORMATS: tuple[Format, ...] = get_args(Format)
# the width of a table written as text (to a file or an HTTP body), where no terminal says how wide
TABLE_WIDTH = 140

# A renderer: (result, per_query) -> the text of a format, or for ``table`` the Rich renderable.
Renderer = Callable[[Any, bool], Any]


def _lazy(target: str) -> Renderer:
    """``module:function`` called with the result, imported on the first call (a door loads only the renderers of
    the result it prints: trec_eval's lines need neither Rich nor Jinja2 nor matplotlib)."""
    module, _, name = target.partition(":")

    def call(result: Any, per_query: bool) -> Any:
        return getattr(importlib.import_module(module), name)(result)

    return call


def _scores(name: str) -> Renderer:
    """One of `reviewdepth.report.scores`' grids of an evaluation (its measures by query), with or without the
    per-query rows."""

    def call(result: Any, per_query: bool) -> Any:
        from reviewdepth.report import scores

        return getattr(scores, name)(scores.sheet(result), per_query)

    return call


def _own_json(result: Any, per_query: bool) -> str:
    return str(result.to_json())


_EVALUATION = "reviewdepth.measures.suite.Evaluation"
_TAR = "reviewdepth.report.tar_model.TarEvaluation"
_REPORT = "reviewdepth.report.model.Report"
_MONITOR = "reviewdepth.report.monitor_model.MonitorReport"
_SIMULATION = "reviewdepth.report.simulation_model.SimulationReport"
_COMPARISON = "reviewdepth.report.compare_model.Comparison"

RENDERERS: dict[tuple[str, Format], Renderer] = {
    # (result type by its qualified name, format) -> renderer; each type's formats in this order, the default first
    (_EVALUATION, "trec"): _scores("render_trec"), (_EVALUATION, "json"): _scores("render_json"),
    (_EVALUATION, "csv"): _scores("render_csv"), (_EVALUATION, "table"): _scores("render_table"),
    (_EVALUATION, "html"): _scores("render_html"),
    (_TAR, "tar"): _lazy("reviewdepth.report.tar_output:render_tar"), (_TAR, "trec"): _scores("render_trec"),
    (_TAR, "json"): _scores("render_json"), (_TAR, "csv"): _scores("render_csv"),
    (_TAR, "table"): _scores("render_table"), (_TAR, "html"): _scores("render_html"),
    (_REPORT, "table"): _lazy("reviewdepth.report.depth_render:render_table"),
    # Report's own JSON: the renderers (and Rich) are not needed for it
    (_REPORT, "json"): _own_json, (_REPORT, "csv"): _lazy("reviewdepth.report.depth_render:render_csv"),
    (_REPORT, "html"): _lazy("reviewdepth.report.depth_render:render_html"),
    # the monitor's HTML is a fragment of the dashboard (`monitor_render`), not a page of its own
    (_MONITOR, "table"): _lazy("reviewdepth.report.monitor_render:render_table"), (_MONITOR, "json"): _own_json,
    (_SIMULATION, "table"): _lazy("reviewdepth.report.simulation_render:render_table"),
    (_SIMULATION, "json"): _own_json, (_SIMULATION, "csv"): _lazy("reviewdepth.report.simulation_render:render_csv"),
    (_SIMULATION, "html"): _lazy("reviewdepth.report.simulation_render:render_html"),
    (_COMPARISON, "table"): _lazy("reviewdepth.report.compare_render:render_table"),
    (_COMPARISON, "json"): _own_json, (_COMPARISON, "csv"): _lazy("reviewdepth.report.compare_render:render_csv"),
    (_COMPARISON, "latex"): _lazy("reviewdepth.report.compare_render:render_latex"),
    (_COMPARISON, "markdown"): _lazy("reviewdepth.report.compare_render:render_markdown"),
}


def _type_key(result: Result) -> str:
    """The qualified name under which ``result``'s renderers are registered (its class's, or the nearest base's)."""
    names = {name for name, _ in RENDERERS}
    for cls in type(result).__mro__:
        name = f"{cls.__module__}.{cls.__qualname__}"
        if name in names:
            return name
    raise TypeError(f"no renderer for a {type(result).__name__}")


def formats_of(result: Result) -> tuple[Format, ...]:
    """The formats `render` takes for this result, the default first."""
    key = _type_key(result)
    return tuple(fmt for name, fmt in RENDERERS if name == key)


def render(result: Result, fmt: Format, *, per_query: bool = False, width: int = TABLE_WIDTH) -> str:
    """``result`` in format ``fmt``. ``per_query`` (``-q``): the evaluations' per-query values too (the CLEF
    ``tar`` format always has them; a report has no such choice). ``table`` is the Rich table as plain text
    ``width`` columns wide."""
    renderer = RENDERERS.get((_type_key(result), fmt))
    if renderer is None:
        raise ValueError(f"format: {fmt!r} is not a format of {type(result).__name__} "
                         f"(one of {', '.join(formats_of(result))})")
    if fmt == "table":
        return _plain_text(renderer(result, per_query), width)
    return str(renderer(result, per_query))


def rich_view(result: Result, *, per_query: bool = False) -> RenderableType:
    """The ``table`` format as a Rich renderable, for a console that knows its width and colours."""
    view: RenderableType = RENDERERS[_type_key(result), "table"](result, per_query)
    return view


def _plain_text(view: RenderableType, width: int) -> str:
    import os

    from rich.console import Console

    with open(os.devnull, "w") as sink:
        console = Console(record=True, width=width, file=sink)
        console.print(view)
    return console.export_text()
