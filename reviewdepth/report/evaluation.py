"""The API's eval route still imports this name; it goes when that route calls `report.render.render`."""

from __future__ import annotations

from reviewdepth.measures.suite import Evaluation
from reviewdepth.report.render import render


def render_json(evaluation: Evaluation, per_query: bool) -> str:
    return render(evaluation, "json", per_query=per_query)
