"""Who coded each sample document and when: for stored samples, each drawn document with the latest decision
recorded on it at or before a judgment id (its label, reviewer, role and time), read through the caller's
connection. The validation document lists them (`reviewdepth.services.validation`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import Connection, select

from reviewdepth.store.chain import canonical_time
from reviewdepth.store.models import Judgment, SampleItem

_CHUNK = 5000


@dataclass(frozen=True)
class CodedDocument:
    """One sample document and the latest decision on it (all None: no decision yet, the document is uncoded)."""

    sample_id: int
    rank: int
    doc_id: str
    label: str | None
    relevant: bool | None
    reviewer: str | None
    role: str | None
    recorded_at: str | None


def sample_coding(conn: Connection, topic_id: int, sample_ids: Sequence[int],
                  as_of: int | None) -> dict[int, list[CodedDocument]]:
    """Each sample's documents in draw order, each with the latest judgment that gives a decision (``relevant``
    not NULL) recorded at or before judgment ``as_of`` (None: now); the label policy ``latest`` reads the same
    judgment."""
    items: dict[int, list[tuple[str, int]]] = {int(s): [] for s in sample_ids}
    for start in range(0, len(items), _CHUNK):
        chunk = list(items)[start:start + _CHUNK]
        for sample_id, doc_id, rank in conn.execute(
                select(SampleItem.sample_id, SampleItem.doc_id, SampleItem.rank)
                .where(SampleItem.sample_id.in_(chunk)).order_by(SampleItem.sample_id, SampleItem.position)):
            items[int(sample_id)].append((str(doc_id), int(rank or 0)))
    docs = sorted({d for pairs in items.values() for d, _ in pairs})
    latest: dict[str, tuple[str, bool, str, str, str]] = {}
    for start in range(0, len(docs), _CHUNK):
        stmt = (select(Judgment.doc_id, Judgment.label, Judgment.relevant, Judgment.reviewer, Judgment.role,
                       Judgment.recorded_at)
                .where(Judgment.topic_id == topic_id, Judgment.doc_id.in_(docs[start:start + _CHUNK]),
                       Judgment.relevant.is_not(None)).order_by(Judgment.id))
        if as_of is not None:
            stmt = stmt.where(Judgment.id <= as_of)
        for doc_id, label, relevant, reviewer, role, moment in conn.execute(stmt):
            latest[str(doc_id)] = (str(label), bool(relevant), str(reviewer), str(role), canonical_time(moment))
    out: dict[int, list[CodedDocument]] = {}
    for sample_id, pairs in items.items():
        coded = []
        for doc_id, rank in pairs:
            found = latest.get(doc_id)
            coded.append(CodedDocument(sample_id, rank, doc_id, *found) if found is not None
                         else CodedDocument(sample_id, rank, doc_id, None, None, None, None, None))
        out[sample_id] = coded
    return out
