"""`target_count_estimated` (k(τ) for an estimated R) is `target_count`'s ``ceil`` rule on every whole R, and
rounds up in exact decimals on a real one (issue 38, item 8: one definition of each depth)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from reviewdepth.measures.depth import target_count, target_count_estimated

TARGETS = st.sampled_from(["0.5", "0.55", "0.8", "0.9", "0.95", "0.99", "1"])


@given(TARGETS, st.integers(min_value=0, max_value=100_000))
def test_whole_r_gives_the_ceil_rule(tau: str, relevant: int) -> None:
    assert target_count_estimated(tau, float(relevant)) == target_count(tau, relevant, "ceil")


def test_real_estimates_round_up_in_decimals() -> None:
    assert target_count_estimated("0.95", 17.0) == 17  # 16.15 -> 17
    assert target_count_estimated("0.55", 100.0) == 55  # not 56: 0.55 is exactly 11/20
    assert target_count_estimated("0.9", 10.01) == 10  # 9.009 -> 10
    assert target_count_estimated("0.9", -3.0) == 0
