"""Request and response bodies of the HTTP API (their JSON Schemas are the OpenAPI contract)."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field
from pydantic_core import SchemaValidator
from pydantic_core import core_schema as cs

from reviewdepth.store import validation
from reviewdepth.store.validation import INT64_MAX

Measure = float | int | str | None


def _checked(check: Callable[[object, str], str], field: str) -> Callable[[str], str]:
    """A pydantic after-validator running one of the store's checks (`reviewdepth.store.validation`)."""

    def run(value: str) -> str:
        try:
            return check(value, field)
        except validation.InvalidValue as exc:
            raise ValueError(exc.message) from None

    return run


def _note(value: object, field: str) -> str:
    return validation.free_text(value, field)


TopicName = Annotated[str, Field(min_length=1, max_length=validation.TOPIC_LENGTH),
                      AfterValidator(_checked(validation.topic_name, "name"))]
QueueName = Annotated[str, Field(min_length=1, max_length=validation.QUEUE_LENGTH),
                      AfterValidator(_checked(validation.queue_name, "queue"))]
DocId = Annotated[str, Field(min_length=1, max_length=validation.DOC_ID_LENGTH),
                  AfterValidator(_checked(validation.doc_id, "doc_id"))]
Label = Annotated[str, Field(min_length=1, max_length=validation.LABEL_LENGTH),
                  AfterValidator(_checked(validation.label_text, "label"))]
Reviewer = Annotated[str, Field(min_length=1, max_length=validation.REVIEWER_LENGTH),
                     AfterValidator(_checked(validation.reviewer_name, "reviewer"))]
KeyName = Annotated[str, Field(min_length=1, max_length=validation.KEY_LENGTH),
                    AfterValidator(_checked(validation.key_name, "idempotency_key"))]
Note = Annotated[str, Field(max_length=validation.NOTE_LENGTH), AfterValidator(_checked(_note, "note"))]


class TopicIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: TopicName = Field(description="Topic name (unique): no '/', control or invisible characters.")
    population_size: int | None = Field(default=None, ge=1, le=INT64_MAX, strict=True,
                                        description="N: documents in the collection.")


class TopicOut(BaseModel):
    id: int
    name: str
    population_size: int | None
    created_at: str
    queues: list[str]
    judgments: int


class TopicList(BaseModel):
    topics: list[TopicOut]


class RankedDocument(BaseModel):
    model_config = ConfigDict(extra="forbid")

    doc_id: DocId
    score: float | None = Field(default=None, allow_inf_nan=False)


class RankingIn(BaseModel):
    """A ranking in rank order (the first document is rank 1)."""

    model_config = ConfigDict(extra="forbid")

    documents: list[RankedDocument] = Field(min_length=1)


class QueueSummaryOut(BaseModel):
    topic: str
    queue: str
    ordering: str
    size: int
    judged: int
    relevant_found: int
    deepest_judged_rank: int | None
    threshold_rank: int | None
    relevant_in_topic: int
    policy: str
    as_of: str | None
    measures: dict[str, Measure]


class EntryOut(BaseModel):
    rank: int
    doc_id: str
    score: float | None
    flag: str | None
    label: str | None = Field(description="relevant, nonrelevant, or null when not judged.")
    judged: bool


class EntryPage(BaseModel):
    topic: str
    queue: str
    total: int
    offset: int
    limit: int
    entries: list[EntryOut]


class JudgmentIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    doc_id: DocId
    label: Label = Field(description="1/0, yes/no, relevant/irrelevant, include/exclude, or an integer grade.")
    role: str = Field(default="review", description="review, sample, qc, adjudication or audit.")
    queue: str | None = Field(default=None, min_length=1, max_length=200,
                              description="The queue it was served from (default: the batch's queue).")
    note: Note | None = None


class JudgmentBatchIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    judgments: list[JudgmentIn] = Field(min_length=1)
    queue: str | None = Field(default=None, min_length=1, max_length=200,
                              description="The queue the judgments were served from (default: the topic's newest).")
    allow_unqueued: bool = Field(default=False, strict=True,
                                 description="Record documents that are in no queue of the topic (else 422).")
    idempotency_key: KeyName | None = Field(default=None, description="The same key again returns the first result.")
    reviewer: Reviewer | None = Field(default=None, description="Optional; must be the API key's reviewer.")


