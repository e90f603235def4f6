"""One status per topic, whatever the door: the report's first line, ``watch``, ``GET /topics/{t}/monitor`` and
the dashboard row all print this record (`reviewdepth.services.topic_status` fills it).

Plain data. Each figure names its evidence and its validity in the same words everywhere:

- ``one look``: a random sample of the rest or of the queue (elusion, SRS, stratified) read once; repeated
  looks at a growing review can push its error above α;
- ``anytime-valid``: the audit stream's monitor, valid whenever the team looks;
- ``exact``: R is known (every document judged, or stated).

The status word is one of ``reached`` / ``not reached`` / ``unknown`` (the report's JSON ``answer.status``) and
rests on one basis fixed in advance, never on the better of two: the audit stream when the topic has one (the
doors that poll need a bound valid at every look), else the report's own answer from its samples. The other
figure is shown beside it, labelled, and never combined with it (taking whichever certifies first would double
the chance of a false certification)."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

STATUSES = ("reached", "not reached", "unknown")
VALIDITIES = ("one look", "anytime-valid", "exact")


def _lower(value: float) -> str:
    """A lower bound printed without rounding it up (0.94996 is 0.949)."""
    return f"{math.floor(value * 1000 + 1e-9) / 1000:.3f}"


def percent(confidence: float) -> str:
    text = f"{confidence * 100:.2f}".rstrip("0").rstrip(".")
    return f"{text} %"


@dataclass(frozen=True)
class StatusFigure:
    """One bound on the recall of the reviewed set: its basis (``elusion``, ``srs``, ``stratified``, ``known``,
    ``audit stream``), the evidence in words, its validity, the one-sided lower bound at ``confidence`` and
    whether it certifies the target."""

    basis: str
    evidence: str
    validity: str
    recall_lower: float | None
    confidence: float
    certifies: bool

    @property
    def text(self) -> str:
        if self.recall_lower is None:
            return f"recall unbounded ({self.basis}: {self.evidence}; {self.validity})"
        if self.validity == "exact":
            return f"recall = {self.recall_lower:.3f} ({self.evidence}; exact)"
        return (f"recall ≥ {_lower(self.recall_lower)} ({self.basis}: {self.evidence}; {self.validity}, "
                f"one-sided {percent(self.confidence)})")

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "text": self.text}


@dataclass(frozen=True)
class TopicStatus:
    """The topic's status at one moment: the target, the status word, the basis it rests on, every figure, the
    reviewed set and what it holds, and the one line every door prints first."""

    target: str
    confidence: float
    status: str
    decided_by: str | None
    reviewed: int
    relevant_found: int
    figures: list[StatusFigure] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        pct = f"{float(self.target) * 100:g}% recall" if _is_number(self.target) else f"recall {self.target}"
        lead = f"{pct}: {self.status}"
        decided = next((f for f in self.figures if f.basis == self.decided_by), None)
        parts = [decided.text] if decided is not None else []
        parts += [f"also {f.text}" for f in self.figures if f is not decided]
        parts += self.missing
        return lead + (" — " + "; ".join(parts) if parts else "")

    def as_dict(self) -> dict[str, Any]:
        return {"target": self.target, "confidence": self.confidence, "status": self.status,
                "decided_by": self.decided_by, "reviewed": self.reviewed, "relevant_found": self.relevant_found,
                "figures": [f.as_dict() for f in self.figures], "missing": list(self.missing), "text": self.text}


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True
