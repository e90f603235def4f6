"""Render a `MonitorReport` (a Rich table, a compact HTML fragment) and the `Dashboard` (a server-rendered page:
no scripts, no external resources, inline CSS that the API's Content-Security-Policy allows). Formatting only."""

from __future__ import annotations

import re
from html import escape
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlencode

from reviewdepth.estimation.percent import percent
from reviewdepth.estimation.plural import counted
from reviewdepth.report.depth_render import fmt
from reviewdepth.report.monitor_model import ONE_LOOK, Dashboard, DashboardEntry, MonitorReport, lower_text
from reviewdepth.report.wording import stop_label

if TYPE_CHECKING:
    from rich.console import Group

# a row's class by its state: the decision's status word, or why the topic has none
STATE_CLASS = {"reached": "stop", "not reached": "go", "unknown": "none", "no queue": "none", "problem": "problem"}


def status_text(report: MonitorReport) -> str:
    """The topic's one status line: the decision's (the report's first line says the same)."""
    return report.topic_status.text


def _audit_text(report: MonitorReport) -> str:
    a = report.audit
    if a is None:
        return "no audit stream"
    text = (f"stream {a.stream_id} (seed {a.seed}): {a.judged:,} judged of {a.population_size:,}; "
            f"{a.relevant_outside_reviewed:,} relevant outside the reviewed set "
            f"(of {a.outside_reviewed:,} outside it)")
    if a.pending:
        text += f"; {a.pending:,} waiting for a judgment"
    return text


def figure_rows(report: MonitorReport) -> list[tuple[str, str]]:
    """(quantity, value) of the monitor, in the order every renderer shows them."""
    return [
        ("recall lower bound (anytime-valid)", lower_text(report.recall_lower, 4)),
        ("recall point estimate", fmt(report.recall_point)),
        ("relevant found in the reviewed set", f"{report.relevant_found:,} in {report.reviewed:,} reviewed"),
        ("current queue", f"{report.queue}: {report.queue_reviewed:,} of {report.queue_size:,} reviewed"),
        ("relevant known (any role)", f"{report.relevant_known:,}"),
        ("relevant outside the reviewed set (upper bound)", f"{report.missed_upper:,}"),
        ("population", f"{report.population:,}"),
        ("audit", _audit_text(report)),
        ("documents to go", report.to_go.text),
        ("audit documents still needed", report.audit_needed.text),
    ]


def _one_look_rows(report: MonitorReport) -> list[list[Any]]:
    """(rule, stops now, at depth, why) of the fixed-look bound on this audit and the report's one-look rules."""
    fixed = report.fixed_look
    rows: list[list[Any]] = [[
        "fixed-look bound on this audit", stop_label("certified", fixed.certified), None,
        f"recall ≥ {lower_text(fixed.recall_lower, 4)} (≤ {fixed.missed_upper:,} relevant outside) for one "
        "look at "
        "this audit size"]]
    for rule in report.one_look_rules:
        rows.append([rule.rule, rule.stop_label, rule.stop_depth, rule.reason])
    return rows


def render_table(report: MonitorReport) -> Group:
    """The status for a terminal: the headline first, then the figures, the one-look rules, assumptions."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    colour = "bold green" if report.state == "reached" else "bold yellow"
    parts: list[Any] = [Text(status_text(report), style=colour), Text(f"monitor: {report.headline}"),
                        Text(f"topic {report.topic} · queue {report.queue} · as of judgment "
                             f"{fmt(report.as_of_judgment, 'as_of_judgment')} · last activity "
                             f"{moment_text(report.last_activity, seconds=True)}"),
                        Text(f"next: {report.next_step}"), Text(floor_text(report))]
    figures = Table(title="anytime-valid monitor", show_header=False, title_justify="left")
    figures.add_column("quantity")
    figures.add_column("value", overflow="fold")
    for name, value in figure_rows(report):
        figures.add_row(name, value)
    parts.append(figures)
    one_look = Table(title=f"one-look tests, each {ONE_LOOK} (repeated after every batch, their error can "
                           "exceed α)", title_justify="left")
    for column in ("rule", "stops now", "at depth", "why"):
        one_look.add_column(column, overflow="fold")
    for row in _one_look_rows(report):
        one_look.add_row(*(fmt(v) if not isinstance(v, str) else v for v in row))
    parts.append(one_look)
    parts.append(Text(report.guarantee))
    parts.append(Text("assumptions:\n" + "\n".join(f"  - {a}" for a in report.assumptions)))
    if report.notes:
        parts.append(Text("notes:\n" + "\n".join(f"  - {n}" for n in report.notes)))
    return Group(*parts)


def render_text(report: MonitorReport, width: int = 120) -> str:
    """`render_table` as plain text (for a file, a pipe or a test)."""
    import os

    from rich.console import Console

    with open(os.devnull, "w") as sink:
        console = Console(record=True, width=width, file=sink)
        console.print(render_table(report))
    return console.export_text()


def topic_path(topic: str) -> str:
    return "/topics/" + quote(topic, safe="")


def _code_spans(escaped: str) -> str:
    """`command` spans of an already escaped sentence as <code> elements."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", escaped)


