"""The depth report: one plain-data object that every renderer (table, JSON, CSV, HTML) and both doors use.

Nothing here computes; `reviewdepth.services.answers.report.build_report` fills it. Every section is a frozen dataclass
(or a core result type reused as it is): the JSON writes its fields in order, the renderers read its attributes,
and the API's response model is generated from it (`reviewdepth.api.schemas.section_model`), so a field added
here reaches the table, JSON, CSV, HTML and OpenAPI with no second declaration (CONTRIBUTING: "Add a report
section"; tests/report/test_sections.py walks the fields).

Two markers say how a field is written where the JSON is not one key per field:

- `OMITTED_WHEN_NONE`: the key is left out when the value is None (an optional part of the answer);
- `FLATTENED`: a section's fields are written inline in the enclosing object (a prefix is possible), so a report
  row can carry a core result type beside the report's own columns (an |R| estimate and its scope).

A class may also list properties to write after its fields (``JSON_PROPERTIES``), as the topic status writes its
``text``.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from reviewdepth.estimation.agreement import AlphaResult, ErrorRates, KappaResult, ProportionResult
from reviewdepth.estimation.assessment import (
    AnswerStatus,
    ConservativeFigure,
    CountRange,
    NeedFigure,
    RankRange,
    RecallFigure,
    TargetAnswer,
)
from reviewdepth.estimation.count_bound import FloorFigure
from reviewdepth.estimation.relevant import Estimate
from reviewdepth.estimation.stopping import StoppingEvidence
from reviewdepth.report.coding_model import SampleCoding
from reviewdepth.report.prisma_model import PrismaCounts
from reviewdepth.report.status_model import TopicStatus
from reviewdepth.report.two_phase_model import TwoPhase
from reviewdepth.report.wording import reached_by

Scalar = float | int | str | bool | None
# a trec_eval or tar measure's value (NaN is written as null)
Measure = float | int | str
# a value of a portfolio calibration's record of one rule, as it was stored (`services.simulation.portfolio`)
CalibrationValue = float | int | str | Mapping[str, float] | None

OMIT_NONE = "reviewdepth.omit_none"
FLATTEN = "reviewdepth.flatten"


# ``field(default=None, metadata=OMITTED_WHEN_NONE)``: the key is left out of the JSON when the value is None
OMITTED_WHEN_NONE: Mapping[str, object] = {OMIT_NONE: True}
# ``field(metadata=FLATTENED)``: the field's own fields are written in place of it (``{FLATTEN: "prefix_"}``: each
# with that prefix)
FLATTENED: Mapping[str, object] = {FLATTEN: ""}


def as_json_data(value: Any) -> Any:
    """``value`` as JSON data: dataclasses as objects in field order (with the two markers above), mappings as
    objects, sequences as arrays, enums as their values, NaN and infinities as null."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out: dict[str, Any] = {}
        for item in dataclasses.fields(value):
            child = getattr(value, item.name)
            if child is None and item.metadata.get(OMIT_NONE):
                continue
            prefix = item.metadata.get(FLATTEN)
            if prefix is not None:
                out.update({f"{prefix}{k}": v for k, v in as_json_data(child).items()})
            else:
                out[item.name] = as_json_data(child)
        for name in getattr(value, "JSON_PROPERTIES", ()):
            out[name] = as_json_data(getattr(value, name))
        return out
    if isinstance(value, enum.Enum):
        return as_json_data(value.value)
    if isinstance(value, float):
        return None if math.isnan(value) or math.isinf(value) else value
    if isinstance(value, Mapping):
        return {k: as_json_data(v) for k, v in value.items()}
    if isinstance(value, tuple):  # kept a tuple, as `dataclasses.asdict` does (JSON writes both as arrays)
        return tuple(as_json_data(v) for v in value)
    if isinstance(value, list):
        return [as_json_data(v) for v in value]
    return value


def section_items(section: Any) -> list[tuple[str, Any]]:
    """The (key, value) pairs of a section as its JSON writes them (the generic rows of the CSV and tables: a
    field added to a section gets its row with no renderer edit)."""
    return list(as_json_data(section).items())


