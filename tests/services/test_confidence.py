"""The confidence domain every door shares (`reviewdepth.services.evidence.confidence`): 0.5 ≤ confidence ≤ 0.999999, a
real number (not a bool, not text, finite)."""

from __future__ import annotations

import pytest

from reviewdepth.services.errors import Invalid
from reviewdepth.services.evidence.confidence import checked_confidence


@pytest.mark.parametrize("confidence", [0.5, 0.8, 0.95, 0.99, 0.999, 0.999999, 0.623456, 0.95 + 1e-9, 0.9512345])
def test_the_domain_is_accepted_as_given(confidence: float) -> None:
    assert checked_confidence(confidence) == confidence


@pytest.mark.parametrize("confidence", [1e-20, 0, 0.4999999, 0.49, 1, 1.0, 1 - 1e-17, 0.9999995,
                                        float("nan"), float("inf"), -0.95, True, "0.95", None])
def test_anything_else_is_invalid_naming_the_rule(confidence: object) -> None:
    with pytest.raises(Invalid, match=r"^confidence: must be a number from 0.5 to 0.999999, not"):
        checked_confidence(confidence)