def render_fragment(report: MonitorReport) -> str:
    """A compact block for one topic: the headline, a progress bar along the current queue, a meter of the
    recall lower bound against the target, and the next step (the dashboard shows one per topic)."""
    state = report.state
    target = float(report.target) if "/" not in report.target else None
    meter_marks = "" if target is None else f' low="{target}" high="{target}" optimum="1"'
    a = report.audit
    audit = "no audit stream yet" if a is None else (
        f"audit: {a.judged:,} judged, {a.relevant_outside_reviewed:,} relevant outside the reviewed set"
        + (f", {a.pending:,} waiting" if a.pending else ""))
    meters = []
    for figure in report.topic_status.figures:
        if figure.recall_lower is None:
            continue
        value = float(figure.recall_lower)
        meters.append(f'<label>recall ≥ {lower_text(value)} ({escape(figure.basis)}, {escape(figure.validity)}; '
                      f'target {escape(report.target)}) <meter min="0" max="1" value="{value:.6f}"{meter_marks}>'
                      f"{lower_text(value)}</meter></label>")
    return (
        f'<div class="monitor {STATE_CLASS.get(state, "go")}">'
        f'<p class="headline">{escape(status_text(report))}</p>'
        f'<label>reviewed {report.queue_reviewed:,} of {report.queue_size:,} '
        f'<progress max="{max(report.queue_size, 1)}" value="{report.queue_reviewed}">'
        f"{report.queue_reviewed:,} of {report.queue_size:,}</progress></label>" + "".join(meters) +
        f'<p class="small">{escape(audit)}; {report.relevant_found:,} relevant found. '
        f"Next: {_code_spans(escape(report.next_step))}</p>"
        f'<p class="small">{escape(floor_text(report))}</p></div>')


def floor_text(report: MonitorReport) -> str:
    """The floor in one sentence: what no random-sample design can certify the target with fewer than."""
    if report.certified or report.population <= report.reviewed:
        return "floor: nothing more to judge for this target"
    return (f"floor at this depth: no random-sample design certifies recall {report.target} at "
            f"{percent(report.confidence)} with fewer than {report.floor:,} more judged documents (a sample of the "
            f"rest drawn now; reviewing on moves it); every path: reviewdepth plan {report.topic}")


def moment_text(iso: str | None, *, seconds: bool = False) -> str:
    """An ISO 8601 time as 'YYYY-MM-DD HH:MM UTC' (to the minute: enough to see what is stale), or to the second
    (``seconds``: `watch`, which a team reads as it judges); never with microseconds."""
    if not iso:
        return "—"
    from datetime import UTC, datetime

    try:
        moment = datetime.fromisoformat(iso)
    except ValueError:
        return iso
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC" if seconds else "%Y-%m-%d %H:%M UTC")


def _entry_row(entry: DashboardEntry, settings: str) -> str:
    state = entry.state
    path = topic_path(entry.topic)
    links = (f'<a href="{escape(path)}/report?format=html">report</a> · '
             f'<a href="{escape(path)}/monitor?{escape(settings)}">monitor (JSON)</a>')
    if entry.monitor is not None:
        body = render_fragment(entry.monitor)
    elif entry.problem is not None:
        body = f'<p class="small">{escape(entry.problem)}</p>'
        links = f'<a href="{escape(path)}/report?format=html">report</a>'
    else:
        body = '<p class="small">no queue yet: import a run (<code>reviewdepth import run</code>)</p>'
        links = ""
    return (f'<tr class="topic {STATE_CLASS.get(state, "go")}">'
            f'<td data-label="topic"><b>{escape(entry.topic)}</b><br><span class="small">{links}</span></td>'
            f'<td data-label="status"><span class="badge">{escape(state)}</span></td>'
            f'<td data-label="progress">{body}</td>'
            f'<td data-label="last activity">{escape(moment_text(entry.last_activity))}</td></tr>')


STYLE = (
    "body{font-family:system-ui,sans-serif;margin:0 auto;padding:1em;max-width:1100px;color:#222}"
    "h1{font-size:1.4em;margin:.2em 0}p{margin:.3em 0}.small{font-size:.85em;color:#555}"
    "table{border-collapse:collapse;width:100%}th,td{border-bottom:1px solid #ddd;padding:.5em;text-align:left;"
    "vertical-align:top}th{background:#f3f3f3}"
    ".badge{display:inline-block;padding:.15em .5em;border-radius:.8em;font-size:.85em;white-space:nowrap}"
    "tr.stop .badge{background:#d4f4dd;color:#11632a}tr.go .badge{background:#fff1c2;color:#6b4e00}"
    "tr.none .badge,tr.problem .badge{background:#eee;color:#444}"
    ".monitor .headline{font-weight:600}.monitor label{display:block;font-size:.85em;margin:.2em 0}"
    "progress,meter{display:block;width:100%;max-width:28em;height:1em}"
    "a{color:#0645ad}code{font-size:.9em;overflow-wrap:anywhere}td b,.monitor p,.monitor label{overflow-wrap:anywhere}"
    "form.filter{display:flex;flex-wrap:wrap;align-items:center;gap:.4em 1em;margin:.6em 0;font-size:.9em}"
    "form.filter input[type=search]{width:14em;max-width:100%;font:inherit;padding:.2em .4em}"
    "form.filter button{font:inherit;padding:.2em .8em}"
    "@media (max-width:600px){thead{display:none}table,tbody,tr,td{display:block;width:auto}"
    "tr{border:1px solid #ddd;border-radius:.4em;margin:0 0 .8em;padding:.3em}td{border:0;padding:.25em .3em}"
    "td::before{content:attr(data-label);display:block;font-size:.75em;color:#777;text-transform:uppercase}}"
)


