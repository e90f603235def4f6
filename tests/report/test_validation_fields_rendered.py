"""Issue 43, item 6: a field of the validation document that reaches the JSON but not the page is caught here.

`ValidationDocument` is walked field by field, down its nested dataclasses, lists and optional sections, to every
leaf. For each leaf, a real document (small topics built through the services, so every optional section is
present in at least one of them) has that one value replaced by a different value of the same type, and the page
is rendered again: the HTML (`render_html`), which prints exactly what the PDF prints — the title, the subtitle and
`validation_render.sections`, whose rows, tables and notes both formats are drawn from. A leaf whose replacement
leaves the page unchanged is not printed; it fails the test unless `NOT_PRINTED` lists it with the reason. A leaf
that no scenario fills (None or empty everywhere) fails too, unless listed: a field must be shown printed, not
assumed. `NOT_PRINTED` is kept honest the same way: an entry that names no field, or a field that is printed,
fails. CONTRIBUTING ("Add a field to the validation document") is the recipe this test checks."""

from __future__ import annotations

import dataclasses
import enum
import math
import shutil
import types
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Union, get_args, get_origin, get_type_hints

import pytest
from sqlalchemy import Engine

from reviewdepth.report.validation_model import Cutoff, ValidationDocument
from reviewdepth.report.validation_render import render_html, sections, subtitle, title
from reviewdepth.services.answers.protocol import set_protocol
from reviewdepth.services.answers.report import ReportOptions
from reviewdepth.services.answers.validation import build_validation
from reviewdepth.services.files.imports import import_run
from reviewdepth.services.files.judgment_files import record_judgment_file
from reviewdepth.services.review.audit_stream import create_stream, next_documents, void_stream
from reviewdepth.services.review.judgments import record_judgments
from reviewdepth.services.review.sample_void import void_sample
from reviewdepth.services.review.samples import draw_sample

