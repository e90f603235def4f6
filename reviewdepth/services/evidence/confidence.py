"""The confidence level and the target recall: one domain each for every use case that takes one (report, monitor
and dashboard, sample plan, simulations, portfolio calibration, agreement intervals), checked here so that both
doors refuse the same values with the same words (the target's domain is `reviewdepth.estimation.target`).

0.5 ≤ confidence ≤ 0.999999. Below 0.5 a one-sided lower bound would lie above the point estimate; close to 1,
1 − confidence loses its digits to rounding, and from about 1 − 1e-17 on it rounds to 0 and the estimators'
alpha to 0 or 1 (``confidence=1e-20`` was a 500). At most 0.999999, alpha = 1 − confidence is at least 1e-6 and
keeps about 10 significant digits (a double's absolute error there is 1.1e-16), so any number of decimals is used
as given. The API declares the same range in its parameter schemas (`CONFIDENCE_MIN`, `CONFIDENCE_MAX`), and a
schema cannot state a count of decimals of a binary float, which is why there is no such rule.
"""

from __future__ import annotations

import math

from reviewdepth.estimation.target import Target, TargetError
from reviewdepth.services.errors import Invalid

CONFIDENCE_MIN = 0.5
CONFIDENCE_MAX = 0.999999  # alpha >= 1e-6
CONFIDENCE_RULE = f"from {CONFIDENCE_MIN} to {CONFIDENCE_MAX}"


def checked_confidence(confidence: object) -> float:
    """``confidence`` as a float when it is in the domain (module docstring); `Invalid` naming it otherwise."""
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float)) or not math.isfinite(confidence) \
            or not CONFIDENCE_MIN <= confidence <= CONFIDENCE_MAX:
        raise Invalid(f"confidence: must be a number {CONFIDENCE_RULE}, not {confidence!r}")
    return float(confidence)


def checked_target(target: object, *, certify: bool = False) -> Target:
    """``target`` as a `Target` (the doors pass one; a text or number from a Python caller is parsed by
    `Target.parse`, the one range); ``certify``: a target a sample can certify (below 1). `Invalid` naming the
    target otherwise."""
    try:
        tau = Target.parse(target)
        return tau.require_certifiable() if certify else tau
    except TargetError as exc:
        raise Invalid(f"target: {exc}") from None
