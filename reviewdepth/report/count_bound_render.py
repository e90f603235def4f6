"""The count bound (`reviewdepth.estimation.count_bound.CountBound`) in words: ``reviewdepth plan TOPIC
--missed-at-most M`` and the validation packet's section print these lines."""

from __future__ import annotations

import dataclasses
from typing import Any

from reviewdepth.estimation.count_bound import CountBound, sample_for_at_most
from reviewdepth.estimation.percent import percent


def now_line(cb: CountBound) -> str:
    if cb.basis == "none":
        return (f"at most {cb.at_most:,} relevant documents remain unreviewed: no random evidence bounds the "
                f"{cb.unreviewed:,} unreviewed documents below their number")
    return (f"at most {cb.at_most:,} relevant documents remain unreviewed ({percent(cb.confidence)} confidence, "
            f"from the {cb.basis}); {cb.found:,} relevant found, {cb.unreviewed:,} unreviewed")


def target_line(cb: CountBound) -> str:
    target = f"{percent(cb.target)} recall"
    if cb.target_certified:
        return (f"{target} needs at most {cb.target_allows:,} left: the count bound certifies it")
    cost = (f"a fresh random sample of {cb.target_floor:,} of the {cb.unreviewed:,} unreviewed documents finding "
            "none relevant")
    sane = (" — more than half the unreviewed: not at a sane cost; the count bound is the claim to make"
            if cb.target_above_half else "")
    return f"{target} needs at most {cb.target_allows:,} left: certifying it costs {cost}{sane}"


def lowering_lines(cb: CountBound) -> list[str]:
    return [f"at most {step.at_most:,} left: shown by a fresh random sample of {step.sample:,} unreviewed documents "
            f"({percent(step.share)} of them) finding none relevant" for step in cb.lowering]


def plan_lines(cb: CountBound, topic: str, at_most: int) -> list[str]:
    """``plan --missed-at-most M``: the bound now, what M costs, the target, and the other steps."""
    lines = [f"{topic}: {now_line(cb)}"]
    if at_most >= cb.at_most:
        lines.append(f"at most {at_most:,} left is certified now")
    else:
        n = sample_for_at_most(cb.unreviewed, at_most, cb.confidence)
        lines.append(f"to certify at most {at_most:,} left: draw a random sample of {n:,} of the {cb.unreviewed:,} "
                     f"unreviewed documents (reviewdepth sample draw {topic} --size {n} --frame unreviewed) and "
                     "judge it; if it finds none relevant the bound is certified, if it finds any it needs more")
    lines.append(target_line(cb))
    lines += lowering_lines(cb)
    return lines


def as_data(cb: CountBound, at_most: int | None = None) -> dict[str, Any]:
    data = dataclasses.asdict(cb)
    if at_most is not None:
        data["missed_at_most"] = at_most
        data["missed_at_most_sample"] = (0 if at_most >= cb.at_most else
                                         sample_for_at_most(cb.unreviewed, at_most, cb.confidence))
    return data
