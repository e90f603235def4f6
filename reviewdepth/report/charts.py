"""The report's two charts, drawn once by matplotlib for every format (SVG for the HTML page and `plot -o x.svg`,
PNG for `plot -o x.png`): the same axes, ticks, legend, confidence band and target line whatever the format.

SVG output is byte-deterministic (fixed ``svg.hashsalt`` for element ids, no date or creator metadata, text kept
as ``<text>`` rather than glyph paths), so the same report gives the same bytes and the HTML page stays
replayable. matplotlib is imported inside the functions: ``reviewdepth --help`` and the JSON/CSV report never
pay its ~0.5 s import."""

from __future__ import annotations

import dataclasses
import io
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Literal

from reviewdepth.estimation.percent import percent

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from reviewdepth.report.model import Gain, PrecisionRecall

ChartKind = Literal["gain", "pr"]
ChartFormat = Literal["svg", "png"]
MEDIA_TYPES: dict[str, str] = {"svg": "image/svg+xml", "png": "image/png"}


@dataclasses.dataclass(frozen=True)
class Plot:
    """A rendered chart and the media type it is served as."""

    content: bytes
    media_type: Literal["image/svg+xml", "image/png"] | str

SIZE_INCHES = (6.4, 3.6)
DPI = 100
RECALL_TICKS = (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)
LINE, BAND, TARGET, POINT, CONSERVATIVE, RAW = "#08519c", "#9ecae1", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd"
# rcParams are process-global: the API renders charts from worker threads, so a render holds the lock while it
# sets them (rc_context) and saves
_RENDER_LOCK = threading.Lock()


def chart_title(kind: ChartKind, topic: str) -> str:
    return f"{'recall against depth' if kind == 'gain' else 'precision-recall'} ({topic})"


def _recall_axis(ax: Axes, which: Literal["x", "y"], label: str) -> None:
    from matplotlib.ticker import FixedLocator, FormatStrFormatter

    axis = ax.xaxis if which == "x" else ax.yaxis
    axis.set_major_locator(FixedLocator(RECALL_TICKS))
    axis.set_major_formatter(FormatStrFormatter("%.1f"))
    (ax.set_xlim if which == "x" else ax.set_ylim)(0.0, 1.02)
    (ax.set_xlabel if which == "x" else ax.set_ylabel)(label)


def _draw_gain(ax: Axes, gain: Gain | None, target: float | None, confidence: float | None) -> None:
    """Recall (relevant found / estimated |R|) against depth, the band from |R|'s interval bounds, the stopping
    target and the point and conservative depths. Without an estimate of |R|, relevant found is plotted."""
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    depth = [float(d) for d in gain.depth] if gain is not None else []
    found = [float(f) for f in gain.found] if gain is not None else []
    r_point = gain.relevant_estimate if gain is not None else None
    level = f"{percent(confidence)} " if confidence is not None else ""
    if r_point:
        ax.plot(depth, [f / r_point for f in found], color=LINE, linewidth=1.5,
                label=f"recall (|R| point estimate {r_point:,.0f})")
        assert gain is not None
        upper_r, lower_r = gain.relevant_upper, gain.relevant_lower
        if upper_r and lower_r:
            ax.fill_between(depth, [f / float(upper_r) for f in found],
                            [min(f / float(lower_r), 1.0) for f in found], color=BAND, alpha=0.6, linewidth=0,
                            label=f"{level}interval (|R| {float(lower_r):,.0f} to {float(upper_r):,.0f})")
        _recall_axis(ax, "y", "recall (estimated)")
        if target is not None:
            ax.axhline(target, color=TARGET, linestyle="--", linewidth=1, label=f"stopping target {target:g}")
    else:
        ax.plot(depth, found, color=LINE, linewidth=1.5, label="relevant found (no estimate of |R| yet)")
        ax.set_ylabel("relevant found")
        ax.set_ylim(bottom=0)
    labelled: set[str] = set()
    for marker in gain.markers if gain is not None else []:
        for value, colour, name in ((marker.depth, POINT, "point depth"), (marker.conservative, CONSERVATIVE,
                                                                          "conservative depth")):
            if value:
                ax.axvline(float(value), color=colour, linestyle=":", linewidth=1,
                           label=None if name in labelled else f"{name} per target recall")
                labelled.add(name)
    ax.set_xlabel("documents reviewed (rank)")
    ax.set_xlim(left=0)
    ax.xaxis.set_major_locator(MaxNLocator(nbins=6, integer=True))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _pos: f"{x:,.0f}"))


