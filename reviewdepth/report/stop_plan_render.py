"""The stop plan (`reviewdepth.estimation.stop_plan.StopPlan`) as text, JSON-ready data and HTML. Every sentence a
person reads about the plan is here; the core returns numbers and codes."""

from __future__ import annotations

import dataclasses
import html
from typing import Any, Protocol

from reviewdepth.estimation.percent import percent
from reviewdepth.estimation.stop_plan import RICHNESS_MARGIN, PathPlan, StopPlan
from reviewdepth.report.wording import cost_range_words, two_phase_assumption, with_topic

PATH_TITLES = {
    "sample_now": "sample the unreviewed rest now",
    "review_then_sample": "review on, then sample the rest",
    "planned": "follow the plan (review on or audit, look by look)",
    "audit_stream": "audit stream at a fixed rate",
    "produce_cutoff": "produce to a cutoff unreviewed, then validate (two-phase)",
}


class HasPlan(Protocol):
    """A plan with the topic, queue, as-of judgment and scope it was computed for (the service's result)."""

    @property
    def topic(self) -> str: ...
    @property
    def queue(self) -> str: ...
    @property
    def as_of_judgment(self) -> int | None: ...
    @property
    def scope(self) -> str: ...
    @property
    def plan(self) -> StopPlan: ...


def floor_sentence(plan: StopPlan) -> str:
    """The floor in one sentence (the report's first screen and the dashboard use it too)."""
    what = f"{percent(plan.target)} recall at {percent(plan.confidence)} confidence"
    if plan.unreviewed == 0:
        return f"nothing is left unreviewed: recall is known, no sample is needed for {what}"
    if plan.floor == 0:
        return f"{what} holds even if every unreviewed document were relevant: no sample is needed"
    return (f"at this depth no random-sample design can certify {what} with fewer than {plan.floor:,} more judged "
            f"documents (a sample of the {plan.unreviewed:,} unreviewed drawn now; at most {plan.missed_allowed} "
            "relevant may be left); reviewing on moves the floor"
            + (", and the paths below may cost less in all" if plan.paths else ""))


def _certifying_text(path: PathPlan) -> str:
    """The production path's certifying outcomes: "at most b relevant in the discard sample (at most b' if the
    produced sample holds y or more)"."""
    steps = [(y, most) for y, most in path.certifying]
    if not steps:
        return "the two-phase recall bound reaches the target"
    first = steps[0][1]
    head = (f"at most {first} relevant in the discard-pile sample" if first >= 0
            else "the produced sample holds relevant documents")
    more = [f"{most if most < (path.sample_size or 0) else 'any number'} if the produced sample holds {y} or more"
            for y, most in steps[1:4]]
    return head + (f" ({'; '.join(more)})" if more else "")


def produce_sentence(path: PathPlan) -> str:
    """The production-cutoff path in words, with the commands that carry it out."""
    cutoff = path.produce_to or 0
    start = cutoff - (path.produced_unreviewed or 0) + 1
    first = f"review {path.review_more:,} more, then " if path.review_more else ""
    return (f"{first}produce ranks {start:,}–{cutoff:,} ({path.produced_unreviewed:,} documents) without reviewing "
            f"them, withholding the {path.discard_pile:,} below rank {cutoff:,}; before producing, sample "
            f"{path.produced_sample:,} of the produced part (reviewdepth sample draw TOPIC --frame "
            f"ranks:{start}-{cutoff}) and {path.sample_size:,} of the discard pile (--frame below-rank:{cutoff}) and "
            f"check (reviewdepth report TOPIC --produce-to {cutoff}); certifies if {_certifying_text(path)} "
            f"(chance {percent(path.chance)}; if not, produce nothing unreviewed and review on); projected precision "
            f"of the production {path.produced_precision or 0:.1%}")


def path_sentence(path: PathPlan) -> str:
    if not path.feasible:
        return f"{PATH_TITLES[path.kind]}: not feasible ({path.assumes})"
    if path.kind == "produce_cutoff":
        return produce_sentence(path)
    if path.kind in ("sample_now", "review_then_sample"):
        first = f"review {path.review_more:,} more, then " if path.review_more else ""
        return (f"{first}sample {path.sample_size:,} of the rest; certifies if at most {path.max_positives} are "
                f"relevant (chance {percent(path.chance)}; if not, the one-look test allows no second try: review on)")
    if path.kind == "audit_stream":
        return (f"start an audit stream at one audit document per {path.every} reviewed "
                f"(reviewdepth sample stream start TOPIC --every {path.every}); the monitor certifies whenever it can")
    first = f"review about {path.review_more:,} more, then" if path.review_more else "now,"
    return (f"{first} audit the rest (reviewdepth sample stream start TOPIC --every 1) until the monitor certifies; "
            "re-plan at every look (reviewdepth plan): after a relevant audit document, reviewing on may be cheaper")


