"""The PRISMA 2020 flow adds up (issue 39, item 6), over many generated screening histories recorded in the store:
screening stages, exclusion reasons, maybes, skips, several reviewers and adjudications, duplicates flagged (and a
flag withdrawn), records judged outside the identified set, and includes with and without a full-text judgment.

For every history and label policy, every box of the flow equals the sum of what flows out of it, each exclusion
reason sits in the box of its own stage, and each box's reasons (with those excluded without one) add up to its
exclusions; checked on the model (`prisma_flow`) and on the numbers the rendered SVG prints, which are read by
their words, not by the fields the code names. Under the ``latest`` policy the partition is also recounted from
the history itself. Before the fix, an include recorded only at title-abstract left "reports sought" short of
what flowed out of screening, and a title-abstract reason was listed under "Reports excluded"."""

from __future__ import annotations

import itertools
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import Engine, select

from reviewdepth.report.prisma_diagram import render_svg
from reviewdepth.report.prisma_model import (
    NOT_RETRIEVED_REASON,
    PrismaCounts,
    PrismaFlow,
    arithmetic_problems,
    prisma_flow,
)
from reviewdepth.services.admin.topics import create_topic
from reviewdepth.services.answers.prisma import topic_prisma
from reviewdepth.services.files.rankings import RankedDocument, store_ranking
from reviewdepth.services.review.batches import BatchItem, record_batch
from reviewdepth.services.review.screening import screening_settings
from reviewdepth.store.chain import NewJudgment, append_judgments
from reviewdepth.store.ingest import utc_now
from reviewdepth.store.labels import POLICIES
from reviewdepth.store.models import Topic

SVG = "{http://www.w3.org/2000/svg}"
REASONS = ("wrong population", "wrong design", NOT_RETRIEVED_REASON)
QUEUED = 8  # documents q0..q7 in the topic's one queue (the identified set); x0, x1 lie outside it


@dataclass(frozen=True)
class Event:
    doc: str
    action: str  # include, exclude, maybe, skip, or the dedupe markers duplicate / distinct
    reviewer: str = "ana"
    role: str = "review"
    reason: str | None = None
    stage: str | None = None


def _events() -> st.SearchStrategy[Event]:
    docs = st.sampled_from([f"q{i}" for i in range(QUEUED)] + ["x0", "x1"])
    stage = st.sampled_from([None, "title-abstract", "full-text"])
    reviewer = st.sampled_from(["ana", "ben", "cy"])
    role = st.sampled_from(["review", "review", "adjudication", "sample"])
    decision = st.builds(Event, docs, st.sampled_from(["include", "maybe", "skip"]), reviewer, role, st.none(), stage)
    exclude = st.builds(Event, docs, st.just("exclude"), reviewer, role, st.sampled_from([None, *REASONS]), stage)
    marker = st.builds(Event, st.sampled_from([f"q{i}" for i in range(QUEUED)] + ["x0"]),
                       st.sampled_from(["duplicate", "distinct"]))
    return st.one_of(decision, exclude, exclude, marker)


_topics = itertools.count()


def _record(engine: Engine, history: list[Event]) -> str:
    """A new topic whose queue holds q0..q7, with ``history`` recorded in order; its name."""
    topic = f"P{next(_topics)}"
    create_topic(engine, topic)
    store_ranking(engine, topic, "ranked", [RankedDocument(f"q{i}") for i in range(QUEUED)])
    screening_settings(engine, topic, add=list(REASONS))
    flagged: set[str] = set()
    for event in history:
        if event.action in ("duplicate", "distinct"):
            # what `dedupe --apply` and `dedupe --not-duplicate` write; a withdrawal only of a standing flag
            if (event.action == "distinct") != (event.doc in flagged):
                continue
            (flagged.add if event.action == "duplicate" else flagged.discard)(event.doc)
            with engine.begin() as conn:
                topic_id = conn.execute(select(Topic.id).where(Topic.name == topic)).scalar_one()
                append_judgments(conn, [NewJudgment(topic_id, event.doc, event.action, None, None, "dedupe",
                                                    "adjudication", "test", None, utc_now(),
                                                    decision=event.action)])
            continue
        record_batch(engine, topic, [BatchItem(event.doc, event.action, role=event.role, reason=event.reason,
                                               stage=event.stage)],
                     reviewer=event.reviewer, source="test", allow_unqueued=True)
    return topic


