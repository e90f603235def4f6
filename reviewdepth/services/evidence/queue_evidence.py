"""The topic's random samples as evidence for one queue at one moment: every sample of the topic (drawn from this
queue or from an earlier ranking of it) re-expressed on the queue's ranks, with what keeps each from being used.

A sample's frame is fixed when it is drawn: a set of documents of the queue it was drawn from (the whole queue,
the ranks below a cutoff, or a rank band). On the current queue that frame covers every rank after some rank s:
the sample speaks for the current unreviewed rest once the review has passed s (see
`reviewdepth.estimation.assessment`). On the queue it was drawn from, s is the draw cutoff; on a re-ranking, s is
the deepest current rank of a document outside the frame (0 when the frame holds every document of the queue, so
a whole-queue sample survives a re-ranking of the same documents).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt
from sqlalchemy import Connection, func, or_, select
from sqlalchemy.orm import Session

from reviewdepth.estimation.assessment import SampleDraw, reviewed_prefix
from reviewdepth.services.evidence.samples import frame_definition
from reviewdepth.store.labels import UNJUDGED
from reviewdepth.store.loaders import QueueLabels
from reviewdepth.store.models import MARKER_DECISIONS, Judgment, Queue, QueueEntry, Sample, SampleItem, Topic

REST_FRAMES = ("all", "unreviewed", "below-rank", "ranks")


@dataclass
class SampleEntry:
    """One stored sample as the report lists it, and its draw on the current queue when it can be used."""

    id: int
    queue: str
    frame: str
    frame_definition: str
    frame_size: int
    size: int
    seed: int
    drawn_at: int | None
    missing: list[str]
    draw: SampleDraw | None
    status: str
    voided: bool = False
    void_reason: str | None = None
    relevant: int | None = None

    def as_row(self) -> dict[str, object]:
        return {"id": self.id, "queue": self.queue, "frame": self.frame, "frame_definition": self.frame_definition,
                "size": self.size, "frame_size": self.frame_size, "seed": self.seed, "drawn_at_judgment":
                self.drawn_at, "missing": len(self.missing), "relevant": self.relevant, "voided": self.voided,
                "void_reason": self.void_reason, "status": self.status}


@dataclass
class QueueEvidence:
    """The samples of a topic for one queue, and the reviewed set they leave.

    ``reviewed`` is |S|, the reviewed set: the longest judged prefix of the queue (less sample documents judged
    out of turn at its end) plus every document judged in a review role (review, adjudication) wherever it sits
    in the queue. ``labels`` is the queue in *review order*: S first (in queue order), then the unreviewed rest
    in queue order, so S is always the first ``reviewed`` positions and every sample's ranks and frame are
    expressed on that order (`review_order`). ``order`` holds the queue rank (from 1) at each position of the
    review order, or None when S is a prefix of the queue (review order = queue order, the common case);
    ``out_of_order`` counts the documents of S beyond the judged prefix. ``screened_random``: the topic is declared
    screened in a random order fixed in advance; then S is exactly the documents judged in a review role, and a
    random sample of the queue."""

    entries: list[SampleEntry]
    reviewed: int
    labels: QueueLabels | None = None
    order: npt.NDArray[np.int64] | None = None
    out_of_order: int = 0
    screened_random: bool = False

    def in_review_order(self, labels: QueueLabels) -> QueueLabels:
        """The queue's labels on the review order (``labels`` itself when S is a prefix)."""
        return labels if self.labels is None else self.labels

    def queue_rank(self, position: int) -> int:
        """The queue rank of the document at ``position`` (from 1) of the review order."""
        if self.order is None or position < 1 or position > len(self.order):
            return position
        return int(self.order[position - 1])

    @property
    def draws(self) -> list[SampleDraw]:
        return [e.draw for e in self.entries if e.draw is not None]