# Leaves of the document that the page does not print, each with the reason. A key is a field's path as
# `leaf_paths` spells it ("[]": each element of a list, "{}": each value of a mapping); a key naming a section
# (a dataclass field) covers every leaf under it. Each entry must name a real field that is indeed not printed.
NOT_PRINTED: dict[str, str] = {
    # machine words and ids the page says in other words or where it says them
    "decision.status": "the machine word of the decision; the headline ('Decision') states it",
    "decision.status_text": "the decision object's one sentence; the page states it in its parts (the headline, "
                            "'Decided by', the deciding and the supporting figures), the decision once",
    "evidence.samples[].documents[].sample_id": "the appendix lists each sample's documents under its own heading",
    "evidence.audit_streams[].documents[].stream_id": "the appendix lists each stream's documents under its own "
                                                      "heading",
    "flags[].evidence": "the flag's sentence names the sample it is about",
    "tests[].confidence": "every test runs at the document's confidence, which the tests' note states",
    "acceptance.criterion": "the criterion's words, printed from the protocol fields ('Acceptance criterion "
                            "(agreed in advance)')",
    "acceptance.confidence": "part of the criterion's words (protocol fields); a level other than the document's "
                             "is the reason the criterion is not evaluated, which is printed",
    "evidence.samples[].in_discard_pile": "the sample's status, printed in its note, states it ('N of its M "
                                          "documents are in the unreviewed rest')",
    "evidence.samples[].relevant_in_discard_pile": "the depth report's working count; for the sample that decides "
                                                   "the Results print it ('k relevant of n in the discard pile')",
    "evidence.audit_streams[].certifies": "the tests table prints the stream's bound as passed or failed against "
                                          "the target, and the decision names the stream when it certifies",
    # the plan: the document states its sentences; `reviewdepth plan` prints the figures behind them
    **dict.fromkeys((
        "plan.floor.above_half", "plan.floor.alternatives", "plan.sample_plan.frame", "plan.sample_plan.target",
        "plan.sample_plan.confidence", "plan.sample_plan.power", "plan.sample_plan.elusion_rate",
        "plan.sample_plan.rate_source", "plan.sample_plan.found", "plan.sample_plan.unreviewed",
        "plan.sample_plan.missed_allowed", "plan.sample_plan.assumed_missed", "plan.sample_plan.min_size",
        "plan.sample_plan.size", "plan.sample_plan.max_positives", "plan.sample_plan.chance",
        "plan.sample_plan.expected_positives", "plan.sample_plan.feasible", "plan.sample_plan.size_given",
        "plan.sample_plan.reason", "plan.sample_plan.chance_at_cautious_rate", "plan.sample_plan.command",
        "plan.certify.source", "plan.certify.path", "plan.certify.review_more", "plan.certify.sample_size",
        "plan.certify.expected", "plan.certify.low", "plan.certify.high", "plan.certify.floor"),
        "the plan's figures behind the sentences the page prints (the floor's rows, the sample plan's summary, "
        "the step to certify); reviewdepth plan prints them"),
    # the two phases: the section's level is printed once; the strata's one-sided bounds feed recall's
    **dict.fromkeys((
        "two_phase.recall.confidence", "two_phase.precision.confidence", "two_phase.precision.stratum_confidence",
        "two_phase.control_recall.confidence", "two_phase.control_recall.stratum_confidence"),
        "each figure's level is the section's, printed once (two_phase.confidence); recall's per-stratum level is "
        "printed when it differs"),
    **dict.fromkeys((
        "two_phase.found_uncoded.lower_one_sided", "two_phase.found_uncoded.upper_one_sided",
        "two_phase.eluded.lower_one_sided", "two_phase.eluded.upper_one_sided"),
        "a stratum's one-sided bounds enter recall's one-sided lower bound, which is printed; the page gives each "
        "stratum's two-sided range"),
    # review quality: the depth report's section, shared; the document prints its summary
    "review_quality.policy_sensitivity": "the depth report's comparison of label policies; the document reads one "
                                         "policy, printed in the protocol settings",
    "review_quality.qc_samples[].by_original_reviewer": "the QC error rates per original reviewer, in the depth "
                                                        "report; the document prints each QC sample's overall rates",
    **dict.fromkeys((
        "review_quality.qc_samples[].seed", "review_quality.qc_samples[].size"),
        "the QC sample is a stored sample: the evidence table prints its seed and size"),
    **dict.fromkeys((
        "review_quality.qc_samples[].checked", "review_quality.qc_samples[].missing"),
        "a QC sample's line says 'c of n checked' while it has no error rates (missing is the rest); with them, "
        "the rates' counts ('d of n recoded') say it"),
    **dict.fromkeys((
        "review_quality.agreement.reviewers", "review_quality.agreement.pairs[].agreement",
        "review_quality.agreement.agreement.successes", "review_quality.agreement.agreement.trials",
        "review_quality.agreement.agreement.method", "review_quality.agreement.agreement.confidence",
        "review_quality.agreement.krippendorff_alpha.method", "review_quality.agreement.krippendorff_alpha.confidence",
        "review_quality.agreement.krippendorff_alpha.units_used",
        "review_quality.agreement.krippendorff_alpha.units_ignored",
        "review_quality.agreement.krippendorff_alpha.pairable_values",
        "review_quality.agreement.krippendorff_alpha.relevant_values",
        "review_quality.agreement.krippendorff_alpha.not_relevant_values",
        "review_quality.agreement.krippendorff_alpha.observed_disagreement",
        "review_quality.agreement.krippendorff_alpha.expected_disagreement",
        "review_quality.agreement.krippendorff_alpha.replicates",
        "review_quality.agreement.krippendorff_alpha.replicates_undefined",
        "review_quality.agreement.krippendorff_alpha.seed",
        "review_quality.agreement.pairs[].cohen_kappa.observed_agreement",
        "review_quality.agreement.pairs[].cohen_kappa.expected_agreement",
        "review_quality.agreement.pairs[].cohen_kappa.standard_error",
        "review_quality.agreement.pairs[].cohen_kappa.method",
        "review_quality.agreement.pairs[].cohen_kappa.confidence",
        "review_quality.agreement.pairs[].cohen_kappa.both_relevant",
        "review_quality.agreement.pairs[].cohen_kappa.only_a_relevant",
        "review_quality.agreement.pairs[].cohen_kappa.only_b_relevant",
        "review_quality.agreement.pairs[].cohen_kappa.both_not_relevant"),
        "the agreement statistics' working figures (counts, method, level, replicates), in the depth report "
        "(docs/review-quality.md); the document prints each statistic with its interval and the documents it is "
        "over"),
    **dict.fromkeys((
        "review_quality.qc_samples[].error_rates.confidence",
        "review_quality.qc_samples[].error_rates.error_rate.confidence",
        "review_quality.qc_samples[].error_rates.error_rate.method",
        "review_quality.qc_samples[].error_rates.error_rate.successes",
        "review_quality.qc_samples[].error_rates.error_rate.trials",
        "review_quality.qc_samples[].error_rates.false_negative_rate.confidence",
        "review_quality.qc_samples[].error_rates.false_negative_rate.method",
        "review_quality.qc_samples[].error_rates.false_positive_rate.confidence",
        "review_quality.qc_samples[].error_rates.false_positive_rate.method"),
        "the error rates' working figures (method, level; the overall rate's counts are the 'd of n recoded' "
        "printed beside it)"),
}


