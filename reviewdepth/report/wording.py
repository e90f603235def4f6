"""Words a person reads beside the core's codes, written once for every door (report, monitor, their renderers)."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Protocol

from reviewdepth.estimation.assessment import (
    AnswerStatus,
    Basis,
    Headline,
    NextStep,
    ReachedBy,
    SampleStatus,
    SampleUse,
)
from reviewdepth.estimation.monitor import MonitorNote, MonitorStep
from reviewdepth.estimation.percent import percent as percent_text
from reviewdepth.estimation.plural import counted
from reviewdepth.estimation.two_phase import TwoPhaseAssumption, TwoPhaseGap
from reviewdepth.report.coding_model import SampleCoding


class CertifyCost(Protocol):
    """What the wording reads of a certification cost (`reviewdepth.report.model.CertifyCost`, which imports this
    module: a protocol here keeps the two from importing each other)."""

    @property
    def expected(self) -> float | None: ...
    @property
    def low(self) -> float: ...
    @property
    def high(self) -> float: ...
    @property
    def source(self) -> str: ...


# a stopping rule's kind (`reviewdepth.estimation.rules.KINDS`) in words, wherever a report prints it, and in the
# terminal's short form (its table must fit 80 columns)
KIND_LABELS = {"certified": "certified", "heuristic": "heuristic (no guarantee)",
               "invalid": "invalid as used (one-look rule repeated)"}
SHORT_KINDS = {"certified": "cert.", "heuristic": "heur.", "invalid": "inv.*"}


def stop_label(kind: str, stop_now: bool | None) -> str:
    """A stopping rule's "stop now" in words: ``yes`` / ``no`` / ``—`` (not applicable, or not enough evidence),
    and for a rule with no guarantee (kind ``heuristic``, or anything not ``certified``) a "yes" that says so, so
    that it cannot be read as the certified rules' "yes" beside it."""
    if stop_now is None:
        return "—"
    if not stop_now:
        return "no"
    return "yes" if kind == "certified" else f"yes ({kind}, no guarantee)"


_COMMAND_WITH_TOPIC = re.compile(r"(reviewdepth [a-z][a-z -]*?) TOPIC\b")


def with_topic(text: str, topic: str) -> str:
    """``text`` with each ``reviewdepth <command> TOPIC`` naming ``topic`` (quoted for a shell when it needs it),
    so that a next step can be copied and run as it stands."""
    import shlex

    return _COMMAND_WITH_TOPIC.sub(lambda m: f"{m.group(1)} {shlex.quote(topic)}", text)


def next_step(step: NextStep | str | None, counts: tuple[int, ...] = ()) -> str | None:
    """The depth answer's next step (`reviewdepth.estimation.assessment.NextStep`) in words, its counts filled in;
    commands name the topic as ``TOPIC`` (`with_topic` puts the topic's name there)."""
    words = {
        "state recall": "to state recall after stopping, judge a fresh random sample of the rest",
        "certify floor": "certify: judge at least {0:,} more documents outside the reviewed set on the cheapest path "
                         "(reviewdepth plan TOPIC gives it, with its expected cost)",
        "certify": "certify: reviewdepth plan TOPIC gives the cheapest path and its expected cost",
        "screen more": "screen about {0:,} more in the same random order, then judge a fresh random sample of the "
                       "rest (reviewdepth sample plan TOPIC)",
        "review more": "review about {0:,} more (to rank {1:,}), then judge a fresh random sample of the rest "
                       "(reviewdepth sample plan TOPIC)",
        "review on": "review on; then judge a fresh sample of the rest, or use the sample plan",
        "draw sample": "draw a random sample of the unreviewed rest: reviewdepth sample plan TOPIC",
    }
    return None if step is None else words[str(step)].format(*counts)


# the commands a next step names, by code (a door's next step says which one and for which topic)
COMMANDS = {"start stream": "reviewdepth sample stream start {topic} --every auto"}


def command(code: str, topic: str) -> str:
    """The command line ``code`` (:data:`COMMANDS`) for ``topic``, as a person copies it."""
    return COMMANDS[code].format(topic=topic)


