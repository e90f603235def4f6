"""Random samples as first-class records: draw without replacement from a stated frame, store the seed, the
frame and the drawn documents; report which drawn documents still lack a judgment."""

from __future__ import annotations

import secrets

import numpy as np
from sqlalchemy import Engine, func, insert, select

from reviewdepth.estimation.plural import counted
from reviewdepth.services.errors import Conflict, Invalid
from reviewdepth.services.evidence import labels as evidence_labels
from reviewdepth.services.evidence import samples as evidence_samples
from reviewdepth.services.evidence import topic as evidence_topic
from reviewdepth.services.evidence.queue_evidence import queue_evidence
from reviewdepth.services.evidence.samples import SampleRecord, frame_definition
from reviewdepth.store.evidence import chain_object
from reviewdepth.store.ingest import bulk_insert, utc_now
from reviewdepth.store.labels import UNJUDGED
from reviewdepth.store.loaders import QueueLabels
from reviewdepth.store.models import Judgment, QueueEntry, Sample
from reviewdepth.store.snapshot import read_snapshot

__all__ = ["FRAMES", "SampleRecord", "draw_sample", "frame_definition", "load_samples", "parse_frame"]

FRAMES = ("all", "unreviewed", "below-rank", "ranks", "judged")


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


def draw_sample(engine: Engine, topic: str, size: int, *, frame: str = "all", queue: str | None = None,
                seed: int | None = None, policy: str = "latest") -> SampleRecord:
    """Draw ``size`` documents without replacement from the frame (numpy ``default_rng(seed)``) and store them.

    A ``judged`` (QC) sample counts as judged once each drawn document has a ``qc`` judgment recorded after the
    draw; its labels are those QC decisions."""
    kind, a, b = parse_frame(frame)
    if size < 1:
        raise Invalid("sample size must be at least 1")
    with read_snapshot(engine) as conn:
        topic_id, row = evidence_topic.find_queue(conn, topic, queue)
        _, labels = evidence_labels.queue_labels(conn, topic, row.name, policy)
        # the same reviewed set the report uses: sample documents judged just past the prefix do not extend it
        evidence = queue_evidence(conn, topic_id, row, labels, None) if kind == "unreviewed" else None
    below: int | None = None
    if kind == "all":
        ranks = np.arange(1, labels.size + 1)
    elif kind in ("unreviewed", "below-rank"):
        if kind == "unreviewed":
            assert evidence is not None
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
        chain_object(conn, "sample", sample_id)
    drawn_labels = [UNJUDGED] * size if kind == "judged" else [int(labels.labels[int(r) - 1]) for r in chosen]
    record = SampleRecord(sample_id, topic, row.name, kind, frame_definition(kind, below, a, b), len(ranks), size,
                          seed, below, a if kind == "ranks" else None, b, last, docs, [int(r) for r in chosen],
                          drawn_labels)
    if kind != "judged":  # a QC sample is drawn from coded documents by definition
        record.coded_at_draw = sum(1 for label in drawn_labels if label != UNJUDGED)
        record.coded_at_draw_note = coded_at_draw_note(record.coded_at_draw, size, kind)
    return record


def coded_at_draw_note(coded: int, size: int, kind: str) -> str:
    """What a draw says of its documents already coded. Drawing coded documents is legitimate (the sample then
    describes the whole frame, as a recall sample of the whole population does, and their labels count as they
    stand), but often not what was meant (a band of ranks the review has passed): the line says how many, and
    which frame holds only what is not yet reviewed."""
    if coded == 0:
        return f"none of the {counted(size, 'drawn document')} is coded yet"
    coded_part = (f"{coded:,} of the {counted(size, 'drawn document')} {'is' if coded == 1 else 'are'} already coded: "
                  "their labels count as they stand, and the sample describes the whole frame, coded part included")
    if kind == "unreviewed":
        return coded_part + " (coded outside the reviewed set, e.g. in an earlier sample)"
    return coded_part + "; to sample only what is not yet reviewed, draw with --frame unreviewed"


def load_samples(engine: Engine, topic: str, queue: str | None = None, *, labels: QueueLabels | None = None,
                 policy: str = "latest", as_of: int | None = None, sample_id: int | None = None) -> list[SampleRecord]:
    """Stored samples of a topic's queue (drawn at or before ``as_of``) with each document's current label, in one
    read snapshot (`reviewdepth.services.evidence.samples.load_samples`)."""
    with read_snapshot(engine) as conn:
        _, row = evidence_topic.find_queue(conn, topic, queue)
        if labels is None:
            _, labels = evidence_labels.queue_labels(conn, topic, row.name, policy,
                                                     None if as_of is None else str(as_of))
        return evidence_samples.load_samples(conn, topic, row, labels, as_of=as_of, sample_id=sample_id)