# ---------------------------------------------------------------------------------------------------------------
# the walk: the fields by type (every leaf there could be) and by value (the leaves a document fills)

Step = tuple[str, Any]  # ("field", name) | ("item", index) | ("key", key)


def _is_optional_or_union(kind: Any) -> bool:
    return get_origin(kind) in (Union, types.UnionType)


def _members(kind: Any) -> list[Any]:
    return [k for k in get_args(kind) if k is not type(None)]


def _bare(kind: Any) -> Any:
    """``X`` of ``X | None``; any other type as it is."""
    members = _members(kind) if _is_optional_or_union(kind) else []
    return members[0] if len(members) == 1 else kind


def _sequence_item(kind: Any) -> Any | None:
    """The element type of list[X] or tuple[X, ...] (or of either or None); None for anything else."""
    kind = _bare(kind)
    origin, args = get_origin(kind), get_args(kind)
    if origin is list and args:
        return args[0]
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        return args[0]
    return None


def _mapping_value(kind: Any) -> Any | None:
    kind = _bare(kind)
    origin, args = get_origin(kind), get_args(kind)
    return args[1] if origin in (dict, Mapping) and len(args) == 2 else None


def _holds_dataclasses(kind: Any) -> bool:
    if _is_optional_or_union(kind):
        return any(_holds_dataclasses(k) for k in _members(kind))
    return dataclasses.is_dataclass(kind)


def _join(prefix: str, name: str) -> str:
    return f"{prefix}.{name}" if prefix else name


def leaf_paths(kind: Any, prefix: str = "") -> set[str]:
    """Every leaf path of the type ``kind``: a dataclass's fields, a list or mapping of dataclasses entered
    ("[]", "{}"), an optional or union type through each of its members; anything else is a leaf (a list of
    strings is one leaf)."""
    if _is_optional_or_union(kind):
        return set().union(*(leaf_paths(k, prefix) for k in _members(kind)))
    if dataclasses.is_dataclass(kind):
        hints = get_type_hints(kind)
        return set().union(*(leaf_paths(hints[f.name], _join(prefix, f.name)) for f in dataclasses.fields(kind)))
    item = _sequence_item(kind)
    if item is not None and _holds_dataclasses(item):
        return leaf_paths(item, prefix + "[]")
    value = _mapping_value(kind)
    if value is not None and _holds_dataclasses(value):
        return leaf_paths(value, prefix + "{}")
    return {prefix}


def field_paths(kind: Any, prefix: str = "") -> set[str]:
    """Every path `leaf_paths` passes through (leaves and the sections above them)."""
    out = {prefix} if prefix else set()
    if _is_optional_or_union(kind):
        return out.union(*(field_paths(k, prefix) for k in _members(kind)))
    if dataclasses.is_dataclass(kind):
        hints = get_type_hints(kind)
        return out.union(*(field_paths(hints[f.name], _join(prefix, f.name)) for f in dataclasses.fields(kind)))
    item = _sequence_item(kind)
    if item is not None and _holds_dataclasses(item):
        return out | field_paths(item, prefix + "[]")
    value = _mapping_value(kind)
    if value is not None and _holds_dataclasses(value):
        return out | field_paths(value, prefix + "{}")
    return out