class JsonResult:
    """Deterministic JSON for a dataclass result (`Report`, `MonitorReport`): same result, same bytes (floats as
    shortest round-trip repr, keys in field order, NaN and infinities as null)."""

    def to_dict(self) -> dict[str, Any]:
        cleaned: dict[str, Any] = as_json_data(self)
        return cleaned

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False, allow_nan=False) + "\n"


@dataclass(frozen=True)
class CertifyCost:
    """What certifying the stopping target costs when its point estimate is met but the target is not reached:
    ``source`` ``plan`` (the stop plan's recommended path: ``path``, D = ``review_more`` reviewed first, the
    ``expected`` documents judged beyond the reviewed set with their 5–95 % range ``low``–``high``, as `reviewdepth
    plan` prints them) or ``floor`` (a queue too large to replay in a report: from ``low`` = the least projected
    total over further depths, a lower bound, to ``high`` = a one-look sample of the rest now that certifies with
    the plan's power, or the whole rest; ``expected`` None). ``floor``: n_min(F, N_u) now. ``step``: the action."""

    source: str
    path: str | None
    review_more: int
    sample_size: int | None
    expected: float | None
    low: float
    high: float
    floor: int
    certified_by: str
    step: str


@dataclass(frozen=True)
class SamplePlan:
    """The elusion test's plan at the current cutoff (`services.answers.sample_plan.sample_plan_figures`): the plan's
    figures (`estimation.planning.ElusionPlan`) and what the service says beside them."""

    frame: Literal["unreviewed"]
    target: float
    confidence: float
    power: float
    elusion_rate: float
    rate_source: str
    found: int
    unreviewed: int
    missed_allowed: int
    assumed_missed: int
    min_size: int | None
    size: int | None
    max_positives: int | None
    chance: float | None
    expected_positives: float | None
    feasible: bool
    size_given: bool
    reason: str
    chance_at_cautious_rate: float | None
    command: str | None
    summary: str


@dataclass(frozen=True)
class Answer:
    """The headline: the stopping target, its status (reached by what / not reached: how many more / unknown:
    what to do), the topic's one status, and when they apply the review order, the floor of any random-sample
    certification, the one-look sample plan and what certifying costs."""

    target: float
    status: str
    text: str
    confidence: float
    as_of_judgment: int | None
    next_step: str | None
    basis: str
    scope: str
    topic_status: TopicStatus
    review_order: str | None = field(default=None, metadata=OMITTED_WHEN_NONE)
    floor: FloorFigure | None = field(default=None, metadata=OMITTED_WHEN_NONE)
    plan: SamplePlan | None = field(default=None, metadata=OMITTED_WHEN_NONE)
    certify: CertifyCost | None = field(default=None, metadata=OMITTED_WHEN_NONE)


@dataclass(frozen=True)
class Summary:
    queue_size: int
    population: int
    population_source: Literal["topic", "queue size"]
    estimate_scope: str
    scope_note: str
    ordering: str
    reviewed: int
    judged: int
    relevant_found: int
    relevant_found_in_reviewed: int
    relevant_judged_in_topic: int
    deepest_judged_rank: int | None
    last_relevant_rank: int | None
    run_threshold_rank: int | None
    fully_judged: bool


@dataclass(frozen=True)
class EstimateRow:
    """One |R| estimate and its scope; the depth basis also carries the one-sided upper bound the headline's
    "R ≤ …" and the conservative depths use (``upper`` is the two-sided interval's)."""

    estimate: Estimate = field(metadata=FLATTENED)
    scope: str
    upper_one_sided: float | None


@dataclass(frozen=True)
class DepthCertify:
    """What certifying a target costs, in its depth row: ``floor`` n_min(F, N_u) (the core's figure), and for the
    stopping target the stop plan's recommended path (`stop_plan.plan_stop`, filled by the report) with
    ``review_more`` (D reviewed first), the ``expected`` documents it judges with their ``low``–``high`` range,
    and ``to_rank``: the queue rank the path reviews to before it certifies (None: it reviews no further)."""

    floor: int | None = None
    path: str | None = None
    review_more: int | None = None
    expected: float | None = None
    low: float | None = None
    high: float | None = None
    to_rank: int | None = None