def queue_scores(conn: Connection, queue_id: int, size: int) -> npt.NDArray[np.float64]:
    """The queue's stored scores in rank order (NaN where an entry has none), for the Quant rules when the scores
    are declared probabilities of relevance."""
    out = np.full(size, np.nan, dtype=np.float64)
    for rank, score in conn.execute(select(QueueEntry.rank, QueueEntry.score).where(
            QueueEntry.queue_id == queue_id, QueueEntry.score.is_not(None))):
        if score is not None and 1 <= int(rank) <= size:
            out[int(rank) - 1] = float(score)
    return out


def _queue_doc_ids(session: Session, queue_id: int) -> list[str]:
    return [d for (d,) in session.execute(select(QueueEntry.doc_id).where(QueueEntry.queue_id == queue_id)
                                          .order_by(QueueEntry.rank))]


def _reviewed_prefix(conn: Connection, topic_id: int, labels: QueueLabels,
                     staged: list[tuple[Sample, str, np.ndarray, list[str], int | None, str]],
                     as_of: int | None) -> int:
    """The reviewed prefix, less sample documents at its end that were judged only as sample documents (a sample
    document the review itself judged in turn, role review or adjudication, stays in it)."""
    doc_at = {int(r): d for _, _, ranks, docs, _, _ in staged for r, d in zip(ranks, docs, strict=True) if r >= 1}
    if not doc_at:
        return reviewed_prefix(labels.labels)
    ranks = np.array(sorted(doc_at), dtype=np.int64)
    candidate = reviewed_prefix(labels.labels, ranks)
    plain = reviewed_prefix(labels.labels)
    trailing = [doc_at[r] for r in range(candidate + 1, plain + 1)]
    if not trailing:
        return candidate
    stmt = select(Judgment.doc_id).where(Judgment.topic_id == topic_id, Judgment.doc_id.in_(trailing),
                                         Judgment.role.in_(("review", "adjudication"))).distinct()
    if as_of is not None:
        stmt = stmt.where(Judgment.id <= as_of)
    in_turn = set(conn.execute(stmt).scalars())
    return reviewed_prefix(labels.labels, np.array([r for r in ranks if doc_at[int(r)] not in in_turn],
                                                   dtype=np.int64))


REVIEW_ROLES = ("review", "adjudication")
# a duplicate flag (or its withdrawal) is an adjudication-role row but no review of the document: a record flagged
# before anyone screened it is removed, not reviewed out of queue order (`reviewdepth.services.files.dedupe`)
_NOT_A_MARKER = or_(Judgment.decision.is_(None), Judgment.decision.not_in(MARKER_DECISIONS))


# the most candidate ranks `_reviewed_beyond` looks up one by one; past it one pass over the queue's entries is
# cheaper (a team that reviews in another order judges most of the queue outside the prefix)
CANDIDATES_LOOKED_UP = 20_000
RANK_CHUNK = 5_000  # ranks per statement (well under every driver's bound-parameter limit)


def _reviewed_beyond(conn: Connection, topic_id: int, queue_id: int, labels: QueueLabels, prefix: int,
                     as_of: int | None) -> npt.NDArray[np.int64]:
    """Queue ranks after ``prefix`` whose document was judged in a review role (and has a label now): documents
    the team reviewed out of queue order (random order, another tool's order, batches by custodian).

    Only ranks with a label now can qualify, so when they are few (a rest sample's documents, say) each is looked
    up through the judgments' (topic, document) index, instead of a pass over every entry after the prefix."""
    judged = labels.labels[prefix:] >= 0
    candidates = np.flatnonzero(judged) + prefix + 1
    if len(candidates) <= CANDIDATES_LOOKED_UP:
        in_review = select(Judgment.id).where(Judgment.topic_id == topic_id, Judgment.doc_id == QueueEntry.doc_id,
                                              Judgment.role.in_(REVIEW_ROLES), _NOT_A_MARKER)
        if as_of is not None:
            in_review = in_review.where(Judgment.id <= as_of)
        found: list[int] = []
        for start in range(0, len(candidates), RANK_CHUNK):
            chunk = candidates[start:start + RANK_CHUNK].tolist()
            found.extend(conn.execute(select(QueueEntry.rank).where(
                QueueEntry.queue_id == queue_id, QueueEntry.rank.in_(chunk), in_review.exists())).scalars())
        return np.unique(np.asarray(found, dtype=np.int64))
    judged_in_review = select(Judgment.doc_id).where(Judgment.topic_id == topic_id,
                                                     Judgment.role.in_(REVIEW_ROLES), _NOT_A_MARKER)
    if as_of is not None:
        judged_in_review = judged_in_review.where(Judgment.id <= as_of)
    stmt = (select(QueueEntry.rank).where(QueueEntry.queue_id == queue_id, QueueEntry.rank > prefix,
                                          QueueEntry.doc_id.in_(judged_in_review)))
    ranks = np.fromiter(conn.execute(stmt).scalars(), dtype=np.int64)
    ranks = ranks[(ranks >= 1) & (ranks <= labels.size)]
    return np.unique(ranks[labels.labels[ranks - 1] >= 0])


