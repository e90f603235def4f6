"""Render a `Report` as a Rich table, CSV or a self-contained HTML page (Jinja2, templates/). Formatting only, no
computation."""

from __future__ import annotations

import csv
import io
import textwrap
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from reviewdepth.estimation.percent import percent
from reviewdepth.formats.cells import neutralised
from reviewdepth.report.charts import gain_svg, inline_svg, precision_recall_svg
from reviewdepth.report.model import Report, StoppingRow, section_items
from reviewdepth.report.templating import templates
from reviewdepth.report.validation_render import two_phase_section
from reviewdepth.report.wording import to_certify, with_topic

if TYPE_CHECKING:
    from rich.console import Group

    from reviewdepth.report.model import DepthRow


# identifiers, not quantities: printed without thousands separators
IDENTIFIER_KEYS = frozenset({"as_of_judgment", "sample_seeds", "seed", "id", "sample_id", "judgment_id"})


def fmt(value: Any, key: str = "") -> str:
    if key in IDENTIFIER_KEYS and not isinstance(value, (bool, float)) and value is not None:
        return ", ".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)
    if value is None:
        return "—"
    if isinstance(value, dict):  # a record of identifiers (e.g. the judgment chain's head): printed as is
        return " · ".join(f"{k} {v}" for k, v in value.items())
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.4f}"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, (list, tuple)):
        return ", ".join(fmt(v) for v in value)
    return str(value)


def count(value: Any) -> str:
    """A number of documents for people: an integer as such (137, not 137.0000), another estimate to 1 decimal."""
    if value is None or isinstance(value, bool) or not isinstance(value, (int, float)):
        return fmt(value)
    if isinstance(value, float) and not value.is_integer():
        return f"{value:,.1f}"
    return f"{int(value):,}"


def _csv_count(value: Any) -> Any:
    """A count of documents in the CSV: an integer without ".0", another estimate to 1 decimal (JSON keeps full
    precision)."""
    if isinstance(value, float) and not isinstance(value, bool):
        return str(int(value)) if value.is_integer() else f"{value:.1f}"
    return value


# the |R| estimate's fields that are counts of documents (printed as counts in the table and CSV)
ESTIMATE_COUNTS = ("point", "lower", "upper", "upper_one_sided")


def main_target(report: Report) -> float:
    """The stopping target (the headline's), marked on the charts."""
    return float(Fraction(report.settings.stopping_target))