# --- the identities, on one box -> {what: number} view of the diagram -------------------------------------------

Boxes = dict[str, dict[str, int]]


def model_boxes(flow: PrismaFlow) -> Boxes:
    """Each box's numbers by what they count (`FlowCount.code`; a reason is ``<stage>: <reason>``)."""
    return {box.code: {count.code: count.value for count in box.counts if count.value is not None}
            for box in flow.boxes}


WORDS = {  # what a line of the rendered diagram says -> what it counts (the digits follow the words)
    "identified": [("records", r"n = ")],
    "removed_before": [("duplicates", r"Duplicate records removed: ")],
    "screened": [("records", r"n = "), ("by_person", r"screened by a person: "),
                 ("undecided", r"screened, undecided \(maybe\): ")],
    "excluded": [("by_person", r"by a person[^:]*: "), ("by_automation", r"by automation: "),
                 ("no_reason", r"no reason recorded: ")],
    "reports": [("sought", r"Reports sought for retrieval: "), ("not_retrieved", r"Reports not retrieved: "),
                ("assessed", r"Reports assessed for eligibility: "),
                ("full_text", r"with a full-text judgment: "), ("undecided", r"still undecided \(maybe\): ")],
    "reports_excluded": [("full_text", r"at full text: "), ("no_reason", r"no reason recorded: ")],
    "included": [("studies", r"n = ")],
}
REASON_LINE = re.compile(r"((?:title-abstract|full-text): .+): ([0-9,]+)$")


def svg_boxes(svg: str) -> Boxes:
    """The same view read from the rendered SVG's words alone."""
    out: Boxes = {}
    for group in ET.fromstring(svg).iter(f"{SVG}g"):
        if group.get("class") != "box":
            continue
        code = str(group.get("data-box"))
        numbers = out.setdefault(code, {})
        for text in group.iter(f"{SVG}text"):
            line = "".join(text.itertext()).strip()
            for what, words in WORDS.get(code, []):
                if found := re.fullmatch(words + r"([0-9,]+)", line):
                    numbers[what] = int(found[1].replace(",", ""))
            if found := REASON_LINE.fullmatch(line):
                numbers[found[1]] = int(found[2].replace(",", ""))
    return out


def reasons_in(box: dict[str, int]) -> dict[str, int]:
    return {what: n for what, n in box.items() if ": " in what}


def check_flow(boxes: Boxes, counts: PrismaCounts) -> None:
    """Every box is the sum of what flows out of it; reasons in the box of their stage, adding up."""
    assert all(n >= 0 for box in boxes.values() for n in box.values()), boxes
    identified, screened = boxes["identified"]["records"], boxes["screened"]
    excluded, reports, reports_excluded = boxes["excluded"], boxes["reports"], boxes["reports_excluded"]
    included = boxes["included"]["studies"]
    undecided = screened.get("undecided", 0)
    # identification: identified = removed before screening + entering screening
    assert identified == boxes["removed_before"].get("duplicates", 0) + screened["records"], boxes
    # screening: those entering = screened by a person + left by the stop decision (excluded by automation)
    assert screened["records"] == screened["by_person"] + excluded["by_automation"], boxes
    if "sought" in reports:  # stages recorded: screened -> excluded before full text + reports sought
        assert screened["records"] == excluded["by_person"] + excluded["by_automation"] + reports["sought"], boxes
        # sought = not retrieved (a full-text exclude with the reserved reason) + assessed
        assert reports["sought"] == reports["not_retrieved"] + reports["assessed"], boxes
        assert reports["assessed"] == reports_excluded["full_text"] + included + undecided, boxes
        assert reports.get("undecided", 0) == undecided, boxes
        assert reports.get("full_text", 0) <= reports["assessed"], boxes
        full_text_reasons = reasons_in(reports_excluded)
        assert all(key.startswith("full-text: ") for key in full_text_reasons), boxes
        if full_text_reasons:
            assert sum(full_text_reasons.values()) + reports_excluded["no_reason"] == reports_excluded["full_text"]
    else:  # no stage recorded: no report box to pass through; every exclusion by a person is a record excluded
        assert screened["by_person"] == excluded["by_person"] + included + undecided, boxes
        assert not reasons_in(reports_excluded), boxes
    before_reasons = reasons_in(excluded)
    assert not any(key.startswith("full-text: ") for key in before_reasons), boxes
    if before_reasons:
        assert sum(before_reasons.values()) + excluded["no_reason"] == excluded["by_person"], boxes
    # every reason of the counts is listed, once, in one box
    listed = {**before_reasons, **reasons_in(reports_excluded)}
    assert listed == counts.excluded_per_reason, (listed, counts.excluded_per_reason)


