"""Random samples as first-class records: draw without replacement from a stated frame, store the seed, the
frame and the drawn documents; report which drawn documents still lack a judgment."""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field

import numpy as np
from sqlalchemy import Engine, func, insert, select
from sqlalchemy.orm import Session

from reviewdepth.estimation.assessment import reviewed_prefix as assessment_prefix
from reviewdepth.services.errors import Conflict, Invalid, NotFound
from reviewdepth.services.queues import find_queue, queue_labels
from reviewdepth.store.ingest import bulk_insert, utc_now
from reviewdepth.store.labels import UNJUDGED
from reviewdepth.store.loaders import QueueLabels
from reviewdepth.store.models import Judgment, QueueEntry, Sample, SampleItem

FRAMES = ("all", "unreviewed", "below-rank", "ranks", "judged")


@dataclass
class SampleRecord:
    """A stored sample and, when computed, the current labels of its documents."""

    id: int
    topic: str
    queue: str
    frame: str
    frame_definition: str
    frame_size: int
    size: int
    seed: int
    below_rank: int | None
    from_rank: int | None
    to_rank: int | None
    as_of: int | None
    doc_ids: list[str] = field(default_factory=list)
    ranks: list[int] = field(default_factory=list)
    labels: list[int] = field(default_factory=list)
    # voided (`reviewdepth.services.sample_void`) at or before the as-of point: kept for the record, used by
    # no estimate
    voided: bool = False
    void_reason: str | None = None
    queue_size: int | None = None  # the queue's size at draw time (NULL for samples drawn before revision 0005)

    @property
    def missing(self) -> list[str]:
        return [d for d, label in zip(self.doc_ids, self.labels, strict=True) if label == UNJUDGED]

    @property
    def complete(self) -> bool:
        return bool(self.labels) and not self.missing

    @property
    def relevant(self) -> int:
        return sum(1 for label in self.labels if label == 1)

    @property
    def positive_ranks(self) -> list[int]:
        return sorted(r for r, label in zip(self.ranks, self.labels, strict=True) if label == 1)

    def as_dict(self) -> dict[str, object]:
        return {
            "id": self.id, "topic": self.topic, "queue": self.queue, "frame": self.frame,
            "frame_definition": self.frame_definition, "frame_size": self.frame_size, "size": self.size,
            "seed": self.seed, "as_of": self.as_of, "judged": self.size - len(self.missing) if self.labels else None,
            "relevant": self.relevant if self.labels else None, "complete": self.complete,
            "missing": self.missing, "documents": [{"doc_id": d, "rank": r} for d, r in
                                                   zip(self.doc_ids, self.ranks, strict=True)],
            "voided": self.voided, "void_reason": self.void_reason, "queue_size": self.queue_size,
        }


def reviewed_prefix(labels: QueueLabels) -> int:
    """Length of the longest fully judged prefix of the queue (the part reviewed in rank order), without the sample
    correction of `reviewdepth.services.sample_evidence.queue_evidence` (which the report and draws use)."""
    return assessment_prefix(labels.labels)


def parse_frame(frame: str) -> tuple[str, int | None, int | None]:
    """``all``, ``unreviewed``, ``judged``, ``below-rank:K`` or ``ranks:A-B`` into (kind, a, b)."""
    kind, _, arg = frame.partition(":")
    if kind not in FRAMES:
        raise Invalid(f"frame must be one of all, unreviewed, judged, below-rank:K, ranks:A-B; not {frame!r}")
    try:
        if kind == "below-rank":
            return kind, int(arg), None
        if kind == "ranks":
            a, _, b = arg.partition("-")
            return kind, int(a), int(b)
    except ValueError:
        raise Invalid(f"bad frame {frame!r}: use below-rank:K or ranks:A-B with integer ranks") from None
    if arg:
        raise Invalid(f"frame {kind!r} takes no argument")
    return kind, None, None


def frame_definition(kind: str, below: int | None, a: int | None, b: int | None) -> str:
    if kind == "all":
        return "every document of the queue"
    if kind == "unreviewed":
        return f"documents below the reviewed prefix (ranks > {below}) at draw time"
    if kind == "below-rank":
        return f"documents at ranks > {below}"
    if kind == "ranks":
        return f"documents at ranks {a}..{b}"
    return "documents already judged (QC)"