@dataclass(frozen=True)
class Leaf:
    path: str
    steps: tuple[Step, ...]
    value: Any


def filled_leaves(obj: Any, prefix: str = "", steps: tuple[Step, ...] = ()) -> Iterator[Leaf]:
    """The leaves ``obj`` (a dataclass instance) fills, in document order, read by each value's own class (so a
    field added to a subclass is walked too). None and empty lists fill nothing."""
    hints = get_type_hints(type(obj))
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        path, here = _join(prefix, f.name), (*steps, ("field", f.name))
        if value is None:
            continue
        if dataclasses.is_dataclass(value):
            yield from filled_leaves(value, path, here)
        elif isinstance(value, (list, tuple)) and _holds_dataclasses(_sequence_item(hints[f.name])):
            for i, item in enumerate(value):
                yield from filled_leaves(item, path + "[]", (*here, ("item", i)))
        elif isinstance(value, Mapping) and _holds_dataclasses(_mapping_value(hints[f.name])):
            for key, item in value.items():
                yield from filled_leaves(item, path + "{}", (*here, ("key", key)))
        elif isinstance(value, (list, tuple, Mapping)) and not value:
            continue
        else:
            yield Leaf(path, here, value)


def replaced(obj: Any, steps: tuple[Step, ...], value: Any) -> Any:
    """``obj`` with the value at ``steps`` replaced (`dataclasses.replace` down the path; lists and mappings
    copied)."""
    if not steps:
        return value
    (kind, key), rest = steps[0], steps[1:]
    if kind == "field":
        return dataclasses.replace(obj, **{key: replaced(getattr(obj, key), rest, value)})
    if kind == "item":
        items = list(obj)
        items[key] = replaced(items[key], rest, value)
        return type(obj)(items)
    mapping = dict(obj)
    mapping[key] = replaced(mapping[key], rest, value)
    return mapping


def different(value: Any) -> Any:
    """A value of the same type as ``value`` that prints differently wherever ``value`` is printed: another
    member of an enum, the other truth value, a number moved by an amount no rounding hides (a proportion stays
    in [0, 1]), a string with a marker added; a list or tuple with its first element changed."""
    if isinstance(value, enum.Enum):
        members = list(type(value))
        return members[(members.index(value) + 1) % len(members)]
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 7
    if isinstance(value, float):
        if math.isnan(value) or 0.0 <= value <= 1.0:
            return 0.3173 if math.isnan(value) or abs(value - 0.3173) > 0.01 else 0.6827
        return value + 7.25
    if isinstance(value, str):
        return value + " (changed)"
    if isinstance(value, (list, tuple)):
        return type(value)([different(value[0]), *value[1:]])
    if isinstance(value, Mapping):
        key = next(iter(value))
        return {**value, key: different(value[key])}
    raise TypeError(f"no different value for {value!r} ({type(value).__name__}): teach `different` this type")


Page = tuple[str, ...]


def page(doc: ValidationDocument) -> Page:
    """Every text a reader of the document sees, in order: the title, the subtitle, and each section's title,
    label–value rows, table headings and cells, and notes — what the HTML page and the PDF both print
    (`test_the_page_prints_every_text` holds the HTML to it; the PDF draws the same `sections`). Layout (column
    widths, bullets) is left out: it is not a value of the document."""
    texts = [title(doc), subtitle(doc)]
    for section in sections(doc):
        texts.append(section.title)
        texts += [text for row in section.rows for text in row]
        if section.table is not None:
            texts += section.table.headers
            texts += [cell for cells in section.table.rows for cell in cells]
        texts += section.notes
    return tuple(texts)


TRIES_PER_DOCUMENT = 2  # the first and the last place a list leaf is filled


