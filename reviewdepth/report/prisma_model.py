"""PRISMA 2020 screening counts of a topic as plain data (`reviewdepth.services.answers.prisma` counts them; the depth
report and ``reviewdepth prisma`` print them)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal


@dataclass(frozen=True)
class PrismaCounts:
    identified: int
    identified_source: str
    screened: int
    included: int
    excluded_by_reviewers: int
    not_screened_review_stopped: int
    judged_outside_queue: int
    included_outside_queue: int
    stopped_at_rank: int | None
    reviewed: int
    relevant_in_reviewed: int
    # records by their number of distinct reviewers, in that order (JSON writes the numbers as keys)
    reviewers_per_record: dict[int, int]
    conflicts: int
    conflicts_resolved: int
    independent: bool | None
    label_policy: str
    # screening decisions (`reviewdepth.services.evidence.prisma_counts.decision_counts`): records screened whose
    # reviewers said only maybe (screened, undecided: in ``screened``, neither included nor excluded); whether any
    # judgment names a screening stage; records reaching full text (a decision or a maybe at stage full-text) and
    # those excluded there (None: no stage recorded); excluded records per "<stage>: <reason>" of the exclude that
    # decided them (only records whose exclude carries a reason)
    screened_undecided: int = 0
    stages_recorded: bool = False
    full_text_assessed: int | None = None
    excluded_full_text: int | None = None
    excluded_per_reason: dict[str, int] = field(default_factory=dict)
    # records of the identified set flagged a duplicate by `reviewdepth dedupe --apply` and removed before
    # screening (None: the topic's records were never checked: no bibliographic fields imported, no flag), and
    # the records left to screen after their removal
    duplicates_removed: int | None = None
    after_duplicates_removed: int = 0
    # the flow through the screening stages (`reviewdepth.services.evidence.prisma_counts.prisma_counts` derives
    # them from the counts above; None: no judgment names a stage, so title
    # and abstract are not told apart from full text): records a person excluded before full text (stage
    # title-abstract, the store's default); the reports sought = assessed (reviewdepth records no retrieval step):
    # every screened record not excluded before full text, i.e. the full-text exclusions, the includes and the
    # undecided (an include recorded at title-abstract alone is assessed on what was read: the review includes it);
    # the excluded records whose deciding exclude carries no reason, in the box of records excluded (before full
    # text, or every one when no stage is recorded) and in the box of reports excluded (at full text)
    excluded_before_full_text: int | None = None
    reports_sought: int | None = None
    reports_assessed: int | None = None
    excluded_without_reason: int = 0
    excluded_full_text_without_reason: int | None = None
    # reports sought but not retrieved: records whose deciding exclude is at full text with the reserved reason
    # ``NOT_RETRIEVED_REASON``; they are out of ``excluded_full_text`` and ``excluded_per_reason`` and out of
    # ``reports_assessed`` (None: no judgment names a stage)
    reports_not_retrieved: int | None = None
    # identification per source (PRISMA 2020's databases, registers and other methods), from the imports that
    # declared one (``import ris|records --source-type TYPE --source-name NAME``): records per ``"<type>: <name>"``
    # (a type holds no ``": "``, so the first one splits the key), in the order the sources were first imported;
    # the records per type (the sum of its sources; 0 for a type no source was declared of); and the records of
    # the identified set no import declared a source for (identified less every source's records). All None (the
    # mapping empty) when no import of the topic declared a source: the diagram then says "not recorded"
    identified_per_source: dict[str, int] = field(default_factory=dict)
    identified_from_databases: int | None = None
    identified_from_registers: int | None = None
    identified_from_other_methods: int | None = None
    identified_source_not_recorded: int | None = None

    # written after the fields wherever the counts go (the report's ``prisma`` section too, so both doors agree)
    JSON_PROPERTIES = ("arithmetic_problems",)

    @property
    def arithmetic_problems(self) -> list[str]:
        """The flow identities these counts break (`arithmetic_problems`): empty when every box adds up."""
        return list(arithmetic_problems(self))

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["reviewers_per_record"] = {str(k): v for k, v in sorted(self.reviewers_per_record.items())}
        out["arithmetic_problems"] = self.arithmetic_problems
        return out


# --- the PRISMA 2020 flow diagram (`reviewdepth prisma --format svg|png|html`) -------------------------------------
# The diagram is drawn from a `PrismaCounts` and nothing else: every number in a box is one of its fields (named
# by ``FlowBox.field``, the key `prisma --format json` prints it under), so the diagram and the JSON cannot differ.
# What reviewdepth does not record yet is a box with no count ("not recorded"), never a number made up.

FlowStage = Literal["identification", "screening", "included"]
FLOW_STAGES: tuple[FlowStage, ...] = ("identification", "screening", "included")

# What a box counts (its words are in `reviewdepth.report.prisma_diagram`), in drawing order.
FlowCode = Literal[
    "identified",            # records identified: the topic's population, else its queue size
    "removed_before",        # records removed before screening: duplicates (`reviewdepth dedupe --apply`)
    "outside",               # records with a decision outside the identified set, counted apart
    "screened",              # records entering screening (identified, nothing removed), of which by a person
    "excluded",              # records excluded: by a person, and by automation (not screened, the review stopped)
    "reports",               # reports sought for retrieval / assessed for eligibility (needs screening stages)
    "reports_excluded",      # reports excluded, per reason (needs exclusion reasons)
    "included",              # studies included
]


@dataclass(frozen=True)
class FlowCount:
    """One number of a box: ``code`` says what it counts; ``value`` is ``PrismaCounts.<field>`` (a dotted field
    is a key of a mapping: ``reviewers_per_record.2``, as the JSON writes it), or None when reviewdepth does not
    record it (``field`` is then None too)."""

    code: str
    value: int | None
    field: str | None


@dataclass(frozen=True)
class ExclusionReason:
    """Records excluded for one reason at one screening stage (`PrismaCounts.excluded_per_reason`, whose keys are
    ``"<stage>: <reason>"``; a stage holds no ``": "``, so the first one splits the key)."""

    stage: str
    reason: str
    records: int


# Where records were identified, as PRISMA 2020's identification boxes name them (``--source-type``), each with the
# `PrismaCounts` field of its records: databases, registers, and other methods (websites, organisations, citation
# searching, ...). The words are in `reviewdepth.report.prisma_diagram`.
SourceType = Literal["database", "register", "other"]
SOURCE_TYPES: tuple[SourceType, ...] = ("database", "register", "other")
SOURCE_TYPE_FIELDS: dict[str, str] = {"database": "identified_from_databases",
                                      "register": "identified_from_registers",
                                      "other": "identified_from_other_methods"}


def source_key(source_type: str, name: str) -> str:
    """The key of a source in `PrismaCounts.identified_per_source`: ``"<type>: <name>"``."""
    return f"{source_type}: {name}"


def source_of_key(key: str) -> tuple[str, str]:
    """(type, name) of an `PrismaCounts.identified_per_source` key (a type holds no ``": "``)."""
    source_type, _, name = key.partition(": ")
    return source_type, name


def identification_by_source(identified: int, records_per_source: dict[str, int]) -> dict[str, Any]:
    """The identification fields of `PrismaCounts` (their comment) from the records each declared source brought
    (keys by `source_key`, in import order): all None when no source was declared."""
    if not records_per_source:
        return {}
    per_type: dict[str, int] = {source_type: 0 for source_type in SOURCE_TYPES}
    for key, records in records_per_source.items():
        per_type[source_of_key(key)[0]] += records
    return {"identified_per_source": dict(records_per_source),
            **{SOURCE_TYPE_FIELDS[t]: n for t, n in per_type.items()},
            "identified_source_not_recorded": identified - sum(per_type.values())}


# The screening stage whose exclusions are "reports excluded" (the store's ``full-text``,
# `reviewdepth.store.models.STAGES`); an exclusion at any other stage (title-abstract, the default) is a record
# excluded before the reports are sought.
FULL_TEXT_STAGE = "full-text"
# The reserved exclusion reason at full text that says the report could not be retrieved: such a record is counted
# in "reports not retrieved", not in "reports excluded".
NOT_RETRIEVED_REASON = "not retrieved"


def arithmetic_problems(counts: PrismaCounts) -> tuple[str, ...]:
    """The flow identities of the PRISMA 2020 diagram that ``counts`` breaks (empty when it adds up):

    - when sources are recorded: records from databases (registers, other methods) = the sum of the databases
      (registers, other methods) named; identified = databases + registers + other methods + records of no
      declared source, the last never negative;
    - identified − duplicates removed = records left to screen (``after_duplicates_removed``);
    - records left to screen = screened by a person + excluded by automation (not screened, the review stopped);
    - screened by a person = excluded by a person + undecided + included when no stage is recorded; with stages,
      screened by a person = excluded before full text + reports sought;
    - reports sought = reports not retrieved + reports assessed;
    - reports assessed = reports excluded at full text + studies included + undecided, of which those with a
      full-text judgment are no more than all.
    """
    c = counts
    out: list[str] = []

    def check(name: str, left: int, right: int) -> None:
        if left != right:
            out.append(f"{name}: {left} != {right}")

    typed = [getattr(c, f) for f in SOURCE_TYPE_FIELDS.values()]
    if c.identified_per_source or c.identified_source_not_recorded is not None or any(n is not None for n in typed):
        # the identification boxes: each type is the sum of its named sources, and the types with the records of
        # no declared source make up the records identified (none of them negative)
        for source_type, name in SOURCE_TYPE_FIELDS.items():
            check(f"{name.removeprefix('identified_from_').replace('_', ' ')} = sum of the {source_type} sources",
                  getattr(c, name) or 0, sum(n for k, n in c.identified_per_source.items()
                                             if source_of_key(k)[0] == source_type))
        unknown = sorted({source_of_key(k)[0] for k in c.identified_per_source} - set(SOURCE_TYPES))
        if unknown:
            out.append(f"sources of no PRISMA type: {', '.join(unknown)}")
        not_recorded = c.identified_source_not_recorded or 0
        check("identified = databases + registers + other methods + source not recorded", c.identified,
              sum(n or 0 for n in typed) + not_recorded)
        if not_recorded < 0:
            out.append(f"records of no declared source >= 0: {not_recorded} < 0")
    check("identified - duplicates removed = records to screen", c.identified - (c.duplicates_removed or 0),
          c.after_duplicates_removed)
    check("records to screen = screened + excluded by automation", c.after_duplicates_removed,
          c.screened + c.not_screened_review_stopped)
    if c.reports_sought is None:
        check("screened = excluded + included + undecided", c.screened,
              c.excluded_by_reviewers + c.included + c.screened_undecided)
        return tuple(out)
    assert c.excluded_before_full_text is not None and c.reports_assessed is not None
    check("screened = excluded before full text + reports sought", c.screened,
          c.excluded_before_full_text + c.reports_sought)
    check("reports sought = not retrieved + assessed", c.reports_sought,
          (c.reports_not_retrieved or 0) + c.reports_assessed)
    check("reports assessed = excluded at full text + included + undecided", c.reports_assessed,
          (c.excluded_full_text or 0) + c.included + c.screened_undecided)
    if c.full_text_assessed is not None and c.full_text_assessed > c.reports_assessed:
        out.append(f"reports with a full-text judgment <= reports assessed: {c.full_text_assessed} > "
                   f"{c.reports_assessed}")
    return tuple(out)


def exclusion_reasons_of(counts: PrismaCounts) -> tuple[ExclusionReason, ...]:
    out = []
    for key, value in counts.excluded_per_reason.items():
        stage, _, reason = key.partition(": ")
        out.append(ExclusionReason(stage, reason, value))
    return tuple(out)


@dataclass(frozen=True)
class FlowBox:
    code: FlowCode
    stage: FlowStage
    side: bool  # a box of the right-hand column (removed, excluded), reached by an arrow from the left one
    counts: tuple[FlowCount, ...]


@dataclass(frozen=True)
class PrismaFlow:
    """The diagram's boxes, top to bottom, for one topic; ``counts`` are the numbers they show."""

    topic: str
    counts: PrismaCounts
    boxes: tuple[FlowBox, ...]
    duplicates_recorded: bool
    stages_recorded: bool
    exclusion_reasons: tuple[ExclusionReason, ...]

    def box(self, code: FlowCode) -> FlowBox | None:
        return next((b for b in self.boxes if b.code == code), None)


