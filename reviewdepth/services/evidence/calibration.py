"""The portfolio's calibration of the heuristic stopping rules (`reviewdepth.services.simulation.portfolio`), read
through the
caller's connection."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from fractions import Fraction
from typing import Any

from sqlalchemy import Connection, select

from reviewdepth.estimation.target import Target
from reviewdepth.store.ingest import as_utc
from reviewdepth.store.models import Calibration


@dataclass(frozen=True)
class CalibrationRecord:
    """A stored calibration: its settings, the topics it rests on, and one summary per calibrated rule."""

    id: int
    target: str
    confidence: float
    topic_count: int
    settings: dict[str, Any]
    rules: list[dict[str, Any]]
    created_at: datetime
    created_by: str

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "target": self.target, "confidence": self.confidence, "topics": self.topic_count,
                "settings": self.settings, "rules": self.rules, "created_at": as_utc(self.created_at).isoformat(),
                "created_by": self.created_by}

    def rule(self, name: str) -> dict[str, Any] | None:
        return next((r for r in self.rules if r.get("rule") == name), None)


def calibration_record(row: Any) -> CalibrationRecord:
    return CalibrationRecord(int(row.id), row.target, float(row.confidence), int(row.topic_count),
                             json.loads(row.settings), json.loads(row.summary), as_utc(row.created_at),
                             row.created_by)


def latest_calibration(conn: Connection) -> CalibrationRecord | None:
    """The newest calibration, or None when the portfolio was never calibrated."""
    row = conn.execute(select(Calibration).order_by(Calibration.id.desc()).limit(1)).first()
    return None if row is None else calibration_record(row)


def calibration_for_report(conn: Connection, target: Target) -> CalibrationRecord | None:
    """The latest calibration when it was run for the target ``target`` (compared as exact fractions), else
    None: a calibration for another target says nothing about this one."""
    latest = latest_calibration(conn)
    if latest is None or Fraction(latest.target) != target.value:
        return None
    return latest


def stopping_calibrations(conn: Connection, heuristic_rules: Sequence[str],
                          target: Target) -> dict[str, dict[str, Any]]:
    """For each heuristic rule of a report's stopping evidence that the latest calibration (for ``target``)
    measured, by rule: the calibration's id, target, confidence, topics, the rule's figures and its one-line
    ``text``. Empty when there is none."""
    if not heuristic_rules:
        return {}
    record = calibration_for_report(conn, target)
    if record is None:
        return {}
    out: dict[str, dict[str, Any]] = {}
    for rule in heuristic_rules:
        figures = record.rule(rule)
        if figures is not None:
            out[rule] = {"id": record.id, "target": record.target, "confidence": record.confidence,
                         "topics": record.topic_count, "created_at": as_utc(record.created_at).isoformat(),
                         **figures}
    return out