@dataclass(frozen=True)
class DepthRow:
    """The answer for one target recall.

    ``status``: ``reached`` / ``not reached`` / ``unknown``; ``reached_by`` names the evidence. ``point_*``: the
    depth from the point estimate R̂ (labelled point, never "reached" by itself). ``conservative_*``: from the
    one-sided upper bound R_U. ``forward_*``: when not reached, the projected depth (queue rank) to review to and
    ``more_*`` the documents that means (point and range), with ``forward_basis`` saying how it was projected;
    ``conservative_forward`` the projected rank where the conservative need (from the one-sided R_U) is met.
    ``certified_depth``: QBCB's depth from a whole-queue sample (certified for the stopping target).

    When the point estimate is met but the target is not reached, reviewing on is not what is missing: the answer
    is what certification costs. ``forward_depth``/``more_documents`` and their low end are then None (the point
    projection sits at the current depth, and "0 more" would read as done; the high end stays: the documents to
    review if R is at its upper bound), and ``certify_floor`` is n_min(F, N_u) at this target
    (`count_bound.certification_floor`): no random-sample design certifies it with fewer further judged documents.
    The report fills ``certify_path`` (the stop plan's recommended path, `stop_plan.plan_stop`), with
    ``certify_review_more`` (D reviewed first), ``certify_expected`` and the ``certify_low``–``certify_high`` range
    of the documents it judges, for the stopping target."""

    target: float
    status: AnswerStatus
    reached_by: str | None
    needed: int | None
    depth: int | None
    point: NeedFigure = field(metadata={FLATTEN: "point_"})
    conservative: ConservativeFigure = field(metadata={FLATTEN: "conservative_"})
    certified_depth: int | None
    to_rank: RankRange = field(metadata={FLATTEN: "forward_"})
    more: CountRange = field(metadata={FLATTEN: "more_"})
    forward_basis: str | None
    basis: str
    certify: DepthCertify = field(metadata={FLATTEN: "certify_"})

    @classmethod
    def of(cls, answer: TargetAnswer) -> DepthRow:
        """The core's answer (`reviewdepth.estimation.assessment.TargetAnswer`) as one row of the depth table."""
        forward = answer.forward
        return cls(answer.target, answer.status, reached_by(answer.reached_by), answer.needed, answer.depth,
                   answer.point, answer.conservative, answer.certified_depth, forward.to_rank, forward.more,
                   forward.basis, answer.basis, DepthCertify(answer.certify_floor))


@dataclass(frozen=True)
class Current:
    depth: int
    relevant_found: int
    precision: float | None


@dataclass(frozen=True)
class StoppingRow:
    """A stopping rule's evidence, its "stop now" in words, and for a heuristic the rule's record on the team's
    portfolio when a calibration measured it (a record as it was stored, so its keys are those of the
    calibration's time)."""

    evidence: StoppingEvidence = field(metadata=FLATTENED)
    stop_label: str
    calibration: Mapping[str, CalibrationValue] | None = field(default=None, metadata=OMITTED_WHEN_NONE)


@dataclass(frozen=True)
class SampleRow:
    """A stored sample (`services.evidence.queue_evidence.SampleEntry.as_row`) and its use at the current cutoff;
    ``coded``: one sentence saying how its documents were coded (``coding``, and ``uncoded`` not yet)."""

    id: int
    queue: str
    frame: str
    frame_definition: str
    size: int
    frame_size: int
    seed: int
    drawn_at_judgment: int | None
    missing: int
    relevant: int | None
    voided: bool
    void_reason: str | None
    status: str
    use: str
    in_unreviewed_rest: int | None
    positives_in_rest: int | None
    coded: str = ""
    coding: list[SampleCoding] = field(default_factory=list)
    uncoded: int = 0


@dataclass(frozen=True)
class Settings:
    targets: list[str]
    stopping_target: str
    confidence: float
    interval: str
    independent_screening: bool | None
    label_policy: str
    ordering: str
    as_of_judgment: int | None
    target_rule: str
    depth_basis: str
    sample_choice: str
    # the queue's scores were declared probabilities of relevance (the Quant and QuantCI rows read them)
    scores_are_probabilities: bool = False


@dataclass(frozen=True)
class ChainHead:
    seq: int
    hash: str
    recorded_at: str | None


