"""The one table of stopping rules (as `reviewdepth.measures.table` is for measures).

Each rule is declared once, in :data:`TABLE`: its name, its kind (``certified``: a guarantee on recall that covers
the stop as used; ``heuristic``: none; ``invalid``: a one-look guarantee used at every look, which it does not
cover), a short label and a description, what evidence it reads, how the depth report evaluates it at the current
cutoff (:attr:`Rule.evaluate`, on one :class:`Cutoff`) and how ``reviewdepth simulate`` replays it under each design
that can replay it (:attr:`Rule.replay`). The depth report (`assessment.assess`), the replay engine
(`replay.RULES`, `replay.rules_for`), the API's rule vocabulary (`api/routers/simulations.RuleName`), the docs'
tables (``python -m reviewdepth.estimation.rules``) and the renderers read this table and nothing else.

Order: the report lists the rules it evaluates in table order, certified ones first. The replay lists rules by
:attr:`Rule.stream`, a number given once to each replayable rule and never changed: the rest design draws a rule's
sample union from the stream ``1 + stream``, so a new rule takes the next free number and every existing replay
keeps its numbers. Pure: numpy and the stopping functions, no I/O.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Literal

import numpy as np
import numpy.typing as npt

from reviewdepth.estimation import stopping
from reviewdepth.estimation.stopping import StoppingEvidence

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
Kind = Literal["certified", "heuristic", "invalid"]
KINDS: tuple[str, ...] = ("certified", "heuristic", "invalid")
#: what the replayed team judges besides the ranked prefix (`reviewdepth.estimation.replay`)
DESIGN_TEXT: dict[str, str] = {
    "none": "nothing",
    "rest": "at every look, a fresh simple random sample of n of the ranks after k",
    "population": "one simple random sample of n of the whole queue, drawn before the review",
    "audit": "the audit stream (§5b): one audit document after every K ranked, documents already judged passed free",
    "planned": "what the cheapest-stop plan asks for at every look: review on, or audit (§5d)",
}
DESIGNS: tuple[str, ...] = tuple(DESIGN_TEXT)


@dataclass(frozen=True)
class Cutoff:
    """What every rule may read at the report's cutoff. ``prefix``: 1/0 (relevant or not) per reviewed document in
    review order (c = ``reviewed`` of them, ``found`` relevant); ``size``: the queue's S documents, ``rest_size``
    = S − c; τ (``tau``) and α = 1 − confidence; ``population_positives``: queue ranks of the whole-queue sample's
    positives in draw order (empty: no whole-queue sample); ``rest_sample``: (documents, their 0/1 labels) of the
    sample chosen for the unreviewed rest (None: none); ``probabilities``: the queue's scores when they are
    declared per-document probabilities of relevance, in queue order (None: not declared)."""

    prefix: IntArray
    reviewed: int
    size: int
    found: int
    rest_size: int
    tau: Fraction
    alpha: float
    population_positives: IntArray
    rest_sample: tuple[int, IntArray] | None = None
    probabilities: FloatArray | None = None

    @property
    def testable(self) -> bool:
        """A target strictly between 0 and 1: the sample rules can test it (recall 1 is never certified)."""
        return 0 < self.tau < 1

    @property
    def rest(self) -> tuple[int, IntArray] | None:
        """The rest sample when something is left unreviewed."""
        return self.rest_sample if self.rest_sample is not None and self.rest_size else None


# --- how simulate replays a rule (`reviewdepth.estimation.replay` runs each of these) --------------------------


@dataclass(frozen=True)
class OnPrefix:
    """The rule reads the reviewed prefix only: ``depth(labels, N, τ, α)`` is the first depth at which it fires on
    the completed queue's labels (None: never; most prefix rules ignore τ and α). The same stop in every replicate
    and every design; the team acts at its first look at or after that depth."""

    depth: Callable[[npt.NDArray[np.int8], int, Fraction, float], int | None]


@dataclass(frozen=True)
class OnWholeQueueSample:
    """The rule reads one simple random sample of the whole queue drawn before the review: ``evidence(positive
    ranks in draw order, reviewed, τ, α)``. ``by_depth``: its ``stop_depth`` at reviewed = 0 is where it stops (read
    once); otherwise the first look where ``stop_now`` holds is found by bisection (it must be monotone in the
    depth)."""

    evidence: Callable[[IntArray, int, Fraction, float], StoppingEvidence]
    by_depth: bool = True


@dataclass(frozen=True)
class OnRestSample:
    """The rule reads a fresh random sample of the rest at every look: ``stops(N, k, F(k), n, y, τ, α)`` with n
    documents, y relevant. ``urn_found``: what it certifies is the prefix plus the sample (its positives count as
    found). ``chunk_stream``: its sample union is drawn from the chunk's own stream (elusion, which
    `monitor_simulation.simulate_fresh_elusion` reproduces) rather than the rule's stream. ``threshold(N, k, F(k),
    n, τ, α)``, for a rule that stops exactly at y = 0 … y_max: that y_max (−1: no y), which a replay reads once
    per look instead of ``stops`` once per sample count (None: the replay asks ``stops``)."""

    stops: Callable[[int, int, int, int, int, Fraction, float], bool]
    urn_found: bool = False
    chunk_stream: bool = False
    threshold: Callable[[int, int, int, int, Fraction, float], int] | None = None


@dataclass(frozen=True)
class OnTrainingSample:
    """The rule draws its own random training set before the review (SAFE's phase 1): ``size(N)`` documents, a
    simple random sample of the queue drawn from the rule's own stream (``spawn_key=(*key, chunk, 1 + stream)``, one
    draw per replicate); ``stop(labels, training ranks)`` is its evidence on the completed queue. The team acts at
    its first look at or after the evidence's stop depth; the training documents ranked after that look are judged
    outside the prefix: counted as sampled, and their relevant ones as found."""

    size: Callable[[int], int]
    stop: Callable[[npt.NDArray[np.int8], IntArray], StoppingEvidence]


@dataclass(frozen=True)
class OnAuditStream:
    """The rule reads the audit stream; `monitor_simulation.simulate_audit_rules` evaluates it (vectorised over
    replicates) under its name."""


@dataclass(frozen=True)
class OnPlan:
    """The cheapest-stop plan (`stop_plan.PlannedPolicy`) followed at every look."""


Replay = OnPrefix | OnWholeQueueSample | OnRestSample | OnAuditStream | OnPlan | OnTrainingSample


@dataclass(frozen=True)
class Rule:
    """One stopping rule. ``replay``: (design, how) for each design simulate can replay it under (empty: not
    replayable, with ``not_replayed`` saying why); ``kind_by_design``: (design, kind) where its kind differs under a
    design; ``stream``: its fixed replay number (module docstring; None when not replayable); ``reads``: the
    evidence it needs, in words for the docs; ``not_evaluated``: why the depth report has no row for it (when
    ``evaluate`` is None)."""

    name: str
    kind: Kind
    label: str
    description: str
    reads: str
    evaluate: Callable[[Cutoff], StoppingEvidence | None] | None
    replay: tuple[tuple[str, Replay], ...] = ()
    stream: int | None = None
    kind_by_design: tuple[tuple[str, str], ...] = ()
    not_replayed: str = ""
    not_evaluated: str = "see the monitor"

    @property
    def designs(self) -> tuple[str, ...]:
        """The designs simulate can replay the rule under."""
        return tuple(design for design, _ in self.replay)

    def kind_under(self, design: str) -> str:
        """The rule's kind as replayed under ``design``."""
        return dict(self.kind_by_design).get(design, self.kind)

    def replay_under(self, design: str) -> Replay:
        """How simulate replays the rule under ``design`` (KeyError when it cannot)."""
        return dict(self.replay)[design]


