"""PRISMA 2020 screening counts for a topic reviewed from a ranked queue.

- identified: records in the topic (its population N when stated, else the queue size);
- screened: records of the identified set with at least one human decision; of these, included (relevant under the
  label policy) and excluded by reviewers (not relevant);
- judged outside the queue: records with a decision that lie outside the identified set (in no queue of the topic;
  when identified is the queue's size, not in that queue), recorded with ``--allow-unqueued`` or by ``import
  qrels``; counted apart (with how many of them are relevant) so that screened never exceeds identified;
- not screened because the review stopped: identified − screened (in PRISMA 2020's flow, the records a
  prioritised screening tool's stopping decision removed; report the stopping method with them);
- reviewed and relevant in reviewed: the reviewed set S and the relevant documents in it, the same set the depth
  report, ``watch`` and the dashboard count (`reviewdepth.services.evidence.queue_evidence.QueueEvidence`): every
  document judged in a review role wherever it sits in the queue, plus the judged prefix. Screened also counts documents
  judged only as sample, audit or QC documents; ``stopped_at_rank`` is given only when S is a prefix of the
  queue (screening in queue order), since a set screened in another order stops at no rank;
- reviewers per record: how many screened records have 1, 2, 3, … distinct reviewers;
- conflicts: records whose reviewers disagreed, and how many of them an adjudication resolved;
- independent: whether reviewers screened independently (blind). reviewdepth cannot observe blinding, so it is
  reported as stated by the user, or null.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sqlalchemy import Connection, Engine

from reviewdepth.report.prisma_diagram import MEDIA_TYPES, DiagramFormat, render_diagram
from reviewdepth.report.prisma_model import PrismaCounts, arithmetic_problems, prisma_flow
from reviewdepth.services.answers.conflicts import conflicts_of
from reviewdepth.services.errors import Conflict
from reviewdepth.services.evidence.identification import records_per_source
from reviewdepth.services.evidence.prisma_counts import (
    decision_counts,
    identified_queue,
    outside_queue_counts,
    prisma_counts,
)
from reviewdepth.services.evidence.queue_state import load_queue_state
from reviewdepth.services.evidence.screening import conflict_rule_of
from reviewdepth.services.evidence.topic import judgment_id_as_of
from reviewdepth.store.snapshot import read_snapshot
from reviewdepth.store.votes import reviewers_per_document, several_positions


def topic_prisma(engine: Engine, topic: str, *, queue: str | None = None, policy: str = "latest",
                 as_of: str | None = None, independent: bool | None = None) -> PrismaCounts:
    """The counts for a stored topic and queue, as of a judgment id (the same numbers the report shows), read in
    one snapshot."""
    with read_snapshot(engine) as conn:
        return prisma_of(conn, topic, queue=queue, policy=policy, as_of=as_of, independent=independent)


def prisma_of(conn: Connection, topic: str, *, queue: str | None = None, policy: str = "latest",
              as_of: str | None = None, independent: bool | None = None) -> PrismaCounts:
    """`topic_prisma` read through ``conn``."""
    as_of_id = judgment_id_as_of(conn, as_of, "prisma")
    state = load_queue_state(conn, topic, queue, policy, as_of_id)
    topic_id, row, population_size, as_of_id = state.topic_id, state.queue, state.population_size, state.as_of
    labels, evidence, in_order = state.labels_by_rank, state.evidence, state.labels
    per_record = reviewers_per_document(conn, topic_id, as_of_id)
    positions, _ = several_positions(conn, topic_id, as_of_id, per_record)
    outside = outside_queue_counts(conn, topic_id, labels, population_stated=bool(population_size), as_of=as_of_id)
    conflicts = conflicts_of(positions, conflict_rule_of(conn, topic_id))
    return prisma_counts(
        population=int(population_size) if population_size else labels.size, population_stated=bool(population_size),
        included=labels.relevant_total, excluded=labels.nonrelevant_total, reviewed_prefix=evidence.reviewed,
        reviewed=evidence.reviewed,
        relevant_in_reviewed=int(np.count_nonzero(in_order.labels[:evidence.reviewed] == 1)),
        in_queue_order=evidence.order is None,
        reviewers_per_record=per_record, conflicts=len(conflicts),
        conflicts_resolved=sum(c.status == "resolved" for c in conflicts), independent=independent, policy=policy,
        outside_included=outside[0], outside_excluded=outside[1],
        decisions=decision_counts(conn, topic_id, policy, as_of_id, identified_in=identified_queue(
            conn, topic_id, row.id, population_stated=bool(population_size))),
        sources=records_per_source(conn, topic_id))


@dataclass(frozen=True)
class PrismaDiagram:
    content: bytes
    media_type: str


def topic_prisma_diagram(engine: Engine, topic: str, fmt: DiagramFormat, *, queue: str | None = None,
                         policy: str = "latest", as_of: str | None = None,
                         independent: bool | None = None) -> PrismaDiagram:
    """The PRISMA 2020 flow diagram (SVG, PNG or an HTML page holding the SVG) of the counts `topic_prisma`
    gives for the same arguments: the diagram is drawn from them alone (`reviewdepth.report.prisma_model.
    prisma_flow`), so its numbers are the JSON's."""
    counts = topic_prisma(engine, topic, queue=queue, policy=policy, as_of=as_of, independent=independent)
    problems = arithmetic_problems(counts)
    if problems:  # never draw a diagram whose boxes do not add up
        raise Conflict(f"the PRISMA counts of topic {topic!r} do not add up: {'; '.join(problems)}")
    return PrismaDiagram(render_diagram(prisma_flow(topic, counts), fmt), MEDIA_TYPES[fmt])
