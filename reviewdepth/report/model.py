"""The depth report: one plain-data object that every renderer (table, JSON, CSV, HTML) and both doors use.

Nothing here computes; `reviewdepth.services.report.build_report` fills it.
"""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass, field
from typing import Any

Scalar = float | int | str | bool | None


@dataclass
class Curve:
    """Points of a chart series (already thinned to a plottable number)."""

    x: list[float]
    y: list[float]


class JsonResult:
    """Deterministic JSON for a dataclass result (`Report`, `MonitorReport`): same result, same bytes (floats as
    shortest round-trip repr, keys in field order, NaN and infinities as null)."""

    def to_dict(self) -> dict[str, Any]:
        # every subclass is a dataclass; the mixin itself is not one, so mypy cannot see it
        cleaned: dict[str, Any] = json_safe(dataclasses.asdict(self))  # type: ignore[call-overload]
        return cleaned

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False, allow_nan=False) + "\n"


@dataclass
class Report(JsonResult):
    """Everything the depth report shows for one topic and queue, at one point of the judgment log."""

    topic: str
    queue: str
    # the headline: stopping target, status (reached by what / not reached: how many more / unknown: what to do)
    answer: dict[str, Any]
    summary: dict[str, Any]
    estimates: list[dict[str, Any]]
    depth_basis: str
    depth: list[dict[str, Any]]
    current: dict[str, Any]
    # one recall of the reviewed prefix per basis, each with its sidedness, confidence and caveats
    recall: list[dict[str, Any]]
    stopping: list[dict[str, Any]]
    measures: dict[str, Any]
    completed_review: dict[str, Any] | None
    samples: list[dict[str, Any]]
    settings: dict[str, Any]
    provenance: dict[str, Any]
    gain: dict[str, Any] = field(default_factory=dict)
    precision_recall: dict[str, Any] = field(default_factory=dict)
    review_quality: dict[str, Any] = field(default_factory=dict)
    prisma: dict[str, Any] = field(default_factory=dict)


def json_safe(value: Any) -> Any:
    """NaN and infinities become null (JSON has no such numbers), through dicts, lists and tuples."""
    if isinstance(value, float):
        return None if math.isnan(value) or math.isinf(value) else value
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    return value