def every_design(how: Replay) -> tuple[tuple[str, Replay], ...]:
    return tuple((design, how) for design in DESIGNS)


AUDIT = OnAuditStream()


def prefix_rule(name: str, label: str, description: str, evidence: Callable[[IntArray, int], StoppingEvidence]
                | None = None, *, stream: int, not_evaluated: str = "",
                for_target: Callable[[IntArray, int, Fraction, float], StoppingEvidence] | None = None) -> Rule:
    """A heuristic that reads the reviewed prefix only: ``evidence(labels of the reviewed prefix, queue size)``, or
    ``for_target(labels, queue size, τ, α)`` for a rule that also reads the target and confidence (then the report
    shows it only for a target strictly between 0 and 1). The report evaluates it on the prefix (unless
    ``not_evaluated`` says why not: a variant of a rule the report already shows); simulate replays it under every
    design, stopping at the first look at or after the depth where it fires on the completed queue (the same in
    every replicate)."""

    def read(prefix: IntArray, size: int, tau: Fraction, alpha: float) -> StoppingEvidence:
        if for_target is not None:
            return for_target(prefix, size, tau, alpha)
        assert evidence is not None
        return evidence(prefix, size)

    def evaluate(cut: Cutoff) -> StoppingEvidence | None:
        if for_target is not None and not cut.testable:
            return None
        return read(cut.prefix, cut.size, cut.tau, cut.alpha)

    def depth(labels: npt.NDArray[np.int8], size: int, tau: Fraction, alpha: float) -> int | None:
        return read(labels.astype(np.int64), size, tau, alpha).stop_depth

    return Rule(name, "heuristic", label, description, "the reviewed prefix", None if not_evaluated else evaluate,
                every_design(OnPrefix(depth)), stream, not_evaluated=not_evaluated or Rule.not_evaluated)


