"""The PRISMA 2020 flow diagram (issue 28, item 1) drawn from `PrismaCounts` alone: every number in the SVG is the
JSON field its element names, the SVG is well-formed and byte-deterministic, texts are escaped, the PNG is
byte-deterministic, and the HTML page holds the same SVG (checked with the standard library's HTML parser)."""

from __future__ import annotations

import io
import re
import xml.etree.ElementTree as ET
from dataclasses import replace
from html.parser import HTMLParser
from typing import Any

import pytest

from reviewdepth.report.prisma_diagram import layout, render_html, render_png, render_svg
from reviewdepth.report.prisma_model import ExclusionReason, PrismaCounts, prisma_flow

SVG = "{http://www.w3.org/2000/svg}"


def counts(**changes: Any) -> PrismaCounts:
    base = PrismaCounts(
        identified=3465, identified_source="topic population", screened=1200, included=71,
        excluded_by_reviewers=1129, not_screened_review_stopped=2265, judged_outside_queue=0,
        included_outside_queue=0, stopped_at_rank=1200, reviewed=1200, relevant_in_reviewed=71,
        reviewers_per_record={1: 900, 2: 300}, conflicts=12, conflicts_resolved=9, independent=True,
        label_policy="adjudicated")
    return replace(base, **changes)


def shown_counts(svg: str) -> dict[str, list[int]]:
    """The numbers of the diagram by the JSON field their element names; fails on a digit anywhere else in the
    boxes (the title, which holds the topic's name, and the footer's citation are not boxes)."""
    root = ET.fromstring(svg)
    found: dict[str, list[int]] = {}
    for group in root.iter(f"{SVG}g"):
        if group.get("class") != "box":
            continue
        for text in group.iter(f"{SVG}text"):
            rest = text.text or ""
            for span in text.iter(f"{SVG}tspan"):
                value = span.text or ""
                assert re.fullmatch(r"[0-9]{1,3}(,[0-9]{3})*", value), value
                kind = span.get("class")
                assert kind in ("count", "key")
                key = (span.get("data-field") or "") + ("#key" if kind == "key" else "")
                found.setdefault(key, []).append(int(value.replace(",", "")))
                rest += span.tail or ""
            assert not re.search(r"[0-9]", rest), f"a number outside a count element: {rest!r}"
    return found


@pytest.mark.parametrize("changes", [
    {},
    {"stopped_at_rank": None},  # screened out of queue order: stops at no rank
    {"judged_outside_queue": 7, "included_outside_queue": 2},
    {"identified": 40, "identified_source": "queue size", "screened": 40, "included": 7, "excluded_by_reviewers": 33,
     "not_screened_review_stopped": 0, "stopped_at_rank": 40},
    {"identified": 0, "screened": 0, "included": 0, "excluded_by_reviewers": 0, "not_screened_review_stopped": 0,
     "stopped_at_rank": 0, "reviewers_per_record": {}},
    {"reviewers_per_record": {1: 1200}, "conflicts": 0, "conflicts_resolved": 0, "independent": None},
    {"duplicates_removed": 0},  # checked for duplicates, none found
    {"identified": 7000, "duplicates_removed": 545, "after_duplicates_removed": 6455},
])
def test_every_number_in_the_svg_is_the_json_field_it_names(changes: dict[str, Any]) -> None:
    c = counts(**changes)
    svg = render_svg(prisma_flow("CD009579", c))
    data = c.as_dict()
    shown = shown_counts(svg)
    for field, values in shown.items():
        if field.endswith("#key"):  # the number of reviewers a count is for: a key of the mapping
            assert {str(v) for v in values} == set(data[field.removesuffix("#key")]), field
            continue
        name, _, key = field.partition(".")
        want = data[name][key] if key else data[name]
        assert values and all(v == want for v in values), (field, values, want)
    expected = {"identified", "screened", "excluded_by_reviewers", "not_screened_review_stopped", "included",
                *(f"reviewers_per_record.{k}" for k in data["reviewers_per_record"])}
    if data["reviewers_per_record"]:
        expected.add("reviewers_per_record#key")
    if max(c.reviewers_per_record, default=0) >= 2:
        expected |= {"conflicts", "conflicts_resolved"}
    if c.stopped_at_rank is not None:
        expected.add("stopped_at_rank")
    if c.judged_outside_queue:
        expected |= {"judged_outside_queue", "included_outside_queue"}
    if c.duplicates_removed is not None:
        expected.add("duplicates_removed")
    if c.duplicates_removed:
        expected.add("after_duplicates_removed")
    assert set(shown) == expected
    # human and automation exclusions apart, in one box; the unrecorded counts say so rather than show a number
    root = ET.fromstring(svg)
    boxes = {g.get("data-box"): " ".join("".join(t.itertext()) for t in g.iter(f"{SVG}text"))
             for g in root.iter(f"{SVG}g") if g.get("class") == "box"}
    excluded = boxes["excluded"]
    assert f"by a person: {c.excluded_by_reviewers:,}" in excluded
    assert f"by automation: {c.not_screened_review_stopped:,}" in excluded
    if c.duplicates_removed is None:
        assert "Duplicate records removed: not recorded" in boxes["removed_before"]
    else:
        assert f"Duplicate records removed: {c.duplicates_removed:,}" in boxes["removed_before"]
        assert "flagged by reviewdepth dedupe" in boxes["removed_before"]
        screened = f"Records screened n = {c.after_duplicates_removed if c.duplicates_removed else c.identified:,}"
        assert screened in boxes["screened"]
    assert "Reports sought for retrieval: not recorded" in boxes["reports"]
    assert "Reports excluded, with reasons: not recorded" in boxes["reports_excluded"]
    assert ("outside" in boxes) == bool(c.judged_outside_queue)
    # the three stages of the template, top to bottom
    stages = [g.get("data-stage") for g in root.iter(f"{SVG}g") if g.get("class") == "stage"]
    assert stages == ["identification", "screening", "included"]