def reached_by(code: ReachedBy | None) -> str | None:
    """What reached a target (`reviewdepth.estimation.assessment.ReachedBy`) in words."""
    if code is None:
        return None
    if code.basis == Basis.KNOWN:
        return "R known: there is no relevant document" if code.no_relevant else "R known"
    level = f"one-sided {percent_text(code.confidence or 0)}"
    return f"the elusion test ({level})" if code.basis == Basis.ELUSION else f"the {code.basis} upper bound ({level})"


def headline(figures: Headline, to_certify: str | None = None) -> str:
    """The depth answer's headline (`reviewdepth.estimation.assessment.Headline`) in words that start with its status
    (``reached`` / ``not reached`` / ``unknown``) and name the recall's scope when the queue is not the whole
    population. ``to_certify``: what certifying costs (`to_certify`), said in place of the floor."""
    if figures.no_target:
        return "unknown: no target"
    pct = f"{percent_text(figures.target)} recall" + (" of the queue's relevant documents" if figures.scope == "queue"
                                                 else "")
    step, counts = figures.step, figures.step_counts
    if figures.status == AnswerStatus.REACHED:
        text = f"{pct}: reached, by {reached_by(figures.reached_by)}"
    elif figures.status == AnswerStatus.UNKNOWN:
        text = f"{pct}: unknown (no random sample)"
        if figures.guess is not None:
            text += f"; heuristic guess: {figures.guess:,} more documents"
    elif step in (NextStep.CERTIFY_FLOOR, NextStep.CERTIFY):
        # an upper bound printed up, never rounded down to a smaller R
        text = (f"{pct}: not reached (not certified: the point estimate is met; R ≤ "
                f"{math.ceil(figures.upper or 0):,} at {percent_text(figures.confidence)} one-sided)")
        if step == NextStep.CERTIFY_FLOOR and to_certify is None:
            text += f"; to certify: at least {counts[0]:,} more judged documents"
    else:
        text = f"{pct}: not reached" + _more_to_review(figures)
    return text if to_certify is None else f"{text}; to certify: {to_certify}"


def _more_to_review(figures: Headline) -> str:
    """The headline's "about N more documents [low–high] after the c reviewed (to rank k)", when it says one."""
    rng = "" if figures.more_range is None else f" [{figures.more_range[0]:,}–{figures.more_range[1]:,}]"
    if figures.step == NextStep.SCREEN_MORE:
        return (f"; about {figures.step_counts[0]:,} more documents{rng} after the {figures.reviewed:,} screened, in "
                "the same random order")
    if figures.step == NextStep.REVIEW_MORE:
        more, to_rank = figures.step_counts
        return f"; about {more:,} more documents{rng} after the {figures.reviewed:,} reviewed, to rank {to_rank:,}"
    return ""


def out_of_order_note(out_of_order: int, reviewed: int) -> str:
    """The answer's note when some reviewed documents were reviewed out of queue order."""
    return (f"{out_of_order:,} of the {reviewed:,} reviewed documents were reviewed out of queue order: they count "
            "as reviewed wherever they sit; 'more documents' are the queue's next unreviewed ones in rank order (or, "
            "declared random, the next in the same random order), and 'to rank' is a queue rank")


def review_before_sampling(reason: str, *, unknown: bool) -> str:
    """The next step when no sample of the rest drawn now is likely to certify (``reason``, the sample plan's)."""
    if unknown:
        return ("review on, then draw a random sample of the rest (reviewdepth sample plan TOPIC); the recent "
                f"yield says: {reason}")
    return f"review on before sampling: {reason}"


def certify_range(cost: CertifyCost) -> str:
    """What certifying costs (`reviewdepth.report.model.CertifyCost`): the plan's expected documents and range,
    else the range from the floor over further depths to a one-look sample now."""
    if cost.expected is not None:
        return f"about {cost.expected:,.0f} more judged documents [{cost.low:,.0f}–{cost.high:,.0f}]"
    if round(cost.low) == round(cost.high):
        # the floor over further depths is the sample now: one figure, not "1,764 to 1,764"
        return (f"{cost.high:,.0f} more judged documents (a sample of the rest now; under the projection reviewing "
                "on first costs no less; every path: reviewdepth plan TOPIC)")
    return (f"{cost.low:,.0f} to {cost.high:,.0f} more judged documents (the low end is the floor over further "
            "depths, a lower bound; every path: reviewdepth plan TOPIC)")


