"""Reading stored queues: a topic's list of them, summaries and trec_eval-style measures over the stored data."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

import numpy as np
from sqlalchemy import Engine, select

from reviewdepth.measures.ranking import NOT_IN_QRELS, RankedQueries
from reviewdepth.measures.suite import MeasureSpec, evaluate_ranked
from reviewdepth.measures.trec import DEFAULT_UTILITY
from reviewdepth.services.evidence import labels as evidence_labels
from reviewdepth.services.evidence import topic as evidence_topic
from reviewdepth.store.ingest import as_utc
from reviewdepth.store.loaders import QueueLabels
from reviewdepth.store.models import Queue
from reviewdepth.store.snapshot import read_snapshot


@dataclass
class QueueSummary:
    topic: str
    queue: str
    ordering: str
    size: int
    judged: int
    relevant_found: int
    deepest_judged_rank: int | None
    threshold_rank: int | None
    relevant_in_topic: int
    policy: str
    as_of: str | None
    measures: dict[str, float | int | str] = field(default_factory=dict)

    def as_dict(self) -> dict[str, object]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class QueueRecord:
    """One stored queue of a topic: its ``size``, how its ranks were assigned (``ordering``: given or trec_eval),
    where it came from (``source``: ``import:`` and the SHA-256 of the imported file, ``api``, …), the run's tag
    and own stopping point when it had them, and whether it is the topic's ``newest`` (the queue a judgment is
    served from unless it names another)."""

    name: str
    size: int
    ordering: str
    source: str
    run_tag: str | None
    threshold_rank: int | None
    created_at: datetime
    newest: bool

    def as_dict(self) -> dict[str, object]:
        out = dict(self.__dict__)
        out["created_at"] = as_utc(self.created_at).isoformat()
        return out


def list_queues(engine: Engine, topic: str) -> list[QueueRecord]:
    """The topic's queues, oldest first (the last is the newest); `NotFound` for an unknown topic."""
    with engine.connect() as conn:
        topic_id = evidence_topic.topic_id(conn, topic)
        rows = conn.execute(select(Queue.name, Queue.size, Queue.ordering, Queue.source, Queue.run_tag,
                                   Queue.threshold_rank, Queue.created_at)
                            .where(Queue.topic_id == topic_id).order_by(Queue.id)).all()
    return [QueueRecord(name, int(size), ordering, source, run_tag, None if threshold is None else int(threshold),
                        created_at, i == len(rows) - 1)
            for i, (name, size, ordering, source, run_tag, threshold, created_at) in enumerate(rows)]


def find_queue(engine: Engine, topic: str, queue: str | None) -> tuple[int, Queue]:
    """The topic id and the named queue (or the topic's only queue), in a connection of its own
    (`reviewdepth.services.evidence.topic.find_queue`)."""
    with engine.connect() as conn:
        return evidence_topic.find_queue(conn, topic, queue)


def queue_labels(engine: Engine, topic: str, queue: str | None, policy: str = "latest",
                 as_of: str | None = None) -> tuple[Queue, QueueLabels]:
    """The queue and its labels (`reviewdepth.services.evidence.labels.queue_labels`) in one read snapshot."""
    with read_snapshot(engine) as conn:
        return evidence_labels.queue_labels(conn, topic, queue, policy, as_of)


def ranked_from_labels(labels: QueueLabels, name: str) -> RankedQueries:
    """A one-query `RankedQueries` (unjudged = not in qrels, as trec_eval treats unjudged documents)."""
    rel = labels.labels.astype(np.int64)
    rel[rel < 0] = NOT_IN_QRELS
    return RankedQueries(qids=[name], offsets=np.array([0, labels.size], dtype=np.int64), rel=rel,
                         num_rel=np.array([labels.relevant_total], dtype=np.int64),
                         num_nonrel=np.array([labels.nonrelevant_total], dtype=np.int64), level=1,
                         source_rows=np.arange(labels.size, dtype=np.int64))


