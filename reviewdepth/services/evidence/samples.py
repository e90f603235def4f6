"""The topic's stored samples of a queue with each drawn document's label as of a judgment, read through the
caller's connection."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from sqlalchemy import Connection, select
from sqlalchemy.orm import Session

from reviewdepth.services.errors import NotFound
from reviewdepth.store.labels import UNJUDGED
from reviewdepth.store.loaders import QueueLabels
from reviewdepth.store.models import Judgment, Queue, Sample, SampleItem


@dataclass(frozen=True)
class SampleDocument:
    doc_id: str
    rank: int


@dataclass(frozen=True)
class SampleView:
    """A stored sample as both doors show it (the API's ``SampleOut`` is generated from it)."""

    id: int
    topic: str
    queue: str
    frame: str
    frame_definition: str
    frame_size: int
    size: int
    seed: int
    as_of: int | None
    judged: int | None
    relevant: int | None
    complete: bool
    status: str = field(metadata={"doc": "complete when every drawn document is judged, else incomplete."})
    missing: list[str] = field(default_factory=list)
    documents: list[SampleDocument] = field(default_factory=list)
    voided: bool = field(default=False, metadata={"doc": "Voided samples are kept but used by no estimate."})
    void_reason: str | None = None
    queue_size: int | None = field(default=None, metadata={"doc": "The queue's size when the sample was drawn."})
    coded_at_draw: int | None = field(default=None, metadata={"doc": (
        "In the answer to a draw only: how many drawn documents were already coded (had a label) when drawn; "
        "their labels count for the sample as they stand.")})
    coded_at_draw_note: str | None = field(default=None, metadata={"doc": (
        "In the answer to a draw only: what coded_at_draw means for the sample, in words.")})


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
    # voided (`reviewdepth.services.review.sample_void`) at or before the as-of point: kept for the record, used by
    # no estimate
    voided: bool = False
    void_reason: str | None = None
    queue_size: int | None = None  # the queue's size at draw time (NULL for samples drawn before revision 0005)
    # set by the draw only (`reviewdepth.services.review.samples.draw_sample`): drawn documents already coded then
    coded_at_draw: int | None = None
    coded_at_draw_note: str | None = None

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

    def view(self) -> SampleView:
        return SampleView(
            id=self.id, topic=self.topic, queue=self.queue, frame=self.frame, frame_definition=self.frame_definition,
            frame_size=self.frame_size, size=self.size, seed=self.seed, as_of=self.as_of,
            judged=self.size - len(self.missing) if self.labels else None,
            relevant=self.relevant if self.labels else None, complete=self.complete,
            status="complete" if self.complete else "incomplete", missing=self.missing,
            documents=[SampleDocument(d, r) for d, r in zip(self.doc_ids, self.ranks, strict=True)],
            voided=self.voided, void_reason=self.void_reason, queue_size=self.queue_size,
            coded_at_draw=self.coded_at_draw, coded_at_draw_note=self.coded_at_draw_note)

    def as_dict(self) -> dict[str, object]:
        """The view as the CLI's JSON writes it (the API's adds ``status``)."""
        data = asdict(self.view())
        del data["status"]
        return data


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


def load_samples(conn: Connection, topic: str, row: Queue, labels: QueueLabels, *, as_of: int | None = None,
                 sample_id: int | None = None) -> list[SampleRecord]:
    """Stored samples of a topic's queue ``row`` (drawn at or before ``as_of``) with each document's label in
    ``labels`` (a QC sample's: its QC decisions)."""
    stmt = select(Sample).where(Sample.queue_id == row.id).order_by(Sample.id)
    if sample_id is not None:
        stmt = stmt.where(Sample.id == sample_id)
    records: list[SampleRecord] = []
    with Session(bind=conn) as session:
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