def _draw_pr(ax: Axes, pr: PrecisionRecall | None, target: float | None) -> None:
    """Raw (sawtooth) and interpolated precision against estimated recall over the reviewed prefix."""
    recall = [min(float(v), 1.0) for v in (pr.recall or [])] if pr is not None else []
    if recall:
        assert pr is not None
        ax.plot(recall, [float(v) for v in pr.precision or []], color=RAW, linewidth=1, label="precision")
        ax.plot(recall, [float(v) for v in pr.interpolated_precision or []], color=LINE, linewidth=1.8,
                label="interpolated precision")
        if target is not None:
            ax.axvline(target, color=TARGET, linestyle="--", linewidth=1, label=f"stopping target {target:g}")
    else:
        ax.text(0.5, 0.5, "no estimate of |R| yet: nothing to plot", ha="center", va="center",
                transform=ax.transAxes)
    _recall_axis(ax, "x", "recall (estimated)")
    _recall_axis(ax, "y", "precision")


def chart_figure(kind: ChartKind, gain: Gain | None, pr: PrecisionRecall | None, target: float | None, title: str,
                 confidence: float | None = None) -> Figure:
    """The chart as a matplotlib Figure (no pyplot: no global figure registry, safe beside other threads)."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=SIZE_INCHES, dpi=DPI)
    ax = fig.add_subplot()
    if kind == "gain":
        _draw_gain(ax, gain, target, confidence)
    else:
        _draw_pr(ax, pr, target)
    return _finished(fig, ax, kind, title)



def _finished(fig: Figure, ax: Axes, kind: ChartKind, title: str) -> Figure:
    """Title, grid, legend and margins, the same for every chart of a kind."""
    # a topic name is text, never mathtext: "$" would otherwise start a formula (or fail to parse)
    ax.set_title(title.replace("$", r"\$"))
    ax.grid(True, color="#e5e5e5", linewidth=0.6)
    ax.set_axisbelow(True)
    if ax.get_legend_handles_labels()[0]:
        # gain curves rise to the upper left, P/R curves fall to the lower right: the legend takes the other corner
        ax.legend(loc="lower right" if kind == "gain" else "upper right", fontsize="small", framealpha=0.9)
    # fixed margins rather than tight_layout, which draws the figure once more to measure it (~1/3 of the time)
    fig.subplots_adjust(left=0.1, right=0.97, bottom=0.15, top=0.9)
    return fig

def render_chart(kind: ChartKind, gain: Gain | None, pr: PrecisionRecall | None, target: float | None, title: str,
                 fmt: ChartFormat, confidence: float | None = None) -> bytes:
    """The chart's file content: SVG (``<svg`` first, no XML prolog, so it embeds in HTML as is) or PNG. Only the
    curve of ``kind`` is drawn (the other may be None)."""
    return save_figure(lambda: chart_figure(kind, gain, pr, target, title, confidence), fmt)


def save_figure(draw: Callable[[], Figure], fmt: ChartFormat) -> bytes:
    """``draw()``'s figure as SVG or PNG bytes under the fixed rc settings (the one place a chart is saved; the
    PRISMA diagram's PNG is saved here too)."""
    try:
        import matplotlib
    except ImportError as exc:  # a dependency, but a broken environment should say what is missing
        raise ImportError("charts need matplotlib: pip install matplotlib") from exc
    buffer = io.BytesIO()
    with _RENDER_LOCK, matplotlib.rc_context({"svg.hashsalt": "reviewdepth", "svg.fonttype": "none",
                                              "font.family": "sans-serif"}):
        fig = draw()
        if fmt == "svg":
            fig.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
        else:
            fig.savefig(buffer, format="png", metadata={"Software": None})
    data = buffer.getvalue()
    if fmt == "svg":
        data = _bare_svg(data)
    return data


def overlay_figure(kind: ChartKind, series: Sequence[tuple[str, Gain | PrecisionRecall]], title: str,
                   known_r: bool = False) -> Figure:
    """Several queues (or runs) of one topic on one chart: ``series`` is ``(label, curve)`` pairs, a curve the
    report's `Gain` (``depth``, ``found``, ``relevant_estimate``) for ``gain`` or its `PrecisionRecall` for
    ``pr``. Gain: recall = found / |R| estimate against depth when every series has an estimate, else relevant
    found (recalls over different estimates of |R| would not be comparable to the eye otherwise). ``known_r``:
    ``relevant_estimate`` is R itself (run files against qrels), and the labels say so."""
    from matplotlib.figure import Figure
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    fig = Figure(figsize=SIZE_INCHES, dpi=DPI)
    ax = fig.add_subplot()
    colours = [LINE, CONSERVATIVE, POINT, TARGET, RAW, "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"]
    from reviewdepth.report.model import Gain, PrecisionRecall

    if kind == "gain":
        gains = [(label, curve) for label, curve in series if isinstance(curve, Gain)]
        as_recall = all(curve.relevant_estimate for _, curve in gains)
        for i, (label, curve) in enumerate(gains):
            depth = [float(d) for d in curve.depth]
            found = [float(f) for f in curve.found]
            r_point = float(curve.relevant_estimate or 1.0) if as_recall else 1.0
            suffix = f" ({'R' if known_r else '|R|'} {r_point:,.0f})" if as_recall else ""
            ax.plot(depth, [f / r_point for f in found], color=colours[i % len(colours)], linewidth=1.4,
                    label=f"{label}{suffix}")
        if as_recall:
            _recall_axis(ax, "y", "recall" if known_r else "recall (estimated)")
        else:
            ax.set_ylabel("relevant found")
            ax.set_ylim(bottom=0)
        ax.set_xlabel("documents reviewed (rank)")
        ax.set_xlim(left=0)
        ax.xaxis.set_major_locator(MaxNLocator(nbins=6, integer=True))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _pos: f"{x:,.0f}"))
    else:
        curves = [(label, pr) for label, pr in series if isinstance(pr, PrecisionRecall)]
        for i, (label, pr) in enumerate(curves):
            recall = [min(float(v), 1.0) for v in pr.recall or []]
            ax.plot(recall, [float(v) for v in pr.interpolated_precision or []],
                    color=colours[i % len(colours)], linewidth=1.4, label=label)
        _recall_axis(ax, "x", "recall" if known_r else "recall (estimated)")
        _recall_axis(ax, "y", "precision")
    return _finished(fig, ax, kind, title)