def cost_range_words() -> str:
    """The stated cost ranges' quantiles of the replays, as printed ("5–95 %"): one definition
    (`stop_plan.COST_RANGE_QUANTILES`), so no page can name another range than the one computed."""
    from reviewdepth.estimation.stop_plan import COST_RANGE_QUANTILES

    low, high = COST_RANGE_QUANTILES
    return f"{low * 100:g}–{high * 100:g} %"


def to_certify(cost: CertifyCost) -> str:
    """The headline's "to certify: …": the cost, and whose figures they are."""
    how = (f" by the plan's recommended path (expected, {cost_range_words()} range under the projection)"
           if cost.source == "plan" else "")
    return certify_range(cost) + how


# ----------------------------------------------------------------------------------------------------------------
# the anytime-valid monitor (`reviewdepth.services.answers.monitor`, `reviewdepth.estimation.monitor`)


def percent(confidence: float) -> str:
    """A confidence as a percentage with no trailing zeros, never above itself (0.95 → "95 %", 0.975 → "97.5 %",
    0.99999 → "99.99 %"; `reviewdepth.estimation.percent`)."""
    return percent_text(confidence, space=True)


def monitor_headline(certified: bool, has_audit: bool, sampled: bool, bound: str, confidence: float,
                     target: str) -> str:
    """The monitor's one line: certified, or why not (no stream, with or without a one-look sample figure, or the
    bound below the target). ``bound``: the recall lower bound as printed (never rounded up)."""
    if certified:
        return f"STOP CERTIFIED: recall ≥ {bound} at {percent(confidence)} (anytime-valid), target {target}"
    if not has_audit and sampled:
        # not "continue": the random samples decide the topic's status (which may be "reached"), not the monitor
        return (f"NO AUDIT STREAM: no anytime-valid bound; the status above rests on the samples' one-look bound "
                f"(target {target})")
    if not has_audit:
        return f"NO AUDIT STREAM: no audit stream and no random sample, so recall has no bound (target {target})"
    return f"CONTINUE: recall ≥ {bound} at {percent(confidence)} (anytime-valid), below the target {target}"


def monitor_guarantee(target: str, confidence: float) -> str:
    """What the monitor promises, whenever the team looks."""
    return (f"anytime-valid: whenever the team looks, P(stop certified while recall < {target}) ≤ "
            f"{1 - confidence:.4g} (Ville's inequality; the target fixed in advance)")


def to_go_text(certified: bool, bound: int | None, depth_bound: int | None, estimate: int | None,
               confidence: float) -> str:
    """The documents still to review along the queue: none, not within the queue, or the bound (to its rank) and
    the point estimate."""
    if certified:
        return "none: the stop is certified"
    if bound is None:
        return ("not within this queue with the present audit: reviewing on lowers the bound only by passing "
                "audit positives; a larger audit lowers it (see audit documents still needed)")
    # the bound is the monitor's: it holds at the stated confidence at every look at once
    text = (f"at most {bound:,} more (anytime-valid bound at {percent_text(confidence)}; to rank "
            f"{depth_bound or 0:,})")
    if estimate is not None:
        text += f"; about {estimate:,} by the point estimate"
    return text


def audit_needed_text(more: int | None, to_judge: int | None, has_audit: bool) -> str:
    """The audit documents still needed to certify the present reviewed set at the present yield."""
    if more is None:
        text = "no audit size certifies the present reviewed set at the present yield: review on"
    elif more == 0:
        text = "none"
    else:
        text = (f"about {more:,} more audit documents at the present yield, about {to_judge or 0:,} of them needing "
                "a judgment (the others are reviewed already)")
    return text if has_audit else text + " (no audit stream yet)"


