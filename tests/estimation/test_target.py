"""The target recall's one value type: its range (0, 1], its spellings, its text kept as given, the refusal of
recall 1 where a sample must certify, and its errors."""

from __future__ import annotations

import pickle
from fractions import Fraction

import pytest

from reviewdepth.estimation.target import DEFAULT_TARGET, TARGET_RANGE, Target, TargetError


@pytest.mark.parametrize("given, value, text", [
    ("0.95", Fraction(19, 20), "0.95"), (".90", Fraction(9, 10), ".90"), ("0.950", Fraction(19, 20), "0.950"),
    ("19/20", Fraction(19, 20), "19/20"), ("1", Fraction(1), "1"), ("1.0", Fraction(1), "1.0"),
    (" 0.8 ", Fraction(4, 5), "0.8"), ("95e-2", Fraction(19, 20), "95e-2"), (0.95, Fraction(19, 20), "0.95"),
    (1, Fraction(1), "1"), ("1e-9", Fraction(1, 10**9), "1e-9"),
])
def test_a_target_in_0_to_1_keeps_its_exact_value_and_its_text(given: object, value: Fraction, text: str) -> None:
    target = Target.parse(given)
    assert target.value == value and target.text == text and str(target) == text
    assert float(target) == float(value)
    assert Target.parse(target) is target  # parsed once: a Target passes through


@pytest.mark.parametrize("given", ["0", "0.0", "-0.5", "1.0001", "2", "11/10", "0/1", "-1/2"])
def test_a_number_outside_0_to_1_is_refused_with_the_one_range(given: str) -> None:
    with pytest.raises(TargetError) as refused:
        Target.parse(given)
    assert str(refused.value) == f"the target recall must be in (0, 1], not {given}"
    assert TARGET_RANGE == "(0, 1]"


@pytest.mark.parametrize("given", ["x", "", "nan", "inf", "1/0", "0.9.5", "95%", True, None])
def test_what_is_not_a_number_is_refused_naming_the_rule(given: object) -> None:
    with pytest.raises(TargetError) as refused:
        Target.parse(given)
    assert "is not a number (a recall in (0, 1], e.g. 0.95)" in str(refused.value)
    assert isinstance(refused.value, ValueError)  # pydantic reads a ValueError as a 422


def test_no_sample_certifies_recall_1() -> None:
    assert Target.parse("0.999999").require_certifiable().text == "0.999999"
    for given in ("1", "1.0", "2/2"):
        target = Target.parse(given)
        assert not target.certifiable
        with pytest.raises(TargetError, match=f"no random sample can certify recall {given} "):
            target.require_certifiable()


def test_targets_are_equal_by_value_and_immutable() -> None:
    assert Target.parse("0.95") == Target.parse("19/20") == DEFAULT_TARGET
    assert len({Target.parse("0.95"), Target.parse("0.950"), Target.parse("0.9")}) == 2
    assert Target.parse("0.95") != "0.95"
    assert Target.parse("19/20").written_as_fraction and not Target.parse("0.95").written_as_fraction
    with pytest.raises(AttributeError):
        DEFAULT_TARGET.text = "0.5"  # type: ignore[misc]
    copied = pickle.loads(pickle.dumps(Target.parse(".90")))
    assert copied == Target.parse("0.9") and copied.text == ".90"
