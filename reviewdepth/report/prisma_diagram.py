"""The PRISMA 2020 flow diagram of a topic (`reviewdepth prisma --format svg|png|html`), drawn from a `PrismaFlow`.

One layout (`layout`: boxes, lines of text, arrows and stage bands in pixel coordinates, all integers) is drawn
twice: as SVG text written here by hand, and with matplotlib for PNG; so the two show the same words and numbers.
The SVG is byte-deterministic (no date, no generator, fixed number formatting ``1,234``, every text escaped); each
count sits in a ``<tspan class="count" data-field="…">`` naming the `prisma --format json` key it comes from, so a
reader (or a test) can check the diagram against the JSON. The PNG is saved by `charts.save_figure` (Agg, no
metadata but the fixed ones), byte-deterministic on one matplotlib and FreeType. English words live here only."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal
from xml.sax.saxutils import escape, quoteattr

from reviewdepth.report.prisma_model import FLOW_STAGES, FlowBox, FlowCount, PrismaFlow, source_of_key

if TYPE_CHECKING:
    from matplotlib.figure import Figure

DiagramFormat = Literal["svg", "png", "html"]
MEDIA_TYPES: dict[str, str] = {"svg": "image/svg+xml", "png": "image/png", "html": "text/html; charset=utf-8"}

WIDTH = 780
MARGIN = 12
BAND_X, BAND_W = MARGIN, 28  # the stage bands on the left
MAIN_X, MAIN_W = 56, 330
SIDE_X, SIDE_W = 436, WIDTH - 436 - MARGIN
TITLE_Y = 26
TOP = 46  # first row
ROW_GAP = 30
PAD = 8
INDENT = 14
LINE_H = 16
FONT_PX = 12
# characters per line: a conservative width for a 12 px sans-serif (DejaVu Sans, the PNG's, is the widest common one)
WRAP_CHARS = {False: 45, True: 41}
BOX_FILL, BOX_STROKE, BAND_FILL, TEXT, MUTED, ARROW = "#ffffff", "#333333", "#d6e4f0", "#111111", "#555555", "#333333"

STAGE_WORDS = {"identification": "Identification", "screening": "Screening", "included": "Included"}
# PRISMA 2020's identification boxes, by ``--source-type``
SOURCE_NAME_CHARS = 36  # a longer source name is cut (with "…") to stay in its box; the JSON has it whole
TYPE_WORDS = {"database": "databases", "register": "registers", "other": "other methods"}
SOURCE_WORDS = {"topic population": "the topic's stated population", "queue size": "the size of the topic's queue"}


@dataclass(frozen=True)
class Segment:
    text: str
    field: str | None = None  # set on a count: the `prisma --format json` key it is (dotted: a mapping's key)
    # key: the key of the mapping ``field`` names, not a count; name: a source's name (the text of a mapping's key,
    # `PrismaCounts.identified_per_source`), marked so that a digit in it is not read as a number of the diagram
    kind: Literal["count", "key", "name"] = "count"


@dataclass(frozen=True)
class Line:
    segments: tuple[Segment, ...]
    bold: bool = False
    muted: bool = False
    indent: bool = False  # a line under the one above it (a part of its count)


@dataclass(frozen=True)
class Box:
    code: str
    x: int
    y: int
    w: int
    h: int
    lines: tuple[Line, ...]
    dashed: bool = False


@dataclass(frozen=True)
class Arrow:
    points: tuple[tuple[int, int], tuple[int, int]]  # from, to (the head is at ``to``)


@dataclass(frozen=True)
class Band:
    stage: str
    y: int
    h: int


@dataclass(frozen=True)
class Layout:
    width: int
    height: int
    title: str
    boxes: tuple[Box, ...]
    arrows: tuple[Arrow, ...]
    bands: tuple[Band, ...]
    footer: tuple[str, ...]


def number(value: int) -> str:
    """A count as the diagram writes it: digits grouped by commas (``3,465``)."""
    return f"{value:,}"


def _counted(label: str, count: FlowCount, after: str = "") -> Line:
    if count.value is None:
        return Line((Segment(f"{label}not recorded{after}"),))
    return Line((Segment(label), Segment(number(count.value), count.field), Segment(after)))


def _wrapped(text: str, side: bool, *, muted: bool = False, bold: bool = False) -> list[Line]:
    return [Line((Segment(part),), bold=bold, muted=muted) for part in textwrap.wrap(text, WRAP_CHARS[side])]


def _reason_lines(box: FlowBox, side: bool) -> list[Line]:
    """The exclusion reasons a box lists (its counts named ``<stage>: <reason>``) and those excluded without one."""
    reasons = [count for count in box.counts if ": " in count.code]
    if not reasons:
        return []
    return [*_wrapped("by reason (stage: reason):", side),
            *[replace(_counted(f"{count.code}: ", count), indent=True) for count in reasons],
            *[replace(_counted("no reason recorded: ", count), indent=True) for count in box.counts
              if count.code == "no_reason"]]


def box_lines(box: FlowBox, flow: PrismaFlow) -> list[Line]:
    """The words of one box, its counts as segments naming their JSON field."""
    c = {count.code: count for count in box.counts}
    side = box.side
    policy = flow.counts.label_policy
    if box.code == "identified":
        source = SOURCE_WORDS.get(flow.counts.identified_source, flow.counts.identified_source)
        lines = [*_wrapped("Records identified", side, bold=True), _counted("n = ", c["records"])]
        for count in box.counts:
            if count.code in TYPE_WORDS:
                lines.append(_counted(f"from {TYPE_WORDS[count.code]}: ", count))
            elif count.code.startswith("source:"):
                name = source_of_key(count.code.removeprefix("source:"))[1]
                name = name if len(name) <= SOURCE_NAME_CHARS else name[:SOURCE_NAME_CHARS - 1] + "…"
                lines.append(Line((Segment(name, "identified_per_source", "name"), Segment(" (n = "),
                                   Segment(number(count.value or 0), count.field), Segment(")")), indent=True))
            elif count.code == "not_recorded":
                lines.append(_counted("from a source not recorded: ", count))
        return lines + _wrapped(f"(the topic's records: {source}; sources as their imports declared them)", side,
                                muted=True)
    if box.code == "removed_before":
        return [*_wrapped("Records removed before screening", side, bold=True),
                _counted("Duplicate records removed: ", c["duplicates"]),
                *(_wrapped("(flagged by reviewdepth dedupe --apply; their decisions count on the record kept)",
                           side, muted=True) if flow.duplicates_recorded else
                  _wrapped("(the records were not checked for duplicates: import their bibliographic fields and "
                           "run reviewdepth dedupe; duplicates, if any, are screened and counted below)", side,
                           muted=True))]
    if box.code == "outside":
        return [*_wrapped("Records judged outside the identified set", side, bold=True),
                _counted("n = ", c["records"]), _counted("of which included: ", c["included"]),
                *_wrapped("(decisions on records in no queue of the topic; counted in no other box)", side,
                          muted=True)]
    if box.code == "screened":
        lines = [*_wrapped("Records screened", side, bold=True), _counted("n = ", c["records"]),
                 _counted("screened by a person: ", c["by_person"])]
        for count in box.counts:
            if count.code.startswith("reviewers:") and count.value is not None:
                reviewers = count.code.split(":", 1)[1]
                lines.append(Line((Segment("by "), Segment(reviewers, "reviewers_per_record", "key"),
                                   Segment(" reviewer: " if reviewers == "1" else " reviewers: "),
                                   Segment(number(count.value), count.field)), indent=True))
        if "conflicts" in c:
            lines.append(replace(_counted("reviewers disagreed on: ", c["conflicts"]), indent=True))
            lines.append(replace(_counted("resolved by adjudication: ", c["conflicts_resolved"]), indent=True))
        if "undecided" in c:
            lines.append(replace(_counted("screened, undecided (maybe): ", c["undecided"]), indent=True))
        independent = {True: "yes", False: "no", None: "not stated"}[flow.counts.independent]
        lines.append(Line((Segment(f"screened independently (blind): {independent}"),), indent=True))
        which = "every identified record not removed as a duplicate" if flow.counts.duplicates_removed else \
            "every identified record"
        return lines + _wrapped(f"({which}; those no person screened were excluded by the stop decision)", side,
                                muted=True)
    if box.code == "excluded":
        staged = flow.counts.reports_sought is not None
        lines = [*_wrapped("Records excluded", side, bold=True),
                 _counted("by a person, on title and abstract: " if staged else "by a person: ", c["by_person"]),
                 *_reason_lines(box, side),
                 _counted("by automation: ", c["by_automation"])]
        stop = c.get("stopped_at_rank")
        if stop is not None:
            lines.append(_counted("the review stopped at rank ", stop))
        return lines + _wrapped("(by automation: not screened by a person, left by the stop decision of the "
                                "prioritised review)", side, muted=True)
    if box.code == "reports":
        if "full_text" in c or "undecided" in c or c["sought"].value is not None:
            lines = [_counted("Reports sought for retrieval: ", c["sought"]),
                     *((_counted("Reports not retrieved: ", c["not_retrieved"]),) if "not_retrieved" in c else ()),
                     _counted("Reports assessed for eligibility: ", c["assessed"])]
            if "full_text" in c:
                lines.append(replace(_counted("with a full-text judgment: ", c["full_text"]), indent=True))
            if "undecided" in c:
                lines.append(replace(_counted("still undecided (maybe): ", c["undecided"]), indent=True))
            return lines + _wrapped("(records not excluded on title and abstract; reviewdepth records no retrieval "
                                    "step of its own: a report is not retrieved when its full-text exclude gives the "
                                    "reason 'not retrieved'; an include with no full-text judgment is assessed on "
                                    "what was read)", side, muted=True)
        return [_counted("Reports sought for retrieval: ", c["sought"]),
                _counted("Reports assessed for eligibility: ", c["assessed"]),
                *_wrapped("(no judgment names a screening stage: title and abstract and full text are not told "
                          "apart; the included count is each record's final decision)", side, muted=True)]
    if box.code == "reports_excluded":
        if "full_text" in c:
            return [*_wrapped("Reports excluded", side, bold=True), _counted("at full text: ", c["full_text"]),
                    *(_reason_lines(box, side) or (_wrapped("(no exclude at full text carries a reason)", side,
                                                            muted=True) if c["full_text"].value else []))]
        return [_counted("Reports excluded, with reasons: ", c["reasons"]),
                *_wrapped("(no judgment names a screening stage: every exclusion is counted as records excluded)",
                          side, muted=True)]
    if box.code == "included":
        return [*_wrapped("Studies included in review", side, bold=True), _counted("n = ", c["studies"]),
                *_wrapped(f"(records included under the label policy {str(policy)!r})", side, muted=True)]
    raise ValueError(f"no words for the box {box.code!r}")


def layout(flow: PrismaFlow) -> Layout:
    """Boxes in rows: a box of the main column starts a row, a side box sits to its right (a second side box
    starts a row of its own); arrows run down the main column and across to each side box reached from it."""
    rows: list[tuple[FlowBox | None, FlowBox | None]] = []
    for box in flow.boxes:
        if not box.side:
            rows.append((box, None))
        elif rows and rows[-1][1] is None:
            rows[-1] = (rows[-1][0], box)
        else:
            rows.append((None, box))
    boxes: list[Box] = []
    arrows: list[Arrow] = []
    stage_rows: dict[str, list[tuple[int, int]]] = {}
    y = TOP
    previous_main: Box | None = None
    for main, side in rows:
        main_lines = box_lines(main, flow) if main is not None else []
        side_lines = box_lines(side, flow) if side is not None else []
        h = 2 * PAD + LINE_H * max(len(main_lines), len(side_lines))
        drawn_main = None
        if main is not None:
            drawn_main = Box(main.code, MAIN_X, y, MAIN_W, h, tuple(main_lines))
            boxes.append(drawn_main)
            if previous_main is not None:
                x = MAIN_X + MAIN_W // 2
                arrows.append(Arrow(((x, previous_main.y + previous_main.h), (x, y))))
            previous_main = drawn_main
        if side is not None:
            boxes.append(Box(side.code, SIDE_X, y, SIDE_W, h, tuple(side_lines), dashed=side.code == "outside"))
            if drawn_main is not None:
                arrows.append(Arrow(((MAIN_X + MAIN_W, y + h // 2), (SIDE_X, y + h // 2))))
        stage = (main or side).stage  # type: ignore[union-attr]
        stage_rows.setdefault(stage, []).append((y, y + h))
        y += h + ROW_GAP
    bands = tuple(Band(stage, spans[0][0], spans[-1][1] - spans[0][0])
                  for stage in FLOW_STAGES if (spans := stage_rows.get(stage)))
    footer = tuple(textwrap.wrap(
        "Counts as `reviewdepth prisma --format json` prints them. Excluded by automation: records left unscreened "
        "by the stop decision of the prioritised (ranked) screening, counted apart from those a person excluded, "
        "as the PRISMA 2020 template asks when automation tools are used (Page et al., BMJ 2021;372:n71).",
        118))
    footer_top = y - ROW_GAP + 24
    height = footer_top + LINE_H * len(footer) + MARGIN
    topic = flow.topic if len(flow.topic) <= 70 else flow.topic[:69] + "…"
    return Layout(WIDTH, height, f"PRISMA 2020 flow diagram: topic {topic}", tuple(boxes), tuple(arrows), bands,
                  footer)


def _head(arrow: Arrow) -> tuple[tuple[int, int], tuple[int, int], tuple[int, int]]:
    """The arrow head, a triangle with its tip at the arrow's end (arrows are vertical or horizontal)."""
    (x0, _), (x1, y1) = arrow.points
    if x0 == x1:  # down
        return (x1, y1), (x1 - 5, y1 - 9), (x1 + 5, y1 - 9)
    return (x1, y1), (x1 - 9, y1 - 5), (x1 - 9, y1 + 5)