def monitor_step(step: MonitorStep, topic: str, *, pending: Sequence[str] = (), audit_judged: int = 0,
                 to_go_bound: int | None = None, depth_bound: int | None = None, audit_more: int | None = None,
                 audit_to_judge: int | None = None) -> str:
    """The monitor's next step (`reviewdepth.estimation.monitor.MonitorStep`) in words, with the commands that
    take it for ``topic``. ``pending``: the audit documents waiting for a judgment, in permutation order."""
    if step == MonitorStep.SAMPLES_ONE_LOOK:
        return (f"the samples bound recall for one look; `reviewdepth plan {topic}` gives the cheapest certified "
                f"path from here (a larger sample of the rest, review on, or an audit stream: "
                f"`{command('start stream', topic)}` for a bound valid at every look)")
    if step == MonitorStep.START_STREAM:
        return (f"start an audit stream: `{command('start stream', topic)}`, then judge what "
                f"`reviewdepth next {topic}` serves (audit documents with --role audit)")
    if step == MonitorStep.JUDGE_PENDING:
        shown = ", ".join(pending[:5]) + (", …" if len(pending) > 5 else "")
        return (f"judge the {counted(len(pending), 'audit document')} served and not yet judged ({shown}): the "
                "evidence stops at the first of them")
    if step == MonitorStep.STOP:
        return "stop: the reviewed set is certified; keep the stream's seed and the judgment chain head with the record"
    if step == MonitorStep.QUEUE_DONE:
        return (f"every document of the current queue is reviewed, yet the audit's {audit_judged:,} documents do not "
                "certify the target and `reviewdepth next` has nothing left to serve; when this queue is the whole "
                f"population its recall is known without sampling (`reviewdepth report {topic}`)")
    parts = []
    if to_go_bound is not None:
        parts.append(f"review on to rank {depth_bound or 0:,} ({to_go_bound:,} more)")
    else:
        parts.append(f"review on (`reviewdepth next {topic}`)")
    if audit_more:
        parts.append(f"or audit about {audit_more:,} more documents ({audit_to_judge or 0:,} to judge)")
    return " ".join(parts) + "; the audit stream goes on beside the review"


def monitor_note(note: MonitorNote, counts: Mapping[str, int | str] | None = None) -> str:
    """A note beside the monitor's figures (`reviewdepth.estimation.monitor.MonitorNote`) in words; ``counts``: the
    figures it names (``outside``, ``collection``, ``population``, ``queues``, ``reviewed``, ``queue_reviewed``,
    ``queue``, ``out_of_order``)."""
    c: Mapping[str, int | str] = counts or {}
    words = {
        MonitorNote.TARGET_ONE: "a target of 1 is certified only when the bound on relevant documents outside is 0",
        MonitorNote.NO_AUDIT_JUDGED: "no audit document is judged yet: start an audit stream (reviewdepth sample "
                                     "stream)",
        MonitorNote.OUTSIDE_POPULATION: "{outside:,} relevant document(s) judged outside the audit's population are "
                                        "not counted: the audit cannot speak for them",
        MonitorNote.COLLECTION_LARGER: "the topic's collection has {collection:,} documents; the recall certified is "
                                       "that of the {population:,} documents the audit samples from",
        MonitorNote.PAST_AUDIT: "as of a past judgment the audit's evidence (its judged prefix) is as of that "
                                "judgment, but its position, served and waiting documents are the stream's present "
                                "ones (not versioned)",
        MonitorNote.JOINED_QUEUES: "the reviewed set joins the reviewed prefixes of the topic's {queues} queues "
                                   "({reviewed:,} documents; {queue_reviewed:,} of them along queue {queue})",
        MonitorNote.OUT_OF_ORDER: "{out_of_order:,} document(s) of queue {queue} were reviewed out of queue order: "
                                  "the reviewed set counts every document judged in a review role, and 'to rank' "
                                  "counts the queue's unreviewed documents in rank order",
    }
    return words[note].format(**c)


# ----------------------------------------------------------------------------------------------------------------
# the depth report's summary and samples


# how the report chooses among samples (`reviewdepth.estimation.assessment.choose_samples`), in its settings
SAMPLE_CHOICE_RULE = ("rest: the usable sample with the most documents in the unreviewed rest (ties: more drawn, "
                      "then older); whole-queue rules: the largest whole-queue sample; voided and incomplete samples "
                      "are never used")


def scope_note(queue_size: int, population: int) -> str:
    """What the estimates cover: the whole population, or the queue only when the population is larger."""
    if population > queue_size:
        return (f"the estimates cover the {queue_size:,} documents of the queue only: {population - queue_size:,} "
                "documents of the population are outside it and are never sampled")
    return "the queue holds the whole population"