@cache
def judgment_batch_validator() -> SchemaValidator:
    """`JudgmentBatchIn` for the fast path of ``POST /topics/{topic}/judgments``: the same fields, constraints and
    ``extra="forbid"``, parsed straight from JSON bytes into a dict whose ``judgments`` are the services'
    `BatchItem` (built in Rust: no model per judgment). Keep in step with `JudgmentIn` and `JudgmentBatchIn`
    (tests/api/test_fast_path.py compares them); a body it refuses goes through the models, which give the
    error response."""
    from reviewdepth.services.batches import BatchItem

    def optional(schema: cs.CoreSchema, default: object = None) -> cs.WithDefaultSchema:
        return cs.with_default_schema(schema, default=default)

    def checked(check: Callable[[object, str], str], field: str, max_length: int,
                min_length: int = 1) -> cs.CoreSchema:
        return cs.no_info_after_validator_function(_checked(check, field), cs.str_schema(
            min_length=min_length, max_length=max_length))

    item = cs.dataclass_schema(BatchItem, cs.dataclass_args_schema("BatchItem", [
        cs.dataclass_field("doc_id", checked(validation.doc_id, "doc_id", validation.DOC_ID_LENGTH)),
        cs.dataclass_field("label", checked(validation.label_text, "label", validation.LABEL_LENGTH)),
        cs.dataclass_field("role", optional(cs.str_schema(), "review")),
        cs.dataclass_field("queue", optional(cs.nullable_schema(cs.str_schema(min_length=1, max_length=200)))),
        cs.dataclass_field("note", optional(cs.nullable_schema(checked(_note, "note", validation.NOTE_LENGTH, 0)))),
    ], extra_behavior="forbid"), ["doc_id", "label", "role", "note", "queue"], frozen=True)
    return SchemaValidator(cs.typed_dict_schema({
        "judgments": cs.typed_dict_field(cs.list_schema(item, min_length=1)),
        "queue": cs.typed_dict_field(optional(cs.nullable_schema(cs.str_schema(min_length=1, max_length=200))),
                                     required=False),
        "allow_unqueued": cs.typed_dict_field(optional(cs.bool_schema(strict=True), False), required=False),
        "idempotency_key": cs.typed_dict_field(optional(cs.nullable_schema(
            checked(validation.key_name, "idempotency_key", validation.KEY_LENGTH))), required=False),
        "reviewer": cs.typed_dict_field(optional(cs.nullable_schema(
            checked(validation.reviewer_name, "reviewer", validation.REVIEWER_LENGTH))), required=False),
    }, extra_behavior="forbid"))


class JudgmentBatchOut(BaseModel):
    topic: str
    reviewer: str
    recorded: int
    ids: list[int]


class JudgmentOut(BaseModel):
    id: int
    topic: str
    doc_id: str
    label: str
    relevant: bool | None
    grade: int | None
    reviewer: str
    role: str
    source: str
    note: str | None
    recorded_at: str
    queue: str | None = Field(default=None, description="The queue it was served from (null: unknown or none).")


class JudgmentPage(BaseModel):
    topic: str
    offset: int
    limit: int
    judgments: list[JudgmentOut]


class VoteOut(BaseModel):
    reviewer: str
    label: str
    relevant: bool
    role: str
    judgment_id: int
    recorded_at: str


class ConflictOut(BaseModel):
    doc_id: str
    status: Literal["open", "resolved"]
    votes: list[VoteOut]
    relevant_votes: int
    not_relevant_votes: int
    adjudication: VoteOut | None


class ConflictList(BaseModel):
    topic: str
    status: Literal["open", "resolved", "all"]
    conflicts: list[ConflictOut]


class SampleIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    size: int = Field(ge=1, le=INT64_MAX, strict=True, description="Documents to draw without replacement.")
    frame: str = Field(default="all", pattern=r"^(all|unreviewed|judged|below-rank:[0-9]{1,18}|"
                       r"ranks:[0-9]{1,18}-[0-9]{1,18})$",
                       description="all, unreviewed, judged, below-rank:K or ranks:A-B.")
    seed: int | None = Field(default=None, ge=0, le=INT64_MAX, strict=True,
                             description="Random seed (stored; default random).")
    queue: QueueName | None = Field(default=None, description="Queue name (default: the topic's only queue).")


class SampleDocument(BaseModel):
    doc_id: str
    rank: int


class SampleOut(BaseModel):
    id: int
    topic: str
    queue: str
    frame: str
    frame_definition: str
    frame_size: int
    size: int
    seed: int
    as_of: int | None
    judged: int | None
    relevant: int | None
    complete: bool
    status: str = Field(description="complete when every drawn document is judged, else incomplete.")
    missing: list[str]
    documents: list[SampleDocument]
    voided: bool = Field(default=False, description="Voided samples are kept but used by no estimate.")
    void_reason: str | None = None
    queue_size: int | None = Field(default=None, description="The queue's size when the sample was drawn.")


class SampleVoidIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    reason: Note = Field(min_length=1, description="Why the sample is voided (logged).")


class StreamIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    every: int | None = Field(default=None, ge=1, le=validation.INT32_MAX, strict=True,
                              description="One audit document after every K ranked documents reviewed (or rate).")
    rate: float | None = Field(default=None, gt=0, lt=1, allow_inf_nan=False,
                               description="Audit documents as a share of all documents served (or every).")
    seed: int | None = Field(default=None, ge=0, le=INT64_MAX, strict=True,
                             description="Random seed (stored; default random).")
    queue: QueueName | None = Field(default=None, description="The queue whose documents make the population "
                                                              "(default: the topic's newest).")


