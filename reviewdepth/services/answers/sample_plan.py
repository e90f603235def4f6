"""``sample plan``: how large a random sample must be to certify a target recall now, what outcome would certify it,
and the chance of that outcome if the current estimate is right (pure formulas in
`reviewdepth.estimation.planning`)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Literal, get_args

import numpy as np
from sqlalchemy import Connection, Engine

from reviewdepth.estimation.assessment import Assessment, Basis, ReviewState, assess
from reviewdepth.estimation.depth_unknown import default_window
from reviewdepth.estimation.percent import percent
from reviewdepth.estimation.planning import plan_elusion, plan_population
from reviewdepth.estimation.stop_plan import project_yield
from reviewdepth.estimation.target import DEFAULT_TARGET, Target
from reviewdepth.report.wording import with_topic
from reviewdepth.services.errors import Invalid
from reviewdepth.services.evidence.confidence import checked_confidence, checked_target
from reviewdepth.services.evidence.queue_evidence import QueueEvidence
from reviewdepth.services.evidence.queue_state import load_queue_state
from reviewdepth.store.loaders import QueueLabels
from reviewdepth.store.models import Queue
from reviewdepth.store.snapshot import read_snapshot

PlanFrame = Literal["unreviewed", "all"]
PLAN_FRAMES: tuple[str, ...] = get_args(PlanFrame)


def _rate_source(found: int, reviewed: int, rest: int, assessment: Assessment | None,
                 prefix_labels: np.ndarray | None) -> tuple[float, str]:
    """The elusion rate (share of relevant documents in the unreviewed rest) the plan assumes, and where it is from.

    The Jeffreys posterior mean (y + ½)/(m + 1) of the best evidence: the rest sample's y positives in its m
    documents of the rest when there is one, else the recent yield decaying as it did over the window before
    (`stop_plan.project_yield`, Jeffreys rates), a heuristic projection. Never 0: a sample or a
    window without a relevant document does not show that the rest holds none, and a plan that assumed so would
    promise a certain success."""
    if assessment is not None and assessment.rest_sample is not None:
        use = next(u for u in assessment.samples if u.sample_id == assessment.rest_sample)
        if use.in_rest:
            return ((use.rest_positives + 0.5) / (use.in_rest + 1),
                    f"sample {use.sample_id}: {use.rest_positives} relevant among its {use.in_rest:,} documents in "
                    "the unreviewed rest (Jeffreys mean)")
    window = default_window(reviewed)
    if prefix_labels is not None and window and rest:
        # the decaying projection of `stop_plan.project_yield`: a constant recent rate over the whole rest said
        # recall 0.258 on CLEF 2017 CD009579 after 500 reviewed (truth 0.964); the decaying one about 0.95
        projection = project_yield((np.asarray(prefix_labels[:reviewed]) == 1).astype(np.int8), rest)
        return (min(1.0, projection.rest_estimate / rest),
                f"projected from the recent yield ({projection.source}; Jeffreys rates; heuristic, not evidence)")
    return 0.5, "no evidence at all: the plan assumes half the rest is relevant"


def sample_plan_figures(found: int, reviewed: int, rest: int, assessment: Assessment | None, target: Fraction,
                        confidence: float, *, prefix_labels: np.ndarray | None = None, power: float = 0.8,
                        rate: float | None = None) -> dict[str, Any]:
    """The elusion-test plan at the current cutoff as plain data (the report's ``answer.plan`` and the command)."""
    tau = target
    cautious_chance: float | None = None
    if rate is None:
        rate, source = _rate_source(found, reviewed, rest, assessment, prefix_labels)
        plan = plan_elusion(found, rest, tau, confidence, rate, power=power)
        point = _point_rate(assessment)
        if not plan.feasible and point is not None and point[0] < rate:
            # the cautious rate says recall is below the target, the sample's own rate says it is met: the sample
            # is too small to tell, so plan the sample that would certify if the point estimate is right and say
            # how likely that is at the cautious rate
            point_plan = plan_elusion(found, rest, tau, confidence, point[0], power=power)
            if point_plan.feasible and point_plan.size:
                cautious = plan_elusion(found, rest, tau, confidence, rate, power=power, size=point_plan.size)
                cautious_chance = cautious.chance
                plan, rate, source = point_plan, point[0], point[1]
    else:
        source = "stated by the user"
        plan = plan_elusion(found, rest, tau, confidence, rate, power=power)
    out = {"frame": "unreviewed", "target": float(tau), "confidence": confidence, "power": power,
           "elusion_rate": rate, "rate_source": source, **dataclasses.asdict(plan),
           "chance_at_cautious_rate": cautious_chance,
           "command": f"reviewdepth sample draw TOPIC --frame unreviewed --size {plan.size}"
           if plan.feasible and plan.size else None}
    summary = (
        f"a random sample of {plan.size:,} of the {rest:,} unreviewed documents certifies {percent(float(tau))} recall "
        f"at {percent(confidence)} confidence if it holds at most {plan.max_positives} relevant; at an elusion rate of "
        f"{rate:.3%} ({source}) the chance of that is {percent(plan.chance)}"
        if plan.feasible and plan.size is not None and plan.chance is not None else plan.reason)
    if cautious_chance is not None:
        summary += (f"; the sample so far is too small to tell: at the cautious rate (Jeffreys mean) the chance is "
                    f"{percent(cautious_chance)}")
    out["summary"] = summary
    if reviewed == 0 and found == 0 and not plan.feasible and (assessment is None or assessment.rest_sample is None):
        # no evidence at all: the infeasible plan's figures rest on an assumed rate; say what is missing instead
        out["reason"] = out["summary"] = (
            "nothing is reviewed and no random sample is judged: no elusion test can certify recall before the "
            "review finds relevant documents; draw a richness sample first (reviewdepth plan TOPIC gives its size)")
    return out


def _point_rate(assessment: Assessment | None) -> tuple[float, str] | None:
    """The rest sample's own elusion rate y/m, when there is a rest sample."""
    if assessment is None or assessment.rest_sample is None:
        return None
    use = next(u for u in assessment.samples if u.sample_id == assessment.rest_sample)
    if not use.in_rest:
        return None
    return (use.rest_positives / use.in_rest,
            f"sample {use.sample_id}: {use.rest_positives} relevant among its {use.in_rest:,} documents in the "
            "unreviewed rest (point estimate)")


@dataclass(frozen=True)
class CurrentEvidence:
    """A topic's queue as it is now, as the plans read it: the queue row, the as-of judgment id, its labels under
    the policy, the report's evidence (reviewed prefix, samples) and the assessment at one stopping target."""

    queue: Queue
    as_of: int | None
    labels: QueueLabels
    evidence: QueueEvidence
    assessment: Assessment

    @property
    def prefix_labels(self) -> np.ndarray:
        """The reviewed prefix's labels as 0/1 (1 = relevant), in rank order."""
        prefix: np.ndarray = (np.asarray(self.labels.labels[:self.evidence.reviewed]) == 1).astype(np.int8)
        return prefix

    @property
    def rest_sample(self) -> tuple[int, int]:
        """(documents in the current rest, relevant among them) of the report's rest sample; (0, 0) without one."""
        if self.assessment.rest_sample is None:
            return 0, 0
        use = next(u for u in self.assessment.samples if u.sample_id == self.assessment.rest_sample)
        return use.in_rest, use.rest_positives

    @property
    def rest_sample_offsets(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """Where the rest sample's judged documents sit among the unreviewed (0-based offsets in review order), and
        those of them that are relevant; empty without a rest sample."""
        if self.assessment.rest_sample is None:
            return (), ()
        draw = next((d for d in self.evidence.draws if d.sample_id == self.assessment.rest_sample), None)
        if draw is None:
            return (), ()
        reviewed = self.evidence.reviewed
        order = self.evidence.order
        position_of: dict[int, int] | None = (None if order is None else
                                              {int(rank): i + 1 for i, rank in enumerate(order.tolist())})
        offsets: list[int] = []
        positive: list[int] = []
        for rank, label in zip(draw.ranks.tolist(), draw.labels.tolist(), strict=True):
            position = int(rank) if position_of is None else position_of.get(int(rank), int(rank))
            if position > reviewed and label in (0, 1):
                offsets.append(position - reviewed - 1)
                if label == 1:
                    positive.append(position - reviewed - 1)
        return tuple(offsets), tuple(positive)


def current_evidence(engine: Engine, topic: str, *, queue: str | None, policy: str, target: str,
                     confidence: float) -> CurrentEvidence:
    """`evidence_now` in one read snapshot."""
    with read_snapshot(engine) as conn:
        return evidence_now(conn, topic, queue=queue, policy=policy, target=target, confidence=confidence)


def evidence_now(conn: Connection, topic: str, *, queue: str | None, policy: str, target: str,
                 confidence: float) -> CurrentEvidence:
    """Load :class:`CurrentEvidence` for the topic's queue (named, else the only/newest one) as of its last
    judgment, through ``conn``. The plans read the assessment's samples (which one is the rest sample, what it
    holds) and its basis, never its stopping rules: the heuristics (a point-process fit among them) are left out."""
    state = load_queue_state(conn, topic, queue, policy)
    labels, evidence = state.labels, state.evidence
    review = ReviewState(labels.labels, evidence.reviewed, state.population_size, labels.relevant_total,
                         reviewed_random=evidence.screened_random, queue_ranks=evidence.order)
    assessment = assess(review, evidence.draws, [target], confidence=confidence, stopping_target=target,
                        heuristics=False)
    return CurrentEvidence(state.queue, state.as_of, labels, evidence, assessment)


def plan_sample(engine: Engine, topic: str, *, queue: str | None = None,
                target: Target | str = DEFAULT_TARGET, confidence: float = 0.95, frame: str = "unreviewed",
                power: float = 0.8, rate: float | None = None, policy: str = "latest") -> dict[str, Any]:
    """The plan for the topic's queue as it is now (see :func:`sample_plan_figures`; ``frame="all"`` plans a
    whole-queue sample for QBCB / the direct rule at the current depth)."""
    if frame not in PLAN_FRAMES:
        raise Invalid(f"frame must be one of {', '.join(PLAN_FRAMES)}, not {frame!r}")
    tau = checked_target(target, certify=True).value
    checked_confidence(confidence)
    if not 0 < power < 1:
        raise Invalid(f"power must be in (0, 1), not {power}")
    if rate is not None and not 0 <= rate <= 1:
        raise Invalid(f"elusion rate must be in [0, 1], not {rate}")
    now = current_evidence(engine, topic, queue=queue, policy=policy, target=str(tau), confidence=confidence)
    row, as_of, labels, evidence, assessment = now.queue, now.as_of, now.labels, now.evidence, now.assessment
    reviewed, size = evidence.reviewed, labels.size
    found = int(np.count_nonzero(labels.labels[:reviewed] == 1))
    rest = size - reviewed
    header = {"topic": topic, "queue": row.name, "reviewed": reviewed, "queue_size": size,
              "relevant_found_in_reviewed": found, "as_of_judgment": as_of, "scope": assessment.scope}
    if frame == "unreviewed":
        if rest == 0:
            return {**header, "frame": frame, "feasible": False,
                    "reason": "nothing is left unreviewed: every document of the queue is reviewed"}
        figures = sample_plan_figures(found, reviewed, rest, assessment, tau, confidence,
                                      prefix_labels=labels.labels, power=power, rate=rate)
        # commands name the topic, ready to run
        for key in ("reason", "summary", "command"):
            if isinstance(figures.get(key), str):
                figures[key] = with_topic(figures[key], topic)
        return {**header, **figures}
    prevalence_rate, source = _rate_source(found, reviewed, rest, assessment, labels.labels)
    basis = assessment.basis
    # R's estimate may exceed the queue (relevant documents judged outside it count in a population-wide R): the
    # queue's prevalence is at most 1
    prevalence = min(1.0, (basis.point / size) if basis.method != Basis.JUDGED and size else (
        (found + prevalence_rate * rest) / size if size else 0.0))
    recall = min(1.0, basis.recall_point if basis.recall_point is not None else (
        found / (found + prevalence_rate * rest) if found else 0.0))
    plan = plan_population(size, reviewed, prevalence, recall, tau, confidence, power=power)
    out = {**header, "frame": frame, "target": float(tau), "confidence": confidence, "power": power,
           "prevalence": prevalence, "recall_estimate": recall,
           "estimate_source": f"{basis.method} estimate of R" if basis.method != Basis.JUDGED else source,
           **dataclasses.asdict(plan)}
    out["summary"] = (
        f"a random sample of {plan.size:,} of the whole queue (about {plan.typical_positives} relevant) certifies "
        f"{percent(float(tau))} recall at the current depth if at least {plan.needed_in_reviewed} of its relevant "
        f"documents lie in the reviewed part; at prevalence {prevalence:.3%} and recall {recall:.3f} the chance is "
        f"{percent(plan.chance)}" if plan.feasible and plan.size is not None and plan.chance is not None
        else plan.reason)
    return out
