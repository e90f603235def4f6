"""One status per topic, whatever the door: the report's first line, ``watch``, ``GET /topics/{t}/monitor`` and
the dashboard row all print this record (`reviewdepth.report.decision` fills it).

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
from enum import StrEnum
from typing import Any

from reviewdepth.estimation.assessment import AnswerStatus
from reviewdepth.estimation.percent import percent as percent_text

#: the evidence a decision rests on when the topic has an audit stream (else a `Basis` of the samples' answer)
AUDIT_BASIS = "audit stream"


class Validity(StrEnum):
    """How a recall figure may be read: ``one look`` (a random sample read once), ``anytime-valid`` (the audit
    stream's monitor, valid at every look) or ``exact`` (R known)."""

    ONE_LOOK = "one look"
    ANYTIME_VALID = "anytime-valid"
    EXACT = "exact"


def _lower(value: float) -> str:
    """A lower bound printed without rounding it up (0.94996 is 0.949)."""
    return f"{math.floor(value * 1000 + 1e-9) / 1000:.3f}"


def percent(confidence: float) -> str:
    """A confidence never printed above itself (`reviewdepth.estimation.percent`): 0.999 → "99.9 %"."""
    return percent_text(confidence, space=True)


@dataclass(frozen=True)
class StatusFigure:
    """One bound on the recall of the reviewed set, named by its evidence and validity
    (`reviewdepth.report.status_model.StatusFigure`)."""

    basis: str = field(metadata={"doc": "elusion, srs, stratified, known, or audit stream."})
    evidence: str
    validity: Validity
    recall_lower: float | None = field(metadata={"doc": "One-sided lower bound on recall at `confidence`."})
    confidence: float
    certifies: bool
    # the audit stream's figure only: the time-uniform upper bound on the relevant documents left outside the
    # reviewed set, and how many documents that is among (the count bound reads them; None for a sample's figure)
    missed_at_most: int | None = field(default=None, metadata={
        "doc": "Audit stream: at most this many relevant documents are outside the reviewed set (anytime-valid)."})
    unreviewed: int | None = field(default=None, metadata={
        "doc": "Audit stream: the documents of its population outside the reviewed set."})
    # written after the fields (`reviewdepth.report.model.as_json_data`)
    JSON_PROPERTIES = ("text",)

    @property
    def text(self) -> str:
        if self.recall_lower is None:
            return f"recall unbounded ({self.basis}: {self.evidence}; {self.validity})"
        if self.validity == Validity.EXACT:
            return f"recall = {self.recall_lower:.3f} ({self.evidence}; exact)"
        return (f"recall ≥ {_lower(self.recall_lower)} ({self.basis}: {self.evidence}; {self.validity}, "
                f"one-sided {percent(self.confidence)})")

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "text": self.text}


@dataclass(frozen=True)
class TopicStatus:
    """The topic's one decision at one moment: the same in the report (`answer.topic_status`, whose ``status``,
    ``text`` and ``next_step`` are this record's), `watch`, the monitor route, the dashboard, `topics`,
    ``GET /topics`` and the validation document. It rests on one basis fixed in advance: the audit stream when
    the topic has one, else its random samples (or R known); the other figure is shown beside it as supporting
    evidence, never combined with it and never as a second status.

    ``headline``: the status sentence of the deciding evidence (it starts with the target and the status word);
    ``next_step``: the one next step, from the same evidence (a reached topic's is never "to certify"); both name
    the topic, ready to run. ``text``: the headline, the deciding figure, then the supporting ones."""

    target: str
    confidence: float
    status: AnswerStatus
    decided_by: str | None
    reviewed: int
    relevant_found: int
    figures: list[StatusFigure] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    headline: str | None = None
    next_step: str | None = None
    JSON_PROPERTIES = ("text",)

    @property
    def lead(self) -> str:
        """The headline, or, when none was given, the target and the status word."""
        if self.headline:
            return self.headline
        pct = f"{percent_text(float(self.target))} recall" if _is_number(self.target) else f"recall {self.target}"
        return f"{pct}: {self.status}"

    @property
    def text(self) -> str:
        decided = next((f for f in self.figures if f.basis == self.decided_by), None)
        parts = [decided.text] if decided is not None else []
        parts += [f"supporting, not deciding: {f.text}" for f in self.figures if f is not decided]
        parts += self.missing
        return self.lead + (" — " + "; ".join(parts) if parts else "")

    def as_dict(self) -> dict[str, Any]:
        return {"target": self.target, "confidence": self.confidence, "status": self.status,
                "decided_by": self.decided_by, "reviewed": self.reviewed, "relevant_found": self.relevant_found,
                "figures": [f.as_dict() for f in self.figures], "missing": list(self.missing),
                "headline": self.lead, "next_step": self.next_step, "text": self.text}


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True