def richness_sentence(plan: StopPlan) -> str:
    """What the plan asks for before review when it has no random sample of the collection."""
    return (f"nothing is reviewed and no random sample of the collection is judged, so no path can be priced yet: "
            f"draw a richness sample (reviewdepth sample draw TOPIC --size {plan.richness_size or 0:,}), judge its "
            f"documents through any door and plan again; {plan.richness_size or 0:,} documents estimate the share of "
            f"relevant documents within about ±{RICHNESS_MARGIN * 100:.0f} percentage points at "
            f"{percent(plan.confidence)} confidence, and "
            "where its relevant documents sit along the ranking prices reviewing in ranked order (TAR 2.0) against "
            "a cutoff chosen now (TAR 1.0)")


def tar_sentences(plan: StopPlan) -> list[str]:
    """Before review, the paths as the two ways a team runs a review: TAR 1.0 (a cutoff chosen now from the
    richness sample, reviewed (or produced unreviewed) and tested once) and TAR 2.0 (review in ranked order until
    the monitor certifies)."""
    if not plan.before_review or not plan.paths:
        return []
    feasible = {p.kind: p for p in plan.paths if p.feasible}
    out: list[str] = []
    cutoff = feasible.get("review_then_sample") or feasible.get("sample_now")
    if cutoff is not None:
        out.append(f"TAR 1.0, a cutoff chosen now: review ranks 1–{cutoff.review_more:,}, then test the rest once "
                   f"with a fresh sample of {cutoff.sample_size or 0:,}: expected cost {cutoff.expected_cost:,.0f}, "
                   f"chance the test certifies {percent(cutoff.chance)} if the projection holds")
    else:
        out.append("TAR 1.0, a cutoff chosen now: no cutoff's one test reaches the plan's power on this evidence")
    produce = feasible.get("produce_cutoff")
    if produce is not None:
        out.append(f"TAR 1.0, two-phase: produce ranks to {produce.produce_to or 0:,} unreviewed and validate: "
                   f"expected cost {produce.expected_cost:,.0f}, chance {percent(produce.chance)}")
    monitored = [p for p in (feasible.get("planned"), feasible.get("audit_stream")) if p is not None]
    if monitored:
        best = min(monitored, key=lambda p: p.expected_cost)
        out.append(f"TAR 2.0, review in ranked order until the monitor certifies: expected cost "
                   f"{best.expected_cost:,.0f} [{best.cost_range[0]:,.0f}–{best.cost_range[1]:,.0f}], certain to "
                   "end certified (at worst by reviewing everything)")
    out.append("the richness sample prices these paths and estimates richness; the test of a cutoff needs a sample "
               "drawn after the cutoff is chosen")
    return out


def as_data(result: HasPlan) -> dict[str, Any]:
    plan = result.plan
    return {"topic": result.topic, "queue": result.queue, "as_of_judgment": result.as_of_judgment,
            "scope": result.scope, **dataclasses.asdict(plan), "before_review": plan.before_review,
            "richness_sentence": with_topic(richness_sentence(plan), result.topic) if plan.richness_size else None,
            "tar_sentences": [with_topic(line, result.topic) for line in tar_sentences(plan)],
            "floor_sentence": floor_sentence(plan),
            "path_sentences": {p.kind: path_sentence(p) for p in plan.paths}}


def _lower_targets(plan: StopPlan) -> str:
    cheaper = [c for c in plan.table if c.confidence == plan.confidence and c.target < plan.target]
    return "; ".join(f"{percent(c.target)}: floor {c.floor:,}" for c in cheaper)