def _page_query(board: Dashboard, page: int | None = None) -> str:
    """The query of a link to ``page`` of the same view (settings, filter, page size); no page: the first."""
    query: dict[str, object] = {"target": board.target, "confidence": repr(board.confidence)}
    if board.name_contains:
        query["q"] = board.name_contains
    if board.judged_only:
        query["judged"] = "true"
    if page is not None:
        query["page"] = page
    query["limit"] = board.limit
    return urlencode(query)


def _filter_form(board: Dashboard) -> str:
    """The filter: a GET form to ``/`` (no script) that keeps the settings and the page size and starts again
    at page 1."""
    hidden = "".join(f'<input type="hidden" name="{name}" value="{escape(value)}">'
                     for name, value in (("target", board.target), ("confidence", repr(board.confidence)),
                                         ("limit", str(board.limit))))
    checked = " checked" if board.judged_only else ""
    clear = ""
    if board.name_contains or board.judged_only:
        everything = urlencode({"target": board.target, "confidence": repr(board.confidence), "limit": board.limit})
        clear = f'<a href="/?{escape(everything)}">every topic</a>'
    return (f'<form class="filter" method="get" action="/" role="search">{hidden}'
            '<label>topic name contains <input type="search" name="q" maxlength="200" '
            f'value="{escape(board.name_contains)}"></label>'
            f'<label><input type="checkbox" name="judged" value="true"{checked}> judged topics only</label>'
            f'<button type="submit">show</button>{clear}</form>\n')


def _shown(board: Dashboard) -> str:
    """Which topics the page shows, and the filter that chose them."""
    what = []
    if board.name_contains:
        what.append(f"whose name contains “{board.name_contains}”")
    if board.judged_only:
        what.append("with a judgment")
    chosen = f" {' and '.join(what)}" if what else ""
    if board.page == 1 and not board.has_next:
        return f"{counted(len(board.entries), 'topic')}{chosen}"
    if board.entries:
        return f"topics {board.first:,}–{board.first + len(board.entries) - 1:,} of {board.total:,}{chosen}"
    return f"no topic on page {board.page:,} ({counted(board.total, 'topic')}{chosen} in all)"


def render_dashboard(board: Dashboard, refresh_seconds: int | None = 60) -> str:
    """The dashboard page: a filter form, then one row per topic (status, progress, recall lower bound, last
    activity, links), the most recently judged first."""
    counts: dict[str, int] = {}
    for entry in board.entries:
        counts[entry.state] = counts.get(entry.state, 0) + 1
    summary = ", ".join(f"{n} {state}" for state, n in sorted(counts.items())) or "no topic here"
    settings = urlencode({"target": board.target, "confidence": repr(board.confidence)})
    rows = "\n".join(_entry_row(e, settings) for e in board.entries)
    links = [f'<a href="/?{escape(_page_query(board, board.page + step))}" rel="{rel}">{text}</a>'
             for step, rel, text, shown_when in ((-1, "prev", "previous page", board.page > 1),
                                                 (1, "next", "next page", board.has_next)) if shown_when]
    pager = f'<p class="small">{" · ".join(links)}</p>\n' if links else ""
    refresh = "" if refresh_seconds is None else f'<meta http-equiv="refresh" content="{int(refresh_seconds)}">'
    confidence = percent(board.confidence)[:-1]  # the page adds its own "%"
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="referrer" content="no-referrer">'
        f"{refresh}<title>reviewdepth: topics</title><style>{STYLE}</style></head><body>\n"
        "<h1>reviewdepth: can we stop now?</h1>\n"
        f'<p class="small">Target recall {escape(board.target)} at {confidence} % confidence. Each topic\'s '
        "status is the one its report and <code>reviewdepth watch</code> give: from its audit stream when it has "
        "one (anytime-valid: valid however often you look), else from its random samples (valid for one look). "
        f"{escape(_shown(board))}: {escape(summary)}. The most recently judged topics come first; topics never "
        "judged follow, by name.</p>\n" + _filter_form(board) +
        '<table><thead><tr><th>topic</th><th>status</th><th>progress and recall lower bound</th>'
        "<th>last activity</th></tr></thead>\n<tbody>\n" + rows + "\n</tbody></table>\n" + pager +
        '<p class="small">The one-look tests (elusion, QBCB, …) are in each topic\'s report; they are valid for one '
        "look only. <a href=\"/?logout\">Sign out</a> (forget the key this browser keeps).</p>\n</body></html>\n")