def render_overlay(kind: ChartKind, series: Sequence[tuple[str, Gain | PrecisionRecall]], title: str,
                   fmt: ChartFormat, known_r: bool = False) -> bytes:
    """`overlay_figure` as SVG or PNG (deterministic SVG like `render_chart`)."""
    return save_figure(lambda: overlay_figure(kind, series, title, known_r), fmt)


def _bare_svg(data: bytes) -> bytes:
    """From ``<svg`` on, without the RDF metadata block (licence vocabulary URLs that say nothing about the
    chart) and without the xlink namespace when nothing uses it: the page embeds the SVG as is."""
    data = data[data.index(b"<svg"):]
    start, end = data.find(b" <metadata>"), data.find(b"</metadata>\n")
    if start != -1 and end != -1:
        data = data[:start] + data[end + len(b"</metadata>\n"):]
    if b"xlink:href" not in data:
        data = data.replace(b' xmlns:xlink="http://www.w3.org/1999/xlink"', b"", 1)
    return data


def gain_svg(gain: Gain, target: float | None, title: str, confidence: float | None = 0.95) -> str:
    return render_chart("gain", gain, None, target, title, "svg", confidence).decode("utf-8")


def precision_recall_svg(pr: PrecisionRecall, title: str, target: float | None = None) -> str:
    return render_chart("pr", None, pr, target, title, "svg").decode("utf-8")


def inline_svg(svg: str) -> str:
    """The SVG for embedding in an HTML page, where the HTML parser gives ``xlink:href`` its namespace: the
    xlink declaration (a namespace URL, not a resource) goes."""
    return svg.replace(' xmlns:xlink="http://www.w3.org/1999/xlink"', "", 1)


def recall_cost_svg(cost: list[float], recall: list[float], target: float, title: str) -> str:
    """The simulation's chart of one rule (``reviewdepth simulate``): recall at stop against cost relative to the
    oracle depth ((reviewed + sampled) / oracle depth) of its stopped runs, the target recall and cost 1 marked.
    Deterministic SVG like the report's charts."""
    import matplotlib
    from matplotlib.figure import Figure

    buffer = io.BytesIO()
    with _RENDER_LOCK, matplotlib.rc_context({"svg.hashsalt": "reviewdepth", "svg.fonttype": "none",
                                              "font.family": "sans-serif"}):
        fig = Figure(figsize=(4.8, 3.4), dpi=DPI)
        ax = fig.add_subplot()
        if cost:
            ax.scatter(cost, recall, s=9, color=LINE, alpha=0.45, linewidths=0, label="a stopped run")
        else:
            ax.text(0.5, 0.5, "the rule never stopped", ha="center", va="center", transform=ax.transAxes)
        ax.axhline(target, color=TARGET, linestyle="--", linewidth=1, label=f"target recall {target:g}")
        ax.axvline(1.0, color=POINT, linestyle=":", linewidth=1, label="oracle depth")
        _recall_axis(ax, "y", "recall at stop")
        ax.set_xlim(left=0, right=max([1.1, *[c * 1.05 for c in cost]]))
        ax.set_xlabel("(reviewed + sampled) / oracle depth")
        ax.set_title(title.replace("$", r"\$"))
        ax.grid(True, color="#e5e5e5", linewidth=0.6)
        ax.set_axisbelow(True)
        ax.legend(loc="lower right", fontsize="small", framealpha=0.9)
        fig.subplots_adjust(left=0.13, right=0.97, bottom=0.16, top=0.9)
        fig.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
    return inline_svg(_bare_svg(buffer.getvalue()).decode("utf-8"))
