"""The counts of a two-phase (TAR 1.0) validation at a rank cutoff, read through the caller's connection: the coded
set (the reviewed set of `reviewdepth.services.evidence.queue_evidence`, wherever its documents rank), the uncoded
documents at or above the cutoff and below it, and the stored samples that speak for each of the two strata.

A sample speaks for a stratum when its frame holds every document of the stratum (``ranks:1-K`` or the whole
queue for the uncoded documents at or above K; ``below-rank:J`` with J ≤ K, ``unreviewed`` drawn below such a
prefix, or the whole queue for the discard pile); its documents in the stratum are then, given their number, a
simple random sample of it (`reviewdepth.estimation.two_phase`). Of several, the newest (highest id) that is not
voided is used: a rule that does not look at what the samples found. The newest complete whole-queue sample also
serves as a control set (`reviewdepth.estimation.two_phase.control_set_recall`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from reviewdepth.estimation.two_phase import StratumSample, TwoPhaseCounts
from reviewdepth.services.errors import Conflict, Invalid
from reviewdepth.services.evidence.queue_state import QueueState
from reviewdepth.services.evidence.samples import SampleRecord
from reviewdepth.store.labels import UNJUDGED

STRATUM_FRAMES = ("all", "ranks", "below-rank", "unreviewed")


@dataclass(frozen=True)
class TwoPhaseEvidence:
    """The counts at the cutoff and the ids of the samples used for each stratum (None: no sample covers it)."""

    counts: TwoPhaseCounts
    queue_size: int
    produced_sample_id: int | None
    discard_sample_id: int | None
    # the newest non-voided whole-queue sample (a control set), its relevant documents and how many of them
    # count as found at the cutoff (coded relevant, or uncoded at or above it); None without one or while any of
    # its documents lacks a decision
    control_sample_id: int | None = None
    control_relevant: int = 0
    control_found: int = 0


def _frame_range(sample: SampleRecord, size: int) -> tuple[int, int] | None:
    if sample.frame == "all":
        return 1, size
    if sample.frame == "ranks" and sample.from_rank is not None and sample.to_rank is not None:
        return int(sample.from_rank), int(sample.to_rank)
    if sample.frame in ("below-rank", "unreviewed") and sample.below_rank is not None:
        return int(sample.below_rank) + 1, size
    return None


def _stratum_sample(samples: list[SampleRecord], stratum_ranks: npt.NDArray[np.int64], in_stratum: npt.NDArray[
        np.bool_], size: int) -> tuple[int | None, StratumSample | None]:
    """The newest non-voided sample whose frame holds every rank of the stratum, restricted to the stratum."""
    if len(stratum_ranks) == 0:
        return None, None
    first, last = int(stratum_ranks.min()), int(stratum_ranks.max())
    for sample in sorted(samples, key=lambda s: -s.id):
        span = _frame_range(sample, size)
        if sample.voided or sample.frame not in STRATUM_FRAMES or span is None:
            continue
        if not (span[0] <= first and last <= span[1]):
            continue
        ranks = np.asarray(sample.ranks, dtype=np.int64)
        labels = np.asarray(sample.labels, dtype=np.int64)
        keep = (ranks >= 1) & (ranks <= size)
        keep[keep] = in_stratum[ranks[keep] - 1]
        return sample.id, StratumSample(int(keep.sum()), int(np.count_nonzero(labels[keep] == 1)),
                                        int(np.count_nonzero(labels[keep] == UNJUDGED)))
    return None, None


def two_phase_evidence(state: QueueState, samples: list[SampleRecord], cutoff: int) -> TwoPhaseEvidence:
    """The two-phase counts of the queue of ``state`` (labels by the report's policy, as of its judgment) at rank
    ``cutoff``; ``samples``: the queue's samples as the report loaded them (`load_samples`)."""
    labels, evidence = state.labels_by_rank, state.evidence
    size = labels.size
    if cutoff < 1:
        raise Invalid(f"--produce-to: the cutoff rank must be in 1..{size} (the queue's size), not {cutoff}")
    if cutoff > size:  # a valid rank for another queue: a conflict with this queue's state, not a bad value
        raise Conflict(f"--produce-to: the cutoff rank must be in 1..{size} (the queue's size), not {cutoff}")
    coded = np.zeros(size, dtype=bool)
    if evidence.order is None:
        coded[: evidence.reviewed] = True
    else:
        coded[evidence.order[: evidence.reviewed] - 1] = True
    label = np.asarray(labels.labels)
    relevant = coded & (label == 1)
    above = np.arange(1, size + 1) <= cutoff
    uncoded_above = ~coded & above
    uncoded_below = ~coded & ~above
    ranks = np.arange(1, size + 1, dtype=np.int64)
    produced_id, produced = _stratum_sample(samples, ranks[uncoded_above], uncoded_above, size)
    discard_id, discard = _stratum_sample(samples, ranks[uncoded_below], uncoded_below, size)
    control = next((x for x in sorted(samples, key=lambda x: -x.id) if x.frame == "all" and not x.voided
                    and x.complete), None)
    control_relevant = control_found = 0
    if control is not None:
        c_ranks = np.asarray(control.ranks, dtype=np.int64)
        c_relevant = c_ranks[np.asarray(control.labels) == 1]
        found_mask = coded | above
        control_relevant = len(c_relevant)
        control_found = int(np.count_nonzero(found_mask[c_relevant - 1]))
    counts = TwoPhaseCounts(
        cutoff=cutoff, coded=int(coded.sum()), coded_relevant=int(relevant.sum()),
        coded_relevant_above=int(np.count_nonzero(relevant & above)), uncoded_above=int(uncoded_above.sum()),
        uncoded_below=int(uncoded_below.sum()), produced_sample=produced, discard_sample=discard)
    return TwoPhaseEvidence(counts, size, produced_id, discard_id, None if control is None else control.id,
                            control_relevant, control_found)
