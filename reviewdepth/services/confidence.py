"""The confidence level: one domain for every use case that takes one (report, monitor and dashboard, sample plan,
simulations, portfolio calibration, agreement intervals), checked here so that both doors refuse the same values
with the same words.

0.5 ≤ confidence < 1, written with at most 6 decimals (so at most 0.999999). Below 0.5 a one-sided lower bound
would lie above the point estimate; past 6 decimals 1 − confidence loses its digits to rounding, and from about
1 − 1e-17 on it rounds to 1.0 and the estimators' alpha to 0 or 1 (``confidence=1e-20`` was a 500). The API
declares the same range in its parameter schemas (`CONFIDENCE_MIN`, `CONFIDENCE_MAX`).
"""

from __future__ import annotations

import math

from reviewdepth.services.errors import Invalid

CONFIDENCE_MIN = 0.5
CONFIDENCE_DECIMALS = 6
CONFIDENCE_MAX = 0.999999  # the largest with CONFIDENCE_DECIMALS decimals
CONFIDENCE_RULE = f"from {CONFIDENCE_MIN} to {CONFIDENCE_MAX:.{CONFIDENCE_DECIMALS}f} (at most " \
                  f"{CONFIDENCE_DECIMALS} decimals)"


def checked_confidence(confidence: object) -> float:
    """``confidence`` as a float when it is in the domain (module docstring); `Invalid` naming it otherwise."""
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float)) or not math.isfinite(confidence) \
            or not CONFIDENCE_MIN <= confidence <= CONFIDENCE_MAX \
            or round(confidence, CONFIDENCE_DECIMALS) != confidence:
        raise Invalid(f"confidence: must be a number {CONFIDENCE_RULE}, not {confidence!r}")
    return float(confidence)
