"""Who coded each sample document and when: for stored samples, each drawn document with the latest decision
recorded on it at or before a judgment id (its label, reviewer, role and time), read through the caller's
connection. The validation document lists them (`reviewdepth.services.answers.validation`); the report counts them by
role, time and door (`sample_coding_counts`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from sqlalchemy import Connection, select

from reviewdepth.report.coding_model import SampleCoding
from reviewdepth.report.validation_model import SampleDocument
from reviewdepth.store.chain import canonical_time
from reviewdepth.store.models import ImportRecord, Judgment, SampleItem

_CHUNK = 5000


def sample_coding(conn: Connection, topic_id: int, sample_ids: Sequence[int],
                  as_of: int | None) -> dict[int, list[SampleDocument]]:
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
    out: dict[int, list[SampleDocument]] = {}
    for sample_id, pairs in items.items():
        coded = []
        for doc_id, rank in pairs:
            found = latest.get(doc_id)
            coded.append(SampleDocument(sample_id, rank, doc_id, *found) if found is not None
                         else SampleDocument(sample_id, rank, doc_id, None, None, None, None, None))
        out[sample_id] = coded
    return out


def sample_coding_counts(conn: Connection, topic_id: int, samples: Sequence[tuple[int, int | None]],
                         as_of: int | None) -> dict[int, tuple[list[SampleCoding], int]]:
    """For each sample (its id and the judgment id it was drawn at), how its documents were coded: the latest
    decision on each (what label policy ``latest`` reads) at or before ``as_of``, counted by its role, whether it
    was recorded after the draw, and the door it came through (an import of a file, with the importer's kind; the
    API; the command line), largest groups first; and how many documents have no decision yet. A team may code a
    sample through ``judge --role sample`` or through any other door after the draw (an export imported with role
    ``review``): the store counts both as the sample's coding (`queue_evidence._without_sample_coding`), and the
    report says which happened."""
    items: dict[int, list[str]] = {int(s): [] for s, _ in samples}
    ids = list(items)
    for start in range(0, len(ids), _CHUNK):
        chunk = ids[start:start + _CHUNK]
        for sample_id, doc_id in conn.execute(
                select(SampleItem.sample_id, SampleItem.doc_id).where(SampleItem.sample_id.in_(chunk))):
            items[int(sample_id)].append(str(doc_id))
    docs = sorted({d for found in items.values() for d in found})
    latest: dict[str, tuple[int, str, str, str | None]] = {}
    for start in range(0, len(docs), _CHUNK):
        stmt = (select(Judgment.doc_id, Judgment.id, Judgment.role, Judgment.source, ImportRecord.kind)
                .outerjoin(ImportRecord, ImportRecord.id == Judgment.import_id)
                .where(Judgment.topic_id == topic_id, Judgment.doc_id.in_(docs[start:start + _CHUNK]),
                       Judgment.relevant.is_not(None)).order_by(Judgment.id))
        if as_of is not None:
            stmt = stmt.where(Judgment.id <= as_of)
        for doc_id, judgment_id, role, source, kind in conn.execute(stmt):
            latest[str(doc_id)] = (int(judgment_id), str(role), str(source), None if kind is None else str(kind))
    out: dict[int, tuple[list[SampleCoding], int]] = {}
    for sample_id, drawn_at in samples:
        groups: Counter[tuple[str, bool, str, str | None]] = Counter()
        uncoded = 0
        for doc in items[int(sample_id)]:
            found = latest.get(doc)
            if found is None:
                uncoded += 1
                continue
            judgment_id, role, source, importer = found
            if importer == "judge-file" and source == "xlsx":  # `import xlsx` records its file as judge --file does
                importer = "xlsx"
            door = ("import" if importer is not None else source if source in ("api", "library") else "cli")
            groups[(role, drawn_at is None or judgment_id > drawn_at, door, importer)] += 1
        ordered = sorted(groups.items(), key=lambda item: (-item[1], item[0][0], not item[0][1], item[0][2],
                                                           item[0][3] or ""))
        out[int(sample_id)] = ([SampleCoding(role, after, door, kind, n) for (role, after, door, kind), n in ordered],
                               uncoded)
    return out
