"""Import a RIS file's records as a topic's population (`reviewdepth.formats.ris` reads it).

The store has no documents table: a topic's population is its ``population_size`` (N, which reports and
estimates use) and the documents its queues hold. So the import sets ``population_size`` to the number of
records and stores them as one queue in file order (``--queue``, default ``records``; ordering ``given``): their
ids are then known to the topic, judgments can be served from it, and ``export labels`` lists them. The file
order is no model's ranking: measures of that queue describe screening in file order.

A record labelled in ASReview's convention (a note ``ASReview_relevant`` / ``ASReview_irrelevant``,
`reviewdepth.formats.ris`) becomes a judgment of the review role by ``reviewer`` (default ``asreview``), label
``1``/``0``, served from that queue, in the same transaction; ``ASReview_not_seen`` and records without a label
are counted as unlabelled. `reviewdepth.services.review.exports.export_ris` writes the same notes back. Rayyan's RIS
export writes each member's decision in the notes (``RAYYAN-INCLUSION``): each ``Included`` / ``Excluded``
becomes that member's judgment and each ``Maybe`` that member's maybe decision, as ``import rayyan`` stores
them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from sqlalchemy import Connection, Engine, insert, select, update

from reviewdepth.formats.csv_judgments import refuse_wide_encoding
from reviewdepth.formats.errors import InputError
from reviewdepth.formats.record_ids import IDS_AUTO
from reviewdepth.formats.records import read_records_ris
from reviewdepth.formats.ris import read_ris_records, tag_at
from reviewdepth.formats.source import read_bytes
from reviewdepth.services.errors import Conflict
from reviewdepth.services.evidence.identification import records_per_source
from reviewdepth.services.files import dedupe
from reviewdepth.services.files.imports import (
    ImportSummary,
    check_new_file,
    checked_bytes,
    checked_source,
    checked_value,
    file_digest,
    record_import,
)
from reviewdepth.store import validation
from reviewdepth.store.chain import NewJudgment, append_judgments
from reviewdepth.store.evidence import chain_object
from reviewdepth.store.import_options import RecordSource
from reviewdepth.store.ingest import bulk_insert, utc_now
from reviewdepth.store.models import Queue, QueueEntry, Topic
from reviewdepth.store.ranking_blob import encode_ranking


@dataclass
class RisImportSummary(ImportSummary):
    """``stored``: judgments (``labels`` from ASReview's notes, ``decisions`` from Rayyan's); ``maybe``: the
    decisions that are Rayyan's Maybe (stored as maybe decisions); ``unlabelled``: records with neither."""

    labels: int = 0
    decisions: int = 0
    maybe: int = 0
    ids: str = ""  # how the records got their ids (`RecordIds.describe`)
    id_source: str = ""  # tag or position
    # where the records were identified, when declared (`store_population`: then added to the population), the
    # population after the import, and the records whose bibliographic fields were stored for ``dedupe``
    source_type: str | None = None
    source_name: str | None = None
    population_size: int = 0
    fields: int = 0


# the label a Rayyan Maybe is recorded with (a word of `services.evidence.decision_words.MAYBE_WORDS`)
MAYBE_LABEL = "maybe"


