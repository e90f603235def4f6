"""The monitor's answer for one topic, and the dashboard's list of them: plain data that the renderers
(`reviewdepth.report.monitor_render`) and both doors use. Nothing here computes; `reviewdepth.services.monitor`
fills it."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from reviewdepth.report.model import JsonResult

ONE_LOOK = "valid for one look only"


def lower_text(value: float, places: int = 3) -> str:
    """A lower bound printed without rounding it up (0.94996 is 0.949, never 0.950)."""
    scale = 10**places
    return f"{math.floor(value * scale + 1e-9) / scale:.{places}f}"


@dataclass
class MonitorReport(JsonResult):
    """The anytime-valid stop signal of one topic at one point of its judgment log.

    ``reviewed`` is |S|, the union of every queue's reviewed prefix within the audit's population; ``relevant_found``
    the relevant documents in it; ``missed_upper`` the time-uniform upper bound on the relevant documents outside
    it; ``recall_lower`` the anytime-valid recall lower bound the stop rule compares with ``target``. ``audit`` is
    None when the topic has no audit stream (the status is then "continue" and no bound is informative).
    ``fixed_look`` and ``one_look_rules`` are the one-look figures beside it, each labelled "valid for one look
    only"."""

    topic: str
    queue: str
    as_of_judgment: int | None
    status: str  # "stop certified" | "continue"
    certified: bool
    headline: str
    target: str
    confidence: float
    guarantee: str
    recall_lower: float
    recall_point: float | None
    relevant_found: int
    reviewed: int
    queue_reviewed: int
    queue_size: int
    population: int
    relevant_known: int
    missed_upper: int
    audit: dict[str, Any] | None
    to_go: dict[str, Any]
    audit_needed: dict[str, Any]
    fixed_look: dict[str, Any]
    one_look_rules: list[dict[str, Any]]
    assumptions: list[str]
    notes: list[str]
    last_activity: str | None
    judgment_chain_head: dict[str, Any]
    next_step: str
    # n_min(F, N − |S|): no random-sample design certifies the target with fewer judged documents outside S
    # (`reviewdepth.estimation.stop_plan.certification_floor`); the plan (`reviewdepth plan`) shows every path
    floor: int = 0
    # the topic's one status (`reviewdepth.report.status_model.TopicStatus.as_dict`): the words every door prints
    topic_status: dict[str, Any] = field(default_factory=dict)

    @property
    def state(self) -> str:
        """What the dashboard shows: the topic's status word ("reached", "not reached", "unknown"), the same as
        the report's ``answer.status``; "stop certified", "continue" or "no audit" for a report built without
        it."""
        if self.topic_status:
            return str(self.topic_status["status"])
        if self.audit is None and not self.certified:
            return "no audit"
        return self.status


@dataclass
class DashboardEntry:
    """One topic on the dashboard: its monitor, or why there is none (no queue yet, a stream that cannot be
    used), and when it last changed."""

    topic: str
    monitor: MonitorReport | None
    problem: str | None
    last_activity: str | None

    @property
    def state(self) -> str:
        if self.monitor is not None:
            return self.monitor.state
        return "no queue" if self.problem is None else "problem"


@dataclass
class Dashboard:
    """One page of the topics (``entries``: page ``page`` of ``limit`` topics, of ``total`` in all, the most
    recently judged first) with their monitor status, at the settings all of them were computed with."""

    target: str
    confidence: float
    entries: list[DashboardEntry] = field(default_factory=list)
    total: int = 0
    page: int = 1
    limit: int = 50
    # the filter the page was chosen with: topic names containing this (ignoring case); judged topics only
    name_contains: str = ""
    judged_only: bool = False

    @property
    def first(self) -> int:
        """The position (from 1) of the page's first topic among all."""
        return (self.page - 1) * self.limit + 1

    @property
    def has_next(self) -> bool:
        return self.page * self.limit < self.total