@dataclass(frozen=True)
class Provenance:
    software: str
    queue_source: str
    input_digests: list[str]
    judgment_chain_head: ChainHead
    sample_seeds: list[int]


@dataclass(frozen=True)
class GainMarker:
    target: float
    depth: int | None
    conservative: int | None


@dataclass(frozen=True)
class Gain:
    """Relevant found against depth (thinned to a plottable number of points), the |R| estimate the chart
    divides by, with its interval, and the depths marked for each target."""

    depth: list[int]
    found: list[int]
    relevant_estimate: float | None
    relevant_lower: float | None = None
    relevant_upper: float | None = None
    markers: list[GainMarker] = field(default_factory=list)


@dataclass(frozen=True)
class PrecisionRecall:
    """Empty when there is no estimate of R to draw it against."""

    recall: list[float] | None = field(default=None, metadata=OMITTED_WHEN_NONE)
    precision: list[float] | None = field(default=None, metadata=OMITTED_WHEN_NONE)
    interpolated_precision: list[float] | None = field(default=None, metadata=OMITTED_WHEN_NONE)


@dataclass(frozen=True)
class PairAgreement:
    reviewer_a: str
    reviewer_b: str
    agreement: ProportionResult
    cohen_kappa: KappaResult


@dataclass(frozen=True)
class Agreement:
    reviewers: list[str]
    documents: int
    agreement: ProportionResult
    krippendorff_alpha: AlphaResult
    pairs: list[PairAgreement]


@dataclass(frozen=True)
class QcSample:
    sample_id: int
    seed: int
    size: int
    checked: int
    missing: int
    error_rates: ErrorRates | None
    by_original_reviewer: dict[str, ErrorRates]


@dataclass(frozen=True)
class PolicySensitivityRow:
    """The depth figures under one label policy."""

    policy: str
    relevant_judged: int
    relevant_in_reviewed: int
    depth_basis: str
    relevant_estimate: float
    relevant_lower: float
    relevant_upper: float | None
    recall: float | None
    recall_lower: float | None
    recall_upper: float | None
    target: float
    status: str | None
    depth: int | None
    conservative_depth: int | None


@dataclass(frozen=True)
class CorrectedSensitivityRow:
    """The relevant count corrected by the QC error rates."""

    policy: str
    relevant_judged: float
    relevant_judged_lower: float
    relevant_judged_upper: float
    relevant_in_reviewed: float
    note: str


@dataclass(frozen=True)
class ReviewQuality:
    documents_with_several_reviewers: int
    conflicts: int
    conflicts_open: int
    conflicts_resolved: int
    agreement: Agreement | None
    qc_samples: list[QcSample]
    policy_sensitivity: list[PolicySensitivityRow | CorrectedSensitivityRow]


@dataclass(frozen=True)
class Report(JsonResult):
    """Everything the depth report shows for one topic and queue, at one point of the judgment log."""

    topic: str
    queue: str
    # the headline: stopping target, status (reached by what / not reached: how many more / unknown: what to do)
    answer: Answer
    summary: Summary
    estimates: list[EstimateRow]
    depth_basis: str
    depth: list[DepthRow]
    current: Current
    # one recall of the reviewed prefix per basis, each with its sidedness, confidence and caveats
    recall: list[RecallFigure]
    stopping: list[StoppingRow]
    # trec_eval's measures over the reviewed prefix, by name: which ones depends on the measure table
    measures: Mapping[str, Measure]
    # the recall-oriented measures once every document is judged (by name), or a note saying why they are undefined
    completed_review: Mapping[str, Measure] | None
    samples: list[SampleRow]
    settings: Settings
    provenance: Provenance
    gain: Gain
    precision_recall: PrecisionRecall
    review_quality: ReviewQuality
    prisma: PrismaCounts
    # two-phase (TAR 1.0) validation at a rank cutoff, only when asked for (``--produce-to RANK``): absent otherwise
    two_phase: TwoPhase | None = field(default=None, metadata=OMITTED_WHEN_NONE)


def json_safe(value: Any) -> Any:
    """NaN and infinities become null (JSON has no such numbers), through dicts, lists and tuples."""
    if isinstance(value, float):
        return None if math.isnan(value) or math.isinf(value) else value
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    return value