def is_printed(docs: Mapping[str, ValidationDocument], pages: Mapping[str, Page],
               places: Mapping[str, list[Leaf]]) -> bool:
    """Whether changing the leaf at any of its ``places`` (by document) changes that document's page."""
    for name, leaves in places.items():
        picks = leaves if len(leaves) <= TRIES_PER_DOCUMENT else [leaves[0], leaves[-1]]
        for leaf in picks:
            changed = replaced(docs[name], leaf.steps, different(leaf.value))
            try:
                text = page(changed)
            except Exception as exc:  # name the field whose changed value the renderer cannot take
                raise AssertionError(f"rendering {name} with {leaf.path} changed to {different(leaf.value)!r} "
                                     f"failed: {exc!r}") from exc
            if text != pages[name]:
                return True
    return False


@dataclass(frozen=True)
class Census:
    printed: set[str]
    not_printed: set[str]
    unreached: set[str]


def census(docs: Mapping[str, ValidationDocument], kind: Any = ValidationDocument) -> Census:
    """Every leaf of ``kind`` (and any leaf the documents fill that ``kind`` does not declare), sorted into
    printed, not printed and never filled."""
    pages = {name: page(doc) for name, doc in docs.items()}
    places: dict[str, dict[str, list[Leaf]]] = {}
    for name, doc in docs.items():
        for leaf in filled_leaves(doc):
            places.setdefault(leaf.path, {}).setdefault(name, []).append(leaf)
    printed = {path for path, where in places.items() if is_printed(docs, pages, where)}
    return Census(printed, set(places) - printed, leaf_paths(kind) - set(places))


def covered(path: str) -> str | None:
    """The `NOT_PRINTED` entry that covers ``path`` (itself or a section above it)."""
    return next((key for key in NOT_PRINTED if path == key or path.startswith((key + ".", key + "[]", key + "{}"))),
                None)


# ---------------------------------------------------------------------------------------------------------------
# the documents: small topics built through the services, together filling every optional section

def _queue(engine: Engine, tmp_path: Path, topic: str, size: int) -> list[str]:
    run = tmp_path / f"{topic}.run"
    run.write_text("".join(f"{topic} Q0 {topic.lower()}{r:03d} {r} {1000 - r} x\n" for r in range(1, size + 1)))
    import_run(engine, str(run))
    return [f"{topic.lower()}{r:03d}" for r in range(1, size + 1)]


def _code(engine: Engine, topic: str, docs: list[str], truth: Mapping[str, bool], reviewer: str,
          role: str = "review") -> None:
    record_judgments(engine, topic, [(d, "1" if truth[d] else "0") for d in docs], reviewer=reviewer, role=role)


def elusion_certified(engine: Engine, tmp_path: Path) -> ValidationDocument:
    """Reviewed in rank order by two reviewers who sometimes disagree, a QC sample of the coded documents, a
    control sample of the whole queue, a voided sample, and an elusion sample that certifies the stop; every
    protocol field entered."""
    docs = _queue(engine, tmp_path, "E", 400)
    truth = {d: r <= 120 and r % 2 == 1 for r, d in enumerate(docs, 1)}
    control = draw_sample(engine, "E", 30, frame="all", seed=4)
    _code(engine, "E", list(control.doc_ids), truth, "senior", "sample")
    _code(engine, "E", docs[:150], truth, "ann")
    record_judgments(engine, "E", [(d, "0" if i % 5 == 0 else ("1" if truth[d] else "0"))
                                   for i, d in enumerate(docs[:30])], reviewer="bob")
    qc = draw_sample(engine, "E", 20, frame="judged", seed=5)
    _code(engine, "E", list(qc.doc_ids), truth, "cy", "qc")
    voided = draw_sample(engine, "E", 10, frame="unreviewed", seed=6)
    void_sample(engine, "E", voided.id, reason="drawn from the wrong queue", reviewer="lead")
    rest = draw_sample(engine, "E", 60, frame="unreviewed", seed=7)
    _code(engine, "E", list(rest.doc_ids), truth, "senior", "sample")
    set_protocol(engine, "E", {
        "workflow": "TAR 2.0", "platform": "in-house", "model": "logistic regression", "version": "2.1",
        "custodians": ["ana", "ben"], "date_from": "2020-01-01", "date_to": "2021-06-30",
        "excluded_types": ["audio"], "processing_exceptions": "12 encrypted files", "duplicates_removed": 40,
        "threaded": 25, "acceptance": "elusion<=5%@95%", "reviewers": ["ann:first pass", "cy:qc"], "blind": True,
        "produced": 120, "withheld": 3}, recorded_by="lead")
    return build_validation(engine, "E", ReportOptions(targets=["0.8"]))