def render_text(result: HasPlan) -> str:
    plan = result.plan
    lines = [f"topic {result.topic}, queue {result.queue}: {plan.reviewed:,} of {plan.population:,} reviewed, "
             f"{plan.found:,} relevant found (as of judgment {result.as_of_judgment})",
             f"floor: {floor_sentence(plan)}"]
    if plan.produce_cost is not None:
        lines.append(f"costs per document: review {plan.review_cost:g}, sample {plan.sample_cost:g}, produced "
                     f"unreviewed {plan.produce_cost:g} (the production-cutoff path produces the top of the ranking "
                     "unreviewed; the others produce only reviewed documents)")
    elif not plan.review_cost == plan.sample_cost == 1:
        lines.append(f"costs per document: review {plan.review_cost:g}, sample {plan.sample_cost:g} (no path "
                     "produces an unreviewed document: give --cost produce=P to plan a production cutoff)")
    if plan.richness_size:
        lines.append(f"next: {richness_sentence(plan)}")
    for line in tar_sentences(plan):
        lines.append(f"before review: {line}")
    if plan.unreviewed and plan.paths:
        lines.append(f"floor over further review depths (under the projection): review {plan.floor_review_more:,} "
                     f"more, then at least "
                     f"{(plan.floor_total - plan.floor_review_more * plan.review_cost) / plan.sample_cost:,.0f} "
                     f"sampled ({plan.floor_total:,.0f} cost units; a lower bound: it counts the sample that finds "
                     "no relevant document)")
    if plan.floor_above_half and plan.paths:
        lines.append(f"the floor is above half of the unreviewed documents: no valid method is cheap here; lower "
                     f"targets at {percent(plan.confidence)} confidence: {_lower_targets(plan) or 'none in the table'}")
    if plan.recommended:
        best = next(p for p in plan.paths if p.kind == plan.recommended)
        lines.append(f"recommended: {path_sentence(best)}; expected cost {best.expected_cost:,.0f} "
                     f"[{best.cost_range[0]:,.0f}–{best.cost_range[1]:,.0f}] if the projection holds")
        if plan.change is not None:
            before, kept, now = plan.change
            lines.append(f"changed from the last plan's {PATH_TITLES.get(before, before)}: " + (
                "it is no longer open" if kept is None else
                f"its expected cost is now {kept:,.0f}, more than 10 % above this path's {now:,.0f}")
                + " (the evidence since then moved the projection)")
        elif plan.previous is not None:
            lines.append(f"continues the last plan's {PATH_TITLES.get(plan.previous, plan.previous)}")
    if plan.paths:
        lines.append("")
        lines.append(f"expected costs, their {cost_range_words()} ranges and the chances hold if the projection "
                     "holds (its total "
                     "drawn from the evidence's uncertainty, placed along the ranking, evenly over the rest or "
                     "steeper than the fit); a certification keeps its confidence whatever happens")
        lines.append(f"{'path':<52}{'expected cost':>14}{'range':>18}{'chance':>9}  certified by")
    for p in plan.paths:
        title = PATH_TITLES[p.kind] + (f" (D = {p.review_more:,})" if p.kind == "review_then_sample" else "") + (
            f" (K = {p.every})" if p.every else "")
        if p.kind == "produce_cutoff":
            title = "produce unreviewed to a cutoff" + (f" (K = {p.produce_to:,})" if p.produce_to else "")
        cost = f"{p.expected_cost:,.0f}" if p.feasible else "-"
        span = f"{p.cost_range[0]:,.0f}–{p.cost_range[1]:,.0f}" if p.feasible else "-"
        # a stream or the planned policy ends certified for sure, but at worst by judging every unreviewed
        # document: "certain*" with the footnote below, never a bare 100 %
        chance = ("-" if not p.feasible else "certain*" if p.kind in ("planned", "audit_stream")
                  else f"{percent(p.chance)}")
        lines.append(f"{title:<52}{cost:>14}{span:>18}{chance:>9}  {p.certified_by}")
    if any(p.feasible and p.kind in ("planned", "audit_stream") for p in plan.paths):
        lines.append("  * certain to end certified, at worst by judging every unreviewed document: the cost range "
                     "says how much it is likely to take")
    for p in plan.paths:
        lines.append(f"  {p.kind}: " + (f"assumes {p.assumes}" if p.feasible else f"not feasible: {p.assumes}"))
        if p.kind == "produce_cutoff":
            lines.append("    its certification assumes: " + "; ".join(two_phase_assumption(code)
                                                                        for code in p.two_phase_assumptions))
            if p.feasible:
                lines.append(f"    {produce_sentence(p)}")
    if plan.paths:
        lines.append(f"projection: {plan.projection_source}; about {plan.projected_rest_relevant:.1f} relevant left")
        lines.append(f"validity: {plan.validity}")
    if plan.table:
        lines.append("")
        lines.append("target × confidence: floor of a sample now / planned total from here (reviewing on where "
                     "the projection says it is cheaper)")
        confidences = sorted({c.confidence for c in plan.table})
        lines.append(f"{'target':<8}" + "".join(f"{percent(c):>18}" for c in confidences))
        for target in sorted({c.target for c in plan.table}):
            row = [c for c in plan.table if c.target == target]
            lines.append(f"{percent(target):<8}"
                         + "".join(f"{f'{c.floor:,} / {c.planned_cost:,.0f}':>18}" for c in row))
    # commands name the topic, ready to run (as the report's and the monitor's do)
    return "\n".join(with_topic(line, result.topic) for line in lines) + "\n"


def render_html(result: HasPlan) -> str:
    body = html.escape(render_text(result))
    return ("<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Stop plan: "
            f"{html.escape(result.topic)}</title></head><body><h1>Cheapest defensible stop: "
            f"{html.escape(result.topic)}</h1><pre>{body}</pre></body></html>\n")