def recount_latest(history: list[Event]) -> dict[str, object]:
    """Under ``latest``, the partition of the identified set from the history alone: a document's latest include
    or exclude decides it; its latest duplicate/distinct marker removes it or not; a maybe with no decision leaves
    it undecided; a skip is no screening."""
    final: dict[str, Event] = {}
    maybe: set[str] = set()
    marker: dict[str, str] = {}
    for e in history:
        if e.action in ("duplicate", "distinct"):
            if (e.action == "distinct") == (marker.get(e.doc) == "duplicate"):
                marker[e.doc] = e.action
        elif e.action in ("include", "exclude"):
            final[e.doc] = e
        elif e.action == "maybe":
            maybe.add(e.doc)
    queued = {f"q{i}" for i in range(QUEUED)}
    removed = {d for d, m in marker.items() if m == "duplicate"}
    kept = queued - removed
    excluded = [e for d, e in final.items() if d in kept and e.action == "exclude"]
    not_retrieved = [e for e in excluded if e.stage == "full-text" and e.reason == NOT_RETRIEVED_REASON]
    full_text = [e for e in excluded if e.stage == "full-text" and e not in not_retrieved]
    per_reason: dict[str, int] = {}
    for e in excluded:
        if e.reason is not None and e not in not_retrieved:
            key = f"{e.stage or 'title-abstract'}: {e.reason}"
            per_reason[key] = per_reason.get(key, 0) + 1
    return {"duplicates": len(removed & queued),
            "included": sum(e.action == "include" for d, e in final.items() if d in kept),
            "excluded": len(excluded), "excluded_full_text": len(full_text),
            "undecided": len((maybe & kept) - set(final)), "per_reason": dict(sorted(per_reason.items())),
            "not_retrieved": len(not_retrieved)}


@pytest.mark.sqlite_only
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(history=st.lists(_events(), max_size=30), policy=st.sampled_from(POLICIES))
def test_every_box_is_the_sum_of_what_flows_out_of_it(engine: Engine, history: list[Event], policy: str) -> None:
    topic = _record(engine, history)
    counts = topic_prisma(engine, topic, policy=policy)
    flow = prisma_flow(topic, counts)
    check_flow(model_boxes(flow), counts)
    check_flow(svg_boxes(render_svg(flow)), counts)
    assert arithmetic_problems(counts) == (), (history, counts)
    if policy == "latest":
        want = recount_latest(history)
        assert (counts.duplicates_removed or 0, counts.included, counts.excluded_by_reviewers,
                counts.excluded_full_text or 0, counts.screened_undecided, counts.excluded_per_reason,
                counts.reports_not_retrieved or 0) == (
            want["duplicates"], want["included"], want["excluded"], want["excluded_full_text"], want["undecided"],
            want["per_reason"], want["not_retrieved"]), (history, counts)


