"""Request and response bodies of the HTTP API (their JSON Schemas are the OpenAPI contract)."""

from __future__ import annotations

from functools import cache
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic_core import SchemaValidator
from pydantic_core import core_schema as cs

Measure = float | int | str | None


class TopicIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=200, description="Topic name (unique).")
    population_size: int | None = Field(default=None, ge=1, description="N: documents in the collection.")


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

    doc_id: str = Field(min_length=1, max_length=300)
    score: float | None = None


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

    doc_id: str = Field(min_length=1, max_length=300)
    label: str = Field(min_length=1, max_length=100,
                       description="1/0, yes/no, relevant/irrelevant, include/exclude, or an integer grade.")
    role: str = Field(default="review", description="review, sample, qc or adjudication.")
    note: str | None = Field(default=None, max_length=10_000)


class JudgmentBatchIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    judgments: list[JudgmentIn] = Field(min_length=1)
    idempotency_key: str | None = Field(default=None, min_length=1, max_length=200,
                                        description="The same key again returns the first result.")
    reviewer: str | None = Field(default=None, description="Optional; must be the API key's reviewer.")


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

    item = cs.dataclass_schema(BatchItem, cs.dataclass_args_schema("BatchItem", [
        cs.dataclass_field("doc_id", cs.str_schema(min_length=1, max_length=300)),
        cs.dataclass_field("label", cs.str_schema(min_length=1, max_length=100)),
        cs.dataclass_field("role", optional(cs.str_schema(), "review")),
        cs.dataclass_field("note", optional(cs.nullable_schema(cs.str_schema(max_length=10_000)))),
    ], extra_behavior="forbid"), ["doc_id", "label", "role", "note"], frozen=True)
    return SchemaValidator(cs.typed_dict_schema({
        "judgments": cs.typed_dict_field(cs.list_schema(item, min_length=1)),
        "idempotency_key": cs.typed_dict_field(
            optional(cs.nullable_schema(cs.str_schema(min_length=1, max_length=200))), required=False),
        "reviewer": cs.typed_dict_field(optional(cs.nullable_schema(cs.str_schema())), required=False),
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

    size: int = Field(ge=1, description="Documents to draw without replacement.")
    frame: str = Field(default="all", description="all, unreviewed, judged, below-rank:K or ranks:A-B.")
    seed: int | None = Field(default=None, ge=0, lt=2**63, description="Random seed (stored; default random).")
    queue: str | None = Field(default=None, description="Queue name (default: the topic's only queue).")


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

    reason: str = Field(min_length=1, max_length=10_000, description="Why the sample is voided (logged).")


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