def consecutive_irrelevant_rule(n: int, stream: int) -> Rule:
    """The N-consecutive-irrelevant line at threshold ``n``: ``consecutive-irrelevant`` at the default
    (`stopping.CONSECUTIVE_IRRELEVANT`, the report's row), ``consecutive-irrelevant-<n>`` at ASReview's other
    example thresholds (replayed and calibrated; the report shows the default only)."""
    default = n == stopping.CONSECUTIVE_IRRELEVANT
    return prefix_rule("consecutive-irrelevant" if default else f"consecutive-irrelevant-{n}",
                       f"N consecutive irrelevant (n = {n})",
                       f"stop after {n} irrelevant documents in a row (ASReview's NConsecutiveIrrelevant, n = {n}), "
                       "acted on at the next look",
                       lambda prefix, size: stopping.consecutive_irrelevant(prefix, n), stream=stream,
                       not_evaluated="" if default else
                       f"the report shows n = {stopping.CONSECUTIVE_IRRELEVANT} (`consecutive-irrelevant`)")

# --- the evaluations at the report's cutoff ------------------------------------------------------------------


def _target(cut: Cutoff) -> StoppingEvidence | None:
    return stopping.target_method(cut.population_positives, cut.reviewed, tau=cut.tau, alpha=cut.alpha,
                                  in_draw_order=True) if cut.testable else None


def _qbcb(cut: Cutoff) -> StoppingEvidence | None:
    return stopping.qbcb(cut.population_positives, cut.reviewed, tau=cut.tau, alpha=cut.alpha) if cut.testable \
        else None


def _direct(cut: Cutoff) -> StoppingEvidence | None:
    return stopping.direct_recall_rule(cut.population_positives, cut.reviewed, tau=cut.tau, alpha=cut.alpha) \
        if cut.testable else None


def _elusion(cut: Cutoff) -> StoppingEvidence | None:
    if not cut.testable or cut.rest is None:
        return None
    m, urn = cut.rest
    return stopping.elusion_rule(cut.found, cut.rest_size, m, int(urn.sum()), tau=cut.tau, alpha=cut.alpha,
                                 reviewed=cut.reviewed)


def _hypergeometric(cut: Cutoff) -> StoppingEvidence | None:
    if not cut.testable or cut.rest is None:
        return None
    return stopping.hypergeometric_test(np.concatenate((cut.prefix, cut.rest[1])), cut.size, tau=cut.tau,
                                        alpha=cut.alpha, urn_start=cut.reviewed)


def _hypergeometric_ranked(cut: Cutoff) -> StoppingEvidence | None:
    # the ranked-urn form stands in for the random-urn test when there is no rest sample to be the urn
    if not cut.testable or cut.rest is not None or not cut.reviewed:
        return None
    return stopping.hypergeometric_test(cut.prefix, cut.size, tau=cut.tau, alpha=cut.alpha)


def _quant_with(m: float) -> Callable[[Cutoff], StoppingEvidence | None]:
    """Quant (m = 0) or QuantCI (m = 2) on the cutoff: not shown when the queue's scores are not declared
    probabilities; "not applicable" when they are declared but are not all in [0, 1]."""
    name = "quant" if m == 0 else "quant-ci"

    def evaluate(cut: Cutoff) -> StoppingEvidence | None:
        if cut.probabilities is None or not cut.testable:
            return None  # scores not declared probabilities: the rule is not shown
        p = cut.probabilities
        missing = len(p) != cut.size or bool(np.isnan(p).any())
        if missing or not bool(np.all(np.isfinite(p) & (p >= 0) & (p <= 1))):
            why = ("the queue has no score for some of its documents" if missing else
                   "the queue's scores are not probabilities in [0, 1] for every document")
            return StoppingEvidence(name, "heuristic", None, None, "none (model-based)", (), {},
                                    f"not applicable: {why}, and Quant reads one probability per document",
                                    certifies=stopping.PREFIX)
        return stopping.quant_rule(p, cut.reviewed, tau=cut.tau, m=m)

    return evaluate