@pytest.mark.sqlite_only
def test_an_include_with_no_full_text_judgment_is_a_report_assessed(engine: Engine) -> None:
    """The issue's example, small: 2 excluded on title and abstract (one with a reason), 2 included after a
    full-text judgment, 1 included on title and abstract alone, 5 left by the stop: the reports sought are the 3
    not excluded, and the title-abstract reason is a record excluded, not a report excluded."""
    history = [Event("q0", "exclude", reason="wrong design"), Event("q1", "exclude"),
               Event("q2", "include"), Event("q2", "include", stage="full-text"),
               Event("q3", "include"), Event("q3", "include", stage="full-text"), Event("q4", "include")]
    topic = _record(engine, history)
    counts = topic_prisma(engine, topic, policy="latest")
    boxes = svg_boxes(render_svg(prisma_flow(topic, counts)))
    assert boxes["screened"]["records"] == 8 and boxes["excluded"]["by_automation"] == 3
    assert (boxes["excluded"]["by_person"], boxes["reports"]["sought"], boxes["reports"]["full_text"]) == (2, 3, 2)
    assert boxes["excluded"]["title-abstract: wrong design"] == 1
    assert boxes["reports_excluded"] == {"full_text": 0}
    assert boxes["reports"]["not_retrieved"] == 0
    assert boxes["included"]["studies"] == 3


def test_the_diagram_and_the_store_name_the_full_text_stage_alike() -> None:
    """The diagram routes a reason by its stage's name (`report` cannot import `store`): the two names agree."""
    from reviewdepth.report.prisma_model import FULL_TEXT_STAGE as IN_DIAGRAM
    from reviewdepth.store.models import FULL_TEXT_STAGE, STAGES

    assert IN_DIAGRAM == FULL_TEXT_STAGE and FULL_TEXT_STAGE in STAGES


@pytest.mark.sqlite_only
def test_a_report_not_retrieved_is_counted_apart_from_the_reports_assessed(engine: Engine) -> None:
    """A full-text exclude with the reserved reason "not retrieved" is a report sought and not retrieved: not a
    report assessed, not a report excluded, and not listed among the reasons."""
    history = [Event("q0", "exclude"),
               Event("q1", "exclude", reason=NOT_RETRIEVED_REASON, stage="full-text"),
               Event("q2", "exclude", reason="wrong design", stage="full-text"),
               Event("q3", "include", stage="full-text")]
    topic = _record(engine, history)
    counts = topic_prisma(engine, topic, policy="latest")
    data = counts.as_dict()
    assert (data["reports_sought"], data["reports_not_retrieved"], data["reports_assessed"],
            data["excluded_full_text"]) == (3, 1, 2, 1)
    assert data["excluded_per_reason"] == {"full-text: wrong design": 1}
    assert data["arithmetic_problems"] == []
    svg = render_svg(prisma_flow(topic, counts))
    boxes = svg_boxes(svg)
    assert (boxes["reports"]["sought"], boxes["reports"]["not_retrieved"], boxes["reports"]["assessed"],
            boxes["reports"]["full_text"]) == (3, 1, 2, 2)  # a report not retrieved had no full-text assessment
    assert boxes["reports_excluded"]["full_text"] == 1


@pytest.mark.sqlite_only
def test_the_arithmetic_check_names_each_identity_an_inconsistent_flow_breaks(engine: Engine) -> None:
    from dataclasses import replace

    from reviewdepth.services.answers.prisma import topic_prisma_diagram

    history = [Event("q0", "exclude"), Event("q1", "exclude", reason=NOT_RETRIEVED_REASON, stage="full-text"),
               Event("q3", "include", stage="full-text")]
    topic = _record(engine, history)
    counts = topic_prisma(engine, topic, policy="latest")
    assert arithmetic_problems(counts) == ()
    assert counts.reports_assessed is not None and counts.reports_not_retrieved == 1
    broken = replace(counts, reports_assessed=counts.reports_assessed + 1)
    problems = arithmetic_problems(broken)
    assert [p.split(":")[0] for p in problems] == ["reports sought = not retrieved + assessed",
                                                   "reports assessed = excluded at full text + included + undecided"]
    assert broken.as_dict()["arithmetic_problems"] == list(problems)
    assert arithmetic_problems(replace(counts, identified=counts.identified + 2))[0].startswith(
        "identified - duplicates removed = records to screen")
    # the service draws only a diagram that adds up
    assert topic_prisma_diagram(engine, topic, "svg").content