def test_the_svg_is_deterministic_and_escapes_its_texts() -> None:
    topic = 'a <b> & "c" $x$'
    c = counts(label_policy="latest")
    svg = render_svg(prisma_flow(topic, c))
    assert svg == render_svg(prisma_flow(topic, counts(label_policy="latest")))
    root = ET.fromstring(svg)  # well-formed
    assert root.tag == f"{SVG}svg" and svg.startswith("<svg ")
    (title,) = [t for t in root.iter(f"{SVG}text") if t.get("id") == "title"]
    assert title.text == f"PRISMA 2020 flow diagram: topic {topic}"
    assert "<b>" not in svg and "&lt;b&gt; &amp; " in svg
    assert not re.search(r"\d\.\d{3,}", svg)  # integer coordinates: nothing that could differ in the last digit
    # every box inside the canvas, and no two boxes overlap
    drawn = layout(prisma_flow(topic, c))
    for box in drawn.boxes:
        assert 0 <= box.x and box.x + box.w <= drawn.width and 0 <= box.y and box.y + box.h <= drawn.height
    for i, a in enumerate(drawn.boxes):
        for b in drawn.boxes[i + 1:]:
            assert a.x + a.w <= b.x or b.x + b.w <= a.x or a.y + a.h <= b.y or b.y + b.h <= a.y, (a.code, b.code)


def staged_counts(**changes: Any) -> PrismaCounts:
    """`counts` with screening stages recorded: of the 1,129 excluded by a person, 60 at full text; 3 undecided."""
    c = counts(screened=1203, screened_undecided=3, stages_recorded=True, full_text_assessed=130,
               excluded_full_text=60, excluded_before_full_text=1069, reports_sought=134, reports_assessed=134,
               excluded_without_reason=1069, excluded_full_text_without_reason=60)
    return replace(c, **changes)


def box_words(svg: str) -> dict[str | None, str]:
    root = ET.fromstring(svg)
    return {g.get("data-box"): " ".join("".join(t.itertext()) for t in g.iter(f"{SVG}text"))
            for g in root.iter(f"{SVG}g") if g.get("class") == "box"}