_quant = _quant_with(0.0)
_quant_ci = _quant_with(stopping.QUANT_CI_M)


# --- the replays -------------------------------------------------------------------------------------------------


def _elusion_stops(size: int, k: int, found: int, n: int, y: int, tau: Fraction, alpha: float) -> bool:
    return bool(stopping.elusion_rule(found, size - k, n, y, tau, alpha, reviewed=k).stop_now)


def _elusion_threshold(size: int, k: int, found: int, n: int, tau: Fraction, alpha: float) -> int:
    return stopping.elusion_threshold(found, size - k, n, tau, alpha)


def _hypergeometric_stops(size: int, k: int, found: int, n: int, y: int, tau: Fraction, alpha: float) -> bool:
    p, _ = stopping.hypergeometric_p_value(size, k + n, found, n, y, tau)
    return p < alpha


def _qbcb_at(positives: IntArray, reviewed: int, tau: Fraction, alpha: float) -> StoppingEvidence:
    return stopping.qbcb(positives, reviewed, tau, alpha)


def _target_at(positives: IntArray, reviewed: int, tau: Fraction, alpha: float) -> StoppingEvidence:
    return stopping.target_method(positives, reviewed, tau, alpha, in_draw_order=True)


def _direct_at(positives: IntArray, reviewed: int, tau: Fraction, alpha: float) -> StoppingEvidence:
    return stopping.direct_recall_rule(positives, reviewed, tau, alpha)


def _safe_at(labels: npt.NDArray[np.int8], training: IntArray) -> StoppingEvidence:
    return stopping.safe_procedure(labels, training)


_QUANT_NOT_REPLAYED = ("a completed run's scores are its final model's, not the model's at each look: replaying "
                       "Quant on them would read the ranking with hindsight")
_ONE_SAMPLE = ("the one sample's guarantee does not cover an audit sample that grows with the looks",)