def store_population(conn: Connection, path: str, topic: str, queue: str, docs: list[str],
                     source: str, *, declared: RecordSource | None = None,
                     lines: Sequence[int | None] | None = None, id_field: str = "id") -> tuple[int, int]:
    """Store ``docs`` (a file's records, in file order) as ``topic``'s population: its ``population_size`` and a
    queue named ``queue`` of them in file order (module docstring), creating the topic when missing; a queue of
    that name already in the topic is a `Conflict`. The topic's and the queue's ids. Importers of screening
    tools' record files (RIS, Rayyan, Covidence) share it.

    ``declared``: where the file's records were identified (``--source-type``/``--source-name``). Such a file
    adds its records to the topic's population rather than replacing it: ``population_size`` grows by their
    number, so a population assembled from several searches counts every record each search found (duplicates
    across them included, until ``dedupe --apply`` removes them before screening). A record whose id a queue of
    the topic already holds is refused at its line (``lines``, ``id_field``): two sources' records must have
    distinct ids. A file declaring no source into a topic assembled from declared sources is refused: replacing
    the population would leave the sources' counts without their records."""
    topic_id = conn.execute(select(Topic.id).where(Topic.name == topic)).scalar_one_or_none()
    if topic_id is None:
        topic_id = conn.execute(insert(Topic).values(name=topic, created_at=utc_now(),
                                                     population_size=len(docs)).returning(Topic.id)).scalar_one()
        chain_object(conn, "topic", int(topic_id))
    else:
        if conn.execute(select(Queue.id).where(Queue.topic_id == topic_id, Queue.name == queue)).first():
            raise Conflict(f"{path}: queue {queue!r} already exists for topic {topic!r}; choose --queue NAME")
        sources = records_per_source(conn, int(topic_id))
        if declared is None and sources:
            raise InputError(path, None, "--source-type", f"topic {topic!r} is assembled from declared sources "
                             f"({', '.join(sources)}) and a file without one would replace its population: add "
                             "the file's records with --source-type and --source-name (import ris, import "
                             "records), or import it into another topic")
        size = len(docs)
        if declared is not None:
            stated = conn.execute(select(Topic.population_size).where(Topic.id == topic_id)).scalar_one()
            queued = conn.execute(select(Queue.name).where(Queue.topic_id == topic_id).limit(1)).scalar()
            if stated is None and queued is not None:
                raise InputError(path, None, "--source-type", f"topic {topic!r} has queues (such as {queued!r}) "
                                 "but no stated population to add these records to; import a source's records "
                                 "into a topic whose population came from its imports")
            _refuse_known(conn, path, topic, int(topic_id), docs, lines, id_field)
            size += int(stated or 0)
        conn.execute(update(Topic).where(Topic.id == topic_id).values(population_size=size))
    queue_id = conn.execute(insert(Queue).values(
        topic_id=topic_id, name=queue, ordering="given", run_tag=None, threshold_rank=None, size=len(docs),
        source=source, created_at=utc_now(), ranking_blob=encode_ranking(docs),
    ).returning(Queue.id)).scalar_one()
    bulk_insert(conn, "queue_entries", ("queue_id", "rank", "doc_id", "score", "flag"),
                ((queue_id, i, d, None, None) for i, d in enumerate(docs, start=1)))
    chain_object(conn, "queue", int(queue_id))
    return int(topic_id), int(queue_id)


def _refuse_known(conn: Connection, path: str, topic: str, topic_id: int, docs: list[str],
                  lines: Sequence[int | None] | None, id_field: str) -> None:
    """Refuse the first of ``docs`` (file order) that a queue of the topic already holds, at its line."""
    known: dict[str, str] = {}
    for start in range(0, len(docs), 1000):
        known.update((str(doc), str(name)) for doc, name in conn.execute(
            select(QueueEntry.doc_id, Queue.name).join(Queue, Queue.id == QueueEntry.queue_id)
            .where(Queue.topic_id == topic_id, QueueEntry.doc_id.in_(docs[start:start + 1000]))))
    for i, doc in enumerate(docs):
        if doc in known:
            raise InputError(path, None if lines is None else lines[i], id_field, f"record id {doc!r} is already "
                             f"a document of topic {topic!r} (queue {known[doc]!r}); each source's records need "
                             "ids of their own (their database's accession numbers, or the file's id column)")


def queue_for_source(queue_name: str | None, declared: RecordSource | None, default: str, path: str) -> str:
    """The queue a population import stores its records in: ``--queue``, else the declared source's name (each
    source its own queue), else ``default``."""
    if queue_name is None and declared is not None:
        return str(checked_value(validation.queue_name, declared.name, path, None,
                                 "--source-name (the queue's name unless --queue names it)"))
    return str(checked_value(validation.queue_name, queue_name or default, path, None, "--queue"))