def _without_sample_coding(conn: Connection, topic_id: int,
                           staged: list[tuple[Sample, str, np.ndarray, list[str], int | None, str]],
                           beyond: npt.NDArray[np.int64], as_of: int | None) -> npt.NDArray[np.int64]:
    """``beyond`` less the sample documents that were first judged in a review role after their sample was drawn:
    that judgment is the sample's coding (a team codes its sample in its review platform and imports the export,
    whose role is the default ``review``), not a review out of queue order. Such a document stays in the rest,
    where the sample's still-unreviewed documents are a random sample of it; the review's own passage through its
    rank (the judged prefix) still counts it as reviewed."""
    if not len(beyond):
        return beyond
    drawn_at: dict[str, int] = {}
    at_rank: dict[int, str] = {}
    for sample, _, ranks, docs, _, _ in staged:
        if sample.void_judgment_id is not None and (as_of is None or sample.void_judgment_id <= as_of):
            continue
        for rank, doc in zip(ranks.tolist(), docs, strict=True):
            if rank >= 1:
                at_rank[int(rank)] = doc
                drawn_at[doc] = min(drawn_at.get(doc, sample.as_of or 0), sample.as_of or 0)
    candidates = {at_rank[int(r)]: int(r) for r in beyond.tolist() if int(r) in at_rank}
    if not candidates:
        return beyond
    first_review: dict[str, int] = {}
    first_sample: dict[str, int] = {}
    docs = sorted(candidates)
    for start in range(0, len(docs), RANK_CHUNK):
        chunk = docs[start:start + RANK_CHUNK]
        for roles, into in ((REVIEW_ROLES, first_review), (("sample",), first_sample)):
            stmt = (select(Judgment.doc_id, func.min(Judgment.id))
                    .where(Judgment.topic_id == topic_id, Judgment.doc_id.in_(chunk), Judgment.role.in_(roles),
                           Judgment.relevant.is_not(None), _NOT_A_MARKER)
                    .group_by(Judgment.doc_id))
            if as_of is not None:
                stmt = stmt.where(Judgment.id <= as_of)
            into.update({str(d): int(i) for d, i in conn.execute(stmt)})

    def coded_by_review(doc: str) -> bool:
        # the first decision after the draw came in a review role: that is the coding; a document the team coded
        # with role sample first and reviewed later was reviewed (the sample judgment says which is which)
        review = first_review.get(doc, 0)
        sample = first_sample.get(doc)
        return review > drawn_at[doc] and (sample is None or sample <= drawn_at[doc] or sample > review)

    coding = {rank for doc, rank in candidates.items() if coded_by_review(doc)}
    return np.array([r for r in beyond.tolist() if int(r) not in coding], dtype=np.int64) if coding else beyond