TABLE: tuple[Rule, ...] = (
    Rule("target", "certified", "target method",
         "target method: stop once the first K sample positives are all reviewed (on an audit stream: the first K "
         "audit positives, which its one-sample guarantee does not formally cover)",
         "a simple random sample of the whole queue", _target,
         (("population", OnWholeQueueSample(_target_at)), ("audit", AUDIT)), 3, (("audit", "invalid"),)),
    Rule("qbcb", "certified", "QBCB",
         "QBCB: stop once the j-th sample positive in rank order is reviewed (on an audit stream: re-evaluated as "
         "the audit grows, which its one-sample guarantee does not cover)",
         "a simple random sample of the whole queue", _qbcb,
         (("population", OnWholeQueueSample(_qbcb_at)), ("audit", AUDIT)), 2, (("audit", "invalid"),)),
    Rule("direct", "certified", "direct method",
         "direct method: one-sided Clopper-Pearson lower bound on the sample positives' recall >= target",
         "a simple random sample of the whole queue", _direct,
         (("population", OnWholeQueueSample(_direct_at, by_depth=False)),), 4),
    Rule("elusion", "invalid", "elusion test",
         "elusion test on a fresh rest sample at every look (certified for one look only)",
         "a simple random sample of the unreviewed rest", _elusion,
         (("rest", OnRestSample(_elusion_stops, chunk_stream=True, threshold=_elusion_threshold)),), 5),
    Rule("hypergeometric", "invalid", "hypergeometric test (random urn)",
         "random-urn hypergeometric test on a fresh rest sample at every look (certified for one look only)",
         "a simple random sample of the unreviewed rest (the urn)", _hypergeometric,
         (("rest", OnRestSample(_hypergeometric_stops, urn_found=True)),), 6),
    Rule("hypergeometric-ranked", "heuristic", "hypergeometric test (ranked urns)",
         "hypergeometric test with the last screened documents as urns (minimum p over urns): no random urn",
         "the reviewed prefix", _hypergeometric_ranked,
         not_replayed="the report shows it only where no rest sample exists; replayed, the rest design's random "
                      "urn is the valid form"),
    Rule("quant", "heuristic", "Quant",
         "Quant: model-estimated recall (sum of the probabilities reviewed over the sum of all) >= target",
         "per-document probabilities of relevance from the current model, for every document", _quant,
         not_replayed=_QUANT_NOT_REPLAYED),
    Rule("quant-ci", "heuristic", "QuantCI",
         f"QuantCI: Quant's recall estimate minus {stopping.QUANT_CI_M:g} standard deviations >= target",
         "per-document probabilities of relevance from the current model, for every document", _quant_ci,
         not_replayed=_QUANT_NOT_REPLAYED),
    prefix_rule("knee", "knee method",
                "knee method on the reviewed prefix (AutoTAR checkpoints, as in the report), acted on at the next look",
                lambda prefix, size: stopping.knee_method(prefix), stream=8),
    prefix_rule("budget", "budget method",
                "budget method on the reviewed prefix (AutoTAR checkpoints, as in the report), acted on at the next "
                "look", stopping.budget_method, stream=9),
    consecutive_irrelevant_rule(stopping.CONSECUTIVE_IRRELEVANT, stream=10),
    *(consecutive_irrelevant_rule(n, stream) for n, stream in ((50, 11), (250, 12), (500, 13))),
    prefix_rule("2399-rule", "2399 rule",
                "stop once reviewed >= 1.2 x relevant found + 2,399 (Cormack & Grossman's baseline, as TARexp), "
                "acted on at the next look", lambda prefix, size: stopping.rule_2399(prefix), stream=14),
    prefix_rule("batch-precision", "batch precision",
                f"stop after {stopping.BATCH_PRECISION_SLACK} batch of {stopping.BATCH_PRECISION_BATCH} reviewed "
                f"with precision <= {stopping.BATCH_PRECISION_CUTOFF.numerator}/"
                f"{stopping.BATCH_PRECISION_CUTOFF.denominator} (TARexp's defaults), acted on at the next look",
                lambda prefix, size: stopping.batch_precision(prefix), stream=15),
    prefix_rule("point-process", "hyperbolic point process",
                "hyperbolic inhomogeneous Poisson process (Stevenson & Bin-Hezam 2023): stop once found >= target "
                "x the predicted relevant count (its confidence-quantile), checked every 2.5 % of the queue, acted "
                "on at the next look", stream=16,
                for_target=lambda prefix, size, tau, alpha: stopping.hyperbolic_point_process(prefix, size, tau,
                                                                                              1 - alpha)),
    Rule("safe", "heuristic", "SAFE procedure",
         f"SAFE (Boetje & van de Schoot 2024), phases 1-3: a random training set of "
         f"{stopping.SAFE_TRAINING_FRACTION.numerator * 100 / stopping.SAFE_TRAINING_FRACTION.denominator:g} % of the "
         f"queue, then the ranking until screened >= {stopping.SAFE_ESTIMATE_FACTOR} x the relevant count estimated "
         f"from it, >= {stopping.SAFE_MIN_SCREENED.numerator * 100 / stopping.SAFE_MIN_SCREENED.denominator:g} % of "
         f"the queue screened and {stopping.SAFE_PHASE2_RUN} irrelevant in a row (phase 2), then on down the same "
         f"ranking until {stopping.SAFE_PHASE3_RUN} more in a row (phase 3; SAFE switches model there); phase 4's "
         "human check is not replayed; acted on at the next look",
         "its own random training set and the reviewed prefix", None,
         (("none", OnTrainingSample(stopping.safe_training_size, _safe_at)),), 17,
         not_evaluated="a procedure replayed by simulate: the depth report reads a review's prefix, not its random "
                       "training phase or its model switch"),
    Rule("monitor", "certified", "anytime-valid monitor",
         "anytime-valid monitor on the audit stream (valid however often the team looks)",
         "the audit stream", None, (("audit", AUDIT),), 0),
    Rule("fixed", "invalid", "fixed-look audit bound",
         "one-look hypergeometric bound on the audit stream, repeated at every look",
         "the audit stream", None, (("audit", AUDIT),), 1),
    Rule("planned", "certified", "cheapest-stop plan",
         "the cheapest-stop plan followed at every look (review on or audit, whichever it projects cheaper); "
         "stops when the anytime-valid monitor certifies",
         "the audit stream, as the plan asks for it", None, (("planned", OnPlan()),), 7),
)
BY_NAME: dict[str, Rule] = {rule.name: rule for rule in TABLE}
#: the rules simulate can replay, in replay order (by stream number)
REPLAYABLE: tuple[Rule, ...] = tuple(sorted((r for r in TABLE if r.replay), key=lambda r: r.stream or 0))
#: the rules the depth report evaluates at its cutoff, in table order
EVALUATED: tuple[Rule, ...] = tuple(r for r in TABLE if r.evaluate is not None)