def audit_decides(engine: Engine, tmp_path: Path) -> ValidationDocument:
    """A sample of the rest that fails its test and is read again after more review (the flags), a voided audit
    stream and the one that decides, judgments recorded from a file (an input digest), and an acceptance
    criterion at another confidence (not evaluated)."""
    docs = _queue(engine, tmp_path, "A", 240)
    truth = {d: r <= 60 and r % 2 == 1 for r, d in enumerate(docs, 1)}
    sheet = tmp_path / "first.csv"
    sheet.write_text("doc,label\n" + "".join(f"{d},{'1' if truth[d] else '0'}\n" for d in docs[:40]))
    record_judgment_file(engine, "A", str(sheet), reviewer="ann")
    rest = draw_sample(engine, "A", 40, frame="unreviewed", seed=3)
    _code(engine, "A", list(rest.doc_ids), truth, "senior", "sample")
    _code(engine, "A", [d for d in docs[40:90] if d not in set(rest.doc_ids)], truth, "ann")
    create_stream(engine, "A", every=1, seed=2, reviewer="lead")
    void_stream(engine, "A", reason="paced wrongly", reviewer="lead")
    create_stream(engine, "A", every=1, seed=9, reviewer="lead")
    for _ in range(4):
        batch = next_documents(engine, "A", count=20)
        for role, reviewer in (("review", "ann"), ("audit", "audit-1")):
            _code(engine, "A", [d.doc_id for d in batch.documents if d.role == role], truth, reviewer, role)
    set_protocol(engine, "A", {"acceptance": "recall>=0.8@99%"}, recorded_by="lead")
    # produced to rank 160: no sample covers the uncoded documents above the cutoff (a gap of the two phases)
    return build_validation(engine, "A", ReportOptions(targets=["0.8"]), produce_to=160)


def two_phase_not_reached(engine: Engine, tmp_path: Path) -> ValidationDocument:
    """Phase one coded partly out of rank order, a control sample drawn after it, samples of the produced set
    (one document left uncoded) and of the discard pile at rank cutoff 60; the target not reached: the plan."""
    docs = _queue(engine, tmp_path, "P", 200)
    truth = {d: r % 3 == 1 and r <= 90 for r, d in enumerate(docs, 1)}
    _code(engine, "P", docs[:20] + docs[70:160:10], truth, "ann")
    control = draw_sample(engine, "P", 40, frame="all", seed=25)
    produced = draw_sample(engine, "P", 20, frame="ranks:1-60", seed=11)
    discard = draw_sample(engine, "P", 40, frame="below-rank:60", seed=12)
    _code(engine, "P", list(control.doc_ids) + list(produced.doc_ids)[1:] + list(discard.doc_ids), truth,
          "carol", "sample")
    return build_validation(engine, "P", ReportOptions(targets=["0.95"]), produce_to=60)


def point_met_not_certified(engine: Engine, tmp_path: Path) -> ValidationDocument:
    """Every relevant document found by rank 40, a sample of the rest finding none: the point estimate meets the
    target and the bound does not (what certifying costs); produced to rank 44, above the sample's first document
    (no sample of the uncoded produced documents: a gap of the two phases)."""
    docs = _queue(engine, tmp_path, "M", 150)
    truth = {d: r <= 30 and r % 2 == 1 for r, d in enumerate(docs, 1)}
    _code(engine, "M", docs[:40], truth, "ann")
    rest = draw_sample(engine, "M", 20, frame="unreviewed", seed=8)
    _code(engine, "M", list(rest.doc_ids), truth, "senior", "sample")
    assert min(rest.ranks) > 44
    return build_validation(engine, "M", ReportOptions(targets=["0.95"]), produce_to=44)