def review_order(size: int, prefix: int, beyond: npt.NDArray[np.int64]) -> tuple[npt.NDArray[np.int64],
                                                                                 npt.NDArray[np.int64]]:
    """(order, position): the queue in review order — the reviewed set (the first ``prefix`` ranks and the ranks
    ``beyond``) in queue order, then the unreviewed rest in queue order — as ``order[i]`` = the queue rank at
    position i + 1, and ``position[r - 1]`` = the position (from 1) of queue rank r.

    Why this order: every estimate downstream assumes the reviewed set is the first |S| positions and a sample
    frame fixed at draw time covers every position after some s. A frame "unreviewed at draw time" is the
    complement of the reviewed set S0 then; S only grows, so on this order the frame's complement is a set of
    positions ≤ |S|, and the sample (conditional on how many of its documents are still unreviewed) is a simple
    random sample of the rest, as on a prefix. The order inside S matters to no certified figure."""
    reviewed = np.zeros(size, dtype=bool)
    reviewed[:prefix] = True
    reviewed[beyond - 1] = True
    order = np.concatenate([np.flatnonzero(reviewed), np.flatnonzero(~reviewed)]).astype(np.int64) + 1
    position = np.empty(size, dtype=np.int64)
    position[order - 1] = np.arange(1, size + 1, dtype=np.int64)
    return order, position


def _deepest(position: npt.NDArray[np.int64], ranks: npt.NDArray[np.int64] | range | list[int]) -> int:
    """The deepest review-order position of the given queue ranks (0 for none): where a frame that leaves them
    out starts on the review order."""
    picked = position[np.asarray(ranks, dtype=np.int64) - 1] if len(ranks) else position[:0]
    return int(picked.max()) if len(picked) else 0


