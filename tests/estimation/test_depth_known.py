"""Depth to target recall with R known (reference §1): the three k(τ) rules, exactness traps and DepthAtTarget."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from reviewdepth.measures.depth import (
    TARGET_RULES,
    depth_at_count,
    depth_at_recall,
    depth_to_recall,
    last_relevant_rank,
    relevant_ranks_from_labels,
    target_count,
    wss_at,
)

A = np.array([1, 2, 9, 10], dtype=np.int64)
B = np.array([3, 4, 5, 6], dtype=np.int64)


def test_ceil_rule_is_exact_decimal() -> None:
    # The float product is 55.00000000000001, whose ceiling is 56.
    assert 0.55 * 100 > 55
    assert target_count("0.55", 100) == 55
    assert target_count(0.55, 100) == 55
    assert target_count(Fraction(11, 20), 100) == 55
    assert target_count("0.95", 14) == 14 and target_count("0.95", 30) == 29
    assert target_count("0.95", 20) == 19 and target_count("0.95", 21) == 20


def test_tar_eval_rule_half_even() -> None:
    assert target_count(0.95, 14, "tar_eval") == 13  # ceil gives 14
    assert target_count(0.95, 30, "tar_eval") == 28  # 93.3 % recall; ceil 29
    assert target_count(0.95, 4, "tar_eval") == 4
    # Python round is half-even: 0.95 * 70 = 66.5 -> 66 (half-up would give 67). R ≡ 30 (mod 40).
    assert target_count(0.95, 70, "tar_eval") == 66
    differs = [r for r in range(1, 201) if target_count("0.95", r) != target_count("0.95", r, "tar_eval")]
    assert len(differs) == 95
    assert differs[:3] == [11, 12, 13] and 30 in differs and 20 not in differs


def test_asreview_rule_floor() -> None:
    assert target_count(0.95, 4, "asreview") == 3
    assert target_count(0.95, 20, "asreview") == 19
    assert target_count(1.0, 7, "asreview") == 7


def test_label_array_helpers_agree_with_depth_to_recall() -> None:
    """The TAR suite's depth and WSS (0/1 label arrays) are the rank-based definitions, one rule vocabulary."""
    labels = {"A": np.array([1, 1, 0, 0, 0, 0, 0, 0, 1, 1]), "B": np.array([0, 0, 1, 1, 1, 1, 0, 0, 0, 0])}
    for rel in labels.values():
        ranks = relevant_ranks_from_labels(rel)
        for rule in TARGET_RULES:
            for tau in ("0.5", "0.75", "0.95", "1"):
                [row] = depth_to_recall(ranks, 4, [tau], population=12, rule=rule)
                assert depth_at_recall(rel, 4, tau, rule) == row.depth
                assert wss_at(rel, 12, 4, tau, rule) == (row.wss if row.wss is not None else 0.0)


def test_bad_rule_and_target() -> None:
    with pytest.raises(ValueError):
        target_count(0.9, 10, "round")
    with pytest.raises(ValueError):
        target_count(1.5, 10)


def test_depth_seed_example() -> None:
    [a95] = depth_to_recall(A, 4, [0.95], population=12)
    [b95] = depth_to_recall(B, 4, ["0.95"], population=12)
    assert (a95.needed, a95.depth, a95.precision) == (4, 10, 0.4)
    assert b95.depth == 6 and b95.precision == pytest.approx(4 / 6)
    assert round(a95.wss or 0, 3) == 0.117 and round(b95.wss or 0, 3) == 0.45
    assert a95.rule == "ceil" and a95.target == 0.95
    [a_asr] = depth_to_recall(A, 4, [0.95], population=12, rule="asreview")
    assert a_asr.needed == 3 and a_asr.depth == 9


def test_depth_not_reached_and_defaults() -> None:
    res = depth_to_recall(np.array([2, 5, 7], dtype=np.int64), 10)
    assert [d.target for d in res] == [0.8, 0.9, 0.95, 0.99]
    assert all(d.depth is None and d.precision is None and d.wss is None for d in res)
    assert [d.needed for d in res] == [8, 9, 10, 10]
    res = depth_to_recall(np.array([2, 5, 7], dtype=np.int64), 3, [0.5, 1.0], population=10)
    assert [d.depth for d in res] == [5, 7]
    assert res[1].wss == pytest.approx(0.3)


def test_depth_with_no_relevant_document_is_zero_for_every_target() -> None:
    """R = 0: nothing to find, so every target needs 0 relevant and is met at depth 0 (used to raise)."""
    for population in (None, 50):
        res = depth_to_recall(np.array([], dtype=np.int64), 0, [0.5, "0.95", 1.0], population=population)
        assert [(d.needed, d.depth, d.precision, d.wss) for d in res] == [(0, 0, None, None)] * 3
    with pytest.raises(ValueError, match="non-negative"):
        depth_to_recall(np.array([], dtype=np.int64), -1)


def test_depth_errors() -> None:
    with pytest.raises(ValueError):
        depth_to_recall(np.array([3, 2], dtype=np.int64), 5)
    with pytest.raises(ValueError):
        depth_to_recall(np.array([1, 2, 3], dtype=np.int64), 2)


def test_last_relevant_rank_and_helpers() -> None:
    assert last_relevant_rank(A) == 10 and last_relevant_rank(np.array([], dtype=np.int64)) is None
    assert list(relevant_ranks_from_labels([0, 1, 0, 1])) == [2, 4]
    assert depth_at_count(A, 0) == 0 and depth_at_count(A, 5) is None and depth_at_count(A, 3) == 9


@given(st.lists(st.booleans(), min_size=1, max_size=200), st.integers(0, 50),
       st.lists(st.sampled_from(["0.1", "0.5", "0.55", "0.8", "0.9", "0.95", "0.99", "1"]), min_size=2, max_size=5))
def test_depth_monotone_in_target(labels: list[bool], extra: int, taus: list[str]) -> None:
    ranks = relevant_ranks_from_labels(np.array(labels))
    r = len(ranks) + extra
    if r == 0:
        return
    ordered = sorted(taus, key=Fraction)
    res = depth_to_recall(ranks, r, ordered, population=len(labels) + 10)
    needed = [d.needed for d in res]
    assert needed == sorted(needed)
    depths = [d.depth for d in res]
    # Once a target is not reached, no higher target is reached; reached depths never decrease.
    seen_none = False
    last = 0
    for d, item in zip(depths, res, strict=True):
        if d is None:
            seen_none = True
            continue
        assert not seen_none
        assert d >= last
        last = d
        assert item.needed / r >= item.target - 1e-12  # recall at depth ≥ τ under ceil
        assert np.count_nonzero(ranks <= d) == item.needed