def evaluate(cut: Cutoff, *, heuristics: bool = True) -> list[StoppingEvidence]:
    """Every rule the report evaluates that applies at ``cut``, certified ones first (stable: table order within a
    kind), so a heuristic's "stop" is never the first one read. ``heuristics`` False: not the heuristic lines of
    the table (a view that shows no heuristic, such as the dashboard's monitor, need not fit the point process);
    the elusion and hypergeometric tests, "invalid" only as simulate replays them at every look, stay."""
    out = [ev for rule in EVALUATED if rule.evaluate is not None and (heuristics or rule.kind != "heuristic")
           for ev in [rule.evaluate(cut)] if ev is not None]
    return sorted(out, key=lambda e: e.kind != "certified")


# --- documentation -------------------------------------------------------------------------------------------------

SECTIONS: tuple[tuple[str, str], ...] = (("estimation-rules", "estimation.md"),
                                         ("estimation-designs", "estimation.md"), ("simulate-rules", "simulate.md"))


def doc_begin(section: str) -> str:
    return f"<!-- BEGIN GENERATED {section} (python -m reviewdepth.estimation.rules) -->"


DOC_END = "<!-- END GENERATED -->"


def _designs_text(rule: Rule) -> str:
    if not rule.replay:
        return "not replayed: " + rule.not_replayed
    if rule.designs == DESIGNS:
        return "every design"
    return ", ".join(rule.designs)


def _kind_text(rule: Rule) -> str:
    if not rule.kind_by_design:
        return rule.kind
    other = dict(rule.kind_by_design)
    parts = [f"{rule.kind} ({', '.join(d for d in rule.designs if d not in other)})"]
    parts += [f"{kind} as used ({design})" if kind == "invalid" else f"{kind} ({design})"
              for design, kind in rule.kind_by_design]
    return "; ".join(parts)


def markdown(section: str) -> str:
    """The generated ``section`` of its docs page (:data:`SECTIONS`), markers included."""
    if section == "estimation-rules":
        rows = ["| rule | label | kind | reads | depth report | `reviewdepth simulate` |", "|---|---|---|---|---|---|"]
        rows += [f"| `{r.name}` | {r.label} | {_kind_text(r)} | {r.reads} | "
                 f"{'evaluated at the cutoff' if r.evaluate else f'not a row ({r.not_evaluated})'} | "
                 f"{_designs_text(r)} |" for r in TABLE]
    elif section == "estimation-designs":
        rows = ["| design | what the team judges besides the prefix | rules |", "|---|---|---|"]
        rows += [f"| `{d}` | {text} | {', '.join(f'`{r.name}`' for r in REPLAYABLE if d in r.designs)} |"
                 for d, text in DESIGN_TEXT.items()]
    elif section == "simulate-rules":
        rows = ["| Rule | Kind | Designs |", "|---|---|---|"]
        rows += [f"| `{r.name}` | {_kind_text(r)} | {_designs_text(r)} |" for r in REPLAYABLE]
    else:
        raise ValueError(f"unknown docs section {section!r}; choose from {', '.join(s for s, _ in SECTIONS)}")
    return "\n".join([doc_begin(section), "", *rows, "", DOC_END]) + "\n"


def docs_section(text: str, section: str) -> str:
    """The generated ``section`` of a docs page's text (markers included)."""
    start = text.index(doc_begin(section))
    end = text.index(DOC_END, start) + len(DOC_END)
    return text[start:end] + "\n"


def rewrite(docs: Path) -> None:
    """Regenerate every section in the pages under ``docs``."""
    for section, page in SECTIONS:
        path = docs / page
        text = path.read_text()
        path.write_text(text.replace(docs_section(text, section), markdown(section)))


if __name__ == "__main__":  # regenerate the rule tables of docs/estimation.md and docs/simulate.md
    rewrite(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("docs"))