def queue_evidence(conn: Connection, topic_id: int, queue: Queue, labels: QueueLabels,
                   as_of: int | None) -> QueueEvidence:
    """Every non-QC sample of the topic drawn at or before ``as_of``, expressed on ``queue``."""
    with Session(bind=conn) as session:
        found = session.execute(select(Sample, Queue.name).join(Queue, Queue.id == Sample.queue_id)
                                .where(Sample.topic_id == topic_id, Sample.frame.in_(REST_FRAMES))
                                .order_by(Sample.id)).all()
        rows: list[tuple[Sample, str]] = [(s, name) for s, name in found
                                          if as_of is None or s.as_of is None or s.as_of <= as_of]
        items = {s.id: session.execute(select(SampleItem.doc_id, SampleItem.rank).where(
            SampleItem.sample_id == s.id).order_by(SampleItem.position)).all() for s, _ in rows}
        other_queues = {s.queue_id for s, _ in rows if s.queue_id != queue.id}
        current_ids: list[str] = _queue_doc_ids(session, queue.id) if other_queues else []
        origin_ids = {q: _queue_doc_ids(session, q) for q in other_queues}
    rank_of = {d: i + 1 for i, d in enumerate(current_ids)}
    size = labels.size

    staged: list[tuple[Sample, str, np.ndarray, list[str], int | None, str]] = []
    outside_of: dict[int, list[int]] = {}
    for s, origin_name in rows:
        docs = [d for d, _ in items[s.id]]
        if s.queue_id == queue.id:
            ranks = np.array([int(r or 0) for _, r in items[s.id]], dtype=np.int64)
            frame_start: int | None = int(s.below_rank or 0) if s.frame != "ranks" else int(s.from_rank or 1) - 1
            origin = ""
        elif s.frame == "ranks":
            ranks, frame_start = np.array([], dtype=np.int64), None
            origin = f"drawn from queue {origin_name}"
        else:
            source = origin_ids[s.queue_id]
            start = int(s.below_rank or 0) if s.frame in ("unreviewed", "below-rank") else 0
            frame = set(source[start:])
            outside = [rank_of[d] for d in current_ids if d not in frame]
            outside_of[int(s.id)] = outside
            frame_start = max(outside, default=0)
            ranks = np.array([rank_of.get(d, 0) for d in docs], dtype=np.int64)
            origin = f"drawn from queue {origin_name}"
        staged.append((s, origin_name, ranks, docs, frame_start, origin))

    screened_random = conn.execute(select(Topic.screening_order).where(Topic.id == topic_id)).scalar() == "random"
    if screened_random:
        # declared random order: S is exactly what was judged in a review role (no judged prefix to extend it
        # through sample or audit documents, whose place in a random order says nothing about the review)
        beyond = _reviewed_beyond(conn, topic_id, queue.id, labels, 0, as_of)
        prefix = int(np.count_nonzero(beyond == np.arange(1, len(beyond) + 1)))
        beyond = beyond[prefix:]
    else:
        prefix = _reviewed_prefix(conn, topic_id, labels, staged, as_of)
        beyond = _reviewed_beyond(conn, topic_id, queue.id, labels, prefix, as_of)
    beyond = _without_sample_coding(conn, topic_id, staged, beyond, as_of)
    reviewed = prefix + len(beyond)
    order: npt.NDArray[np.int64] | None = None
    band_end: dict[int, int | None] = {}
    if len(beyond):
        # Documents reviewed out of queue order: re-express the queue and every sample on the review order.
        order, position = review_order(size, prefix, beyond)
        in_set = np.zeros(size, dtype=bool)
        in_set[order[:reviewed] - 1] = True
        unreviewed_upto = np.concatenate([[0], np.cumsum(~in_set)])
        labels = replace(labels, labels=labels.labels[order - 1])
        mapped: list[tuple[Sample, str, np.ndarray, list[str], int | None, str]] = []
        for s, origin_name, ranks, docs, frame_start, origin in staged:
            new_ranks = np.where(ranks >= 1, position[np.clip(ranks, 1, size) - 1], 0)
            if frame_start is not None:
                if s.queue_id != queue.id:
                    frame_start = _deepest(position, outside_of.get(int(s.id), []))
                else:
                    frame_start = _deepest(position, range(1, frame_start + 1))
                if s.frame == "ranks" and s.to_rank is not None and int(s.to_rank) < size:
                    band_end[int(s.id)] = reviewed + int(unreviewed_upto[int(s.to_rank)])
            mapped.append((s, origin_name, new_ranks, docs, frame_start, origin))
        staged = mapped

    entries: list[SampleEntry] = []
    for s, origin_name, ranks, docs, frame_start, origin in staged:
        voided = s.void_judgment_id is not None and (as_of is None or s.void_judgment_id <= as_of)
        in_queue = ranks >= 1
        kept_ranks = ranks[in_queue]
        kept_labels = labels.labels[kept_ranks - 1].astype(np.int64) if len(kept_ranks) else np.array(
            [], dtype=np.int64)
        kept_docs = [d for d, keep in zip(docs, in_queue, strict=True) if keep]
        missing = [d for d, r, lab in zip(kept_docs, kept_ranks, kept_labels, strict=True)
                   if lab == UNJUDGED and r > reviewed]
        definition = frame_definition(s.frame, s.below_rank, s.from_rank, s.to_rank)
        entry = SampleEntry(int(s.id), origin_name, s.frame, definition, int(s.frame_size), int(s.size), int(s.seed),
                            s.as_of, missing, None, "", voided, s.void_reason if voided else None)
        if voided:
            entry.status = f"voided: {s.void_reason}"
        elif frame_start is None:
            entry.status = f"not used: a rank band of queue {origin_name} cannot be carried to another ranking"
        elif missing:
            entry.status = (f"incomplete: {len(missing):,} drawn documents in the unreviewed rest still lack a "
                            "judgment")
        else:
            judged = kept_labels >= 0
            entry.relevant = int(np.count_nonzero(kept_labels == 1))
            frame_end = int(s.to_rank) if s.frame == "ranks" and s.to_rank is not None else None
            if frame_end is not None and order is not None:
                frame_end = band_end.get(int(s.id))
            if frame_end is not None and frame_end >= size:
                frame_end = None  # a band running to the queue's end is a rest sample of the ranks after its start
            entry.draw = SampleDraw(int(s.id), frame_start, kept_ranks[judged], (kept_labels[judged] == 1).astype(
                np.int64), int(s.size), frame_end, origin)
            if len(kept_ranks) < len(ranks):
                entry.status = (f"{len(ranks) - len(kept_ranks):,} of its documents are not in this queue and are "
                                "left out")
        entries.append(entry)
    return QueueEvidence(entries, reviewed, labels, order, len(beyond), screened_random)
