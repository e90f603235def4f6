"""PRISMA 2020 screening counts for a topic reviewed from a ranked queue.

- identified: records in the topic (its population N when stated, else the queue size);
- screened: records with at least one human decision; of these, included (relevant under the label policy) and
  excluded by reviewers (not relevant);
- not screened because the review stopped: identified − screened (in PRISMA 2020's flow, the records a
  prioritised screening tool's stopping decision removed; report the stopping method with them);
- reviewers per record: how many screened records have 1, 2, 3, … distinct reviewers;
- conflicts: records whose reviewers disagreed, and how many of them an adjudication resolved;
- independent: whether reviewers screened independently (blind). reviewdepth cannot observe blinding, so it is
  reported as stated by the user, or null.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from sqlalchemy import Engine


@dataclass(frozen=True)
class PrismaCounts:
    identified: int
    identified_source: str
    screened: int
    included: int
    excluded_by_reviewers: int
    not_screened_review_stopped: int
    stopped_at_rank: int | None
    reviewers_per_record: dict[int, int]
    conflicts: int
    conflicts_resolved: int
    independent: bool | None
    label_policy: str

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["reviewers_per_record"] = {str(k): v for k, v in sorted(self.reviewers_per_record.items())}
        return out


def prisma_counts(*, population: int, population_stated: bool, included: int, excluded: int,
                  reviewed_prefix: int | None, reviewers_per_record: dict[int, int], conflicts: int,
                  conflicts_resolved: int, independent: bool | None, policy: str) -> PrismaCounts:
    screened = included + excluded
    return PrismaCounts(
        identified=population, identified_source="topic population" if population_stated else "queue size",
        screened=screened, included=included, excluded_by_reviewers=excluded,
        not_screened_review_stopped=max(population - screened, 0), stopped_at_rank=reviewed_prefix,
        reviewers_per_record=reviewers_per_record, conflicts=conflicts, conflicts_resolved=conflicts_resolved,
        independent=independent, label_policy=policy)


def topic_prisma(engine: Engine, topic: str, *, queue: str | None = None, policy: str = "latest",
                 as_of: str | None = None, independent: bool | None = None) -> PrismaCounts:
    """The counts for a stored topic and queue, as of a judgment id (the same numbers the report shows)."""
    from sqlalchemy import func, select

    from reviewdepth.services.conflicts import conflicts_of
    from reviewdepth.services.judgments import judgment_id_as_of
    from reviewdepth.services.queues import find_queue, queue_labels
    from reviewdepth.services.samples import reviewed_prefix
    from reviewdepth.store.models import Judgment, Topic
    from reviewdepth.store.votes import load_votes, reviewers_per_document

    as_of_id = judgment_id_as_of(as_of, "prisma")
    topic_id, row = find_queue(engine, topic, queue)
    with engine.connect() as conn:
        population_size = conn.execute(select(Topic.population_size).where(Topic.id == topic_id)).scalar_one()
        if as_of_id is None:
            as_of_id = conn.execute(select(func.max(Judgment.id)).where(Judgment.topic_id == topic_id)).scalar_one()
    _, labels = queue_labels(engine, topic, row.name, policy, None if as_of_id is None else str(as_of_id))
    with engine.connect() as conn:
        per_record = reviewers_per_document(conn, topic_id, as_of_id)
        multi = load_votes(conn, topic_id, as_of_id, min_reviewers=2) if max(per_record, default=0) >= 2 else []
    conflicts = conflicts_of(multi)
    return prisma_counts(
        population=int(population_size) if population_size else labels.size, population_stated=bool(population_size),
        included=labels.relevant_total, excluded=labels.nonrelevant_total, reviewed_prefix=reviewed_prefix(labels),
        reviewers_per_record=per_record, conflicts=len(conflicts),
        conflicts_resolved=sum(c.status == "resolved" for c in conflicts), independent=independent, policy=policy)
