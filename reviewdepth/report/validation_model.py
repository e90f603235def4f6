"""The validation document (`reviewdepth validation TOPIC`): what a review team hands to a court or to the other
side for one topic and its stop decision — protocol settings, the evidence, the results, the cutoff and discard
pile, the decision and the rule behind it, the plan, the chain head and provenance, and the caveats.

Plain data, filled by `reviewdepth.services.answers.validation.build_validation` from the *same* typed depth report
(`reviewdepth.report.model.Report`) that ``reviewdepth report`` prints, plus what a report does not carry: who
coded each sample document and when, and the topic's audit streams. Nothing here computes; the few derived
figures (a margin of error is the half-width of an interval the report gives; an elusion-rate bound is the
report's eluded-document bound over the discard pile) are formed by the service and named as such. The renderers
(`reviewdepth.report.validation_render`: JSON, HTML, PDF) read these fields and nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from reviewdepth.estimation.count_bound import CountBound, FloorFigure
from reviewdepth.report.model import OMITTED_WHEN_NONE, CertifyCost, JsonResult, Provenance, ReviewQuality, SamplePlan
from reviewdepth.report.protocol_model import TopicProtocol
from reviewdepth.report.two_phase_model import TwoPhase


@dataclass(frozen=True)
class Protocol:
    """The settings the validation was run with: the stopping target and confidence, the sample design, the
    interval, the label policy and the point of the judgment log it is read at."""

    target: float
    confidence: float
    design: str
    basis: str
    interval: str
    label_policy: str
    ordering: str
    estimate_scope: str
    as_of_judgment: int | None


@dataclass(frozen=True)
class SampleDocument:
    """One document of a sample: its rank where it was drawn, and the latest decision on it at the as-of point
    (``label`` as coded, ``relevant`` its reading, None with no decision: uncoded) with its coder, role and time."""

    sample_id: int
    rank: int
    doc_id: str
    label: str | None
    relevant: bool | None
    reviewer: str | None
    role: str | None
    recorded_at: str | None


@dataclass(frozen=True)
class Coder:
    reviewer: str
    documents: int


@dataclass(frozen=True)
class SampleEvidence:
    """A stored sample as the report lists it (`reviewdepth.report.model.SampleRow`) with its coders and the times
    of the first and last decision on its documents; ``documents``: each document and its coding."""

    id: int
    frame: str
    frame_definition: str
    seed: int
    size: int
    frame_size: int
    drawn_at_judgment: int | None
    relevant: int | None
    uncoded: int
    voided: bool
    void_reason: str | None
    use: str
    status: str
    in_discard_pile: int | None
    relevant_in_discard_pile: int | None
    coders: list[Coder]
    first_coded_at: str | None
    last_coded_at: str | None
    documents: list[SampleDocument]


@dataclass(frozen=True)
class AuditDocument:
    """One document of an audit stream's judged prefix (the stream's evidence, in permutation order): its
    ``position`` in the permutation (1-based), its rank on the queue (None: not in it) and the latest decision on
    it at the as-of point, with its coder, role and time. A document coded in the review is evidence of the
    stream as much as one the stream served: the prefix is the random sample."""

    stream_id: int
    position: int
    rank: int | None
    doc_id: str
    label: str | None
    relevant: bool | None
    reviewer: str | None
    role: str | None
    recorded_at: str | None


@dataclass(frozen=True)
class AuditStreamEvidence:
    """An audit stream of the topic: its seed and pace, the documents it covers, when it was created and whether
    it is voided (``void_reason``: why, as given when it was voided); the stream's figure (the topic status's)
    when it bounds recall now; ``judged`` the length of its judged prefix and ``documents`` that prefix (empty for
    a voided stream, which is evidence of nothing)."""

    id: int
    seed: int
    pace: str
    population: int
    served: int
    created_at: str
    voided: bool
    void_reason: str | None
    recall_lower: float | None
    certifies: bool | None
    judged: int = 0
    documents: list[AuditDocument] = field(default_factory=list)


@dataclass(frozen=True)
class Evidence:
    samples: list[SampleEvidence]
    audit_streams: list[AuditStreamEvidence]


@dataclass(frozen=True)
class Results:
    """The report's figures on the basis it decided by. ``recall_*``: the recall of the reviewed set (point,
    two-sided interval, one-sided lower bound, at ``confidence``) and ``recall_margin`` the half-width of that
    two-sided interval (the post-test margin of error). ``elusion_*``: the elusion sample's share of relevant
    documents, its bounds (the report's eluded-document bounds over the discard pile) and margin (half-width);
    ``eluded_*``: the estimated relevant documents in the discard pile and their two-sided range. ``relevant_*``:
    the estimate of all relevant documents R. ``precision``: relevant over reviewed, k/depth, exact (every
    reviewed document is judged). A figure the basis does not give is None."""

    basis: str
    confidence: float
    recall: float | None
    recall_lower: float | None
    recall_upper: float | None
    recall_lower_one_sided: float | None
    recall_margin: float | None
    recall_note: str | None
    elusion_sample_id: int | None
    elusion_sample_size: int | None
    elusion_sample_relevant: int | None
    elusion_rate: float | None
    elusion_rate_lower: float | None
    elusion_rate_upper: float | None
    elusion_margin: float | None
    eluded: float | None
    eluded_lower: float | None
    eluded_upper: float | None
    relevant_estimate: float | None
    relevant_lower: float | None
    relevant_upper: float | None
    reviewed: int
    relevant_in_reviewed: int
    precision: float | None


@dataclass(frozen=True)
class Cutoff:
    """Where the review stopped: ``rank`` the queue rank of the cutoff (None when the reviewed set is not a prefix
    of the queue), the ``reviewed`` set and the ``discard_pile`` (documents of the population neither reviewed nor
    produced; sample documents drawn from it stay in it: a sample is judged, not reviewed)."""

    rank: int | None
    reviewed: int
    population: int
    queue_size: int
    discard_pile: int
    review_order: str | None


@dataclass(frozen=True)
class Decision:
    """The stop decision, as the topic's one decision object (`reviewdepth.report.status_model.TopicStatus`)
    states it: ``status`` (reached / not reached / unknown), the headline, the basis (``decided_by``) and the
    full sentence; ``deciding`` the deciding figure's words and ``supporting`` the other figures' (never a second
    status); the rule that certified it with its guarantee, reason and assumptions (None when no certified rule
    says stop)."""

    status: str
    headline: str
    decided_by: str | None
    status_text: str
    certified_by: str | None
    rule: str | None
    guarantee: str | None
    reason: str | None
    assumptions: list[str]
    next_step: str | None
    deciding: str | None = None
    supporting: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Plan:
    """The floor of any random-sample certification now, the one-look sample plan and what certifying costs,
    when the report carries them (each None otherwise)."""

    floor: FloorFigure | None = field(default=None, metadata=OMITTED_WHEN_NONE)
    sample_plan: SamplePlan | None = field(default=None, metadata=OMITTED_WHEN_NONE)
    certify: CertifyCost | None = field(default=None, metadata=OMITTED_WHEN_NONE)


@dataclass(frozen=True)
class TestRun:
    """One test run on the topic's evidence, in the order they were run: a sample's one-look test when its last
    document was coded (``at_judgment``, the review then ``reviewed`` deep), a sample read again at today's cutoff
    (``reread``), or the audit stream's anytime-valid bound now. ``recall_lower``: the one-sided lower bound at
    ``confidence`` the test gave (the report's, as of that judgment); ``passed``: it is at least ``target`` (None:
    the test gave no bound); ``decided``: this test is the decision's evidence."""

    order: int
    evidence: str
    kind: str
    validity: str
    at_judgment: int | None
    reviewed: int
    recall_lower: float | None
    target: float
    confidence: float
    passed: bool | None
    decided: bool


@dataclass(frozen=True)
class Flag:
    """Something a reader must weigh: ``code`` (``reused-failed-sample``, ``revalidate``), the evidence it is
    about and the sentence that says it (with the assumption it breaks)."""

    code: str
    evidence: str
    text: str


@dataclass(frozen=True)
class ProtocolRecord:
    """The topic's protocol fields as entered (`reviewdepth.report.protocol_model.TopicProtocol`; every field None:
    none entered), who entered them and when."""

    fields: TopicProtocol
    recorded_at: str | None
    recorded_by: str | None


@dataclass(frozen=True)
class AcceptanceCheck:
    """The acceptance criterion agreed in advance, read against the evidence: ``bound`` the figure it compares
    (the deciding figure's one-sided recall lower bound, or the elusion rate's two-sided upper bound), ``met``
    whether it holds (None: the evidence cannot say, ``reason`` why)."""

    criterion: str
    form: str
    value: float
    confidence: float
    reads: str
    bound: float | None
    met: bool | None
    reason: str | None


@dataclass(frozen=True)
class Richness:
    """Prevalence from a control sample (a random sample of the whole queue): ``relevant`` of ``size`` drawn from
    ``frame_size``; ``lower``/``upper`` the exact two-sided interval (hypergeometric on the count, over the frame)."""

    sample_id: int
    drawn_at_judgment: int | None
    size: int
    frame_size: int
    relevant: int
    point: float
    lower: float
    upper: float
    confidence: float


@dataclass(frozen=True)
class StratumTally:
    """One stratum of the three-stratum validation: ``size`` documents, a random ``sample`` of them holding
    ``relevant`` relevant by the validation coding, and the exact two-sided interval on the stratum's relevant
    count (hypergeometric); ``found``: its relevant documents count as found."""

    name: str
    source: str
    size: int
    sample: int
    relevant: int
    relevant_lower: float | None
    relevant_upper: float | None
    found: bool


@dataclass(frozen=True)
class ThreeStrata:
    """The three-stratum validation (the design of *In re Broiler Chicken*, 2018): coded responsive, coded
    non-responsive and never reviewed, each with a random sample; recall = relevant in the responsive stratum over
    relevant in all three (the stratified estimator, `reviewdepth.estimation.relevant.estimate_stratified`). None
    of the figures when a stratum has no sample (``missing`` says which)."""

    strata: list[StratumTally]
    confidence: float
    relevant: float | None
    relevant_lower: float | None
    relevant_upper: float | None
    recall: float | None
    recall_lower: float | None
    recall_upper: float | None
    missing: list[str]


@dataclass(frozen=True)
class ValidationDocument(JsonResult):
    """One topic's validation document at one point of the judgment log. ``dated``: the time the document is
    dated by (the chain head's, the last judgment it reads), so the same log gives the same document."""

    topic: str
    queue: str
    dated: str | None
    protocol: Protocol
    evidence: Evidence
    results: Results
    cutoff: Cutoff
    decision: Decision
    plan: Plan
    provenance: Provenance
    caveats: list[str]
    # the two-phase (TAR 1.0) figures at the cutoff asked for (``--produce-to RANK``); null when none was asked
    two_phase: TwoPhase | None = None
    # every test run on the topic in order, and the flags the record raises
    tests: list[TestRun] = field(default_factory=list)
    flags: list[Flag] = field(default_factory=list)
    # the protocol fields as entered, the acceptance criterion read against the evidence, richness from a control
    # sample, the three-stratum validation, and the report's QC and agreement figures
    protocol_fields: ProtocolRecord | None = None
    acceptance: AcceptanceCheck | None = None
    richness: Richness | None = None
    three_strata: ThreeStrata | None = None
    review_quality: ReviewQuality | None = None
    # "at most m relevant documents remain unreviewed" and what lowering it costs
    count_bound: CountBound | None = None
