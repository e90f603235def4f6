"""A lower bound in a rule's words is rounded down, never up: the printed figure never claims more than the bound
(CD009579 after a certified stop printed "recall ≥ 0.817" for a bound of 0.8165)."""

from __future__ import annotations

import re

import numpy as np

from reviewdepth.estimation.stopping import direct_recall_rule, elusion_rule, floor_text

PRINTED = re.compile(r"recall ≥ (\d\.\d{3})")


def _printed(reason: str) -> float:
    found = PRINTED.search(reason)
    assert found is not None, reason
    return float(found.group(1))


def test_floor_text_never_rounds_up() -> None:
    assert floor_text(0.8165) == "0.816"
    assert floor_text(0.94996) == "0.949"
    assert floor_text(0.816) == "0.816"  # exactly representable-ish values are not pushed down a step
    assert floor_text(1.0) == "1.000" and floor_text(0.0) == "0.000"


def test_elusion_reason_prints_the_bound_rounded_down() -> None:
    rounded_up_before = 0
    for found in (50, 138, 400):
        for relevant in range(0, 6):
            for size in (100, 250, 400):
                rule = elusion_rule(found, 4455, size, relevant, tau=0.8)
                lower = float(rule.details["recall_lower"])
                shown = _printed(rule.reason)
                assert lower - 0.001 < shown <= lower + 1e-12
                rounded_up_before += round(lower, 3) > lower
    assert rounded_up_before > 0  # the grid holds bounds that rounding to nearest would have overstated


def test_direct_reason_prints_the_bound_rounded_down() -> None:
    ranks = np.arange(1, 41) * 50
    for reviewed in range(100, 2001, 100):
        rule = direct_recall_rule(ranks, reviewed, tau=0.8)
        lower = float(rule.details["recall_lower"])
        shown = _printed(rule.reason)
        assert lower - 0.001 < shown <= lower + 1e-12
