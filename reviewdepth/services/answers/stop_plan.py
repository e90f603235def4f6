"""``reviewdepth plan`` / ``GET /topics/{topic}/plan``: the cheapest defensible stop from the topic's evidence now
(the computation is `reviewdepth.estimation.stop_plan.plan_stop`; this module only loads the evidence)."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from sqlalchemy import Engine

from reviewdepth.estimation.percent import percent
from reviewdepth.estimation.stop_plan import CONTINUATIONS, ReviewEvidence, StopPlan, plan_stop
from reviewdepth.estimation.target import DEFAULT_TARGET, Target
from reviewdepth.services.answers.sample_plan import current_evidence
from reviewdepth.services.errors import Invalid
from reviewdepth.services.evidence.confidence import checked_confidence, checked_target


@dataclass(frozen=True)
class TopicStopPlan:
    """The plan with what it was computed from: topic, queue, the as-of judgment id and the population's scope."""

    topic: str
    queue: str
    as_of_judgment: int | None
    scope: str
    plan: StopPlan


def _checked(target: Target | str, confidence: float, power: float, review_cost: float, sample_cost: float,
             produce_cost: float | None = None) -> Fraction:
    tau = checked_target(target, certify=True).value
    checked_confidence(confidence)
    if not 0 < power < 1:
        raise Invalid(f"power: must lie strictly between 0 and 1, not {power!r}")
    for name, value in (("review cost", review_cost), ("sample cost", sample_cost)):
        if not np.isfinite(value) or value <= 0:
            raise Invalid(f"cost: the {name} must be a positive number, not {value!r}")
    if produce_cost is not None and (not np.isfinite(produce_cost) or produce_cost < 0):
        raise Invalid(f"cost: the produce cost must be a number >= 0, not {produce_cost!r}")
    return tau


def topic_stop_plan(engine: Engine, topic: str, *, queue: str | None = None,
                    target: Target | str = DEFAULT_TARGET, confidence: float = 0.95, power: float = 0.8,
                    review_cost: float = 1.0, sample_cost: float = 1.0, policy: str = "latest",
                    produce_cost: float | None = None, previous: str | None = None) -> TopicStopPlan:
    """The plan for the topic's queue as it is now. Evidence: the reviewed prefix as the report counts it and the
    best random sample of the rest (the report's rest sample); the population is the queue. With a
    ``produce_cost`` (producing one document unreviewed) the plan offers the production-cutoff path too, certified
    as ``report --produce-to RANK`` certifies; None: it is not offered. ``previous``: the path the team's last plan
    recommended (a kind of `stop_plan.CONTINUATIONS`): kept while still open and near the cheapest, else the plan
    says what changed."""
    tau = _checked(target, confidence, power, review_cost, sample_cost, produce_cost)
    if previous is not None and previous not in CONTINUATIONS:
        raise Invalid(f"previous: one of {', '.join(sorted(CONTINUATIONS))}, not {previous!r}")
    now = current_evidence(engine, topic, queue=queue, policy=policy, target=str(tau), confidence=confidence)
    rest_size, rest_relevant = now.rest_sample
    offsets, positive_offsets = now.rest_sample_offsets
    plan = plan_stop(ReviewEvidence(now.prefix_labels, now.labels.size, rest_sample_size=rest_size,
                                    rest_sample_relevant=rest_relevant, rest_sample_offsets=offsets,
                                    rest_sample_positive_offsets=positive_offsets),
                     tau, confidence, power=power, review_cost=review_cost, sample_cost=sample_cost,
                     produce_cost=produce_cost, previous=previous)
    return TopicStopPlan(topic, now.queue.name, now.as_of, now.assessment.scope, plan)


def chosen_audit_rate(engine: Engine, topic: str, *, queue: str | None = None,
                      target: Target | str = DEFAULT_TARGET, confidence: float = 0.95,
                      policy: str = "latest") -> tuple[int, str]:
    """K for ``sample stream start --every auto``: `stop_plan.choose_audit_rate` from the topic's evidence now (the
    stream then holds what the monitor needs when the review reaches the projected cheapest depth), with a
    sentence saying why. The guarantee does not depend on K, which may be changed later."""
    from reviewdepth.estimation.stop_plan import Certifier, choose_audit_rate, project_yield

    tau = _checked(target, confidence, 0.8, 1.0, 1.0)
    now = current_evidence(engine, topic, queue=queue, policy=policy, target=str(tau), confidence=confidence)
    prefix = now.prefix_labels
    rest = now.labels.size - now.evidence.reviewed
    rest_size, rest_relevant = now.rest_sample
    projection = project_yield(prefix, rest, rest_sample_size=rest_size, rest_sample_relevant=rest_relevant)
    certifier = Certifier(now.labels.size, tau, confidence)
    every = choose_audit_rate(int(prefix.sum()), now.evidence.reviewed, certifier, projection,
                              step=max(1, rest // 200))
    return every, (f"every {every}: chosen so that the stream holds what the monitor needs for {percent(float(tau))} "
                   f"recall at {percent(confidence)} confidence when the review reaches the projected cheapest depth "
                   f"({projection.source}); the guarantee holds at any pace")