def import_ris(engine: Engine, path: str, *, topic: str, queue_name: str | None = None,
               again: bool = False, reviewer: str = "asreview", data: bytes | None = None,
               ids: str = IDS_AUTO, source_type: str | None = None,
               source_name: str | None = None) -> RisImportSummary:
    """Store the records of ``path`` as ``topic``'s population and their ASReview labels as judgments (module
    docstring); ``rows`` = records, ``stored`` = judgments, ``unlabelled`` = records without a label. ``data``:
    the file's bytes when they are not read from ``path`` (an upload; ``path`` names it). ``ids``: auto, position
    or tag (`reviewdepth.formats.ris.read_ris_records`). The same file may be imported into several topics (the
    check against a file sent twice is per topic). ``source_type``/``source_name``: where the records were
    identified; they are then added to the topic's population (`store_population`), in a queue named after the
    source unless ``queue_name`` is given, and their bibliographic fields stored for ``dedupe``."""
    declared = checked_source(source_type, source_name, path)
    topic = checked_value(validation.topic_name, topic, path, None, "--topic")
    reviewer = checked_value(validation.reviewer_name, reviewer, path, None, "--reviewer")
    queue = queue_for_source(queue_name, declared, "records", path)
    data = read_bytes(path) if data is None else data
    digest = file_digest(data)
    refuse_wide_encoding(data, path)  # UTF-16's NULs would otherwise be refused as control characters
    # every field, stored or not, as the other importers check theirs (RIS files may be Windows-1252: no UTF-8 check)
    checked_bytes(data, path, lambda line_start, _: tag_at(data, line_start), utf8=False)
    records, rule = read_ris_records(data, path, ids)
    docs = [checked_value(validation.doc_id, r.doc_id, path, r.line, r.id_source) for r in records]
    if len(set(docs)) < len(docs):  # two ids that differ only before NFC normalisation
        raise InputError(path, None, "ID", "two record ids are the same text once NFC-normalised")
    labelled = [(doc, r.label, reviewer) for doc, r in zip(docs, records, strict=True) if r.label is not None]
    decided = [(doc, label, checked_value(validation.reviewer_name, who, path, r.line, "N1"))
               for doc, r in zip(docs, records, strict=True) for who, label in r.members]
    summary = RisImportSummary(
        "ris", path, digest, len(records), stored=len(labelled) + len(decided),
        unlabelled=sum(r.label is None and not r.members for r in records), labels=len(labelled),
        decisions=len(decided), maybe=sum(label is None for r in records for _, label in r.members),
        ids=rule.describe(), id_source=rule.source, source_type=None if declared is None else declared.type,
        source_name=None if declared is None else declared.name)
    # a source's records are one search's: stored with their bibliographic fields, so `dedupe` finds the records
    # several sources share
    bib = [] if declared is None else [replace(f, doc_id=doc) for doc, f in zip(
        docs, read_records_ris(data, path, ids), strict=True)]
    with engine.begin() as conn:
        check_new_file(conn, "ris", digest, path, again, [topic])
        summary.import_id = record_import(conn, "ris", path, digest, len(records), 1,
                                          f"queue={queue};ids={rule.source}", taken=[topic], source=declared)
        topic_id, queue_id = store_population(conn, path, topic, queue, docs, f"import:{digest}", declared=declared,
                                              lines=[r.line for r in records], id_field=records[0].id_source)
        if bib:
            dedupe.store_record_fields(conn, topic_id, bib, summary.import_id)
        summary.fields = len(bib)
        summary.population_size = int(conn.execute(select(Topic.population_size).where(Topic.id == topic_id))
                                      .scalar_one() or 0)
        now = utc_now()
        rows = [NewJudgment(topic_id, doc, MAYBE_LABEL, None, None, who, "review", f"import:{digest}", None, now,
                            summary.import_id, "maybe") if label is None else
                NewJudgment(topic_id, doc, str(label), label == 1, label, who, "review", f"import:{digest}", None,
                            now, summary.import_id) for doc, label, who in labelled + decided]
        append_judgments(conn, rows, queue_ids=[queue_id] * len(rows))
    summary.topics = [topic]
    summary.queues = [queue]
    return summary