def _count(counts: PrismaCounts, code: str, field: str) -> FlowCount:
    value = getattr(counts, field)
    assert isinstance(value, int) and not isinstance(value, bool), field
    return FlowCount(code, value, field)


def prisma_flow(topic: str, counts: PrismaCounts, *,
                exclusion_reasons: tuple[ExclusionReason, ...] | None = None) -> PrismaFlow:
    """The PRISMA 2020 flow of ``counts`` (Page et al., BMJ 2021;372:n71):

    - identification: records identified (``identified``), from databases, registers and other methods
      (``identified_from_databases`` …, each with its named sources, ``identified_per_source``, and the records
      of no declared source, ``identified_source_not_recorded``, when there are some; not recorded when no import
      declared a source); removed before screening: the duplicates
      ``reviewdepth dedupe --apply`` flagged (``duplicates_removed``; not recorded when the topic's records were
      never checked, and then screening starts from all of them);
      records judged outside the identified set (``judged_outside_queue``, ``included_outside_queue``) in a box
      of their own, only when there are some: they are in no other box;
    - screening: records screened = identified less the duplicates removed (``after_duplicates_removed`` when
      some were, else ``identified``: the template's count after removals), of which screened by a
      person (``screened``); records excluded before the reports: by a person at title and abstract
      (``excluded_before_full_text``; every exclusion by a person, ``excluded_by_reviewers``, when no judgment
      names a stage), with the reasons of that stage (``excluded_per_reason``) and those without one
      (``excluded_without_reason``), apart from those excluded by automation, i.e. left unscreened by the stop
      decision of the prioritised review (``not_screened_review_stopped``, with ``stopped_at_rank`` when screening
      followed the queue): the split the template's footnote asks for when automation tools were used; how the
      screened records were screened (``reviewers_per_record``, and with two or more reviewers ``conflicts`` and
      ``conflicts_resolved``); records screened with only maybes (``screened_undecided``), when there are some;
    - reports sought / assessed: every screened record not excluded before full text (``reports_sought``,
      ``reports_assessed``: reviewdepth records no retrieval step, so sought = assessed), of which with a
      judgment at full text (``full_text_assessed``) and still undecided (``screened_undecided``), or not
      recorded when no judgment names a stage; reports excluded at full text (``excluded_full_text``) with the
      reasons of that stage and those without one (``excluded_full_text_without_reason``);
    - included: studies included (``included``).
    """
    c = counts
    if exclusion_reasons is None:
        exclusion_reasons = exclusion_reasons_of(c)
    staged = c.reports_sought is not None

    def reasons_at(full_text: bool) -> tuple[FlowCount, ...]:
        """The reasons of one box (the exclusions at full text, or before it) and the excluded without one."""
        listed = tuple(FlowCount(f"{r.stage}: {r.reason}", r.records, f"excluded_per_reason.{r.stage}: {r.reason}")
                       for r in exclusion_reasons if (r.stage == FULL_TEXT_STAGE) == full_text)
        if not listed:
            return ()
        without = (_count(c, "no_reason", "excluded_full_text_without_reason") if full_text else
                   _count(c, "no_reason", "excluded_without_reason"))
        return (*listed, without)

    if c.identified_source_not_recorded is None:  # no import declared its source
        sources: tuple[FlowCount, ...] = tuple(FlowCount(t, None, None) for t in SOURCE_TYPES)
    else:
        sources = tuple(
            part for source_type, name in SOURCE_TYPE_FIELDS.items()
            for part in (_count(c, source_type, name),
                         *(FlowCount(f"source:{key}", records, f"identified_per_source.{key}")
                           for key, records in c.identified_per_source.items()
                           if source_of_key(key)[0] == source_type)))
        if c.identified_source_not_recorded:
            sources += (_count(c, "not_recorded", "identified_source_not_recorded"),)
    boxes = [
        FlowBox("identified", "identification", False, (_count(c, "records", "identified"), *sources)),
        FlowBox("removed_before", "identification", True, (
            _count(c, "duplicates", "duplicates_removed") if c.duplicates_removed is not None else
            FlowCount("duplicates", None, None),)),
    ]
    if c.judged_outside_queue:
        boxes.append(FlowBox("outside", "identification", True, (
            _count(c, "records", "judged_outside_queue"), _count(c, "included", "included_outside_queue"))))
    stop = () if c.stopped_at_rank is None else (_count(c, "stopped_at_rank", "stopped_at_rank"),)
    boxes += [
        FlowBox("screened", "screening", False, (
            _count(c, "records", "after_duplicates_removed" if c.duplicates_removed else "identified"),
            _count(c, "by_person", "screened"),
            # how the screened records were screened: per number of reviewers, the conflicts and their resolution
            *(FlowCount(f"reviewers:{k}", v, f"reviewers_per_record.{k}")
              for k, v in sorted(c.reviewers_per_record.items())),
            *((_count(c, "conflicts", "conflicts"), _count(c, "conflicts_resolved", "conflicts_resolved"))
              if max(c.reviewers_per_record, default=0) >= 2 else ()),
            *((_count(c, "undecided", "screened_undecided"),) if c.screened_undecided else ()))),
        # the records excluded before the reports: by a person at title and abstract (every exclusion by a person
        # when no stage is recorded), with their reasons, and by automation
        FlowBox("excluded", "screening", True, (
            _count(c, "by_person", "excluded_before_full_text" if staged else "excluded_by_reviewers"),
            *reasons_at(full_text=False),
            _count(c, "by_automation", "not_screened_review_stopped"), *stop)),
        FlowBox("reports", "screening", False, (
            (_count(c, "sought", "reports_sought"),
             *((_count(c, "not_retrieved", "reports_not_retrieved"),) if c.reports_not_retrieved is not None
               else ()),
             _count(c, "assessed", "reports_assessed"),
             *((_count(c, "full_text", "full_text_assessed"),) if c.full_text_assessed is not None else ()),
             *((_count(c, "undecided", "screened_undecided"),) if c.screened_undecided else ()))
            if staged else
            (FlowCount("sought", None, None), FlowCount("assessed", None, None)))),
        FlowBox("reports_excluded", "screening", True, (
            (_count(c, "full_text", "excluded_full_text"), *reasons_at(full_text=True)) if staged else
            (FlowCount("reasons", None, None),))),
        FlowBox("included", "included", False, (_count(c, "studies", "included"),)),
    ]
    return PrismaFlow(topic=topic, counts=c, boxes=tuple(boxes), duplicates_recorded=c.duplicates_removed is not None,
                      stages_recorded=c.stages_recorded,
                      exclusion_reasons=exclusion_reasons)
