"""The depth assessment of one queue at one moment, from the evidence loaded for it: the step the depth report,
the monitor's one-look rules and the topic status share (`reviewdepth.estimation.assessment.assess` does the
statistics; this module only states the review for it)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from reviewdepth.estimation.assessment import Assessment, ReviewState, assess
from reviewdepth.estimation.target import DEFAULT_TARGET, Target
from reviewdepth.services.evidence.queue_evidence import QueueEvidence
from reviewdepth.store.loaders import QueueLabels


def stopping_target(targets: Sequence[Target]) -> Target:
    """The target the stopping rules are evaluated for: 0.95 when asked for (written "0.95"), else the largest
    target below 1."""
    below_one = [t for t in targets if t.certifiable]
    if any(t.text == DEFAULT_TARGET.text for t in targets) or not below_one:
        return DEFAULT_TARGET
    return max(below_one, key=lambda t: t.value)


def queue_population(labels: QueueLabels, population_size: int | None) -> int:
    """N: the topic's stated population (never below the queue's size), else the queue's size."""
    return max(int(population_size), labels.size) if population_size else labels.size


def fully_judged(labels: QueueLabels, population: int) -> bool:
    """Whether every document of the population is judged (then recall is known, not estimated)."""
    judged_in_queue = int((labels.labels >= 0).sum())
    return labels.judged_total >= population and judged_in_queue == labels.size and population == labels.size


def queue_assessment(labels: QueueLabels, evidence: QueueEvidence, population: int, is_fully_judged: bool,
                     targets: Sequence[Target], *, confidence: float, interval: str = "hypergeometric",
                     target_rule: str = "ceil", known_relevant: int | None = None,
                     scores: npt.NDArray[np.float64] | None = None, heuristics: bool = True) -> Assessment:
    """`assess` on ``labels`` (in review order: `QueueEvidence.in_review_order`) with the samples ``evidence``
    holds, for ``targets`` (the stopping rules at `stopping_target`). ``scores``: the queue's scores in queue
    order, declared probabilities of relevance (the Quant rules read them, in review order); None: not declared."""
    chosen = [t.text for t in targets]
    probabilities = None if scores is None else scores if evidence.order is None else scores[evidence.order - 1]
    state = ReviewState(labels.labels, evidence.reviewed, population, labels.relevant_total, known_relevant,
                        is_fully_judged, evidence.screened_random, evidence.order, probabilities)
    return assess(state, evidence.draws, chosen, confidence=confidence, interval=interval,
                  stopping_target=stopping_target(targets).text, target_rule=target_rule, heuristics=heuristics)
