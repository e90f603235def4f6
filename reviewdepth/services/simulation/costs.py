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
    production above a rank cutoff). Review and sample left out are 1; produce left out is None: producing
    unreviewed documents is then not on the table (the plan offers no production-cutoff path), since whether the
    top of a ranking may go out unreviewed is a protocol decision (privilege screening, a clawback order, the other
    side's agreement), not a price a default may set."""

    review: float = 1.0
    sample: float = 1.0
    produce: float | None = None

    @property
    def produce_recorded(self) -> float:
        """The produce cost a replay records (1 when none was given: a replayed review produces nothing)."""
        return 1.0 if self.produce is None else self.produce


COST_ROLES = ("review", "sample", "produce")


def checked_costs(review: object, sample: object, produce: object = None) -> RoleCosts:
    """The three costs checked (`Invalid` naming ``cost``): review and sample in (0, 1e6] (the cost ratios divide
    by the review cost), produce in [0, 1e6] (producing an unreviewed document may cost nothing) or None (not
    given: no unreviewed production)."""
    checked: list[float] = []
    for name, value in (("review", review), ("sample", sample), ("produce", produce)):
        if name == "produce" and value is None:
            continue
        number = float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else math.nan
        zero_allowed = name == "produce"
        if not (0 <= number <= 1e6 if zero_allowed else 0 < number <= 1e6):
            raise Invalid(f"cost: the {name} cost must be a number in {'[0' if zero_allowed else '(0'}, 1e6], "
                          f"not {value!r}")
        checked.append(number)
    return RoleCosts(*checked)


def parse_costs(text: str) -> RoleCosts:
    """``review=1,sample=3,produce=1`` (any may be left out: review and sample 1, produce None) as `RoleCosts`,
    checked (`checked_costs`); `Invalid` naming ``cost``."""
    costs: dict[str, float | None] = {"review": 1.0, "sample": 1.0, "produce": None}
    for part in filter(None, (p.strip() for p in str(text).split(","))):
        name, sep, value = part.partition("=")
        if not sep or name.strip() not in costs:
            raise Invalid(f"cost: expected review=X,sample=Y,produce=Z (each optional), not {text!r}")
        try:
            costs[name.strip()] = float(value)
        except ValueError:
            raise Invalid(f"cost: {value.strip()!r} is not a number") from None
    return checked_costs(costs["review"], costs["sample"], costs["produce"])
