"""Duplicate records: import their bibliographic fields, find the groups, flag the duplicates and merge.

``reviewdepth import records TOPIC FILE`` stores each record's title, year, DOI, PMID and first author
(`reviewdepth.formats.records`) in ``record_fields``. ``reviewdepth dedupe TOPIC`` finds the groups
(`reviewdepth.formats.duplicates`: DOI, PMID, then similar titles of one year) and lists them; with ``--apply``
it records in the judgment log, in one transaction:

- for each duplicate, a **flag**: a judgment of the adjudication role, label ``duplicate``, ``decision =
  'duplicate'``, deciding nothing itself (``relevant`` null), noting the record kept and the match. Every label
  policy then excludes the record (`reviewdepth.store.labels`), agreement and conflicts leave it out, and PRISMA
  counts it as removed before screening;
- the **merge**: each reviewer who decided on a duplicate of the group but not on the record kept gets that
  decision (their latest on the group's duplicates: label, role, reason and stage as they gave them) copied to
  the record kept, source ``dedupe``, noting where it came from. So a work screened twice counts once, in R and
  in the found count, and no reviewer's decision is lost.

The record kept is the group's best-ranked record in the queue (``--queue``, or the topic's only queue), else
the smallest document id (numbers in numeric order). A record already flagged is not flagged again; ``dedupe
--not-duplicate DOC`` withdraws a flag (a ``distinct`` marker): the record then counts in its own right again,
and the decisions copied from it stay on the record kept (they are that reviewer's decisions on the work).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from sqlalchemy import Connection, Engine, delete, select

from reviewdepth.estimation.plural import counted
from reviewdepth.formats.duplicates import (
    DEFAULT_TITLE_THRESHOLD,
    BibRecord,
    DuplicateGroup,
    MissingMatcher,
    find_duplicates,
)
from reviewdepth.formats.errors import InputError
from reviewdepth.formats.source import read_bytes
from reviewdepth.services.errors import Conflict, Invalid, NotFound
from reviewdepth.services.evidence.topic import topic_id as find_topic_id
from reviewdepth.services.files.imports import (
    ImportSummary,
    check_new_file,
    checked_value,
    file_digest,
    record_import,
)
from reviewdepth.store import validation
from reviewdepth.store.chain import NewJudgment, append_judgments
from reviewdepth.store.ingest import bulk_insert, utc_now
from reviewdepth.store.models import (
    DISTINCT_DECISION,
    DUPLICATE_DECISION,
    MARKER_DECISIONS,
    VOID_ROLE,
    Judgment,
    Queue,
    QueueEntry,
    RecordFields,
)
from reviewdepth.store.snapshot import read_snapshot

DEDUPE_SOURCE = "dedupe"
_CHUNK = 1000


@dataclass
class RecordsImportSummary(ImportSummary):
    """``stored``: records whose fields were stored (replacing any stored before for the same document);
    ``with_title`` / ``with_doi``: how many have one."""

    with_title: int = 0
    with_doi: int = 0
    replaced: int = 0


def read_records(path: str, data: bytes, ids: str = "auto") -> list[BibRecord]:
    """The records of a RIS, CSV or ``.xlsx`` file, by its extension (a workbook by its zip signature too;
    `reviewdepth.formats.records`); ``ids`` as ``import records --ids`` takes it (for RIS: auto, position, tag)."""
    from reviewdepth.formats.records import read_records_csv, read_records_ris

    name = path.lower().removesuffix(".gz")
    if name.endswith((".ris", ".txt")):
        return read_records_ris(data, path, ids)
    if name.endswith((".csv", ".tsv", ".tab", ".xlsx")) or path == "-" or data.startswith(b"PK\x03\x04"):
        return read_records_csv(data, path, ids)
    raise InputError(path, None, None, "records are read from a RIS file (.ris, .txt), a CSV file (.csv, .tsv) or "
                     "an Excel workbook (.xlsx)")


def store_record_fields(conn: Connection, topic_id: int, records: Sequence[BibRecord], import_id: int) -> int:
    """Store ``records``' bibliographic fields for the topic, replacing those stored before for the same
    documents; how many were replaced."""
    docs = [r.doc_id for r in records]
    replaced = 0
    for start in range(0, len(docs), _CHUNK):
        replaced += conn.execute(delete(RecordFields).where(
            RecordFields.topic_id == topic_id, RecordFields.doc_id.in_(docs[start:start + _CHUNK]))).rowcount
    bulk_insert(conn, "record_fields", ("topic_id", "doc_id", "title", "year", "doi", "pmid", "first_author",
                                        "import_id"),
                [(topic_id, r.doc_id, r.title, r.year, r.doi, r.pmid, r.first_author, import_id) for r in records])
    return replaced


def _known_documents(conn: Connection, topic_id: int, docs: Sequence[str]) -> set[str]:
    """Which of ``docs`` the topic knows: in one of its queues, or judged."""
    known: set[str] = set()
    for start in range(0, len(docs), _CHUNK):
        part = list(docs[start:start + _CHUNK])
        known.update(conn.execute(select(QueueEntry.doc_id).join(Queue, Queue.id == QueueEntry.queue_id).where(
            Queue.topic_id == topic_id, QueueEntry.doc_id.in_(part))).scalars())
        known.update(conn.execute(select(Judgment.doc_id).where(
            Judgment.topic_id == topic_id, Judgment.doc_id.in_(part))).scalars())
    return known


def import_records(engine: Engine, path: str, *, topic: str, again: bool = False, data: bytes | None = None,
                   ids: str = "auto") -> RecordsImportSummary:
    """Store the bibliographic fields of ``path``'s records for ``topic`` (module docstring), all or nothing. Every
    record must be a document the topic knows (in one of its queues, or judged): a file of another review is
    refused, naming the first unknown record."""
    topic = checked_value(validation.topic_name, topic, path, None, "--topic")
    data = read_bytes(path) if data is None else data
    digest = file_digest(data)
    records = read_records(path, data, ids)
    docs = [checked_value(validation.doc_id, r.doc_id, path, None, "document id") for r in records]
    records = [BibRecord(doc, r.title, r.year, r.doi, r.pmid, r.first_author) for doc, r in zip(docs, records,
                                                                                                  strict=True)]
    summary = RecordsImportSummary("records", path, digest, len(records), stored=len(records),
                                   with_title=sum(r.title is not None for r in records),
                                   with_doi=sum(r.doi is not None for r in records))
    with engine.begin() as conn:
        try:
            topic_id = find_topic_id(conn, topic)
        except NotFound:
            raise InputError(path, None, "--topic", f"unknown topic {topic!r}: import its records' queue first "
                             "(import ris, import asreview, import run)") from None
        known = _known_documents(conn, topic_id, docs)
        unknown = [d for d in docs if d not in known]
        if unknown:
            verb = "is not a document" if len(unknown) == 1 else "are not documents"
            raise InputError(path, None, "document id", f"{counted(len(unknown), 'record')} {verb} of topic "
                             f"{topic!r} (the first: {unknown[0]!r}); the ids must be those its queue holds "
                             "(or --queue NAME stores the file as the topic's population)")
        check_new_file(conn, "records", digest, path, again, [topic])
        summary.import_id = record_import(conn, "records", path, digest, len(records), 1, "", taken=[topic])
        summary.replaced = store_record_fields(conn, topic_id, records, summary.import_id)
    summary.topics = [topic]
    return summary


@dataclass(frozen=True)
class DuplicateRow:
    """One record leaving the screening set: the record kept, the match, and the record's state."""

    doc_id: str
    kept: str
    basis: str
    similarity: float
    rank: int | None  # its rank in the queue (None: not in it)
    kept_rank: int | None
    flagged: bool  # already flagged (by an earlier --apply)
    decisions: int  # include/exclude decisions recorded on it


