"""The monitor's answer for one topic, and the dashboard's list of them: plain data that the renderers
(`reviewdepth.report.monitor_render`) and both doors use. Nothing here computes; `reviewdepth.services.answers.monitor`
fills it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from reviewdepth.estimation.stopping import floor_text
from reviewdepth.report.model import ChainHead, JsonResult
from reviewdepth.report.status_model import TopicStatus

OneLook = Literal["valid for one look only"]
ONE_LOOK: OneLook = "valid for one look only"


def lower_text(value: float, places: int = 3) -> str:
    """A lower bound printed without rounding it up (0.94996 is 0.949, never 0.950): the core's own rule."""
    return floor_text(value, places)


def _doc(text: str) -> dict[str, str]:
    """A field's description for the API document (`reviewdepth.api.schemas.dataclass_model` reads it)."""
    return {"doc": text}


@dataclass(frozen=True)
class MonitorAudit:
    """The audit stream's evidence: its seeded permutation of the population, how far it is served and judged."""

    stream_id: int
    seed: int
    population_size: int
    position: int
    served: int
    judged: int = field(metadata=_doc("m: the judged prefix of the audit permutation (the evidence)."))
    relevant: int = field(metadata=_doc("Relevant documents among them."))
    outside_reviewed: int = field(metadata=_doc("Of them, the documents outside the reviewed set."))
    relevant_outside_reviewed: int = field(
        metadata=_doc("x: relevant audit documents outside the reviewed set."))
    pending: int = field(metadata=_doc("Served or passed audit documents still waiting for a judgment."))
    pending_documents: list[str] = field(
        metadata=_doc("The first of them (at most 20), in permutation order."))
    description: str


@dataclass(frozen=True)
class MonitorToGo:
    """Documents still to review along the current queue: by the point estimate, and the anytime-valid bound by
    which the stop is certified; the ranks they reach; ``text`` says them."""

    estimate: int | None = field(metadata=_doc("More documents along the queue by the point estimate."))
    bound: int | None = field(metadata=_doc("More documents along the queue by which the stop is certified "
                                            "(null: not within this queue)."))
    depth_estimate: int | None
    depth_bound: int | None
    within_queue: bool
    text: str


@dataclass(frozen=True)
class MonitorNeeded:
    """Audit documents still needed to certify the present reviewed set if they keep the present yield."""

    more: int | None = field(metadata=_doc("Further audit documents that certify the present reviewed set if they "
                                           "keep the present yield (null: none would)."))
    to_judge: int | None = field(metadata=_doc("Of those, the expected number needing a judgment."))
    text: str


@dataclass(frozen=True)
class MonitorFixedLook:
    """The same audit read once (a fixed-sample bound): tighter than the anytime-valid one, valid for one look."""

    missed_upper: int
    recall_lower: float
    certified: bool
    label: OneLook


@dataclass(frozen=True)
class OneLookRule:
    """One of the depth report's stopping rules on the current queue, shown beside the monitor."""

    rule: str
    kind: str
    target: str
    stop_now: bool | None
    stop_depth: int | None
    certifies: str
    guarantee: str
    reason: str
    label: OneLook
    stop_label: str = field(metadata=_doc(
        "stop_now in words: yes / no / — (not applicable); a rule with no guarantee says so: \"yes (heuristic, no "
        "guarantee)\"."))


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
    audit: MonitorAudit | None
    to_go: MonitorToGo
    audit_needed: MonitorNeeded
    fixed_look: MonitorFixedLook
    one_look_rules: list[OneLookRule]
    assumptions: list[str]
    notes: list[str]
    last_activity: str | None
    judgment_chain_head: ChainHead
    next_step: str
    # n_min(F, N − |S|): no random-sample design certifies the target with fewer judged documents outside S
    # (`reviewdepth.estimation.count_bound.certification_floor`); the plan (`reviewdepth plan`) shows every path
    floor: int
    # the topic's one decision (`reviewdepth.report.decision.topic_status`), the record the report's
    # ``answer.topic_status`` is: its words are what every door prints (written last, as the JSON always had it)
    topic_status: TopicStatus

    @property
    def state(self) -> str:
        """What the dashboard shows: the decision's status word ("reached", "not reached", "unknown"), the same
        as the report's ``answer.status``."""
        return str(self.topic_status.status)


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
