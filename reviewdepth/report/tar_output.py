"""The CLEF TAR line format of a `TarEvaluation` (its other formats are the grid's, in `report.scores`).

Nothing is computed here; values are only rounded for display as the official scripts print them:
``r3`` = Python ``round(v, 3)`` (2017 and clean), ``auto`` = 2018 script (< 1 → 3 decimals, else 0),
``r0`` = ``round(v, 0)``; integers print as integers, floats with Python's ``str`` (``6222.0``, ``0.7``).
"""

from __future__ import annotations

from reviewdepth.measures.tar_suite import Style, Value
from reviewdepth.report.tar_model import TarEvaluation


def format_value(value: Value, style: Style) -> str:
    """One value as the CLEF scripts print it."""
    if isinstance(value, str) or style == "raw":
        return str(value)
    if style == "r0":
        return str(round(value, 0))
    if isinstance(value, int):
        return str(value)
    if style == "auto" and value >= 1:
        return str(round(value, 0))
    return str(round(value, 3))


def render_tar(evaluation: TarEvaluation) -> str:
    """The official scripts' output: notices and ``topic<TAB>measure<TAB>value`` blocks in run order, then the
    ``ALL`` block (per-topic blocks are always printed, as the scripts do)."""
    lines: list[str] = []
    for kind, text in evaluation.events:
        if kind != "topic":
            lines.append(text)
            continue
        values = evaluation.per_query[text]
        lines.extend(f"{text}\t{name}\t{format_value(values[key], style)}" for name, key, style in evaluation.layout)
    lines.extend(f"ALL\t{name}\t{format_value(evaluation.summary[key], style)}"
                 for name, key, style in evaluation.layout)
    return "\n".join(lines) + "\n"