@dataclass
class DedupeResult:
    topic: str
    queue: str | None
    title_threshold: float
    records: int  # records with bibliographic fields
    groups: int
    duplicates: list[DuplicateRow] = field(default_factory=list)
    applied: bool = False
    flags_written: int = 0
    decisions_merged: int = 0

    def as_dict(self) -> dict[str, object]:
        out = dict(self.__dict__)
        out["duplicates"] = [dict(d.__dict__) for d in self.duplicates]
        return out


def _queue_ranks(conn: Connection, topic: str, topic_id: int, queue: str | None,
                 docs: Sequence[str]) -> tuple[str | None, dict[str, int]]:
    """The queue whose ranks choose the record kept, and the ranks of ``docs`` in it."""
    rows = conn.execute(select(Queue.id, Queue.name).where(Queue.topic_id == topic_id).order_by(Queue.id)).all()
    if queue is None and len(rows) > 1:
        raise Conflict(f"topic {topic!r} has several queues ({', '.join(r.name for r in rows)}); choose the one "
                       "whose order decides the record kept with --queue")
    chosen = next((r for r in rows if queue is None or r.name == queue), None)
    if chosen is None:
        if queue is not None:
            raise NotFound(f"topic {topic!r} has no queue {queue!r}")
        return None, {}
    ranks: dict[str, int] = {}
    for start in range(0, len(docs), _CHUNK):
        part = list(docs[start:start + _CHUNK])
        stmt = select(QueueEntry.doc_id, QueueEntry.rank).where(QueueEntry.queue_id == chosen.id,
                                                                QueueEntry.doc_id.in_(part))
        ranks.update((str(doc), int(rank)) for doc, rank in conn.execute(stmt))
    return str(chosen.name), ranks