def sample_status(use: SampleUse) -> str:
    """How one sample is used at the cutoff, and why (`reviewdepth.estimation.assessment.SampleUse`)."""
    c = use.reviewed
    if use.status == SampleStatus.STRATUM:
        text = f"rank band {use.frame_start + 1}–{use.frame_end}: a stratum of the stratified estimate"
    elif use.status == SampleStatus.USED:
        parts = []
        if "rest" in use.role.split("+"):
            parts.append(f"{use.in_rest:,} of its {use.drawn:,} documents are in the unreviewed rest "
                         f"(ranks > {c:,}): used as a random sample of it")
        if "population" in use.role.split("+"):
            parts.append("a random sample of the whole queue: used for the whole-queue rules")
        text = "; ".join(parts)
    elif use.status == SampleStatus.NOT_COVERED:
        text = (f"not used: its frame starts after rank {use.frame_start:,} but the review has reached only {c:,}, "
                f"so it says nothing about ranks {c + 1:,}–{use.frame_start:,}")
    elif use.status == SampleStatus.NOTHING_LEFT:
        text = "not used: nothing is left unreviewed"
    elif use.status == SampleStatus.SUPERSEDED:
        text = "superseded: the review has passed every document it drew"
    else:
        text = (f"not used: another sample has more documents in the unreviewed rest ({use.in_rest:,} here); the "
                "largest is used")
    return (use.origin + ": " if use.origin else "") + text


# ---------------------------------------------------------------------------------------------------------------
# the validation document (`reviewdepth.report.validation_model`)

# the sample design behind each basis of the depth answer (`reviewdepth.estimation.assessment.Basis`)
DESIGNS = {
    "elusion": "elusion test: a simple random sample of the discard pile (the unreviewed rest below the cutoff), "
               "drawn after the cutoff was fixed and read once",
    "srs": "a simple random sample of the whole queue, drawn independently of the ranking",
    "stratified": "a stratified random sample of the queue by rank band",
    "screened": "the reviewed set itself, declared screened in a random order fixed in advance",
    "known": "none: the number of relevant documents is known",
    "judged": "none: no usable random sample (recall has no estimate)",
    "audit stream": "an audit stream: a seeded random permutation of the queue, judged beside the review "
                    "(anytime-valid)",
}


def design(basis: str, decided_by: str | None) -> str:
    """The sample design the decision rests on, in words: the topic status's basis when it is the audit stream,
    else the depth answer's basis."""
    key = decided_by if decided_by == "audit stream" else basis
    return DESIGNS.get(key, key)


def validation_caveats(topic: str, uncoded: int, voided: int) -> list[str]:
    """What the validation document of ``topic`` says about what validation does not do, and how uncoded sample
    documents are treated; ``uncoded``: sample documents without a decision at the as-of point, ``voided``: voided
    samples."""
    caveats = [
        "Validation estimates how many relevant documents the review missed; it does not check the reviewers' own "
        "coding: a relevant document coded not relevant in the reviewed set is counted as not relevant, and the "
        "figures assume every coding (review and sample) is correct. A QC sample of judged documents measures "
        "coding error separately.",
        "Skipped or unreviewable sample documents: reviewdepth never fills in a sample document's label. A sample "
        "with any document lacking a decision is incomplete and no estimate uses it until every document is "
        "coded; the common practice, followed here when the team codes them so, is to code an unreviewable "
        "document relevant (it then counts as missed, the conservative choice).",
        "A one-look guarantee (the elusion test, a sample of the queue) holds for one test at a cutoff fixed before "
        "the sample was drawn; testing again at later cutoffs with the same or new samples without an "
        "anytime-valid design (an audit stream) weakens it.",
        "The interval after a certified stop is conditional on the same sample having decided the stop; a fresh "
        "random sample of the discard pile gives an unconditional one.",
        "The judgment chain head anchors the log: record it outside the database; `reviewdepth audit verify TOPIC "
        "--head HASH` later proves the log still extends it.",
    ]
    caveats = [with_topic(c, topic) for c in caveats]
    if uncoded:
        caveats.append(f"{uncoded:,} sample document{'s' if uncoded != 1 else ''} had no decision at the as-of "
                       "point: their samples were not used.")
    if voided:
        caveats.append(f"{voided:,} sample{'s were' if voided != 1 else ' was'} voided and used by no estimate; "
                       "they are listed for the record.")
    return caveats


