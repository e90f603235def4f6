"""One renderer interface for every result the doors print: ``render(result, fmt) -> str``.

The results: `Evaluation` (``eval``, trec suite), `TarEvaluation` (``eval --suite tar``) and `Report` (the
depth report) each take ``table``, ``json``, ``csv`` and ``html``; the evaluations also take ``trec``
(trec_eval's lines) and a `TarEvaluation` ``tar`` (the CLEF scripts' lines). `MonitorReport` (``watch``) takes
``table`` and ``json`` (its HTML is a fragment of the dashboard, `monitor_render`); `SimulationReport`
(``simulate``) ``table``, ``json``, ``csv`` and ``html``; `Comparison` (``compare``) ``table``, ``json``,
``csv``, ``latex`` and ``markdown``. The CLI and the API call `render` (and `rich_view` for a table printed to
a console); a format a result does not have is a `ValueError` naming it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, get_args

from reviewdepth.measures.suite import Evaluation

# The other result types load when a result is not an `Evaluation`: each one's module is loaded by whoever built
# the result, and trec_eval's lines (``eval``) need none of them.
if TYPE_CHECKING:
    from rich.console import RenderableType

    from reviewdepth.report.compare_model import Comparison
    from reviewdepth.report.model import Report
    from reviewdepth.report.monitor_model import MonitorReport
    from reviewdepth.report.simulation_model import SimulationReport
    from reviewdepth.report.tar_model import TarEvaluation

    Result = Evaluation | TarEvaluation | Report | MonitorReport | SimulationReport | Comparison


def __getattr__(name: str) -> Any:
    """`Result` at run time, for callers that evaluate annotations."""
    if name == "Result":
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


def formats_of(result: Result) -> tuple[Format, ...]:
    """The formats `render` takes for this result, the default first."""
    if isinstance(result, Evaluation):
        return ("trec", "json", "csv", "table", "html")
    from reviewdepth.report.compare_model import Comparison
    from reviewdepth.report.model import Report
    from reviewdepth.report.monitor_model import MonitorReport
    from reviewdepth.report.simulation_model import SimulationReport
    from reviewdepth.report.tar_model import TarEvaluation

    if isinstance(result, (Report, SimulationReport)):
        return ("table", "json", "csv", "html")
    if isinstance(result, MonitorReport):
        return ("table", "json")
    if isinstance(result, Comparison):
        return ("table", "json", "csv", "latex", "markdown")
    if isinstance(result, TarEvaluation):
        return ("tar", "trec", "json", "csv", "table", "html")
    return ("trec", "json", "csv", "table", "html")


def render(result: Result, fmt: Format, *, per_query: bool = False, width: int = TABLE_WIDTH) -> str:
    """``result`` in format ``fmt``. ``per_query`` (``-q``): the evaluations' per-query values too (the CLEF
    ``tar`` format always has them; a report has no such choice). ``table`` is the Rich table as plain text
    ``width`` columns wide."""
    if fmt not in formats_of(result):
        raise ValueError(f"format: {fmt!r} is not a format of {type(result).__name__} "
                         f"(one of {', '.join(formats_of(result))})")
    if fmt == "table":
        return _plain_text(rich_view(result, per_query=per_query), width)
    if not isinstance(result, Evaluation):
        from reviewdepth.report.compare_model import Comparison
        from reviewdepth.report.model import Report
        from reviewdepth.report.monitor_model import MonitorReport
        from reviewdepth.report.simulation_model import SimulationReport
        from reviewdepth.report.tar_model import TarEvaluation

        if isinstance(result, Report):
            return _render_report(result, fmt)
        if isinstance(result, MonitorReport):  # formats_of leaves it json only here
            return result.to_json()
        if isinstance(result, SimulationReport):
            return _render_simulation(result, fmt)
        if isinstance(result, Comparison):
            return _render_comparison(result, fmt)
        if isinstance(result, TarEvaluation) and fmt == "tar":
            from reviewdepth.report.tar_output import render_tar

            return render_tar(result)
    from reviewdepth.report import scores

    grid = {"trec": scores.render_trec, "json": scores.render_json, "csv": scores.render_csv,
            "html": scores.render_html}[fmt]
    return grid(scores.sheet(result), per_query)


def rich_view(result: Result, *, per_query: bool = False) -> RenderableType:
    """The ``table`` format as a Rich renderable, for a console that knows its width and colours."""
    from reviewdepth.report import scores

    if isinstance(result, Evaluation):
        return scores.render_table(scores.sheet(result), per_query)
    from reviewdepth.report.compare_model import Comparison
    from reviewdepth.report.model import Report
    from reviewdepth.report.monitor_model import MonitorReport
    from reviewdepth.report.simulation_model import SimulationReport

    if isinstance(result, Report):
        from reviewdepth.report.depth_render import render_table

        return render_table(result)
    if isinstance(result, MonitorReport):
        from reviewdepth.report import monitor_render

        return monitor_render.render_table(result)
    if isinstance(result, SimulationReport):
        from reviewdepth.report import simulation_render

        return simulation_render.render_table(result)
    if isinstance(result, Comparison):
        from reviewdepth.report import compare_render

        return compare_render.render_table(result)
    return scores.render_table(scores.sheet(result), per_query)


def _render_report(report: Report, fmt: Format) -> str:
    if fmt == "json":  # Report's own: the renderers (and Rich) are not needed for JSON
        return report.to_json()
    from reviewdepth.report.depth_render import render_csv, render_html

    return render_csv(report) if fmt == "csv" else render_html(report)


def _render_simulation(report: SimulationReport, fmt: Format) -> str:
    if fmt == "json":
        return report.to_json()
    from reviewdepth.report.simulation_render import render_csv, render_html

    return render_csv(report) if fmt == "csv" else render_html(report)


def _render_comparison(result: Comparison, fmt: Format) -> str:
    if fmt == "json":
        return result.to_json()
    from reviewdepth.report import compare_render

    return {"csv": compare_render.render_csv, "latex": compare_render.render_latex,
            "markdown": compare_render.render_markdown}[fmt](result)


def _plain_text(view: RenderableType, width: int) -> str:
    import os

    from rich.console import Console

    with open(os.devnull, "w") as sink:
        console = Console(record=True, width=width, file=sink)
        console.print(view)
    return console.export_text()