class StreamOut(BaseModel):
    id: int
    topic: str
    queue: str | None = Field(description="The queue the stream was created on (null: no longer stored).")
    seed: int
    population_size: int
    population_digest: str = Field(description="SHA-256 of the sorted distinct doc ids joined by newlines.")
    every: int | None
    rate: float | None
    position: int = Field(description="Permutation elements passed so far.")
    served: int = Field(description="Of those, the ones served because they still needed a judgment.")
    as_of: int | None = Field(description="The topic's last judgment id when the stream was created.")
    created_at: str
    created_by: str
    description: str
    voided: bool
    voided_at: str | None
    void_reason: str | None
    voided_by: str | None
    judged: int | None = Field(description="Length of the judged prefix of the permutation (the evidence).")
    relevant: int | None = Field(description="Relevant documents in the judged prefix.")
    pending: list[str] = Field(description="Served or passed documents after the judged prefix still unjudged.")


class StreamVoidIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    reason: Note = Field(min_length=1, description="Why the stream is stopped.")


class NextIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    count: int = Field(default=10, ge=1, le=10_000, strict=True, description="How many documents.")
    queue: QueueName | None = Field(default=None, description="The ranked queue to serve (default: the newest).")


class ServedDocumentOut(BaseModel):
    doc_id: str
    role: Literal["review", "audit"] = Field(description="The role to record its judgment with.")
    rank: int | None = Field(description="Its rank on the queue served (null: an audit document not in it).")
    audit_position: int | None = Field(description="Its 1-based place in the audit permutation.")
    again: bool = Field(description="An audit document served before and still unjudged.")


class NextStreamOut(BaseModel):
    id: int
    position: int
    served: int
    due: int = Field(description="Audit documents due at the reviewed prefix before this batch.")
    population_size: int


class NextOut(BaseModel):
    topic: str
    queue: str
    reviewed: int = Field(description="The queue's reviewed prefix (documents judged in rank order).")
    stream: NextStreamOut | None
    documents: list[ServedDocumentOut]


class MonitorAuditOut(BaseModel):
    stream_id: int
    seed: int
    population_size: int
    position: int
    served: int
    judged: int = Field(description="m: the judged prefix of the audit permutation (the evidence).")
    relevant: int = Field(description="Relevant documents among them.")
    outside_reviewed: int = Field(description="Of them, the documents outside the reviewed set.")
    relevant_outside_reviewed: int = Field(description="x: relevant audit documents outside the reviewed set.")
    pending: int = Field(description="Served or passed audit documents still waiting for a judgment.")
    pending_documents: list[str] = Field(description="The first of them (at most 20), in permutation order.")
    description: str


class MonitorToGoOut(BaseModel):
    estimate: int | None = Field(description="More documents along the queue by the point estimate.")
    bound: int | None = Field(description="More documents along the queue by which the stop is certified "
                                          "(null: not within this queue).")
    depth_estimate: int | None
    depth_bound: int | None
    within_queue: bool
    text: str


class MonitorNeededOut(BaseModel):
    more: int | None = Field(description="Further audit documents that certify the present reviewed set if they "
                                         "keep the present yield (null: none would).")
    to_judge: int | None = Field(description="Of those, the expected number needing a judgment.")
    text: str


class FixedLookOut(BaseModel):
    missed_upper: int
    recall_lower: float
    certified: bool
    label: Literal["valid for one look only"]


class OneLookRuleOut(BaseModel):
    rule: str
    kind: str
    target: str
    stop_now: bool | None
    stop_depth: int | None
    certifies: str
    guarantee: str
    reason: str
    label: Literal["valid for one look only"]


class ChainHeadOut(BaseModel):
    seq: int
    hash: str
    recorded_at: str | None


class MonitorOut(BaseModel):
    """The anytime-valid stop signal (as `reviewdepth watch TOPIC --once --format json`)."""

    topic: str
    queue: str = Field(description="The current queue (the named one, else the topic's newest).")
    as_of_judgment: int | None
    status: Literal["stop certified", "continue"]
    certified: bool
    headline: str
    target: str
    confidence: float
    guarantee: str
    recall_lower: float = Field(description="The anytime-valid recall lower bound of the reviewed set.")
    recall_point: float | None
    relevant_found: int
    reviewed: int = Field(description="|S|: the union of every queue's reviewed prefix, within the population.")
    queue_reviewed: int
    queue_size: int
    population: int
    relevant_known: int
    missed_upper: int = Field(description="Upper bound on the relevant documents outside the reviewed set.")
    audit: MonitorAuditOut | None = Field(description="The audit stream's evidence (null: no stream).")
    to_go: MonitorToGoOut
    audit_needed: MonitorNeededOut
    fixed_look: FixedLookOut
    one_look_rules: list[OneLookRuleOut]
    assumptions: list[str]
    notes: list[str]
    last_activity: str | None
    judgment_chain_head: ChainHeadOut
    next_step: str


class KeyOut(BaseModel):
    id: int
    reviewer: str
    scope: str
    prefix: str
    created_at: str
    revoked_at: str | None


class Health(BaseModel):
    status: str
    version: str
