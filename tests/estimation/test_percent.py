"""Issue 38, item 5: a confidence, chance or target is never printed above itself (0.999 is "99.9%", never
"100%"), and an upper bound's percentage never below itself."""

from __future__ import annotations

from fractions import Fraction

from hypothesis import given
from hypothesis import strategies as st

from reviewdepth.estimation.percent import percent


def _value(text: str) -> Fraction:
    return Fraction(text.rstrip("%").strip()) / 100


@given(st.floats(min_value=0.0, max_value=1.0, allow_nan=False))
def test_never_above_the_value_and_close_to_it(value: float) -> None:
    shown = _value(percent(value))
    exact = Fraction(repr(value))
    assert shown <= exact and exact - shown < Fraction(1, 10_000)
    upper = _value(percent(value, up=True))
    assert upper >= exact and upper - exact < Fraction(1, 10_000)


def test_the_levels_a_protocol_names() -> None:
    assert [percent(c) for c in (0.5, 0.8, 0.9, 0.95, 0.975, 0.99, 0.995, 0.999, 0.9999, 0.99999, 1.0)] == [
        "50%", "80%", "90%", "95%", "97.5%", "99%", "99.5%", "99.9%", "99.99%", "99.99%", "100%"]
    assert percent(0.95, space=True) == "95 %" and percent(2 / 3) == "66.66%" and percent(2 / 3, up=True) == "66.67%"
