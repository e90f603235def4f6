"""Request and response bodies of the HTTP API (their JSON Schemas are the OpenAPI contract).

A response body that is a service's result dataclass, as its ``as_dict`` or `dataclasses.asdict` writes it, is
generated from that dataclass (`dataclass_model`), so a field added there reaches the document with no edit here;
a body the services build as a dict literal, or with renamed keys, is stated here. The routes that answer bytes
(report, sample plan, evaluate) reference theirs through `body_content`; tests/api/test_openapi_complete.py checks
that no 2xx JSON body is an untyped object and that real bodies match."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from datetime import datetime
from functools import cache
from types import UnionType
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal, Union, get_args, get_origin, get_type_hints

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    RootModel,
    WithJsonSchema,
    create_model,
)
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import SchemaValidator
from pydantic_core import core_schema as cs

from reviewdepth.estimation.count_bound import FloorFigure
from reviewdepth.estimation.planning import ElusionPlan, PopulationPlan
from reviewdepth.estimation.replay import RULES, RuleSummary
from reviewdepth.estimation.stop_plan import StopPlan
from reviewdepth.measures.suite import Evaluation
from reviewdepth.report import methods_text, validation_model
from reviewdepth.report.compare_model import Comparison, ComparisonCell
from reviewdepth.report.model import (
    Agreement,
    Answer,
    CertifyCost,
    ChainHead,
    Current,
    DepthRow,
    EstimateRow,
    Gain,
    PairAgreement,
    PrecisionRecall,
    Provenance,
    QcSample,
    Report,
    ReviewQuality,
    SamplePlan,
    SampleRow,
    Settings,
    StoppingRow,
    Summary,
)
from reviewdepth.report.monitor_model import (
    MonitorAudit,
    MonitorFixedLook,
    MonitorNeeded,
    MonitorReport,
    MonitorToGo,
    OneLookRule,
)
from reviewdepth.report.prisma_model import PrismaCounts
from reviewdepth.report.simulation_model import (
    DesignKind,
    RecallQuantiles,
    RuleKind,
    SimulationChart,
    SimulationReport,
    SimulationRule,
    SimulationSettings,
    SimulationTopic,
)
from reviewdepth.report.status_model import StatusFigure, TopicStatus
from reviewdepth.report.tar_model import TarEvaluation
from reviewdepth.services.admin.topics import TopicRecord
from reviewdepth.services.answers.queues import QueueRecord, QueueSummary
from reviewdepth.services.evidence.access import KeyRecord
from reviewdepth.services.evidence.audit import StreamRecord
from reviewdepth.services.evidence.decision_words import label_pattern
from reviewdepth.services.evidence.samples import SampleDocument, SampleView
from reviewdepth.services.files.asreview_import import AsreviewImportSummary
from reviewdepth.services.files.covidence_import import CovidenceImportSummary
from reviewdepth.services.files.importers import DecisionsImportSummary
from reviewdepth.services.files.imports import ImportSummary
from reviewdepth.services.files.rayyan_import import RayyanImportSummary
from reviewdepth.services.files.records_import import RecordsImportSummary
from reviewdepth.services.files.ris_import import RisImportSummary
from reviewdepth.services.review.audit_stream import ServedDocument
from reviewdepth.services.review.judgments import JudgmentRecord
from reviewdepth.services.review.screening import ScreeningSettings
from reviewdepth.store import validation
from reviewdepth.store.models import CONFLICT_RULES, STAGES, USER_ROLES
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


def integral(value: object) -> object:
    """A JSON number with no fractional part (``9830.0``, ``1e3``) as the integer it is: JSON Schema's
    ``integer`` is any such number, so a client generating from the document may send one. Anything else is left
    as it is, for the (strict) integer check to take or refuse."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def label_from_json(value: object) -> object:
    """A JSON integer label (``1``, ``0``, a grade, also written ``1.0``) or boolean as the text the same label
    has in a file (``"1"``, ``"true"``): what is recorded, and what the label's checks and the service read.
    Anything else is left as it is, for the string checks to take or refuse (``1.5`` is no label)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    value = integral(value)
    if isinstance(value, int):
        return str(value)
    return value


JsonInt = Annotated[int, BeforeValidator(integral)]
"""An integer of a JSON body: strict (no strings, no booleans), integral floats taken as integers."""
# the same with their bounds inside, for optional fields (pydantic leaves a field's bounds out of the document's
# integer branch when the type is a union)
PositiveInt64 = Annotated[int, Field(ge=1, le=INT64_MAX, strict=True), BeforeValidator(integral)]
NonNegativeInt64 = Annotated[int, Field(ge=0, le=INT64_MAX, strict=True), BeforeValidator(integral)]
PositiveInt32 = Annotated[int, Field(ge=1, le=validation.INT32_MAX, strict=True), BeforeValidator(integral)]


def _name(max_length: int, *, in_urls: bool = False) -> Any:
    """The length and pattern of an identifier of the store's vocabulary (`validation.identifier_pattern`), for
    the document; its check (`_checked`) runs beside it."""
    return Field(min_length=1, max_length=max_length,
                 json_schema_extra={"pattern": validation.identifier_pattern(in_urls=in_urls)})


TopicName = Annotated[str, _name(validation.TOPIC_LENGTH, in_urls=True),
                      AfterValidator(_checked(validation.topic_name, "name"))]
QueueName = Annotated[str, _name(validation.QUEUE_LENGTH, in_urls=True),
                      AfterValidator(_checked(validation.queue_name, "queue"))]
DocId = Annotated[str, _name(validation.DOC_ID_LENGTH), AfterValidator(_checked(validation.doc_id, "doc_id"))]
Reviewer = Annotated[str, _name(validation.REVIEWER_LENGTH),
                     AfterValidator(_checked(validation.reviewer_name, "reviewer"))]
KeyName = Annotated[str, _name(validation.KEY_LENGTH), AfterValidator(_checked(validation.key_name,
                                                                                "idempotency_key"))]
Label = Annotated[str, BeforeValidator(label_from_json), Field(min_length=1, max_length=validation.LABEL_LENGTH),
                  AfterValidator(_checked(validation.label_text, "label")),
                  WithJsonSchema({"anyOf": [
                      {"type": "string", "minLength": 1, "maxLength": validation.LABEL_LENGTH,
                       "pattern": label_pattern()},
                      {"type": "integer", "minimum": validation.INT32_MIN, "maximum": validation.INT32_MAX},
                      {"type": "boolean"}]})]
Note = Annotated[str, Field(max_length=validation.NOTE_LENGTH, json_schema_extra={
    "pattern": validation.free_text_pattern()}), AfterValidator(_checked(_note, "note"))]
# a void's reason: a note that is not blank (the services refuse a blank one; the document says so)
VoidReason = Annotated[str, Field(min_length=1, max_length=validation.NOTE_LENGTH, json_schema_extra={
    "pattern": validation.required_text_pattern()}), AfterValidator(_checked(_note, "note"))]
Reason = Annotated[str, _name(validation.REASON_LENGTH), AfterValidator(_checked(validation.reason_text, "reason"))]
Stage = Literal["title-abstract", "full-text"]
assert get_args(Stage) == STAGES, "the screening stages are the store's"
ConflictRule = Literal["rayyan", "strict"]
assert get_args(ConflictRule) == CONFLICT_RULES, "the conflict rules are the store's"
Role = Literal["review", "sample", "qc", "adjudication", "audit"]
assert get_args(Role) == USER_ROLES, "the roles a judgment is recorded with are the store's"


# Response bodies generated from the result dataclasses the services return: a field added to one of them appears in
# the OpenAPI document with no edit here. Only what the services write beside them (dict literals, renamed keys) and
# the descriptions are stated here.

def dataclass_model(source: type[Any], *, name: str | None = None, extra: dict[str, Any] | None = None,
                    optional: dict[str, Any] | None = None, override: dict[str, Any] | None = None,
                    drop: tuple[str, ...] = (), base: type[BaseModel] | None = None,
                    describe: dict[str, str] | None = None) -> type[BaseModel]:
    """A response model with one field per field of the dataclass ``source`` (its type as written, or as
    ``override`` gives it), in field order, as `reviewdepth.report.model.as_json_data` writes it, plus the keys a
    service adds beside them: ``extra`` always present, ``optional`` sometimes. ``describe``: field descriptions
    for the document (a field's ``doc`` metadata describes it too). Fields of ``source``'s subclasses come along.

    What the JSON writer does, the model does: a field marked `OMITTED_WHEN_NONE` is not required; a `FLATTENED`
    one brings its own fields, prefixed, in its place; the class's ``JSON_PROPERTIES`` follow its fields; a field
    whose type is a report section (a dataclass of `reviewdepth.report`, or one named in `SECTION_NAMES`) is that
    section's generated model (`section_model`), through lists, dicts and unions."""
    fields = _written_fields(source, override or {}, describe or {}, drop)
    fields.update({key: _field(kind, describe, key) for key, kind in (extra or {}).items()})
    fields.update({key: _field(kind, describe, key, None) for key, kind in (optional or {}).items()})
    doc = source.__doc__
    if doc is not None and doc.startswith(f"{source.__name__}("):  # the signature dataclasses write when none
        doc = None
    model: type[BaseModel] = create_model(name or source.__name__, __doc__=doc, __base__=base, **fields)
    return model


def _field(kind: Any, describe: dict[str, str] | None, key: str, default: Any = ..., doc: str | None = None,
           ) -> tuple[Any, Any]:
    note = doc or (describe or {}).get(key)
    return (kind, Field(default, description=note) if note else default)


def _written_fields(source: type[Any], override: dict[str, Any], describe: dict[str, str],
                    drop: tuple[str, ...] = (), prefix: str = "", omitted: bool = False) -> dict[str, Any]:
    """The model fields of the dataclass ``source`` as the JSON writer writes them (see `dataclass_model`);
    ``omitted``: every one may be absent (a flattened field that is None)."""
    from reviewdepth.report.model import FLATTEN, OMIT_NONE

    hints = get_type_hints(source)
    fields: dict[str, Any] = {}
    for item in dataclasses.fields(source):
        if item.name in drop:
            continue
        absent = omitted or bool(item.metadata.get(OMIT_NONE))
        inline = item.metadata.get(FLATTEN)
        if inline is not None:
            fields.update(_written_fields(_without_none(hints[item.name]), {}, describe, (), prefix + inline, absent))
            continue
        kind = override.get(item.name, _as_written(hints[item.name]))
        if absent:  # never written as null: absent instead
            kind = _without_none(kind)
        doc = item.metadata.get("doc")
        fields[prefix + item.name] = _field(kind, describe, item.name, None if absent else ..., doc)
    for prop in getattr(source, "JSON_PROPERTIES", ()):
        kind = get_type_hints(getattr(source, prop).fget)["return"]
        fields[prefix + prop] = _field(kind, describe, prop, None if omitted else ...)
    return fields


def _without_none(kind: Any) -> Any:
    if get_origin(kind) in (Union, UnionType):
        rest = tuple(arg for arg in get_args(kind) if arg is not type(None))
        return rest[0] if len(rest) == 1 else Union[rest]  # noqa: UP007 (built from a tuple)
    return kind


def _as_written(kind: Any) -> Any:
    """The type of a dataclass field as the JSON writer writes it: a datetime as ISO 8601 text, a mapping as an
    object with text keys, a report section as its generated model (`section_model`), through containers."""
    if kind is datetime:
        return str
    if isinstance(kind, type) and dataclasses.is_dataclass(kind) and _is_section(kind):
        return section_model(kind)
    origin, args = get_origin(kind), get_args(kind)
    if origin in (Union, UnionType):
        return Union[tuple(_as_written(arg) for arg in args)]  # noqa: UP007 (built from a tuple)
    if origin in (dict, Mapping) and args:
        return dict[str if args[0] is int else args[0], _as_written(args[1])]  # type: ignore[misc]
    if origin is list and args:
        return list[_as_written(args[0])]  # type: ignore[misc]
    return kind


def _is_section(kind: type[Any]) -> bool:
    return kind in SECTION_NAMES or kind.__module__.startswith("reviewdepth.report.")


@cache
def section_model(section: type[Any]) -> type[BaseModel]:
    """The response model of a report section (one per class, so a section used twice is one schema), named
    from `SECTION_NAMES` (the names the document had when these models were written by hand) or the class."""
    return dataclass_model(section, name=SECTION_NAMES.get(section, section.__name__),
                           override=SECTION_OVERRIDES.get(section), describe=SECTION_DESCRIPTIONS.get(section))


# the report's sections (`reviewdepth.report.model`) and the core types it writes as they are: the schema names
# the document gave them when they were written by hand; the report's other dataclasses keep their class names
SECTION_NAMES: dict[type[Any], str] = {
    Report: "Report", Answer: "ReportAnswer", Summary: "ReportSummary", EstimateRow: "ReportEstimate",
    Current: "ReportCurrent", StoppingRow: "ReportStopping", SampleRow: "ReportSample", Settings: "ReportSettings",
    Provenance: "ReportProvenance", ChainHead: "ChainHeadOut", Gain: "ReportGain",
    PrecisionRecall: "ReportPrecisionRecall", PairAgreement: "PairAgreementOut", Agreement: "AgreementOut",
    QcSample: "QcOut", ReviewQuality: "ReportReviewQuality", PrismaCounts: "ReportPrisma", FloorFigure: "ReportFloor",
    CertifyCost: "ReportCertify", SamplePlan: "ElusionPlanOut", TopicStatus: "TopicStatusOut",
    StatusFigure: "StatusFigureOut", DepthRow: "TargetAnswer", MonitorAudit: "MonitorAuditOut",
    MonitorToGo: "MonitorToGoOut", MonitorNeeded: "MonitorNeededOut", MonitorFixedLook: "FixedLookOut",
    OneLookRule: "OneLookRuleOut", SimulationSettings: "SimulationSettingsOut",
    RecallQuantiles: "RecallQuantilesOut", SimulationRule: "SimulationRuleOut", SimulationTopic: "SimulationTopicOut",
    SimulationChart: "SimulationChartOut", SampleDocument: "SampleDocument"}
# what the generated models cannot know: a field's schema stated for the document (filled below, where it is built)
SECTION_OVERRIDES: dict[type[Any], dict[str, Any]] = {}
SECTION_DESCRIPTIONS: dict[type[Any], dict[str, str]] = {
    EstimateRow: {"upper": "The two-sided interval's upper bound (null: none).",
                  "upper_one_sided": "On the depth basis: the one-sided upper bound at the report's confidence (the "
                                     "headline's \"R ≤ …\"); null on the others."}}


class JsonSafeSchema(GenerateJsonSchema):
    """JSON Schema of a body written through `reviewdepth.report.model.json_safe`, which turns NaN and infinities
    into null: every number may be null."""

    NULLABLE_NUMBER: ClassVar[dict[str, Any]] = {"anyOf": [{"type": "number"}, {"type": "null"}]}

    def float_schema(self, schema: cs.FloatSchema) -> JsonSchemaValue:
        return dict(self.NULLABLE_NUMBER)

    def nullable_schema(self, schema: cs.NullableSchema) -> JsonSchemaValue:
        inner = self.generate_inner(schema["schema"])
        return inner if inner == self.NULLABLE_NUMBER else super().nullable_schema(schema)


class TopicIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: TopicName = Field(description="Topic name (unique): no '/', control or invisible characters.")
    population_size: PositiveInt64 | None = Field(default=None,
                                        description="N: documents in the collection.")
    screening_order: Literal["queue", "random"] = Field(
        default="queue", description="How the team screens: random (declared: a uniformly random order fixed in "
                                     "advance) or queue (the default).")


class ScreeningOrderIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    screening_order: Literal["queue", "random"] = Field(
        description="random: screened in a uniformly random order fixed in advance (declared, never guessed); "
                    "queue: along the queue or another order (the default).")


class ScreeningSettingsIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    add_reasons: list[Reason] = Field(default_factory=list, description="Exclusion reasons to add (all new).")
    remove_reasons: list[Reason] = Field(default_factory=list,
                                         description="Reasons to remove (listed, and carried by no judgment).")
    conflict_rule: ConflictRule | None = Field(
        default=None, description="rayyan (the default: exclude vs maybe is not a conflict) or strict (any "
                                  "difference is); null leaves it as it is.")


ScreeningSettingsOut = dataclass_model(ScreeningSettings, name="ScreeningSettingsOut",
                                       override={"conflict_rule": ConflictRule})
TopicOut = dataclass_model(TopicRecord, name="TopicOut", override={"screening_order": Literal["queue", "random"]})


class ProtocolAcceptance(BaseModel):
    """The acceptance criterion agreed in advance: ``recall`` (the one-sided lower bound on recall at
    ``confidence`` is at least ``value``) or ``elusion`` (the upper bound of the two-sided ``confidence``
    interval of the elusion rate is at most ``value``)."""

    model_config = ConfigDict(extra="forbid")

    form: Literal["recall", "elusion"]
    value: float = Field(gt=0, lt=1)
    confidence: float = Field(default=0.95, gt=0, lt=1)


class ProtocolReviewer(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=2000)
    role: str = Field(min_length=1, max_length=2000)


class ProtocolFields(BaseModel):
    """A topic's protocol fields (``reviewdepth topic protocol``); an absent field is not recorded."""

    model_config = ConfigDict(extra="forbid")

    workflow: Literal["TAR 1.0", "TAR 2.0", "linear"] | None = None
    platform: str | None = Field(default=None, max_length=2000)
    model: str | None = Field(default=None, max_length=2000)
    version: str | None = Field(default=None, max_length=2000)
    custodians: list[str] | None = Field(default=None, max_length=1000)
    date_from: str | None = Field(default=None, description="YYYY-MM-DD")
    date_to: str | None = Field(default=None, description="YYYY-MM-DD")
    excluded_types: list[str] | None = Field(default=None, max_length=1000)
    processing_exceptions: str | None = Field(default=None, max_length=2000)
    duplicates_removed: int | None = Field(default=None, ge=0, le=INT64_MAX)
    threaded: int | None = Field(default=None, ge=0, le=INT64_MAX)
    acceptance: ProtocolAcceptance | None = None
    reviewers: list[ProtocolReviewer] | None = Field(default=None, max_length=1000)
    blind: bool | None = None
    produced: int | None = Field(default=None, ge=0, le=INT64_MAX)
    withheld: int | None = Field(default=None, ge=0, le=INT64_MAX)


class ProtocolOut(BaseModel):
    topic: str
    fields: ProtocolFields
    recorded_at: str | None
    recorded_by: str | None


class TopicList(BaseModel):
    topics: list[TopicOut]  # type: ignore[valid-type]


class RankedDocument(BaseModel):
    model_config = ConfigDict(extra="forbid")

    doc_id: DocId
    score: float | None = Field(default=None, allow_inf_nan=False)


class RankingIn(BaseModel):
    """A ranking in rank order (the first document is rank 1)."""

    model_config = ConfigDict(extra="forbid")

    documents: list[RankedDocument] = Field(min_length=1)


# json_safe writes a NaN measure as null
QueueSummaryOut = dataclass_model(QueueSummary, name="QueueSummaryOut", override={"measures": dict[str, Measure]})
QueueOut = dataclass_model(QueueRecord, name="QueueOut")


class QueueList(BaseModel):
    queues: list[QueueOut]  # type: ignore[valid-type]


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
    label: Label = Field(description="1/0, yes/no, true/false, relevant/irrelevant, include/exclude, an integer "
                                     "grade, maybe (recorded, decides no label) or skip (logged, the document stays "
                                     "unscreened); as a string, or as a JSON integer or boolean (recorded as its "
                                     "text).")
    role: Role = Field(default="review", description="review, sample, qc, adjudication or audit.")
    queue: QueueName | None = Field(default=None, description="The queue it was served from (default: the batch's "
                                                              "queue).")
    note: Note | None = None
    reason: Reason | None = Field(default=None, description="An exclude's reason, one of the topic's exclusion "
                                                            "reasons (else 422).")
    stage: Stage | None = Field(default=None, description="The screening stage (default title-abstract).")


class JudgmentBatchIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    judgments: list[JudgmentIn] = Field(min_length=1)
    queue: QueueName | None = Field(default=None, description="The queue the judgments were served from (default: "
                                                              "the topic's newest).")
    allow_unqueued: bool = Field(default=False, strict=True,
                                 description="Record documents that are in no queue of the topic (else 422).")
    idempotency_key: KeyName | None = Field(default=None, description="The same key again returns the first result.")
    reviewer: Reviewer | None = Field(default=None, description="Optional; must be the API key's reviewer.")


@cache
def judgment_batch_validator(*, lean: bool = False) -> SchemaValidator:
    """`_judgment_batch_schema`, the judgments as a list of `BatchItem`; ``lean``: see there."""
    return SchemaValidator(_judgment_batch_schema(columns=False, lean=lean))


@cache
def judgment_batch_lean_columns_validator() -> SchemaValidator:
    """`judgment_batch_columns_validator` with ``lean`` (`_judgment_batch_schema`)."""
    return SchemaValidator(_judgment_batch_schema(columns=True, lean=True))


@cache
def judgment_batch_columns_validator() -> SchemaValidator:
    """`_judgment_batch_schema` for a large body: run with ``context`` a `BatchColumns`, each judgment, once
    validated, is added to it and left out of the result (whose ``judgments`` is a list of None), so the body
    costs its columns and no object per judgment. (A body whose ``judgments`` key appears twice may validate
    both lists: the caller compares the lengths.)"""
    return SchemaValidator(_judgment_batch_schema(columns=True))


def _into_columns(item: object, info: cs.ValidationInfo) -> None:
    columns = info.context
    assert columns is not None
    columns.add(item)


def _judgment_batch_schema(*, columns: bool, lean: bool = False) -> cs.CoreSchema:
    """`JudgmentBatchIn` for the fast path of ``POST /topics/{topic}/judgments``: the same fields, constraints and
    ``extra="forbid"``, parsed straight from JSON bytes into a dict whose ``judgments`` are the services'
    `BatchItem` (built in Rust: no model per judgment). Keep in step with `JudgmentIn` and `JudgmentBatchIn`
    (tests/api/test_fast_path.py compares them); a body it refuses goes through the models, which give the
    error response.

    ``lean``: each judgment's ``doc_id`` and ``label`` are checked for type and length only, not by the store's
    identifier check (a Python call per value, a fifth of a 1,000-judgment batch's CPU). The caller must then check
    them in bulk (`validation.all_plain`, which says True only for values that check returns unchanged) and use the
    full validator when they are not all plain: what the two accept then agrees."""
    from reviewdepth.services.review.batches import BatchItem

    def optional(schema: cs.CoreSchema, default: object = None) -> cs.WithDefaultSchema:
        return cs.with_default_schema(schema, default=default)

    def checked(check: Callable[[object, str], str], field: str, max_length: int,
                min_length: int = 1) -> cs.CoreSchema:
        return cs.no_info_after_validator_function(_checked(check, field), cs.str_schema(
            min_length=min_length, max_length=max_length))

    def identifier(check: Callable[[object, str], str], field: str, max_length: int) -> cs.CoreSchema:
        return cs.str_schema(min_length=1, max_length=max_length) if lean else checked(check, field, max_length)

    queue = checked(validation.queue_name, "queue", validation.QUEUE_LENGTH)
    item: cs.CoreSchema = cs.dataclass_schema(BatchItem, cs.dataclass_args_schema("BatchItem", [
        cs.dataclass_field("doc_id", identifier(validation.doc_id, "doc_id", validation.DOC_ID_LENGTH)),
        cs.dataclass_field("label", cs.no_info_before_validator_function(
            label_from_json, identifier(validation.label_text, "label", validation.LABEL_LENGTH))),
        cs.dataclass_field("role", optional(cs.literal_schema(list(USER_ROLES)), "review")),
        cs.dataclass_field("queue", optional(cs.nullable_schema(queue))),
        cs.dataclass_field("note", optional(cs.nullable_schema(checked(_note, "note", validation.NOTE_LENGTH, 0)))),
        cs.dataclass_field("reason", optional(cs.nullable_schema(
            checked(validation.reason_text, "reason", validation.REASON_LENGTH)))),
        cs.dataclass_field("stage", optional(cs.nullable_schema(cs.literal_schema(list(STAGES))))),
    ], extra_behavior="forbid"), ["doc_id", "label", "role", "note", "queue", "reason", "stage"], frozen=True)
    if columns:
        item = cs.with_info_after_validator_function(_into_columns, item)
    return cs.typed_dict_schema({
        "judgments": cs.typed_dict_field(cs.list_schema(item, min_length=1)),
        "queue": cs.typed_dict_field(optional(cs.nullable_schema(queue)), required=False),
        "allow_unqueued": cs.typed_dict_field(optional(cs.bool_schema(strict=True), False), required=False),
        "idempotency_key": cs.typed_dict_field(optional(cs.nullable_schema(
            checked(validation.key_name, "idempotency_key", validation.KEY_LENGTH))), required=False),
        "reviewer": cs.typed_dict_field(optional(cs.nullable_schema(
            checked(validation.reviewer_name, "reviewer", validation.REVIEWER_LENGTH))), required=False),
    }, extra_behavior="forbid")


class JudgmentBatchOut(BaseModel):
    topic: str
    reviewer: str
    recorded: int
    ids: list[int]


JudgmentOut = dataclass_model(JudgmentRecord, name="JudgmentOut", describe={
    "queue": "The queue it was served from (null: unknown or none)."})


class JudgmentPage(BaseModel):
    topic: str
    offset: int
    limit: int
    judgments: list[JudgmentOut]  # type: ignore[valid-type]


class VoteOut(BaseModel):
    reviewer: str
    label: str
    relevant: bool | None = Field(description="null: a maybe")
    decision: Literal["include", "exclude", "maybe"]
    role: str
    judgment_id: int
    recorded_at: str


class ConflictOut(BaseModel):
    doc_id: str
    status: Literal["open", "resolved"]
    votes: list[VoteOut]
    relevant_votes: int
    not_relevant_votes: int
    maybe_votes: int
    adjudication: VoteOut | None
    stage: Literal["title-abstract", "full-text"] = Field(description="The screening stage the positions were "
                                                                      "taken at (conflicts are per stage).")


class ConflictList(BaseModel):
    topic: str
    status: Literal["open", "resolved", "all"]
    conflicts: list[ConflictOut]


class SampleIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    size: JsonInt = Field(ge=1, le=INT64_MAX, strict=True, description="Documents to draw without replacement.")
    frame: str = Field(default="all", pattern=r"^(all|unreviewed|judged|below-rank:[0-9]{1,18}|"
                       r"ranks:[0-9]{1,18}-[0-9]{1,18})$",
                       description="all, unreviewed, judged, below-rank:K or ranks:A-B.")
    seed: NonNegativeInt64 | None = Field(default=None,
                             description="Random seed (stored; default random).")
    queue: QueueName | None = Field(default=None, description="Queue name (default: the topic's only queue).")


SampleOut = dataclass_model(SampleView, name="SampleOut")


class SampleVoidIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    reason: VoidReason = Field(description="Why the sample is voided (logged; not blank).")


class StreamIn(BaseModel):
    """Exactly one of ``every`` and ``rate`` gives the pace."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"oneOf": [
        {"required": ["every"], "properties": {"every": {"type": "integer"}}},
        {"required": ["rate"], "properties": {"rate": {"type": "number"}}}]})

    every: PositiveInt32 | None = Field(default=None,
                              description="One audit document after every K ranked documents reviewed (or rate).")
    rate: float | None = Field(default=None, gt=0, lt=1, allow_inf_nan=False,
                               description="Audit documents as a share of all documents served (or every).")
    seed: NonNegativeInt64 | None = Field(default=None,
                             description="Random seed (stored; default random).")
    queue: QueueName | None = Field(default=None, description="The queue whose documents make the population "
                                                              "(default: the topic's newest).")


StreamOut = dataclass_model(StreamRecord, name="StreamOut", describe={
    "queue": "The queue the stream was created on (null: no longer stored).",
    "population_digest": "SHA-256 of the sorted distinct doc ids joined by newlines.",
    "position": "Permutation elements passed so far.",
    "served": "Of those, the ones served because they still needed a judgment.",
    "as_of": "The topic's last judgment id when the stream was created.",
    "judged": "Length of the judged prefix of the permutation (the evidence).",
    "relevant": "Relevant documents in the judged prefix.",
    "pending": "Served or passed documents after the judged prefix still unjudged."})


class StreamVoidIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    reason: VoidReason = Field(description="Why the stream is stopped (not blank).")


class NextIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    count: JsonInt = Field(default=10, ge=1, le=10_000, strict=True, description="How many documents.")
    queue: QueueName | None = Field(default=None, description="The ranked queue to serve (default: the newest).")


ServedDocumentOut = dataclass_model(ServedDocument, name="ServedDocumentOut", override={
    "role": Literal["review", "audit"]}, describe={
    "role": "The role to record its judgment with.",
    "rank": "Its rank on the queue served (null: an audit document not in it).",
    "audit_position": "Its 1-based place in the audit permutation.",
    "again": "An audit document served before and still unjudged."})


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
    documents: list[ServedDocumentOut]  # type: ignore[valid-type]


if TYPE_CHECKING:
    RuleName = str
else:  # the replayable rules of the one rule table (reviewdepth.estimation.rules), in replay order
    RuleName = Literal[tuple(RULES)]

# NaN and infinities are written as null, so a chart's points may be null in the document
SECTION_OVERRIDES.update({
    SimulationSettings: {"design": DesignKind, "rules": list[RuleName]},
    SimulationRule: {"rule": RuleName, "kind": RuleKind},
    SimulationChart: {"rule": RuleName, "cost": list[float | None], "recall": list[float | None]}})
SimulationReportOut = dataclass_model(SimulationReport, name="SimulationReportOut")


# the report's and the monitor's (`TopicStatus`, `chain_head_at`): generated from the report's sections
ChainHeadOut = section_model(ChainHead)
StatusFigureOut = section_model(StatusFigure)
TopicStatusOut = section_model(TopicStatus)


MonitorOut = dataclass_model(MonitorReport, name="MonitorOut", override={
    "status": Literal["stop certified", "continue"]}, describe={
    "queue": "The current queue (the named one, else the topic's newest).",
    "recall_lower": "The anytime-valid recall lower bound of the reviewed set.",
    "reviewed": "|S|: the union of every queue's reviewed prefix, within the population.",
    "missed_upper": "Upper bound on the relevant documents outside the reviewed set.",
    "audit": "The audit stream's evidence (null: no stream)."})


KeyOut = dataclass_model(KeyRecord, name="KeyOut")


class Health(BaseModel):
    status: str
    version: str


Cell = float | int | str


def _evaluation_model(result: type[Any], name: str) -> type[BaseModel]:
    """``{"per_query": {qid: {measure: value}}, "all": {measure: value}}`` (`report.scores.render_json`), typed by
    the result's own ``per_query`` and ``summary`` fields."""
    hints = get_type_hints(result)
    return create_model(name, __doc__=result.__doc__, per_query=(hints["per_query"], ...),
                        all=(hints["summary"], ...))


TrecEvaluationOut = _evaluation_model(Evaluation, "TrecEvaluationOut")
TarEvaluationOut = _evaluation_model(TarEvaluation, "TarEvaluationOut")


class EvaluationOut(RootModel[TrecEvaluationOut | TarEvaluationOut]):  # type: ignore[valid-type]
    """`reviewdepth eval --format json`: the trec suite's measures (the ``all`` block carries ``runid``), or the
    tar suite's (``suite=tar``)."""


class PlanHeader(BaseModel):
    topic: str
    queue: str
    reviewed: int
    queue_size: int
    relevant_found_in_reviewed: int
    as_of_judgment: int | None
    scope: str


# `services.answers.sample_plan.sample_plan_figures`: the plan's own fields and what the service says beside them
ELUSION_EXTRA: dict[str, Any] = {"frame": Literal["unreviewed"], "rate_source": str,
                                 "chance_at_cautious_rate": float | None, "command": str | None, "summary": str}
UnreviewedPlanOut = dataclass_model(ElusionPlan, name="UnreviewedPlanOut", extra=ELUSION_EXTRA, base=PlanHeader)
PopulationPlanOut = dataclass_model(PopulationPlan, name="PopulationPlanOut", base=PlanHeader, extra={
    "frame": Literal["all"], "estimate_source": str, "summary": str})


class NothingToPlanOut(PlanHeader):
    """``frame=unreviewed`` when every document of the queue is reviewed."""

    frame: Literal["unreviewed"]
    feasible: Literal[False]
    reason: str


class SamplePlanOut(RootModel[UnreviewedPlanOut | PopulationPlanOut | NothingToPlanOut]):  # type: ignore[valid-type]
    """`reviewdepth sample plan --format json`: the sample size that certifies the target, the outcome that
    certifies it and its chance."""


# the depth report (`reviewdepth.report.model.Report`): generated from its sections, the one thing said here being
# the shape of a heuristic rule's record on the team's portfolio
# (`services.evidence.calibration.stopping_calibrations`),
# which the report carries as it was stored: the calibration's own keys, then the rule's summary as
# `services.simulation.simulate` writes it, with its one-line text
StoppingCalibration = dataclass_model(RuleSummary, name="StoppingCalibration", drop=("recall_quantiles",), extra={
    "id": int, "target": str, "confidence": float, "created_at": str, "description": str,
    "recall_at_stop": dict[str, float], "text": str})
SECTION_OVERRIDES[StoppingRow] = {"calibration": StoppingCalibration}
ReportOut = section_model(Report)
# the validation document (`reviewdepth.report.validation_model`): its sections named apart from the report's
SECTION_NAMES.update({
    validation_model.ValidationDocument: "ValidationOut", validation_model.Protocol: "ValidationProtocol",
    validation_model.SampleDocument: "ValidationSampleDocument", validation_model.Coder: "ValidationCoder",
    validation_model.SampleEvidence: "ValidationSample", validation_model.AuditStreamEvidence: "ValidationAuditStream",
    validation_model.Evidence: "ValidationEvidence", validation_model.Results: "ValidationResults",
    validation_model.Cutoff: "ValidationCutoff", validation_model.Decision: "ValidationDecision",
    validation_model.Plan: "ValidationPlan"})
ValidationOut = section_model(validation_model.ValidationDocument)
# the methods text (`reviewdepth.report.methods_text.Methods`, `reviewdepth methods --format json`)
SECTION_NAMES.update({methods_text.Methods: "MethodsOut", methods_text.Fact: "MethodsFact",
                      methods_text.MethodsSection: "MethodsSection"})
MethodsOut = section_model(methods_text.Methods)



class StopPlanHeader(BaseModel):
    """What the stop plan was computed for (`services.answers.stop_plan.TopicStopPlan`)."""

    topic: str
    queue: str
    as_of_judgment: int | None
    scope: str


# the stop plan (`reviewdepth plan --format json`, `report.stop_plan_render.as_data`): the plan's own fields and the
# sentences the renderer adds beside them
StopPlanOut = dataclass_model(StopPlan, name="StopPlanOut", base=StopPlanHeader, extra={
    "floor_sentence": str, "path_sentences": dict[str, str], "before_review": bool,
    "richness_sentence": str | None, "tar_sentences": list[str]})


# imports of review-platform files (`api.routers.files`): the summaries the CLI prints its line from, generated from
# the services' dataclasses
ImportOut = dataclass_model(ImportSummary, name="ImportOut", describe={
    "kind": "The importer.", "file": "The file as errors name it (the format: csv, ris, …).",
    "digest": "SHA-256 of the file: the same file is refused again unless again=true.",
    "rows": "Rows (records, articles, studies) in the file.", "stored": "Judgments stored.",
    "unlabelled": "Rows stored with no judgment.", "import_id": "The import's id, which its judgments carry."})
AsreviewImportOut = dataclass_model(AsreviewImportSummary, name="AsreviewImportOut")
RisImportOut = dataclass_model(RisImportSummary, name="RisImportOut")
RecordsImportOut = dataclass_model(RecordsImportSummary, name="RecordsImportOut")
RayyanImportOut = dataclass_model(RayyanImportSummary, name="RayyanImportOut")
CovidenceImportOut = dataclass_model(CovidenceImportSummary, name="CovidenceImportOut")
# the formats that store decisions through the shared use case (`services.files.importers.import_decisions`)
DecisionsImportOut = dataclass_model(DecisionsImportSummary, name="DecisionsImportOut")


class JudgmentFileImportOut(BaseModel):
    """A workbook of judgments recorded (`reviewdepth import xlsx`): how many, and the ids of the first and last."""

    topic: str
    file: str
    stored: int
    first_id: int
    last_id: int


# `reviewdepth compare --format json` (`report.compare_model.Comparison.to_dict`): the dataclass's fields, the
# baseline and the method sentence beside them; a mean that is not a number is written as null
ComparisonCellOut = dataclass_model(ComparisonCell, name="ComparisonCellOut", override={"mean": float | None})
ComparisonOut = dataclass_model(Comparison, name="ComparisonOut", override={"cells": list[ComparisonCellOut]},  # type: ignore[valid-type]
                                extra={"baseline": str, "method": str}, describe={
                                    "baseline": "The first run, which every other is tested against.",
                                    "method": "What was tested, in one sentence (every format prints it)."})


# bodies documented through `responses=` (their routes answer bytes or plain dicts), added to the components by
# `api.openapi`; `body_content` is the reference to one
DOCUMENTED_BODIES: tuple[type[BaseModel], ...] = (RankingIn, EvaluationOut, MethodsOut)
JSON_SAFE_BODIES: tuple[type[BaseModel], ...] = (ReportOut, SamplePlanOut, ValidationOut, StopPlanOut)


def body_content(model: type[BaseModel]) -> dict[str, Any]:
    """The ``content`` of a JSON response whose schema is the component of ``model`` (one of the bodies above)."""
    assert model in DOCUMENTED_BODIES + JSON_SAFE_BODIES, model
    return {"application/json": {"schema": {"$ref": f"#/components/schemas/{model.__name__}"}}}
