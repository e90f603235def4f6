"""`Comparison` as a Rich table, CSV (one row per measure and run), LaTeX (booktabs) and Markdown: the wide
table of means (runs × measures, ``*`` on a run significantly different from the baseline) and, except in CSV
which has every number on its row, the method sentence; the table format adds the tests' details."""

from __future__ import annotations

import csv
import io
import math
from typing import TYPE_CHECKING

from reviewdepth.report.compare_model import Comparison, ComparisonCell

if TYPE_CHECKING:
    from rich.console import RenderableType


def _number(value: float | None, digits: int = 4) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return f"{value:.{digits}f}"


def _p(value: float | None) -> str:
    if value is None or math.isnan(value):
        return "–"
    return f"{value:.4f}" if value >= 1e-4 else f"{value:.1e}"


def _mark(cell: ComparisonCell) -> str:
    if not cell.significant or cell.difference is None:
        return ""
    return "*"


def _mean_text(cell: ComparisonCell) -> str:
    return _number(cell.mean) + _mark(cell)


def _run_label(result: Comparison, run: str) -> str:
    return f"{run} (baseline)" if run == result.baseline else run


def render_table(result: Comparison) -> RenderableType:
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    means = Table(title=f"means over {len(result.queries)} {'topics' if result.suite == 'tar' else 'queries'}",
                  title_justify="left")
    means.add_column("run", no_wrap=True)
    for measure in result.measures:
        means.add_column(measure, justify="right")
    for run in result.runs:
        means.add_row(_run_label(result, run), *(_mean_text(result.cell(m, run)) for m in result.measures))
    tests = Table(title=f"against {result.baseline}", title_justify="left")
    for name in ("measure", "run", "mean", "difference", "d_z", "p", f"p ({result.correction})"):
        tests.add_column(name, justify="left" if name in ("measure", "run") else "right", no_wrap=True)
    for measure in result.measures:
        for run in result.runs[1:]:
            c = result.cell(measure, run)
            tests.add_row(measure, run, _mean_text(c), _number(c.difference), _number(c.effect_size, 3),
                          _p(c.p_value), _p(c.p_adjusted))
    parts: list[RenderableType] = [means, tests, Text(result.method())]
    parts += [Text(f"note: {note}") for note in result.notes]
    return Group(*parts)


def render_csv(result: Comparison) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["measure", "run", "baseline", "n", "mean", "difference", "effect_size", "statistic",
                     "p_value", "p_adjusted", "significant", "test", "correction", "alpha"])

    def plain(value: float | None) -> str:
        return "" if value is None or math.isnan(value) else repr(float(value))

    for c in result.cells:
        writer.writerow([c.measure, c.run, result.baseline, len(result.queries), plain(c.mean), plain(c.difference),
                         plain(c.effect_size), plain(c.statistic), plain(c.p_value), plain(c.p_adjusted),
                         "" if c.run == result.baseline else str(c.significant).lower(), result.test,
                         result.correction, result.alpha])
    return out.getvalue()


def _markdown_escape(text: str) -> str:
    return text.replace("|", "\\|").replace("*", "\\*").replace("_", "\\_")


def render_markdown(result: Comparison) -> str:
    header = ["run", *result.measures]
    lines = ["| " + " | ".join(_markdown_escape(h) for h in header) + " |",
             "| " + " | ".join(["---"] + ["---:"] * len(result.measures)) + " |"]
    for run in result.runs:
        label = _markdown_escape(run) + (" (baseline)" if run == result.baseline else "")
        cells = [_number(result.cell(m, run).mean) + ("\\*" if _mark(result.cell(m, run)) else "")
                 for m in result.measures]
        lines.append("| " + " | ".join([label, *cells]) + " |")
    lines += ["", _markdown_escape(result.method()), ""]
    lines += [f"- note: {_markdown_escape(note)}" for note in result.notes]
    return "\n".join(lines).rstrip("\n") + "\n"


_LATEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                  "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


def _latex_escape(text: str) -> str:
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in text)


def render_latex(result: Comparison) -> str:
    """A ``table`` with a booktabs ``tabular``; the significant means carry a dagger."""
    lines = [r"\begin{table}", r"\centering", r"\begin{tabular}{l" + "r" * len(result.measures) + "}",
             r"\toprule", " & ".join(["Run", *(_latex_escape(m) for m in result.measures)]) + r" \\", r"\midrule"]
    for run in result.runs:
        label = _latex_escape(run) + (" (baseline)" if run == result.baseline else "")
        cells = [_number(result.cell(m, run).mean) + ("$^{\\dagger}$" if _mark(result.cell(m, run)) else "")
                 for m in result.measures]
        lines.append(" & ".join([label, *cells]) + r" \\")
    caption = _latex_escape(result.method()).replace("* =", r"$^{\dagger}$ =")
    lines += [r"\bottomrule", r"\end{tabular}", rf"\caption{{{caption}}}", r"\end{table}"]
    return "\n".join(lines) + "\n"
