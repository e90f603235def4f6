"""Per-role costs of a document (`reviewdepth plan --cost`, `reviewdepth simulate --cost`, ``POST /simulations``'s
``cost``): one parser and one check for every door, so a bad cost is refused in the same words everywhere."""

from __future__ import annotations

import math
from dataclasses import dataclass

from reviewdepth.services.errors import Invalid


@dataclass(frozen=True)
class RoleCosts:
    """The cost of one document by role (``--cost review=R,sample=S,produce=P``): judged in first-pass review,
    judged in a sample or audit (often a senior reviewer's), and produced without being reviewed (a two-phase
    production above a rank cutoff). Each one left out is 1."""

    review: float = 1.0
    sample: float = 1.0
    produce: float = 1.0


COST_ROLES = ("review", "sample", "produce")


def checked_costs(review: object, sample: object, produce: object) -> RoleCosts:
    """The three costs checked (`Invalid` naming ``cost``): review and sample in (0, 1e6] (the cost ratios divide
    by the review cost), produce in [0, 1e6] (producing an unreviewed document may cost nothing)."""
    checked: list[float] = []
    for name, value in (("review", review), ("sample", sample), ("produce", produce)):
        number = float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else math.nan
        zero_allowed = name == "produce"
        if not (0 <= number <= 1e6 if zero_allowed else 0 < number <= 1e6):
            raise Invalid(f"cost: the {name} cost must be a number in {'[0' if zero_allowed else '(0'}, 1e6], "
                          f"not {value!r}")
        checked.append(number)
    return RoleCosts(*checked)


def parse_costs(text: str) -> RoleCosts:
    """``review=1,sample=3,produce=1`` (any may be left out: 1) as `RoleCosts`, checked (`checked_costs`);
    `Invalid` naming ``cost``."""
    costs = dict.fromkeys(COST_ROLES, 1.0)
    for part in filter(None, (p.strip() for p in str(text).split(","))):
        name, sep, value = part.partition("=")
        if not sep or name.strip() not in costs:
            raise Invalid(f"cost: expected review=X,sample=Y,produce=Z (each optional), not {text!r}")
        try:
            costs[name.strip()] = float(value)
        except ValueError:
            raise Invalid(f"cost: {value.strip()!r} is not a number") from None
    return checked_costs(costs["review"], costs["sample"], costs["produce"])