def _doc_order(doc: str, ranks: dict[str, int]) -> tuple[object, ...]:
    rank = ranks.get(doc)
    if rank is not None:
        return (0, rank, 0, "")
    return (1, 0, int(doc), "") if doc.isdigit() else (1, 1, 0, doc)


def _latest_markers(conn: Connection, topic_id: int) -> dict[str, str]:
    stmt = (select(Judgment.doc_id, Judgment.decision).where(
        Judgment.topic_id == topic_id, Judgment.decision.in_(MARKER_DECISIONS)).order_by(Judgment.id))
    return {str(d): str(m) for d, m in conn.execute(stmt)}


@dataclass(frozen=True)
class _Decided:
    id: int
    doc_id: str
    label: str
    relevant: bool
    grade: int | None
    reviewer: str
    role: str
    reason: str | None
    stage: str | None


def _decisions(conn: Connection, topic_id: int, docs: Sequence[str]) -> list[_Decided]:
    """The include/exclude decisions (not markers, not void rows) on ``docs``, in log order."""
    out: list[_Decided] = []
    for start in range(0, len(docs), _CHUNK):
        out += [_Decided(int(r[0]), r[1], r[2], bool(r[3]), r[4], r[5], r[6], r[7], r[8]) for r in conn.execute(select(
            Judgment.id, Judgment.doc_id, Judgment.label, Judgment.relevant, Judgment.grade, Judgment.reviewer,
            Judgment.role, Judgment.reason, Judgment.stage).where(
            Judgment.topic_id == topic_id, Judgment.doc_id.in_(list(docs[start:start + _CHUNK])),
            Judgment.relevant.is_not(None), Judgment.role != VOID_ROLE,
            Judgment.decision.is_(None) | Judgment.decision.not_in(MARKER_DECISIONS)))]
    out.sort(key=lambda j: j.id)
    return out


def _groups(conn: Connection, topic: str, queue: str | None,
            title_threshold: float) -> tuple[int, str | None, int, list[DuplicateGroup], dict[str, int]]:
    topic_id = find_topic_id(conn, topic)
    rows = conn.execute(select(RecordFields.doc_id, RecordFields.title, RecordFields.year, RecordFields.doi,
                               RecordFields.pmid, RecordFields.first_author)
                        .where(RecordFields.topic_id == topic_id).order_by(RecordFields.doc_id)).all()
    if not rows:
        raise Conflict(f"topic {topic!r} has no bibliographic fields to compare; import them first with "
                       f"`reviewdepth import records {topic} FILE` (a RIS or CSV export of its records)")
    records = [BibRecord(*row) for row in rows]
    queue_name, ranks = _queue_ranks(conn, topic, topic_id, queue, [r.doc_id for r in records])
    try:
        groups = find_duplicates(records, title_threshold=title_threshold,
                                 preference=lambda doc: _doc_order(doc, ranks))
    except (ValueError, MissingMatcher) as exc:
        raise Invalid(str(exc)) from None
    return topic_id, queue_name, len(records), groups, ranks


def find_topic_duplicates(engine: Engine, topic: str, *, queue: str | None = None,
                          title_threshold: float = DEFAULT_TITLE_THRESHOLD) -> DedupeResult:
    """The duplicate groups of a topic's records, nothing written (module docstring)."""
    with read_snapshot(engine) as conn:
        return _listed(conn, topic, queue, title_threshold)