def test_exclusion_reasons_fill_the_box_of_their_stage() -> None:
    """Given reasons, each box lists those of its own stage: full text under reports excluded, title and abstract
    under records excluded (issue 39: a title-abstract reason was listed under reports excluded)."""
    reasons = (ExclusionReason("full-text", "wrong population", 5), ExclusionReason("full-text", "no comparator", 3),
               ExclusionReason("title-abstract", "wrong design", 9))
    boxes = box_words(render_svg(prisma_flow("T", staged_counts(), exclusion_reasons=reasons)))
    reports_excluded = boxes["reports_excluded"].replace("  ", " ")
    assert "full-text: wrong population: 5" in reports_excluded and "full-text: no comparator: 3" in reports_excluded
    assert "wrong design" not in reports_excluded and "not recorded" not in reports_excluded
    assert "title-abstract: wrong design: 9" in boxes["excluded"] and "full-text" not in boxes["excluded"]


def test_the_png_is_deterministic_and_the_diagram_drawn() -> None:
    pytest.importorskip("matplotlib")
    flow = prisma_flow("T", counts())
    first, second = render_png(flow), render_png(prisma_flow("T", counts()))
    assert first == second and first.startswith(b"\x89PNG\r\n\x1a\n")
    from matplotlib.image import imread

    image = imread(io.BytesIO(first))
    drawn = layout(flow)
    assert image.shape[:2] == (drawn.height, drawn.width)  # one pixel per layout unit
    assert (image[..., :3] < 0.5).any()  # something dark (text, frames) is drawn
    assert b"tEXtSoftware" not in first and b"tIME" not in first


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.scripts = 0
        self.cells: list[str] = []
        self._in_cell = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.scripts += tag == "script" or any(name.startswith("on") for name, _ in attrs)
        self._in_cell = tag == "td"

    def handle_endtag(self, tag: str) -> None:
        self._in_cell = False

    def handle_data(self, data: str) -> None:
        if self._in_cell:
            self.cells.append(data)


def test_the_html_page_holds_the_same_svg_and_the_counts() -> None:
    topic = "<script>alert(1)</script>"
    c = counts()
    flow = prisma_flow(topic, c)
    page = render_html(flow)
    assert page == render_html(prisma_flow(topic, counts()))
    assert render_svg(flow) in page  # the SVG inline, as is
    parser = _Page()
    parser.feed(page)
    parser.close()
    assert parser.tags.count("svg") == 1 and parser.scripts == 0  # the topic's name is text, escaped
    assert "&lt;script&gt;" in page and "http://" not in page.replace("http://www.w3.org/2000/svg", "")
    pairs = dict(zip(parser.cells[::2], parser.cells[1::2], strict=True))
    assert pairs["identified"] == str(c.identified) and pairs["not_screened_review_stopped"] == str(
        c.not_screened_review_stopped)


def test_stages_reasons_and_maybes_fill_their_boxes() -> None:
    """Issue 28, item 2: with screening stages, exclusion reasons and maybes recorded, the boxes that said "not
    recorded" show them, each number the JSON field it names."""
    c = staged_counts(excluded_per_reason={"full-text: wrong population": 41, "title-abstract: wrong design": 17},
                      excluded_without_reason=1052, excluded_full_text_without_reason=19)
    svg = render_svg(prisma_flow("CD009579", c))
    data = c.as_dict()
    shown = shown_counts(svg)
    for field, values in shown.items():
        if field.endswith("#key"):
            continue
        name, _, key = field.partition(".")
        want = data[name][key] if key else data[name]
        assert values and all(v == want for v in values), (field, values, want)
    assert {"screened_undecided", "full_text_assessed", "excluded_full_text", "reports_sought", "reports_assessed",
            "excluded_before_full_text", "excluded_without_reason", "excluded_full_text_without_reason",
            "excluded_per_reason.full-text: wrong population",
            "excluded_per_reason.title-abstract: wrong design"} <= set(shown)
    boxes = box_words(svg)
    assert "not recorded" not in boxes["reports"] + boxes["reports_excluded"]
    assert "screened, undecided (maybe): 3" in boxes["screened"]
    assert "still undecided (maybe): 3" in boxes["reports"]
    assert "full-text: wrong population: 41" in boxes["reports_excluded"]
    assert "title-abstract: wrong design: 17" in boxes["excluded"]