TWO_PHASE_ASSUMPTIONS: dict[str, str] = {
    TwoPhaseAssumption.CODING_CORRECT: "every coding (review and sample) is correct: validation does not check "
    "reviewers' errors",
    TwoPhaseAssumption.CUTOFF_BEFORE_SAMPLES: "the cutoff was fixed before the samples were drawn, not chosen by "
    "looking at them",
    TwoPhaseAssumption.PRODUCED_SAMPLE_SRS: "the produced-set sample is a simple random sample of a frame holding "
    "every uncoded document at or above the cutoff (its documents there are then a simple random sample of them)",
    TwoPhaseAssumption.DISCARD_SAMPLE_SRS: "the discard-pile sample is a simple random sample of a frame holding "
    "every uncoded document below the cutoff",
    TwoPhaseAssumption.CODING_BLIND_TO_SAMPLES: "which documents were coded in review did not depend on which were "
    "sampled",
    TwoPhaseAssumption.JOINT_LEVEL: "the two strata's intervals are each taken at the square root of the "
    "confidence (Šidák): the samples are independent, so both hold at once at the stated confidence",
    TwoPhaseAssumption.UNJUDGED_AGAINST_BOUNDS: "sample documents without a decision count against each bound (as "
    "relevant for an upper bound on relevant documents, as not relevant for a lower one)",
    TwoPhaseAssumption.BINOMIAL_CONSERVATIVE: "Clopper–Pearson treats the sample as drawn with replacement: exact "
    "for that, conservative for a draw without replacement",
    TwoPhaseAssumption.CONTROL_SET_APART: "the control set was not used to choose the cutoff or to train the ranking",
}

TWO_PHASE_GAPS: dict[str, str] = {
    TwoPhaseGap.NO_PRODUCED_SAMPLE: "no usable sample covers the uncoded documents at or above the cutoff: draw "
    "one with `reviewdepth sample draw TOPIC --frame ranks:1-K` and code it",
    TwoPhaseGap.NO_DISCARD_SAMPLE: "no usable sample covers the discard pile: draw one with `reviewdepth sample "
    "draw TOPIC --frame below-rank:K` and code it",
    TwoPhaseGap.NOTHING_PRODUCED: "nothing is produced at this cutoff (no coded relevant document and no uncoded "
    "document at or above it)",
    TwoPhaseGap.NO_RELEVANT: "no relevant document can exist by the samples: recall is undefined",
}


def two_phase_assumption(code: str) -> str:
    return TWO_PHASE_ASSUMPTIONS.get(code, code)


def two_phase_gap(code: str, topic: str, cutoff: int) -> str:
    text = TWO_PHASE_GAPS.get(code, code)
    return text.replace("TOPIC", topic).replace(":1-K", f":1-{cutoff}").replace("rank:K", f"rank:{cutoff}")


DOORS = {"api": "one by one through the API", "cli": "one by one at the command line",
         "library": "through the Python library"}


def sample_coding_text(coding: Sequence[SampleCoding], uncoded: int) -> str:
    """How a sample's documents were coded, in one line: "coded: 380 with role sample after the draw (judge
    --file), 20 with role review after the draw (import csv); 0 not yet coded"."""
    parts = []
    for c in coding:
        door = (("judge --file" if c.import_kind == "judge-file" else f"import {c.import_kind}") if c.door == "import"
                else DOORS.get(c.door, c.door))
        when = "after the draw" if c.after_draw else "before the draw"
        parts.append(f"{c.documents:,} with role {c.role} {when} ({door})")
    coded = "coded: " + (", ".join(parts) if parts else "none")
    return f"{coded}; {uncoded:,} not yet coded"


def sample_now_step(size: int | None, command: str | None, max_positives: int | None) -> str:
    """The report's way to certify when no plan is replayed: the one-look sample of the rest drawn now, or (no
    ``size``: no such sample is likely to certify) reviewing on."""
    if not size:
        return "review on: no sample of the rest now is likely to certify"
    return (f"judge a random sample of {size:,} of the unreviewed rest ({command}); it certifies if at most "
            f"{max_positives} are relevant")


def reached_by_audit(figure_text: str) -> str:
    """The depth table's "reached by" when the audit stream decides."""
    return f"the audit stream: {figure_text}"