def _footer_y(drawn: Layout, i: int) -> int:
    return drawn.height - MARGIN - LINE_H * (len(drawn.footer) - 1 - i) - 4


def render_svg(flow: PrismaFlow) -> str:
    """The diagram as a standalone SVG document (``<svg`` first, no XML prolog, so it embeds in HTML as is)."""
    drawn = layout(flow)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{drawn.width}" height="{drawn.height}" '
           f'viewBox="0 0 {drawn.width} {drawn.height}" font-family="DejaVu Sans, Arial, Helvetica, sans-serif" '
           f'font-size="{FONT_PX}" role="img" aria-label={quoteattr(drawn.title)}>',
           f"<title>{escape(drawn.title)}</title>",
           f'<rect x="0" y="0" width="{drawn.width}" height="{drawn.height}" fill="#ffffff"/>',
           f'<text id="title" x="{MARGIN}" y="{TITLE_Y}" font-size="15" font-weight="bold" fill="{TEXT}">'
           f"{escape(drawn.title)}</text>"]
    for band in drawn.bands:
        cx, cy = BAND_X + BAND_W // 2, band.y + band.h // 2
        out.append(f'<g class="stage" data-stage="{band.stage}"><rect x="{BAND_X}" y="{band.y}" width="{BAND_W}" '
                   f'height="{band.h}" rx="4" fill="{BAND_FILL}"/><text x="{cx}" y="{cy}" '
                   f'transform="rotate(-90 {cx} {cy})" text-anchor="middle" dominant-baseline="central" '
                   f'font-weight="bold" fill="{TEXT}">{STAGE_WORDS[band.stage]}</text></g>')
    for box in drawn.boxes:
        dash = ' stroke-dasharray="5 3"' if box.dashed else ""
        out.append(f'<g class="box" data-box="{box.code}"><rect x="{box.x}" y="{box.y}" width="{box.w}" '
                   f'height="{box.h}" fill="{BOX_FILL}" stroke="{BOX_STROKE}" stroke-width="1"{dash}/>')
        for i, line in enumerate(box.lines):
            style = (' font-weight="bold"' if line.bold else "") + f' fill="{MUTED if line.muted else TEXT}"'
            parts = "".join(f'<tspan class="{s.kind}" data-field="{s.field}">{escape(s.text)}</tspan>'
                            if s.field else escape(s.text) for s in line.segments)
            out.append(f'<text x="{box.x + PAD + INDENT * line.indent}" y="{box.y + PAD + LINE_H * i + FONT_PX}"'
                       f'{style}>{parts}</text>')
        out.append("</g>")
    for arrow in drawn.arrows:
        (x0, y0), (x1, y1) = arrow.points
        tip, left, right = _head(arrow)
        back = (x1, y1 - 9) if x0 == x1 else (x1 - 9, y1)
        out.append(f'<g class="arrow"><line x1="{x0}" y1="{y0}" x2="{back[0]}" y2="{back[1]}" stroke="{ARROW}" '
                   f'stroke-width="1.5"/><polygon points="{tip[0]},{tip[1]} {left[0]},{left[1]} '
                   f'{right[0]},{right[1]}" fill="{ARROW}"/></g>')
    for i, text in enumerate(drawn.footer):
        out.append(f'<text class="footer" x="{MARGIN}" y="{_footer_y(drawn, i)}" font-size="11" '
                   f'fill="{MUTED}">{escape(text)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def diagram_figure(flow: PrismaFlow) -> Figure:
    """The same layout drawn with matplotlib (no pyplot), one axis unit per pixel at 100 dpi."""
    from matplotlib.figure import Figure
    from matplotlib.patches import Polygon, Rectangle

    drawn = layout(flow)
    fig = Figure(figsize=(drawn.width / 100, drawn.height / 100), dpi=100)
    ax = fig.add_axes((0.0, 0.0, 1.0, 1.0))
    ax.set_xlim(0, drawn.width)
    ax.set_ylim(drawn.height, 0)
    ax.axis("off")
    points = 72 / 100  # a pixel in points at 100 dpi

    def text(x: float, y: float, s: str, px: int = FONT_PX, **kw: Any) -> None:
        ax.text(x, y, s, fontsize=px * points, parse_math=False, **kw)

    text(MARGIN, TITLE_Y, drawn.title, px=15, fontweight="bold", color=TEXT, va="baseline")
    for band in drawn.bands:
        ax.add_patch(Rectangle((BAND_X, band.y), BAND_W, band.h, facecolor=BAND_FILL, edgecolor="none"))
        text(BAND_X + BAND_W / 2, band.y + band.h / 2, STAGE_WORDS[band.stage], rotation=90, ha="center",
             va="center", fontweight="bold", color=TEXT)
    for box in drawn.boxes:
        ax.add_patch(Rectangle((box.x, box.y), box.w, box.h, facecolor=BOX_FILL, edgecolor=BOX_STROKE,
                               linewidth=points, linestyle=(0, (5, 3)) if box.dashed else "solid"))
        for i, line in enumerate(box.lines):
            text(box.x + PAD + INDENT * line.indent, box.y + PAD + LINE_H * i + FONT_PX,
                 "".join(s.text for s in line.segments),
                 va="baseline", color=MUTED if line.muted else TEXT, fontweight="bold" if line.bold else "normal")
    for arrow in drawn.arrows:
        (x0, y0), (x1, y1) = arrow.points
        back = (x1, y1 - 9) if x0 == x1 else (x1 - 9, y1)
        ax.plot([x0, back[0]], [y0, back[1]], color=ARROW, linewidth=1.5 * points)
        ax.add_patch(Polygon(list(_head(arrow)), closed=True, facecolor=ARROW, edgecolor="none"))
    for i, line_text in enumerate(drawn.footer):
        text(MARGIN, _footer_y(drawn, i), line_text, px=11, color=MUTED, va="baseline")
    return fig


def render_png(flow: PrismaFlow) -> bytes:
    from reviewdepth.report.charts import save_figure

    return save_figure(lambda: diagram_figure(flow), "png")


def render_html(flow: PrismaFlow) -> str:
    """A small self-contained page: the SVG inline and the counts it shows, as a table (autoescaped)."""
    from markupsafe import Markup

    from reviewdepth.report.templating import templates

    drawn = layout(flow)
    rows = [(key, "-" if value is None else str(value)) for key, value in flow.counts.as_dict().items()
            if not isinstance(value, dict)]
    page: str = templates().get_template("prisma.html.j2").render(
        title=drawn.title, svg=Markup(render_svg(flow)), rows=rows)
    return page


def render_diagram(flow: PrismaFlow, fmt: DiagramFormat) -> bytes:
    """The diagram's file content in ``fmt``."""
    if fmt == "png":
        return render_png(flow)
    return (render_svg(flow) if fmt == "svg" else render_html(flow)).encode("utf-8")