def _listed(conn: Connection, topic: str, queue: str | None, title_threshold: float) -> DedupeResult:
    topic_id, queue_name, count, groups, ranks = _groups(conn, topic, queue, title_threshold)
    markers = _latest_markers(conn, topic_id)
    dups = [d.doc_id for g in groups for d in g.duplicates]
    decided: dict[str, int] = {}
    for j in _decisions(conn, topic_id, dups):
        decided[j.doc_id] = decided.get(j.doc_id, 0) + 1
    rows = [DuplicateRow(d.doc_id, g.kept, d.basis, d.similarity, ranks.get(d.doc_id), ranks.get(g.kept),
                         markers.get(d.doc_id) == DUPLICATE_DECISION, decided.get(d.doc_id, 0))
            for g in groups for d in g.duplicates]
    return DedupeResult(topic, queue_name, title_threshold, count, len(groups), rows)


def apply_duplicates(engine: Engine, topic: str, *, reviewer: str, queue: str | None = None,
                     title_threshold: float = DEFAULT_TITLE_THRESHOLD) -> DedupeResult:
    """Flag every duplicate not flagged yet and merge its decisions into the record kept, in one transaction
    (module docstring)."""
    reviewer = validation.reviewer_name(reviewer)
    with engine.begin() as conn:
        result = _listed(conn, topic, queue, title_threshold)
        topic_id = find_topic_id(conn, topic)
        new = [d for d in result.duplicates if not d.flagged]
        now = utc_now()
        rows: list[NewJudgment] = []
        by_kept: dict[str, list[DuplicateRow]] = {}
        for d in new:
            by_kept.setdefault(d.kept, []).append(d)
            match = d.basis if d.similarity >= 100 else f"{d.basis}, {d.similarity:g} % similar"
            rows.append(NewJudgment(topic_id, d.doc_id, "duplicate", None, None, reviewer, "adjudication",
                                    DEDUPE_SOURCE, f"duplicate of {d.kept} ({match})", now,
                                    decision=DUPLICATE_DECISION))
        decisions = _decisions(conn, topic_id, [*by_kept, *(d.doc_id for d in new)])
        on_kept: dict[str, set[str]] = {}
        latest: dict[tuple[str, str], _Decided] = {}  # (kept, reviewer) -> their latest decision on a duplicate
        kept_of = {d.doc_id: d.kept for d in new}
        for j in decisions:
            if j.doc_id in by_kept:
                on_kept.setdefault(j.doc_id, set()).add(j.reviewer)
            else:
                latest[(kept_of[j.doc_id], j.reviewer)] = j
        merged = 0
        for (kept, who), j in sorted(latest.items(), key=lambda item: item[1].id):
            if who in on_kept.get(kept, set()):
                continue  # the reviewer decided on the record kept: that decision stands
            rows.append(NewJudgment(topic_id, kept, j.label, j.relevant, j.grade, who, j.role, DEDUPE_SOURCE,
                                    f"merged from duplicate {j.doc_id} (judgment {j.id})", now,
                                    reason=j.reason, stage=j.stage))
            merged += 1
        if rows:
            append_judgments(conn, rows)
        result.applied = True
        result.flags_written = len(new)
        result.decisions_merged = merged
        result.duplicates = [DuplicateRow(**{**d.__dict__, "flagged": True}) for d in result.duplicates]
    return result


def withdraw_duplicate(engine: Engine, topic: str, doc_id: str, *, reviewer: str, note: str | None = None) -> int:
    """Withdraw the duplicate flag of ``doc_id`` (a ``distinct`` marker); its judgment id. A record not flagged is
    a `Conflict`."""
    reviewer = validation.reviewer_name(reviewer)
    doc_id = validation.doc_id(doc_id, "document id")
    with engine.begin() as conn:
        topic_id = find_topic_id(conn, topic)
        if _latest_markers(conn, topic_id).get(doc_id) != DUPLICATE_DECISION:
            raise Conflict(f"document {doc_id!r} of topic {topic!r} is not flagged a duplicate")
        return append_judgments(conn, [NewJudgment(
            topic_id, doc_id, "distinct", None, None, reviewer, "adjudication", DEDUPE_SOURCE,
            note or "not a duplicate: counts in its own right again", utc_now(), decision=DISTINCT_DECISION)],
            return_ids=True)[0]
