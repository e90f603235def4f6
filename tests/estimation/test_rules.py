"""The rule table is the one place a stopping rule is declared: every door's vocabulary, the docs, the depth report
and the replay follow from it, so a rule added anywhere else but not to the table fails here."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import get_args

import numpy as np
import pytest

from reviewdepth.estimation import rules
from reviewdepth.estimation.assessment import ReviewState, SampleDraw, assess
from reviewdepth.estimation.replay import RULES, Design, ReplayPlan, replay, rules_for

DOCS = Path(__file__).resolve().parents[2] / "docs"
SAMPLE_SIZE = {"rest": 40, "population": 120}


def test_the_api_vocabulary_is_the_table() -> None:
    from reviewdepth.api.routers.simulations import RuleName

    assert get_args(RuleName) == tuple(RULES) == tuple(r.name for r in rules.REPLAYABLE)


def test_the_docs_tables_are_generated_from_the_table() -> None:
    """docs/estimation.md and docs/simulate.md: python -m reviewdepth.estimation.rules regenerates them."""
    for section, page in rules.SECTIONS:
        assert rules.docs_section((DOCS / page).read_text(), section) == rules.markdown(section), section
    for rule in rules.TABLE:
        assert f"| `{rule.name}` |" in rules.markdown("estimation-rules")


def test_names_are_unique_and_streams_fixed() -> None:
    names = [r.name for r in rules.TABLE]
    assert len(set(names)) == len(names)
    streams = [r.stream for r in rules.REPLAYABLE]
    assert None not in streams and len(set(streams)) == len(streams)
    # a rule's stream is its sample union's random stream under the rest design: these never change
    assert {r.name: r.stream for r in rules.REPLAYABLE if r.name in (
        "monitor", "fixed", "qbcb", "target", "direct", "elusion", "hypergeometric", "planned", "knee", "budget")} \
        == {"monitor": 0, "fixed": 1, "qbcb": 2, "target": 3, "direct": 4, "elusion": 5, "hypergeometric": 6,
            "planned": 7, "knee": 8, "budget": 9}
    for rule in rules.TABLE:
        assert rule.kind in rules.KINDS and all(k in rules.KINDS for _, k in rule.kind_by_design)
        assert set(rule.designs) <= set(rules.DESIGNS)
        assert bool(rule.replay) != bool(rule.not_replayed), f"{rule.name}: replayed, or say why not"


def _queue(size: int = 600, relevant: int = 60, seed: int = 4) -> np.ndarray:
    rng = np.random.default_rng(seed)
    # relevant documents concentrated at the top, as a ranking would put them
    weights = np.linspace(3.0, 0.1, size)
    ranks = rng.choice(size, size=relevant, replace=False, p=weights / weights.sum())
    labels = np.zeros(size, dtype=np.int8)
    labels[ranks] = 1
    return labels


@pytest.mark.parametrize("rule", [r.name for r in rules.REPLAYABLE])
def test_every_replayable_rule_replays_under_each_of_its_designs(rule: str) -> None:
    labels = _queue()
    for design in RULES[rule].designs:
        assert rule in rules_for(design)
        plan = ReplayPlan(Design(design, sample_size=SAMPLE_SIZE.get(design, 0), every=5 if design == "audit" else 0),
                          (rule,), Fraction(4, 5), 0.9, 25, 3, 1)
        [(name, runs)] = replay(labels, plan).items()
        assert name == rule and runs.replicates == 3 and runs.kind == RULES[rule].kind_under(design)
        assert np.all((runs.depth >= 1) & (runs.depth <= len(labels)))


def _state(labels: np.ndarray, reviewed: int, probabilities: np.ndarray | None = None) -> ReviewState:
    seen = labels.copy()
    seen[reviewed:] = -1
    return ReviewState(seen, reviewed, probabilities=probabilities)


def _draw(labels: np.ndarray, sample_id: int, start: int, n: int, seed: int) -> SampleDraw:
    ranks = np.random.default_rng(seed).choice(np.arange(start + 1, len(labels) + 1), size=n, replace=False)
    return SampleDraw(sample_id, start, ranks.astype(np.int64), labels[ranks - 1].astype(np.int64), n)


def test_every_evaluated_rule_is_in_the_report_in_table_order_certified_first() -> None:
    labels = _queue()
    c = 300
    p = np.clip(np.linspace(0.9, 0.0, len(labels)), 0, 1)
    with_samples = assess(_state(labels, c, p), [_draw(labels, 1, 0, 200, 1), _draw(labels, 2, c, 100, 2)], ["0.8"],
                          stopping_target="0.8")
    without = assess(_state(labels, c), [], ["0.8"], stopping_target="0.8")
    for result in (with_samples, without):
        names = [e.rule for e in result.stopping]
        kinds = {e.rule: e.kind for e in result.stopping}
        in_table = [r.name for r in rules.EVALUATED if r.name in kinds]
        assert names == sorted(in_table, key=lambda name: kinds[name] != "certified")
    # the order the report has always printed (a rule added later comes after these, within its kind)
    legacy = ("target", "qbcb", "direct", "elusion", "hypergeometric", "quant", "knee", "budget")
    assert [e.rule for e in with_samples.stopping if e.rule in legacy] == list(legacy)
    assert [e.rule for e in without.stopping][:6] == ["target", "qbcb", "direct", "hypergeometric-ranked", "knee",
                                                      "budget"]
    shown = {e.rule for e in with_samples.stopping} | {e.rule for e in without.stopping}
    assert shown == {r.name for r in rules.EVALUATED}


def test_quant_reads_probabilities_and_says_when_scores_are_not() -> None:
    labels = _queue()
    c = 300
    p = np.clip(np.linspace(0.9, 0.0, len(labels)), 0, 1)
    [quant] = [e for e in assess(_state(labels, c, p), [], ["0.8"], stopping_target="0.8").stopping
               if e.rule == "quant"]
    assert quant.kind == "heuristic" and quant.stop_now is not None
    scores = np.linspace(12.0, -3.0, len(labels))  # a ranker's scores, not probabilities
    [not_applicable] = [e for e in assess(_state(labels, c, scores), [], ["0.8"], stopping_target="0.8").stopping
                        if e.rule == "quant"]
    assert not_applicable.stop_now is None and "not probabilities" in not_applicable.reason


def test_every_kind_has_its_words() -> None:
    from reviewdepth.report.wording import KIND_LABELS, SHORT_KINDS

    assert set(KIND_LABELS) == set(SHORT_KINDS) == set(rules.KINDS)


def _long_queue() -> np.ndarray:
    """4,000 documents with 160 relevant, front-loaded, so that every prefix heuristic stops inside the queue (the
    2399 rule cannot stop before 2,399 documents, ASReview's 500 needs a run of 500)."""
    rng = np.random.default_rng(11)
    weights = np.exp(-np.arange(4000) / 300.0)
    labels = np.zeros(4000, dtype=np.int8)
    labels[rng.choice(4000, size=160, replace=False, p=weights / weights.sum())] = 1
    return labels


def _prefix_evidence(rule: rules.Rule, prefix: np.ndarray, size: int) -> bool:
    """What the depth report says at a cutoff after ``prefix`` (for a threshold variant without a report row, the
    rule's own function at its threshold)."""
    if rule.evaluate is not None:
        cut = rules.Cutoff(prefix.astype(np.int64), len(prefix), size, int(prefix.sum()), size - len(prefix),
                           Fraction(4, 5), 0.1, np.zeros(0, dtype=np.int64))
        evidence = rule.evaluate(cut)
        assert evidence is not None and evidence.rule == rule.name and evidence.kind == "heuristic"
        return bool(evidence.stop_now)
    n = int(rule.name.rsplit("-", 1)[1])
    from reviewdepth.estimation.stopping import consecutive_irrelevant

    return bool(consecutive_irrelevant(prefix, n).stop_now)


PREFIX_RULES = [r.name for r in rules.REPLAYABLE if "none" in r.designs and isinstance(r.replay_under("none"),
                                                                                        rules.OnPrefix)]


@pytest.mark.parametrize("rule", PREFIX_RULES)
def test_the_replay_stops_where_the_report_first_says_stop(rule: str) -> None:
    """Replay parity: simulate's stop for a prefix heuristic is the first look at which the depth report's row,
    shown only the prefix, says stop (every design, every replicate)."""
    labels = _long_queue()
    info = rules.BY_NAME[rule]
    looks = range(50, len(labels), 50)
    expected = next((k for k in looks if _prefix_evidence(info, labels[:k], len(labels))), len(labels))
    assert expected < len(labels), f"{rule} should stop inside the test queue"
    for design in ("none", "audit"):
        plan = ReplayPlan(Design(design, every=10 if design == "audit" else 0), (rule,), Fraction(4, 5), 0.9, 50, 2,
                          3)
        runs = replay(labels, plan)[rule]
        assert runs.kind == "heuristic" and runs.depth.tolist() == [expected, expected], design


def test_new_heuristics_are_heuristic_everywhere() -> None:
    for name in ("2399-rule", "batch-precision", "consecutive-irrelevant", "consecutive-irrelevant-50",
                 "consecutive-irrelevant-250", "consecutive-irrelevant-500", "quant", "quant-ci", "point-process"):
        rule = rules.BY_NAME[name]
        assert rule.kind == "heuristic" and all(rule.kind_under(d) == "heuristic" for d in rule.designs)
    assert {n: rules.BY_NAME[n].stream for n in ("consecutive-irrelevant", "consecutive-irrelevant-50",
                                                 "consecutive-irrelevant-250", "consecutive-irrelevant-500",
                                                 "2399-rule", "batch-precision", "point-process")} == \
        {"consecutive-irrelevant": 10, "consecutive-irrelevant-50": 11, "consecutive-irrelevant-250": 12,
         "consecutive-irrelevant-500": 13, "2399-rule": 14, "batch-precision": 15, "point-process": 16}
    from reviewdepth.services.simulation.portfolio import calibrated_rules

    assert {"2399-rule", "batch-precision", "consecutive-irrelevant-50", "consecutive-irrelevant-500"} <= \
        set(calibrated_rules("audit"))


def test_quant_ci_is_shown_beside_quant_and_not_replayed() -> None:
    labels = _queue()
    p = np.clip(np.linspace(0.9, 0.0, len(labels)), 0, 1)
    shown = {e.rule: e for e in assess(_state(labels, 300, p), [], ["0.8"], stopping_target="0.8").stopping}
    quant, ci = shown["quant"], shown["quant-ci"]
    assert ci.kind == "heuristic" and ci.details["m"] == 2.0
    assert ci.details["bound"] <= quant.details["bound"] == quant.details["recall_estimate"]
    assert "quant-ci" not in RULES and rules.BY_NAME["quant-ci"].not_replayed
    assert "quant-ci" not in {e.rule for e in assess(_state(labels, 300), [], ["0.8"], stopping_target="0.8").stopping}
