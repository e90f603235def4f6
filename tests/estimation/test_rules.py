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
