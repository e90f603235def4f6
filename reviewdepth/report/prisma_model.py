"""PRISMA 2020 screening counts of a topic as plain data (`reviewdepth.services.prisma` counts them; the depth
report and ``reviewdepth prisma`` print them)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class PrismaCounts:
    identified: int
    identified_source: str
    screened: int
    included: int
    excluded_by_reviewers: int
    not_screened_review_stopped: int
    judged_outside_queue: int
    included_outside_queue: int
    stopped_at_rank: int | None
    reviewed: int
    relevant_in_reviewed: int
    # records by their number of distinct reviewers, in that order (JSON writes the numbers as keys)
    reviewers_per_record: dict[int, int]
    conflicts: int
    conflicts_resolved: int
    independent: bool | None
    label_policy: str

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["reviewers_per_record"] = {str(k): v for k, v in sorted(self.reviewers_per_record.items())}
        return out