def queue_summary(engine: Engine, topic: str, queue: str | None = None, *, policy: str = "latest",
                  as_of: str | None = None, measures: list[str] | None = None) -> QueueSummary:
    """Size, judged, relevant found, deepest judged rank and the trec_eval measures over the stored queue."""
    row, labels = queue_labels(engine, topic, queue, policy, as_of)
    judged_ranks = np.flatnonzero(labels.labels >= 0)
    summary = QueueSummary(
        topic=topic, queue=row.name, ordering=row.ordering, size=labels.size, judged=len(judged_ranks),
        relevant_found=int(np.count_nonzero(labels.labels == 1)),
        deepest_judged_rank=int(judged_ranks[-1]) + 1 if len(judged_ranks) else None,
        threshold_rank=row.threshold_rank, relevant_in_topic=labels.relevant_total, policy=policy, as_of=as_of)
    if labels.size:
        summary.measures = queue_measures(labels, topic, row.run_tag or row.name, measures)
    return summary


def _length_measures(retrieved: int, found: int, relevant: int) -> dict[str, float | int]:
    """`LENGTH_MEASURES` of one ranking from its counts, with the same operations in the same order as
    `reviewdepth.measures.trec` (so the same bits): ``retrieved`` = n > 0, ``found`` = CG(n), ``relevant`` = R."""
    n, a, big_r = float(retrieved), float(found), float(relevant)
    p1, p2, p3, p4 = DEFAULT_UTILITY
    set_f = 0.0
    if found > 0 and relevant > 0:
        p, r = a / n, a / big_r
        set_f = (1.0 + 1.0) * p * r / (1.0 * p + r)
    return {
        "num_ret": retrieved,
        "set_P": a / n,
        "set_relative_P": a / float(min(retrieved, relevant)) if relevant > 0 else 0.0,
        "set_map": (a * a) / (n * big_r) if relevant > 0 else 0.0,
        "set_F": set_f,
        "utility": p1 * a + p2 * float(retrieved - found) + p3 * float(relevant - found)
        + p4 * float(found - retrieved - relevant),
    }


# the measures of "all" that the unjudged entries after the deepest judged rank change: they count the ranking's
# length (num_ret and the set measures over it); every other measure of a ranking ends at its deepest judged rank
LENGTH_MEASURES = ("num_ret", "set_P", "set_relative_P", "set_map", "set_F", "utility")


def queue_measures(labels: QueueLabels, topic: str, run_id: str, measures: list[str] | None = None
                   ) -> dict[str, float | int | str]:
    """trec_eval's measures of the queue as ranked with its labels (as `evaluate_ranked` of the whole queue, to the
    bit: `tests/services/test_queue_measures.py`).

    A stored queue may hold millions of entries of which a few thousand are judged; every measure of "all" but
    `LENGTH_MEASURES` is the same over the queue cut after its deepest judged rank, so those are evaluated on that
    cut and the length measures on the whole queue's counts alone: memory follows the judged depth, not the queue
    (a 6,000,000-entry queue: 660 MB above idle before). Other measure lists are evaluated on the whole queue."""
    if measures:
        whole = ranked_from_labels(labels, topic)
        result = evaluate_ranked(whole, MeasureSpec.parse(measures), run_id=run_id).summary
        return {k: v for k, v in result.items() if k not in ("runid", "num_q")}
    judged = np.flatnonzero(labels.labels >= 0)
    cut = int(judged[-1]) + 1 if len(judged) else 1
    if cut >= labels.size:
        result = evaluate_ranked(ranked_from_labels(labels, topic), MeasureSpec.parse(["all"]), run_id=run_id).summary
        return {k: v for k, v in result.items() if k not in ("runid", "num_q")}
    prefix = QueueLabels(cut, labels.labels[:cut], labels.relevant_total, labels.nonrelevant_total,
                         labels.judged_total, labels.policy, labels.as_of)
    result = evaluate_ranked(ranked_from_labels(prefix, topic), MeasureSpec.parse(["all"]), run_id=run_id).summary
    lengths = _length_measures(labels.size, int(np.count_nonzero(prefix.labels == 1)), labels.relevant_total)
    return {k: lengths.get(k, v) for k, v in result.items() if k not in ("runid", "num_q")}
