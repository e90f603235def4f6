"""The two-phase (TAR 1.0) validation section at a rank cutoff: one typed section that the depth report
(`reviewdepth.report.model.Report.two_phase`, ``reviewdepth report --produce-to RANK``) and the validation document
(`reviewdepth.report.validation_model.ValidationDocument.two_phase`) both carry, filled by one service function
(`reviewdepth.services.answers.two_phase.two_phase_of`) from the core's figures (`reviewdepth.estimation.two_phase`).
Nothing here computes."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TwoPhaseRatio:
    """Recall or production precision of a two-phase validation: point, two-sided interval and one-sided lower
    bound at ``confidence``; ``stratum_confidence`` the level each stratum's count interval was taken at (√conf.
    for recall when both strata are estimated); ``assumptions``: the codes of what the figure rests on
    (`reviewdepth.estimation.two_phase.TwoPhaseAssumption`; the sentences in the renderers)."""

    point: float
    lower: float
    upper: float
    lower_one_sided: float
    confidence: float
    stratum_confidence: float
    assumptions: list[str]


@dataclass(frozen=True)
class TwoPhaseCount:
    """The relevant documents of one uncoded stratum (at or above the cutoff: found by production; below it: the
    eluded documents of the discard pile): the sample used (its id and its documents in the stratum), the point
    estimate, the two-sided range and the one-sided bounds at the validation's confidence; ``exact`` when the
    stratum is empty or sampled whole."""

    stratum: int
    sample_id: int | None
    sample_size: int
    sample_relevant: int
    sample_unjudged: int
    point: float
    lower: float
    upper: float
    lower_one_sided: float
    upper_one_sided: float
    exact: bool


@dataclass(frozen=True)
class TwoPhase:
    """Two-phase (TAR 1.0) validation at a rank cutoff: the produced set is every document coded relevant plus
    every uncoded document ranked at or above ``cutoff`` (``produced`` documents; documents coded not relevant
    are withheld); a relevant document counts as found when it is coded relevant or is uncoded at or above the
    cutoff. ``coded``: the documents coded in a review role (``coded_relevant`` relevant, of which
    ``coded_relevant_above`` at or above the cutoff); ``uncoded_above`` and ``discard_pile``: the uncoded
    documents at or above and below the cutoff. ``found_uncoded`` and ``eluded`` estimate the relevant among
    those; ``recall`` and ``precision`` (of the produced set) combine them; a figure the samples do not allow is
    None with its reason among ``gaps`` (`reviewdepth.estimation.two_phase.TwoPhaseGap` codes). ``interval``:
    hypergeometric or clopper-pearson. ``control_*``: recall from a control set (the newest complete whole-queue
    sample: of its ``control_relevant`` relevant documents, ``control_found`` count as found), Clopper–Pearson;
    None without one."""

    cutoff: int
    queue_size: int
    interval: str
    confidence: float
    produced: int
    coded: int
    coded_relevant: int
    coded_relevant_above: int
    uncoded_above: int
    discard_pile: int
    found_uncoded: TwoPhaseCount | None
    eluded: TwoPhaseCount | None
    recall: TwoPhaseRatio | None
    precision: TwoPhaseRatio | None
    gaps: list[str]
    # the protocol's target recall and whether the one-sided recall lower bound reaches it (None: no recall figure)
    target: float | None = None
    meets_target: bool | None = None
    control_sample_id: int | None = None
    control_relevant: int = 0
    control_found: int = 0
    control_recall: TwoPhaseRatio | None = None