def draw_sample(engine: Engine, topic: str, size: int, *, frame: str = "all", queue: str | None = None,
                seed: int | None = None, policy: str = "latest") -> SampleRecord:
    """Draw ``size`` documents without replacement from the frame (numpy ``default_rng(seed)``) and store them.

    A ``judged`` (QC) sample counts as judged once each drawn document has a ``qc`` judgment recorded after the
    draw; its labels are those QC decisions."""
    kind, a, b = parse_frame(frame)
    if size < 1:
        raise Invalid("sample size must be at least 1")
    topic_id, row = find_queue(engine, topic, queue)
    _, labels = queue_labels(engine, topic, row.name, policy)
    below: int | None = None
    if kind == "all":
        ranks = np.arange(1, labels.size + 1)
    elif kind in ("unreviewed", "below-rank"):
        if kind == "unreviewed":
            # the same cutoff the report uses: sample documents judged just past the prefix do not extend it
            from reviewdepth.services.sample_evidence import queue_evidence

            evidence = queue_evidence(engine, topic_id, row, labels, None)
            below = evidence.reviewed - evidence.out_of_order
            # the frame is what is not reviewed now: after the judged prefix, less documents reviewed out of order
            ranks = (np.arange(below + 1, labels.size + 1) if evidence.order is None
                     else np.sort(evidence.order[evidence.reviewed:]))
        else:
            below = a
            assert below is not None
            ranks = np.arange(below + 1, labels.size + 1)
    elif kind == "ranks":
        assert a is not None and b is not None
        if not 1 <= a <= b <= labels.size:
            raise Invalid(f"rank band {a}-{b} is outside the queue (1..{labels.size})")
        ranks = np.arange(a, b + 1)
    else:
        ranks = np.flatnonzero(labels.labels != UNJUDGED) + 1
    if size > len(ranks):
        raise Conflict(f"cannot draw {size} documents from a frame of {len(ranks)}")
    seed = secrets.randbits(63) if seed is None else seed
    if not 0 <= seed < 2**63:
        raise Invalid("seed must be in [0, 2^63)")
    chosen = ranks[np.random.default_rng(seed).choice(len(ranks), size=size, replace=False)]
    with engine.begin() as conn:
        last = conn.execute(select(func.max(Judgment.id)).where(Judgment.topic_id == topic_id)).scalar_one()
        doc_of: dict[int, str] = {}
        wanted = sorted(int(r) for r in chosen)
        for start in range(0, len(wanted), 5000):
            part = wanted[start:start + 5000]
            doc_of.update({int(r): d for r, d in conn.execute(select(QueueEntry.rank, QueueEntry.doc_id).where(
                QueueEntry.queue_id == row.id, QueueEntry.rank.in_(part)))})
        sample_id = int(conn.execute(insert(Sample).values(
            topic_id=topic_id, queue_id=row.id, frame=kind, below_rank=below, from_rank=a if kind == "ranks" else None,
            to_rank=b, frame_size=len(ranks), size=size, seed=seed, as_of=last, created_at=utc_now(),
            queue_size=int(row.size),
        ).returning(Sample.id)).scalar_one())
        docs = [doc_of[int(r)] for r in chosen]
        bulk_insert(conn, "sample_items", ("sample_id", "position", "doc_id", "rank"),
                    ((sample_id, i, d, int(r)) for i, (d, r) in enumerate(zip(docs, chosen, strict=True), start=1)))
    return SampleRecord(sample_id, topic, row.name, kind, frame_definition(kind, below, a, b), len(ranks), size, seed,
                        below, a if kind == "ranks" else None, b, last, docs, [int(r) for r in chosen],
                        [UNJUDGED] * size if kind == "judged" else [int(labels.labels[int(r) - 1]) for r in chosen])


def _qc_checks(session: Session, topic_id: int, docs: list[str], drawn_at: int | None,
               as_of: int | None) -> list[int]:
    """Per drawn document, its latest ``qc`` decision recorded after the draw (UNJUDGED when none yet)."""
    check: dict[str, int] = {}
    for start in range(0, len(docs), 5000):
        stmt = (select(Judgment.doc_id, Judgment.relevant).where(
            Judgment.topic_id == topic_id, Judgment.role == "qc", Judgment.relevant.is_not(None),
            Judgment.doc_id.in_(docs[start:start + 5000]), Judgment.id > (drawn_at or 0)).order_by(Judgment.id))
        if as_of is not None:
            stmt = stmt.where(Judgment.id <= as_of)
        check.update((d, int(bool(r))) for d, r in session.execute(stmt))
    return [check.get(d, UNJUDGED) for d in docs]


def load_samples(engine: Engine, topic: str, queue: str | None = None, *, labels: QueueLabels | None = None,
                 policy: str = "latest", as_of: int | None = None, sample_id: int | None = None) -> list[SampleRecord]:
    """Stored samples of a topic's queue (drawn at or before ``as_of``) with each document's current label."""
    _, row = find_queue(engine, topic, queue)
    if labels is None:
        _, labels = queue_labels(engine, topic, row.name, policy, None if as_of is None else str(as_of))
    stmt = select(Sample).where(Sample.queue_id == row.id).order_by(Sample.id)
    if sample_id is not None:
        stmt = stmt.where(Sample.id == sample_id)
    records: list[SampleRecord] = []
    with Session(engine) as session:
        samples = session.execute(stmt).scalars().all()
        for s in samples:
            if as_of is not None and s.as_of is not None and s.as_of > as_of:
                continue
            items = session.execute(select(SampleItem.doc_id, SampleItem.rank).where(SampleItem.sample_id == s.id)
                                    .order_by(SampleItem.position)).all()
            docs = [i[0] for i in items]
            ranks = [int(i[1] or 0) for i in items]
            if s.frame == "judged":  # a QC sample is judged once each document has a qc judgment after the draw
                label_values = _qc_checks(session, int(s.topic_id), docs, s.as_of, as_of)
            else:
                label_values = [int(labels.labels[r - 1]) for r in ranks]
            voided = s.void_judgment_id is not None and (as_of is None or s.void_judgment_id <= as_of)
            records.append(SampleRecord(
                int(s.id), topic, row.name, s.frame,
                frame_definition(s.frame, s.below_rank, s.from_rank, s.to_rank), int(s.frame_size), int(s.size),
                int(s.seed), s.below_rank, s.from_rank, s.to_rank, s.as_of, docs, ranks, label_values,
                voided=voided, void_reason=s.void_reason if voided else None,
                queue_size=None if s.queue_size is None else int(s.queue_size)))
    if sample_id is not None and not records:
        raise NotFound(f"topic {topic!r} has no sample {sample_id}")
    return records
