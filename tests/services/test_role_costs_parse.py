"""`services.simulation.costs.parse_costs`: review and sample default to 1, produce to None (no unreviewed production:
the
plan offers no production-cutoff path), a replay records 1 for it; bad values are refused naming ``cost``."""

from __future__ import annotations

import pytest

from reviewdepth.services.errors import Invalid
from reviewdepth.services.simulation.costs import RoleCosts, checked_costs, parse_costs


def test_produce_is_none_unless_given() -> None:
    assert parse_costs("review=1,sample=3") == RoleCosts(1.0, 3.0, None)
    assert parse_costs("") == RoleCosts() and RoleCosts().produce is None
    assert parse_costs("produce=0") == RoleCosts(1.0, 1.0, 0.0)
    assert parse_costs("sample=3,produce=0.2").produce == 0.2
    assert RoleCosts().produce_recorded == 1.0 and RoleCosts(produce=0.0).produce_recorded == 0.0
    assert checked_costs(1, 2) == RoleCosts(1.0, 2.0, None)


@pytest.mark.parametrize("text", ["produce=-1", "produce=x", "produced=1", "review=0", "sample=1e7"])
def test_bad_costs_name_cost(text: str) -> None:
    with pytest.raises(Invalid, match="cost"):
        parse_costs(text)
