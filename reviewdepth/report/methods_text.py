"""The methods paragraph of a topic (``reviewdepth methods TOPIC``, ``GET /topics/{t}/methods``): the text a
review's methods section (PRISMA 2020 item 8 and its flow diagram's footnote), a RAISE statement or a TAR
disclosure needs, written from the topic's own evidence.

Pure: it reads JSON documents the other doors print — ``report`` (``reviewdepth report --format json``),
``protocol`` (``reviewdepth topic protocol --format json``) and ``stream`` (the audit stream as ``sample stream
show`` gives it, when the topic has one) — and every number or fact it prints is a `Fact` naming the document
and path it was read from, so that each can be traced (and a test checks each against those documents). Bounds
are printed as the validation packet prints them: lower bounds rounded down, upper bounds up."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from reviewdepth.estimation.percent import percent
from reviewdepth.report.model import JsonResult
from reviewdepth.report.validation_render import count, lower, proportion, upper

Style = Literal["prisma", "raise", "protocol"]
STYLES: tuple[str, ...] = get_args(Style)
TextFormat = Literal["text", "markdown", "json"]
TEXT_FORMATS: tuple[str, ...] = get_args(TextFormat)
# the order-statistic floor: relevant documents a sample needs to certify recall tau at confidence c
NOT_RECORDED = "not recorded"


@dataclass(frozen=True)
class Fact:
    """One figure or fact the text prints: its ``value``, how it is ``shown`` in the text, and its ``source``:
    ``document:path`` (``report:answer.topic_status.reviewed``; list items by index)."""

    name: str
    value: float | int | str | bool | None
    shown: str
    source: str
    # how ``value`` is formed from the value at ``source`` when it is not that value itself
    formula: str | None = None


@dataclass(frozen=True)
class MethodsSection:
    heading: str
    text: str


@dataclass(frozen=True)
class Methods(JsonResult):
    topic: str
    style: str
    sections: list[MethodsSection]
    facts: list[Fact] = field(default_factory=list)


def resolve(documents: Mapping[str, Any], source: str) -> Any:
    """The value at ``source`` (``document:a.b[2].c``) in ``documents``."""
    name, _, path = source.partition(":")
    value: Any = documents[name]
    for part in re.findall(r"[^.\[\]]+|\[\d+\]", path):
        value = value[int(part[1:-1])] if part.startswith("[") else value[part]
    return value


class _Facts:
    def __init__(self, documents: Mapping[str, Any]) -> None:
        self.documents = documents
        self.facts: list[Fact] = []

    def get(self, source: str) -> Any:
        try:
            return resolve(self.documents, source)
        except (KeyError, IndexError, TypeError):
            return None

    def show(self, name: str, source: str, how: str = "count") -> str:
        value = self.get(source)
        if value is None:
            shown = NOT_RECORDED
        elif how == "count":
            shown = count(value)
        elif how == "lower":
            shown = lower(value)
        elif how == "upper":
            shown = upper(value)
        elif how == "point":
            shown = proportion(value)
        elif how == "percent":
            shown = percent(float(value))
        elif how == "number":
            shown = f"{float(value):g}"
        else:
            shown = str(value)
        self.facts.append(Fact(name, value, shown, source))
        return shown


def _index(rows: Any, key: str, wanted: object) -> int | None:
    if not isinstance(rows, list):
        return None
    return next((i for i, r in enumerate(rows) if isinstance(r, dict) and r.get(key) == wanted), None)


def build_methods(documents: Mapping[str, Any], style: str) -> Methods:
    """The methods text of the topic in ``documents["report"]`` in ``style`` (one of `STYLES`)."""
    if style not in STYLES:
        raise ValueError(f"style must be one of {', '.join(STYLES)}, not {style!r}")
    f = _Facts(documents)
    report = documents["report"]
    topic = str(report["topic"])
    status = report["answer"]["topic_status"]
    decided_by = status.get("decided_by")
    tool = f.show("software", "report:provenance.software", "text")
    dated = f.show("last judgment", "report:provenance.judgment_chain_head.recorded_at", "text")
    source = f.show("ranking source", "report:provenance.queue_source", "text")
    queue = f.show("queue", "report:queue", "text")
    target = f.show("target recall", "report:answer.target", "number")
    conf = f.show("confidence", "report:answer.confidence", "percent")
    conf_number = f.show("confidence (number)", "report:answer.confidence", "number")
    identified = f.show("records identified", "report:prisma.identified")
    identified_from = ""  # the PRISMA identification boxes, when the imports declared their sources
    if f.get("report:prisma.identified_source_not_recorded") is not None:
        boxes = [f"databases {f.show('records from databases', 'report:prisma.identified_from_databases')}",
                 f"registers {f.show('records from registers', 'report:prisma.identified_from_registers')}",
                 "other methods "
                 f"{f.show('records from other methods', 'report:prisma.identified_from_other_methods')}"]
        if f.get("report:prisma.identified_source_not_recorded"):
            boxes.append("source not recorded "
                         f"{f.show('records of no declared source', 'report:prisma.identified_source_not_recorded')}")
        identified_from = f" (from {', '.join(boxes)})"
    screened = f.show("records screened by reviewers", "report:prisma.screened")
    automation = f.show("records left unscreened by the stop", "report:prisma.not_screened_review_stopped")
    included = f.show("records included", "report:prisma.included")
    reviewed = f.show("reviewed set", "report:answer.topic_status.reviewed")
    found = f.show("relevant found", "report:answer.topic_status.relevant_found")
    headline = f.show("decision", "report:answer.topic_status.headline", "text")

    # the deciding figure and the rule
    figures = status.get("figures") or []
    i = _index(figures, "basis", decided_by)
    if i is not None:
        fig = f"report:answer.topic_status.figures[{i}]"
        bound = f.show("deciding recall lower bound", f"{fig}.recall_lower", "lower")
        evidence = f.show("deciding evidence", f"{fig}.evidence", "text")
        validity = f.show("validity", f"{fig}.validity", "text")
        certifies = bool(f.get(f"{fig}.certifies"))
        deciding = (f"recall of at least {bound} at {conf} confidence (one-sided), from {evidence} ({validity})")
    else:
        certifies, deciding = False, "no random sample or audit stream bounds recall"
    stream = documents.get("stream")
    if decided_by == "audit stream" and stream:
        pace = (f"one audit document every {f.show('audit pace (every)', 'stream:every')} reviewed"
                if stream.get("every") is not None else
                f"audit rate {f.show('audit rate', 'stream:rate', 'number')}")
        rule = (f"an audit stream: a seeded random permutation (seed {f.show('stream seed', 'stream:seed')}) of the "
                f"{f.show('stream population', 'stream:population_size')} ranked records, {pace}, judged beside "
                f"the review, read by an anytime-valid lower confidence bound on recall; stop when that bound "
                f"reaches {target} at {conf} confidence")
        kind = ("certified: whenever the team looks, the chance of stopping while recall is below the target is at "
                f"most 1 − {conf_number}")
    else:
        j = _index(report.get("stopping"), "rule", decided_by)
        if j is not None:
            row = f"report:stopping[{j}]"
            rule = (f"the {f.show('stopping rule', f'{row}.rule', 'text')} rule at target {target} and {conf} "
                    "confidence")
            kind = f"{f.show('rule kind', f'{row}.kind', 'text')}: {f.show('guarantee', f'{row}.guarantee', 'text')}"
        else:
            rule, kind = f"a {decided_by or 'no'} bound on recall at target {target}", "no certified rule applies"
    heuristics = [f.show("heuristic rule", f"report:stopping[{n}].rule", "text")
                  for n, r in enumerate(report.get("stopping") or [])
                  if r.get("kind") == "heuristic" and r.get("stop_now")]
    heuristic_text = ("; heuristic rules that would also stop now (" + ", ".join(heuristics) +
                      ") give no guarantee and were not used" if heuristics else "")
    # the samples' two-sided interval on the report's basis (supporting when another basis decided)
    basis = report.get("depth_basis")
    k = _index(report.get("recall"), "basis", basis)
    interval = ""
    if k is not None and f.get(f"report:recall[{k}].lower") is not None:
        rec = f"report:recall[{k}]"
        interval = (f"; the {basis} estimate gives recall {f.show('recall point', f'{rec}.point', 'point')} "
                    f"[{f.show('recall lower', f'{rec}.lower', 'lower')}, "
                    f"{f.show('recall upper', f'{rec}.upper', 'upper')}] (two-sided {conf})"
                    + ("" if basis == decided_by else ", supporting, not deciding"))
    # human oversight
    per_record = report["prisma"].get("reviewers_per_record") or {}
    several = sum(int(v) for key, v in per_record.items() if int(key) >= 2)
    f.facts.append(Fact("records screened by two or more reviewers", several, f"{several:,}",
                        "report:prisma.reviewers_per_record", "sum of the counts of keys 2 and more"))
    oversight = f"{several:,} records were screened by two or more reviewers" if several else (
        "each record was screened by one reviewer")
    agreement = report.get("review_quality", {}).get("agreement")
    if agreement:
        pair = "report:review_quality.agreement.pairs[0]"
        kappa = f.get(f"{pair}.cohen_kappa.kappa")
        if kappa is not None and not math.isnan(float(kappa)):
            oversight += (f" (Cohen's kappa {f.show('kappa', f'{pair}.cohen_kappa.kappa', 'point')} between "
                          f"{f.show('reviewer a', f'{pair}.reviewer_a', 'text')} and "
                          f"{f.show('reviewer b', f'{pair}.reviewer_b', 'text')})")
    # limitations
    limits = ["the bound assumes every screening decision is correct (it estimates records the screening did not "
              "reach, not records it misjudged)"]
    if i is not None and f.get(f"report:answer.topic_status.figures[{i}].validity") == "one look":
        limits.append("a one-look sample bound holds for one test at a stopping point fixed before the sample was "
                      "drawn")
    found_value = f.get("report:answer.topic_status.relevant_found")
    if isinstance(found_value, int) and found_value < 59 and status.get("status") != "reached":
        limits.append(f"with {found} relevant records found, an order-statistic certificate of {target} recall at "
                      f"{conf} confidence is out of reach short of screening nearly every record; a bound on the "
                      "count of relevant records left unscreened is the defensible claim")
    limitation = "; ".join(limits) + "."

    tool_sentence = (f"Records were prioritised and screening was stopped with {tool} (last decision {dated}), "
                     f"using the ranking {source} (queue {queue}).")
    stop_sentence = (f"The stopping rule was {rule} ({kind}){heuristic_text}.")
    outcome = (f"{headline} — {deciding}{interval}. {reviewed} records were reviewed and {found} relevant records "
               "found.")
    counts = (f"Of {identified} records identified{identified_from}, {screened} were screened by reviewers and "
              f"{automation} were not screened because screening stopped (counted as excluded by the automation "
              f"tool); {included} were included.")
    if style == "prisma":
        sections = [MethodsSection("Methods (PRISMA 2020 item 8)", " ".join([
            tool_sentence, stop_sentence, f"Human oversight: {oversight}.", f"Validation: {outcome}",
            f"Limitations: {limitation}"])),
            MethodsSection("Flow diagram footnote", counts)]
    elif style == "raise":
        sections = [MethodsSection("Tool", tool_sentence),
                    MethodsSection("Steps and configuration",
                                   f"Used for prioritised title-and-abstract screening and the decision to stop. "
                                   f"{stop_sentence}"),
                    MethodsSection("Human oversight", f"{oversight[0].upper()}{oversight[1:]}. {counts}"),
                    MethodsSection("Evidence that the tool performed sufficiently well", outcome),
                    MethodsSection("Limitations", limitation[0].upper() + limitation[1:])]
    else:
        p = "protocol:fields"
        disclosure = "; ".join([
            f"workflow {f.show('workflow', f'{p}.workflow', 'text')}",
            f"platform {f.show('platform', f'{p}.platform', 'text')}",
            f"model {f.show('model', f'{p}.model', 'text')}",
            f"version {f.show('version', f'{p}.version', 'text')}",
            f"documents removed by de-duplication {f.show('duplicates removed', f'{p}.duplicates_removed')}",
            f"suppressed by threading {f.show('threaded', f'{p}.threaded')}",
            f"produced {f.show('produced', f'{p}.produced')}",
            f"withheld {f.show('withheld', f'{p}.withheld')}"])
        acceptance = documents.get("protocol", {}).get("fields", {}).get("acceptance")
        accepted = (NOT_RECORDED if not acceptance else
                    f"{acceptance['form']} {'at least' if acceptance['form'] == 'recall' else 'upper bound at most'} "
                    f"{f.show('acceptance value', f'{p}.acceptance.value', 'number')} at "
                    f"{f.show('acceptance confidence', f'{p}.acceptance.confidence', 'percent')} confidence")
        sections = [MethodsSection("TAR process", f"{tool_sentence} Protocol fields: {disclosure}."),
                    MethodsSection("Acceptance criterion and stopping rule", f"Acceptance criterion: {accepted}. "
                                                                              f"{stop_sentence}"),
                    MethodsSection("Validation", outcome),
                    MethodsSection("Review and quality control", f"{oversight[0].upper()}{oversight[1:]}. {counts}"),
                    MethodsSection("Limitations", limitation[0].upper() + limitation[1:])]
    del certifies
    return Methods(topic, style, sections, f.facts)


def render_methods(methods: Methods, fmt: str) -> str:
    """``text`` (headings as lead-ins), ``markdown`` (``##`` headings) or ``json``."""
    if fmt == "json":
        return methods.to_json()
    if fmt == "markdown":
        return "\n\n".join(f"## {s.heading}\n\n{s.text}" for s in methods.sections) + "\n"
    if fmt == "text":
        return "\n\n".join(f"{s.heading}. {s.text}" for s in methods.sections) + "\n"
    raise ValueError(f"format must be one of {', '.join(TEXT_FORMATS)}, not {fmt!r}")