def _joined(items: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """A list value as one cell (``a; b``), for the settings and provenance rows of the CSV."""
    return [(key, "; ".join(map(str, value)) if isinstance(value, list) else value) for key, value in items]


def _rows(report: Report) -> list[tuple[str, str, str, Any]]:
    """(section, row, column, value) for every number in the report: the CSV and the table share it."""
    out: list[tuple[str, str, str, Any]] = []
    for key, value in section_items(report.answer):
        if isinstance(value, dict):
            for sub, sub_value in value.items():
                out.append(("answer", f"{key}.{sub}", "value", sub_value))
        else:
            out.append(("answer", key, "value", value))
    for key, value in section_items(report.summary):
        out.append(("summary", key, "value", value))
    for row in report.estimates:
        est = row.estimate
        for key, value in (("point", _csv_count(est.point)), ("lower", _csv_count(est.lower)),
                           ("upper", _csv_count(est.upper)), ("upper_one_sided", _csv_count(row.upper_one_sided)),
                           ("recall_point", est.recall_point), ("recall_lower", est.recall_lower),
                           ("recall_upper", est.recall_upper), ("interval", est.interval),
                           ("confidence", est.confidence), ("scope", row.scope)):
            out.append(("relevant_estimate", est.method, key, value))
        out.append(("relevant_estimate", est.method, "assumptions", "; ".join(est.assumptions)))
    for target in report.depth:
        for key, value in section_items(target):
            if key != "target":
                out.append(("depth", str(target.target), key, value))
    for key, value in section_items(report.current):
        out.append(("current", key, "value", value))
    for fig in report.recall:
        for key, value in section_items(fig):
            if key != "basis":
                out.append(("recall", fig.basis, key, value))
    for stop in report.stopping:
        ev = stop.evidence
        for key, value in (("kind", ev.kind), ("stop_now", ev.stop_now), ("stop_label", stop.stop_label),
                           ("stop_depth", ev.stop_depth), ("certifies", ev.certifies), ("guarantee", ev.guarantee),
                           ("reason", ev.reason)):
            out.append(("stopping", ev.rule, key, value))
        for key in CALIBRATION_KEYS if stop.calibration is not None else ():
            assert stop.calibration is not None
            out.append(("stopping", ev.rule, f"calibration_{key}", stop.calibration.get(key)))
    for key, value in report.measures.items():
        out.append(("measures_reviewed_prefix", key, "value", value))
    for key, value in (report.completed_review or {}).items():
        out.append(("completed_review", key, "value", value))
    for sample in report.samples:
        for key, value in section_items(sample):
            if key == "coding":  # one row per group: coding.<role>_<after|before>_draw_<door>[_<importer>]
                for c in sample.coding:
                    door = c.door + (f"_{c.import_kind}" if c.import_kind else "")
                    out.append(("samples", str(sample.id),
                                f"coding.{c.role}_{'after' if c.after_draw else 'before'}_draw_{door}", c.documents))
                if not sample.coding:
                    out.append(("samples", str(sample.id), "coding", None))
            elif key != "id":
                out.append(("samples", str(sample.id), key, value))
    out += _quality_rows(report)
    out += _two_phase_rows(report)
    for key, value in _joined(section_items(report.settings)):
        out.append(("settings", key, "value", value))
    for key, value in _joined(section_items(report.provenance)):
        out.append(("provenance", key, "value", value))
    return out


def _two_phase_rows(report: Report) -> list[tuple[str, str, str, Any]]:
    """The two-phase section key by key (``found_uncoded.point``, ``recall.assumptions``, …), when it was asked
    for: a field added to it gets its row with no renderer edit."""
    out: list[tuple[str, str, str, Any]] = []
    if report.two_phase is None:
        return out
    for key, value in section_items(report.two_phase):
        if isinstance(value, dict):
            for sub, sub_value in _joined(list(value.items())):
                out.append(("two_phase", f"{key}.{sub}", "value", sub_value))
        else:
            out += [("two_phase", key, "value", v) for _, v in _joined([(key, value)])]
    return out


def _quality_rows(report: Report) -> list[tuple[str, str, str, Any]]:
    """Rows of the review-quality and PRISMA sections (shared by the CSV, the table and the HTML page)."""
    out: list[tuple[str, str, str, Any]] = []
    q = report.review_quality
    for key, value in (("documents_with_several_reviewers", q.documents_with_several_reviewers),
                       ("conflicts", q.conflicts), ("conflicts_open", q.conflicts_open),
                       ("conflicts_resolved", q.conflicts_resolved)):
        out.append(("review_quality", key, "value", value))
    agreement = q.agreement
    if agreement:
        share = agreement.agreement
        for key, number in (("point", share.point), ("lower", share.lower), ("upper", share.upper)):
            out.append(("agreement", "percent_agreement", key, number))
        alpha = agreement.krippendorff_alpha
        figures: tuple[tuple[str, float | int], ...] = (("alpha", alpha.alpha), ("lower", alpha.lower),
                                                        ("upper", alpha.upper), ("units_used", alpha.units_used))
        for key, number in figures:
            out.append(("agreement", "krippendorff_alpha", key, number))
        for pair in agreement.pairs:
            name = f"{pair.reviewer_a} / {pair.reviewer_b}"
            kappa = pair.cohen_kappa
            figures = (("documents", kappa.n), ("cohen_kappa", kappa.kappa), ("cohen_lower", kappa.lower),
                       ("cohen_upper", kappa.upper))
            for key, number in figures:
                out.append(("agreement", name, key, number))
            out.append(("agreement", name, "percent_agreement", pair.agreement.point))
    for qc in q.qc_samples:
        name = f"sample {qc.sample_id}"
        out.append(("qc", name, "checked", qc.checked))
        out.append(("qc", name, "missing", qc.missing))
        rates = qc.error_rates
        if rates:
            for rate_name, rate in (("false_negative_rate", rates.false_negative_rate),
                                    ("false_positive_rate", rates.false_positive_rate),
                                    ("error_rate", rates.error_rate)):
                for key, number in (("point", rate.point), ("lower", rate.lower), ("upper", rate.upper)):
                    out.append(("qc", name, f"{rate_name}_{key}", number))
    for row in q.policy_sensitivity:
        for key, value in section_items(row):
            if key != "policy":
                out.append(("policy_sensitivity", row.policy, key, value))
    for key, value in section_items(report.prisma):
        if isinstance(value, dict) and not value:  # an empty mapping still names its field
            out.append(("prisma", key, "value", None))
        elif isinstance(value, dict):
            for sub, count in value.items():
                out.append(("prisma", f"{key}.{sub}", "value", count))
        else:
            out.append(("prisma", key, "value", value))
    return out


def render_csv(report: Report) -> str:
    """Long CSV: ``section,row,column,value`` (full precision, except the |R| estimates' counts of documents:
    integers as such, other estimates to 1 decimal)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["section", "row", "column", "value"])
    for section, row, column, value in _rows(report):
        # a text value that starts like a formula is marked as text (formats/cells.py); numbers never are
        writer.writerow([section, row, column, "" if value is None else (
            repr(value) if isinstance(value, float) else neutralised(value) if isinstance(value, str) else value)])
    return buffer.getvalue()


def headline_lines(report: Report) -> list[str]:
    """The answer in a few lines of at most 80 columns (for a terminal): `answer_lines`, each one wrapped."""
    return [part for line in answer_lines(report) for part in textwrap.wrap(line, 80, subsequent_indent="      ")]


def answer_lines(report: Report) -> list[str]:
    """The answer, one sentence a line, unwrapped (a page wraps them to its width): target and status,
    confidence and as-of, next step, the plan and the floor."""
    a = report.answer
    as_of = fmt(a.as_of_judgment, "as_of_judgment")
    scope = "the queue's relevant documents" if a.scope == "queue" else "population"
    # the topic's one decision, once: `reviewdepth watch`, the dashboard and `topics` print the same words
    lines = [a.topic_status.text or a.text,
             f"confidence {percent(a.confidence)} · basis {a.basis} · scope {scope} · as of judgment {as_of}"]
    if a.review_order:
        lines.append(a.review_order)
    if a.next_step:
        lines.append(f"next: {a.next_step}")
    if a.certify is not None:
        lines.append(f"to certify: {a.certify.step}; {to_certify(a.certify)}")
    plan = a.plan
    floor = a.floor
    # the first screen says each thing once: the "to certify" line already gives the sample now and every path
    said = a.certify is not None and plan is not None and plan.size is not None and a.certify.sample_size == plan.size
    if said:
        pass
    elif plan and plan.feasible and plan.size and floor and plan.size > 1.25 * floor.least_total:
        # the one-look sample now is not the way to a cheap stop: say what it costs beside the cheapest projection
        lines.append(f"plan: a sample now needs {plan.size:,} of the unreviewed rest for a "
                     f"{percent(plan.chance or 0)} chance; reviewing on first can cost less (the floor over "
                     f"further depths is about {floor.least_total:,.0f}): reviewdepth plan TOPIC compares "
                     "the paths")
    elif plan and plan.feasible and plan.size:
        lines.append(f"plan: sample {plan.size:,} of the unreviewed rest; at most {plan.max_positives} "
                     f"relevant in it certifies the target (chance {percent(plan.chance or 0)} at an assumed "
                     f"elusion rate of {plan.elusion_rate:.2%}"
                     + (f"; {percent(plan.chance_at_cautious_rate)} at the cautious rate: the sample so far is too "
                        "small to tell" if plan.chance_at_cautious_rate is not None else "") + ")")
    elif plan and plan.reason:
        lines.append(f"plan: {plan.reason}")
    if floor:
        what = f"{percent(floor.target)} recall at {percent(floor.confidence)} confidence"
        if floor.documents:
            # a floor at this depth: a path that reviews on first is not bound by it (the next line says so)
            lines.append(f"floor at this depth: no random-sample design can certify {what} with fewer than "
                         f"{floor.documents:,} more judged documents (a sample of the {floor.unreviewed:,} "
                         "unreviewed drawn now)"
                         + ("; that is over half of them: no valid method is cheap here" if floor.above_half
                            else ""))
            if floor.alternatives:
                lines.append("floor at lower settings: " + "; ".join(
                    f"{percent(t)} at {percent(c)}: {n:,}" for t, c, n in floor.alternatives))
        else:
            lines.append(f"floor: {what} holds even if every unreviewed document were relevant")
        if floor.review_more:
            lines.append(f"reviewing on moves the floor: under the projection the least total over further depths "
                         f"is about {floor.least_total:,.0f} judged documents, reviewing about "
                         f"{floor.review_more:,} more first; every path: reviewdepth plan TOPIC")
        elif a.certify is None:
            lines.append("every certified path with its cost and chance: reviewdepth plan TOPIC")
    return [with_topic(line, report.topic) for line in lines]


def more_text(row: DepthRow) -> str:
    """The depth row's "more documents": to review, with its range; or, when the point estimate is met but the
    target is not reached, what certification costs (the plan's expected documents and range, else its floor)."""
    certify, more = row.certify, row.more
    if certify.expected is not None:
        low, high = certify.low or 0, certify.high or 0  # set together with the expected cost
        return f"certify: ~{certify.expected:,.0f} judged [{low:,.0f}–{high:,.0f}]"
    if certify.floor:
        return f"certify: ≥ {count(certify.floor)} judged"
    if more.documents is None:
        return "—"
    text = fmt(more.documents)
    if more.low is not None and more.high is not None:
        text += f" [{fmt(more.low)}–{fmt(more.high)}]"
    return text


# a heuristic row's portfolio calibration (`reviewdepth.services.evidence.calibration.stopping_calibrations`), in the
# CSV
CALIBRATION_KEYS = ("id", "topics", "runs", "stops", "failures", "failure_rate", "failure_low", "failure_high",
                    "reviewed_ratio_median", "total_ratio_median", "never_stopped", "text")


def calibration_cell(row: StoppingRow) -> str:
    """The portfolio calibration beside a stopping rule: the rule's measured record on the team's completed
    reviews, or an empty cell."""
    calibration = row.calibration
    return ("" if calibration is None else
            f"{row.evidence.rule}: {calibration.get('text')} (calibration {calibration.get('id')})")


def render_table(report: Report) -> Group:
    """Rich tables for people: the answer first (headline, depth, stopping), then the evidence and settings."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    s = report.summary
    as_of = fmt(report.settings.as_of_judgment, "as_of_judgment")
    headline = Text("\n".join(headline_lines(report)))
    head = Table(title=f"topic {report.topic} · queue {report.queue} · as of judgment {as_of} · policy "
                       f"{report.settings.label_policy}")
    head.add_column("reviewed", justify="right")
    head.add_column("queue", justify="right")
    head.add_column("population N", justify="right")
    head.add_column("judged", justify="right")
    head.add_column("relevant found", justify="right")
    head.add_row(fmt(s.reviewed), fmt(s.queue_size), fmt(s.population), fmt(s.judged), fmt(s.relevant_found))

    level = f"{percent(report.settings.confidence)}"
    est = Table(title=f"|R| estimates (depth uses {report.depth_basis}; scope {s.estimate_scope}; "
                      "assumptions in JSON and HTML)")
    # the headline's "R ≤ …" is the basis' one-sided bound: it has its own column, beside the two-sided interval
    for col in ("method", "point", f"two-sided {level} interval", f"one-sided {level} upper", "interval method"):
        est.add_column(col, justify="left" if col in ("method", "interval method") else "right")
    for row in report.estimates:
        e = row.estimate
        est.add_row(e.method, count(e.point), f"[{count(e.lower)}, {count(e.upper)}]", count(row.upper_one_sided),
                    fmt(e.interval))

    depth = Table(title=f"depth to target recall (from the {report.depth_basis} estimate; point depths are "
                        "estimates, never 'reached')")
    for title in ("target", "status", "point depth", "conservative depth", "more documents", "to rank"):
        depth.add_column(title, justify="left" if title == "status" else "right")
    for target in report.depth:
        point = target.depth if target.depth is not None else target.point.depth
        to_rank = fmt(target.to_rank.depth)
        if target.to_rank.depth is None and target.certify.to_rank:
            # the certification path reviews on first: the queue rank it reviews to
            to_rank = fmt(target.certify.to_rank) + " (then certify)"
        status = str(target.status)
        if status == "not reached" and target.point.reached and target.conservative.needed is not None:
            status = "not reached (point met, not certified)"
        conservative = fmt(target.conservative.depth)
        if target.conservative.depth is None and target.conservative.forward is not None:
            conservative = f"~{fmt(target.conservative.forward)} (projected)"
        depth.add_row(f"{target.target:g}", status, fmt(point), conservative, more_text(target), to_rank)

    recall = Table(title=f"recall of the reviewed prefix ({percent(report.settings.confidence)}; one row per basis)")
    for col in ("basis", "point", "two-sided interval", "one-sided lower bound", "note"):
        recall.add_column(col, justify="left" if col in ("basis", "note") else "right")
    for r in report.recall:
        interval = "—" if r.lower is None and r.upper is None else f"[{fmt(r.lower)}, {fmt(r.upper)}]"
        recall.add_row(r.basis, fmt(r.point), interval, fmt(r.lower_one_sided), r.note)

    stop = Table(title="stopping evidence")
    for col in ("rule", "kind", "stop now", "stop depth", "why"):
        stop.add_column(col)
    for rule in report.stopping:
        ev = rule.evidence
        stop.add_row(ev.rule, ev.kind, rule.stop_label, fmt(ev.stop_depth), ev.reason)
    # the heuristics' record on the team's portfolio, right under the stopping table (a sixth column would squeeze
    # every row of it on an 80-column terminal)
    calibrated = [rule for rule in report.stopping if rule.calibration is not None]
    portfolio = Table(title="heuristic rules on the team's portfolio of completed reviews")
    for col in ("rule", "record"):
        portfolio.add_column(col)
    for rule in calibrated:
        portfolio.add_row(rule.evidence.rule, calibration_cell(rule).removeprefix(f"{rule.evidence.rule}: "))

    samples = Table(title=f"samples (choice: {report.settings.sample_choice})", caption_justify="left",
                    caption="\n".join(f"sample {x.id} {x.coded}" for x in report.samples))
    for col in ("id", "queue", "drawn", "in rest", "relevant in rest", "use", "status"):
        samples.add_column(col, justify="right" if col in ("drawn", "in rest", "relevant in rest") else "left")
    for x in report.samples:
        samples.add_row(str(x.id), x.queue, fmt(x.size), fmt(x.in_unreviewed_rest), fmt(x.positives_in_rest), x.use,
                        x.status)

    cur = Table(title="at the current depth (trec_eval measures: R = relevant judged so far)")
    cur.add_column("quantity")
    cur.add_column("value", justify="right")
    for key, value in section_items(report.current):
        cur.add_row(key, fmt(value))
    for key, value in report.measures.items():
        cur.add_row(key, fmt(value))
    completed = Table(title="completed review (fully judged topic)")
    completed.add_column("measure")
    completed.add_column("value", justify="right")
    for key, value in (report.completed_review or {}).items():
        completed.add_row(key, fmt(value))

    quality = Table(title="review quality and PRISMA 2020 counts")
    for col in ("section", "row", "quantity", "value"):
        quality.add_column(col, justify="right" if col == "value" else "left")
    for section, row_name, column, value in _quality_rows(report):
        if section != "policy_sensitivity":
            quality.add_row(section, row_name, column, fmt(value))
    sensitivity = Table(title="sensitivity to the label policy (stopping target "
                              f"{report.settings.stopping_target})")
    sens_columns = ("policy", "relevant_judged", "relevant_in_reviewed", "depth_basis", "relevant_estimate",
                    "relevant_upper", "recall", "status", "depth", "conservative_depth")
    for col in sens_columns:
        sensitivity.add_column(col.replace("_", " "), justify="left" if col in ("policy", "status") else "right")
    for sens in report.review_quality.policy_sensitivity:
        # a row corrected by QC has only some of the columns
        cells = dict(section_items(sens))
        sensitivity.add_row(*(str(cells.get(c)) if c in ("policy", "status") else
                              count(cells.get(c)) if c.startswith("relevant") else fmt(cells.get(c))
                              for c in sens_columns))

    foot = Table(title="settings and provenance", show_header=False)
    foot.add_column("key")
    foot.add_column("value", overflow="fold")
    for key, value in section_items(report.settings) + section_items(report.provenance):
        foot.add_row(key, fmt(value, key))
    parts: list[Any] = [headline, head, depth, recall, stop, *([portfolio] if calibrated else []), est]
    if report.samples:
        parts.append(samples)
    if report.two_phase is not None:
        words = two_phase_section(report.two_phase, report.topic)
        two_phase = Table(title=words.title.replace("Two-phase", "two-phase", 1), show_header=False,
                          caption="\n".join(words.notes), caption_justify="left")
        two_phase.add_column("figure")
        two_phase.add_column("value", overflow="fold")
        for label, text in words.rows:
            two_phase.add_row(label, text)
        parts.append(two_phase)
    parts += [cur, *([completed] if report.completed_review else []), quality]
    if report.review_quality.policy_sensitivity:
        parts.append(sensitivity)
    return Group(*parts, foot)


# the depth table's HTML columns, with headers for people (the JSON keys stay in the JSON and CSV)
DEPTH_COLUMNS: tuple[tuple[str, str], ...] = (
    ("target", "Target recall"), ("status", "Status"), ("reached_by", "Reached by"), ("depth", "Depth"),
    ("point_depth", "Point depth"), ("conservative_depth", "Conservative depth"),
    ("conservative_forward", "Conservative depth (projected)"), ("certified_depth", "Certified depth"),
    ("forward_depth", "To rank"), ("more_documents", "More documents (or to certify)"), ("more_low", "More: low"),
    ("more_high", "More: high"), ("forward_basis", "Projection basis"), ("basis", "Estimate basis"))
LONG_TEXT = 60  # characters: a cell this long wraps in a bounded column instead of widening the table
# depth-table columns of sentences, mostly the same from row to row: said once under the table, named in the cell
DEPTH_NOTES = frozenset({"forward_basis", "basis"})


def number_text(value: Any, kind: str = "auto") -> str:
    """A value as the HTML page shows it: ``count`` as `count` writes a number of documents (whole numbers with
    thousands separators, an estimate that is not whole to 1 decimal); ``fraction`` (recall, precision, rates,
    agreement, confidence) to 3 decimals; ``target`` as written (0.95); ``auto`` an int as a count and a float as
    a fraction within [-1, 1], else as a count. Never `137.0000`. Not numbers: `fmt`."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return fmt(value)
    if kind == "target":
        return f"{value:g}"
    if kind == "fraction" or (kind == "auto" and isinstance(value, float) and -1 <= value <= 1):
        return f"{value:.3f}"
    return count(value)


def _cell(value: Any, kind: str = "auto", label: str = "") -> dict[str, Any]:
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    text = number_text(value, kind) if number else fmt(value)
    return {"text": text, "num": number, "long": len(text) > LONG_TEXT, "label": label}


def _table(headers: list[str], rows: list[list[Any]], table_id: str = "",
           kinds: dict[int, str] | None = None) -> dict[str, Any]:
    """A table for the template; ``kinds``: the `number_text` kind of a column (by index) other than auto."""
    kinds = kinds or {}
    return {"id": table_id, "headers": headers,
            "rows": [[_cell(v, kinds.get(i, "auto"), headers[i]) for i, v in enumerate(row)] for row in rows],
            "wide": len(headers) > 8, "pairs": len(headers) == 2}


def _depth_table(report: Report) -> tuple[dict[str, Any], list[tuple[str, str, str]]]:
    """The depth table, and its notes (name, column, text): the projection's and the estimate's basis are
    sentences repeated in most rows, so their cells name a note (``note 1``) said once under the table.
    Fourteen columns with two such sentences in each row do not fit a 1,280-pixel window."""
    notes: list[tuple[str, str, str]] = []
    names: dict[tuple[str, str], str] = {}
    rows = []
    for row in report.depth:
        cells = []
        values = dict(section_items(row))
        for key, title in DEPTH_COLUMNS:
            value = more_text(row) if key == "more_documents" else values[key]
            if key in DEPTH_NOTES and value is not None:
                name = names.get((key, str(value)))
                if name is None:
                    name = names[key, str(value)] = f"note {len(notes) + 1}"
                    notes.append((name, title, str(value)))
                value = name
            cells.append(value)
        rows.append(cells)
    table = _table([title for _, title in DEPTH_COLUMNS], rows, "depth",
                   {i: "target" if key == "target" else "count" for i, (key, _) in enumerate(DEPTH_COLUMNS)
                    if key not in ("status", "reached_by", *DEPTH_NOTES)})
    return table, notes


def _two_phase_html(report: Report) -> dict[str, Any]:
    """The two-phase section for the page: its title, its label–value rows (in the validation document's words)
    and its notes (what each figure assumes)."""
    assert report.two_phase is not None
    section = two_phase_section(report.two_phase, report.topic)
    return {"title": section.title, "notes": section.notes,
            "table": {"id": "two-phase", "headers": ["Figure", "Value"], "wide": False, "pairs": True,
                      "rows": [[_cell(label, label="Figure"), _cell(text, label="Value")]
                               for label, text in section.rows]}}


def render_html(report: Report) -> str:
    """A self-contained page (inline CSS and SVG, no scripts, no external resources), from
    templates/depth_report.html.j2."""
    from markupsafe import Markup

    s = report.summary
    target = main_target(report)
    confidence = report.settings.confidence
    calibrated = any(e.calibration is not None for e in report.stopping)
    depth, depth_notes = _depth_table(report)
    context = {
        "topic": report.topic, "queue": report.queue, "depth_basis": report.depth_basis,
        "headline": answer_lines(report),
        "summary": {"ordering": s.ordering, "reviewed": fmt(s.reviewed), "queue_size": fmt(s.queue_size),
                    "relevant_found": fmt(s.relevant_found_in_reviewed), "population": fmt(s.population),
                    "population_source": s.population_source, "scope_note": s.scope_note},
        "as_of": fmt(report.settings.as_of_judgment, "as_of_judgment"),
        "policy": report.settings.label_policy,
        "depth": depth, "depth_notes": depth_notes,
        # the SVG comes from matplotlib, not from report text: its only text is titles and labels it escaped
        "gain_chart": Markup(inline_svg(gain_svg(report.gain, target, f"recall against depth ({report.topic})",
                                                 confidence))),
        "recall": _table(["Basis", "Point", "Lower (two-sided)", "Upper (two-sided)", "Lower (one-sided)",
                          "Confidence", "Scope", "Note"],
                         [[r.basis, r.point, r.lower, r.upper, r.lower_one_sided, r.confidence, r.scope, r.note]
                          for r in report.recall],
                         kinds={i: "fraction" for i in range(1, 6)}),
        "stopping": _table(["Rule", "Kind", "Stop now", "Stop depth", "Certifies", "Guarantee", "Why",
                            *(("On the team's portfolio",) if calibrated else ())],
                           [[e.evidence.rule, e.evidence.kind, e.stop_label, e.evidence.stop_depth,
                             e.evidence.certifies, e.evidence.guarantee, e.evidence.reason,
                             *((calibration_cell(e),) if calibrated else ())]
                            for e in report.stopping], kinds={3: "count"}),
        "estimates": _table(["Method", "Point", f"Lower (two-sided {percent(confidence)})",
                             f"Upper (two-sided {percent(confidence)})", f"Upper (one-sided {percent(confidence)})",
                             "Interval",
                             "Recall", "Assumptions"],
                            [[e.estimate.method, e.estimate.point, e.estimate.lower, e.estimate.upper,
                              e.upper_one_sided, e.estimate.interval, e.estimate.recall_point,
                              "; ".join(e.estimate.assumptions)] for e in report.estimates],
                            kinds={1: "count", 2: "count", 3: "count", 4: "count", 6: "fraction"}),
        "current": _table(["Quantity", "Value"], [[k, v] for k, v in section_items(report.current)
                                                  + list(report.measures.items())]),
        "pr_chart": Markup(inline_svg(precision_recall_svg(
            report.precision_recall, f"precision-recall, reviewed prefix ({report.topic})", target))),
        "completed": _table(["Measure", "Value"], [[k, v] for k, v in report.completed_review.items()])
        if report.completed_review else None,
        "samples": _table(["Id", "Queue", "Frame", "Size", "Frame size", "Seed", "Missing", "In rest",
                           "Relevant in rest", "Use", "Status", "Coded"],
                          [[str(x.id), x.queue, x.frame_definition, x.size, x.frame_size, str(x.seed), x.missing,
                            x.in_unreviewed_rest, x.positives_in_rest, x.use, x.status, x.coded]
                           for x in report.samples],
                          kinds={i: "count" for i in (3, 4, 6, 7, 8)}) if report.samples else None,
        "quality": _table(["Section", "Row", "Quantity", "Value"], [list(r) for r in _quality_rows(report)]),
        "two_phase": None if report.two_phase is None else _two_phase_html(report),
        "settings": _table(["Key", "Value"],
                           [[k, number_text(v) if isinstance(v, float) else fmt(v, k)]
                            for k, v in section_items(report.settings) + section_items(report.provenance)]),
    }
    return str(templates().get_template("depth_report.html.j2").render(context))
