"""The two-phase (TAR 1.0) section at a rank cutoff, filled once for both readers: the depth report
(`reviewdepth.services.answers.report.report_of` with ``ReportOptions.produce_to``) and the validation document
(`reviewdepth.services.answers.validation.build_validation`, which takes it from that report). The counts come from
`reviewdepth.services.evidence.two_phase.two_phase_evidence`; every figure from
`reviewdepth.estimation.two_phase.two_phase_estimate` and `control_set_recall`."""

from __future__ import annotations

from reviewdepth.estimation.two_phase import (
    CountFigure,
    RatioFigure,
    control_set_recall,
    two_phase_estimate,
)
from reviewdepth.report.two_phase_model import TwoPhase, TwoPhaseCount, TwoPhaseRatio
from reviewdepth.services.evidence.two_phase import TwoPhaseEvidence


def _ratio(figure: RatioFigure | None) -> TwoPhaseRatio | None:
    if figure is None:
        return None
    return TwoPhaseRatio(figure.point, figure.lower, figure.upper, figure.lower_one_sided, figure.confidence,
                         figure.stratum_confidence, [str(a) for a in figure.assumptions])


def _count(figure: CountFigure | None, sample_id: int | None) -> TwoPhaseCount | None:
    if figure is None:
        return None
    return TwoPhaseCount(figure.stratum, sample_id if figure.sample_size else None, figure.sample_size,
                         figure.sample_relevant, figure.sample_unjudged, figure.point, figure.lower, figure.upper,
                         figure.lower_one_sided, figure.upper_one_sided, figure.exact)


def two_phase_of(evidence: TwoPhaseEvidence, confidence: float, interval: str,
                 target: float | None = None) -> TwoPhase:
    """The two-phase section from the counts at the cutoff (`reviewdepth.estimation.two_phase.two_phase_estimate`
    computes every figure); ``meets_target``: the one-sided recall lower bound is at least ``target``."""
    est = two_phase_estimate(evidence.counts, confidence, interval)
    meets = None if est.recall is None or target is None else est.recall.lower_one_sided >= target
    c = evidence.counts
    return TwoPhase(
        cutoff=c.cutoff, queue_size=evidence.queue_size, interval=interval, confidence=confidence,
        produced=c.produced, coded=c.coded, coded_relevant=c.coded_relevant,
        coded_relevant_above=c.coded_relevant_above, uncoded_above=c.uncoded_above, discard_pile=c.uncoded_below,
        found_uncoded=_count(est.found_uncoded, evidence.produced_sample_id),
        eluded=_count(est.eluded, evidence.discard_sample_id), recall=_ratio(est.recall),
        precision=_ratio(est.precision), gaps=[str(g) for g in est.gaps], target=target, meets_target=meets,
        control_sample_id=evidence.control_sample_id, control_relevant=evidence.control_relevant,
        control_found=evidence.control_found,
        control_recall=None if evidence.control_sample_id is None else _ratio(control_set_recall(
            evidence.control_relevant, evidence.control_found, confidence)))