def nothing_sampled(engine: Engine, tmp_path: Path) -> ValidationDocument:
    """Review begun, no sample drawn: no evidence bounds recall, and the two phases at rank 20 name both gaps."""
    docs = _queue(engine, tmp_path, "N", 40)
    _code(engine, "N", docs[:10], {d: r % 3 == 1 for r, d in enumerate(docs, 1)}, "ann")
    return build_validation(engine, "N", ReportOptions(targets=["0.9"]), produce_to=20)


SCENARIOS = (elusion_certified, audit_decides, two_phase_not_reached, point_met_not_certified, nothing_sampled)


@pytest.fixture(scope="module")
def documents(sqlite_template: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, ValidationDocument]:
    """The scenarios' documents, built once in one SQLite database (the page does not depend on the backend)."""
    from reviewdepth.store.engine import create_engine_for

    where = tmp_path_factory.mktemp("fields")
    shutil.copyfile(sqlite_template, where / "store.db")
    engine = create_engine_for(f"sqlite:///{where / 'store.db'}")
    try:
        return {build.__name__: build(engine, where) for build in SCENARIOS}
    finally:
        engine.dispose()


@pytest.fixture(scope="module")
def found(documents: dict[str, ValidationDocument]) -> Census:
    return census(documents)


def test_every_field_of_the_document_is_printed_or_listed(found: Census) -> None:
    unprinted = sorted(path for path in found.not_printed if covered(path) is None)
    unreached = sorted(path for path in found.unreached if covered(path) is None)
    problems = []
    if unprinted:
        problems.append("fields of the validation document that the page does not print (print them in "
                        "reviewdepth/report/validation_render.py, or list them in NOT_PRINTED with the reason): "
                        + ", ".join(unprinted))
    if unreached:
        problems.append("fields no scenario of this test fills, so nothing shows they are printed (fill them in a "
                        "scenario here, or list them in NOT_PRINTED with the reason): " + ", ".join(unreached))
    assert not problems, "\n".join(problems)


def test_not_printed_names_real_fields_that_are_not_printed(found: Census) -> None:
    known = field_paths(ValidationDocument)
    stale = sorted(key for key in NOT_PRINTED if key not in known)
    printed = sorted(f"{covered(path)} (covers {path})" for path in found.printed if covered(path) is not None)
    problems = []
    if stale:
        problems.append(f"NOT_PRINTED names no field of ValidationDocument: {', '.join(stale)}")
    if printed:
        problems.append(f"NOT_PRINTED lists fields the page does print (drop or narrow the entry): "
                        f"{', '.join(printed)}")
    problems += [f"NOT_PRINTED[{key!r}] gives no reason" for key, reason in NOT_PRINTED.items() if not reason.strip()]
    assert not problems, "\n".join(problems)


def test_the_page_prints_every_text(documents: dict[str, ValidationDocument]) -> None:
    """`page` is no wider than the HTML page: every text it compares is on the page, escaped as the template
    escapes it (the PDF draws the same sections)."""
    from markupsafe import escape

    for name, doc in documents.items():
        html = render_html(doc)
        missing = [text for text in page(doc) if str(escape(text)) not in html]
        assert not missing, (name, missing[:5])


@dataclass(frozen=True)
class CutoffWithANote(Cutoff):
    """The cutoff with a field the renderer does not know: what a developer adds and forgets to print."""

    note_for_the_court: str = "the cutoff was agreed with the other side"


def test_a_field_added_and_not_printed_is_named(documents: dict[str, ValidationDocument]) -> None:
    doc = documents["nothing_sampled"]
    added = dataclasses.replace(doc, cutoff=CutoffWithANote(**{
        f.name: getattr(doc.cutoff, f.name) for f in dataclasses.fields(Cutoff)}))
    result = census({"added": added})
    assert "cutoff.note_for_the_court" in result.not_printed
    assert "cutoff.reviewed" in result.printed  # its printed siblings are seen printed
    assert "richness.point" in result.unreached  # a section this document leaves out is never filled
