"""``import records``: a records file (CSV, TSV or an ``.xlsx`` workbook: a bibliographic export from Scopus,
Embase or a reference manager, a SYNERGY dataset, ASReview's own datasets; RIS for the second use below) read by
`reviewdepth.formats.records`, in one of two ways:

- **as the topic's population** when the topic does not exist yet, has no queue, or ``queue_name`` is given: as
  ``import ris`` stores its records (`reviewdepth.services.files.ris_import.store_population`), the number of records
  as the topic's population size (the topic created when missing) and a queue of them in file order
  (``--queue``, default ``records``; ordering ``given``). A label in ASReview's label columns (``asreview_label``,
  ``included``, ``label``, ``final_included``, ``label_included`` …) becomes a judgment of the review role by
  ``reviewer`` (default ``asreview``), served from that queue; records without one are counted as unlabelled;
- **as the bibliographic fields of the topic's documents** otherwise (every record must be one of them), for
  ``reviewdepth dedupe`` (`reviewdepth.services.files.dedupe.import_records`).

Either way the records' title, year, DOI, PMID and first author are stored for ``dedupe`` when the header holds
any. Document ids follow ``ids``: ``auto`` takes the file's id column when its values are present and distinct,
else numbers the records from 0 in file order, as ASReview numbers a dataset's records (its ``record_id``);
``position`` always numbers them so; a column's name takes that column and refuses the file where it repeats.
The same file may be the population of several topics: the check against a file sent twice is per topic.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from sqlalchemy import Engine, select

from reviewdepth.formats.errors import InputError
from reviewdepth.formats.record_ids import IDS_AUTO
from reviewdepth.formats.records import read_screening_records
from reviewdepth.formats.ris import TAG_LINE
from reviewdepth.formats.source import read_bytes
from reviewdepth.formats.xlsx import ZIP_MAGIC
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
from reviewdepth.services.files.ris_import import queue_for_source, store_population
from reviewdepth.store import validation
from reviewdepth.store.chain import NewJudgment, append_judgments
from reviewdepth.store.ingest import utc_now
from reviewdepth.store.models import Queue, Topic

RECORDS_KIND = "records"  # its kind in the imports table


@dataclass
class RecordsImportSummary(ImportSummary):
    """``population``: stored as the topic's population (else as its documents' fields only); ``rows``: records;
    ``stored``: judgments from the label column (``relevant`` of them 1); ``unlabelled``: records without a label;
    ``ids``: how the records got their ids (`RecordIds.describe`); ``id_source``: ``column`` or ``position``;
    ``id_column`` and ``label_column``: the columns read, if any; ``titled``: records with a title; ``fields``:
    records whose bibliographic fields were stored (``with_title``/``with_doi`` of them with one; ``replaced``:
    stored before for the same documents)."""

    population: bool = True
    relevant: int = 0
    ids: str = ""
    id_source: str = ""
    id_column: str | None = None
    label_column: str | None = None
    titled: int = 0
    fields: int = 0
    with_title: int = 0
    with_doi: int = 0
    replaced: int = 0
    # where the records were identified, when declared (then added to the population: `store_population`), and
    # the population after the import (0 when the records were stored as fields only)
    source_type: str | None = None
    source_name: str | None = None
    population_size: int = 0


def import_records(engine: Engine, path: str, *, topic: str, queue_name: str | None = None, ids: str = IDS_AUTO,
                   reviewer: str = "asreview", again: bool = False, data: bytes | None = None,
                   source_type: str | None = None, source_name: str | None = None) -> RecordsImportSummary:
    """Store a records file as ``topic``'s population and its labels as judgments, or as its documents' fields
    (module docstring); a file already imported into this topic is refused (`Conflict`) unless ``again``.
    ``data``: the file's bytes when they are not read from ``path`` (an upload; ``path`` then names it).
    ``source_type``/``source_name``: where the records were identified; they are then added to the topic's
    population (`store_population`), in a queue named after the source unless ``queue_name`` is given."""
    declared = checked_source(source_type, source_name, path)
    topic = checked_value(validation.topic_name, topic, path, None, "--topic")
    reviewer = checked_value(validation.reviewer_name, reviewer, path, None, "--reviewer")
    queue = queue_for_source(queue_name, declared, "records", path)
    ids = ids.strip()
    if not ids:
        raise InputError(path, None, "--ids", "use auto, position or a column's name")
    data = read_bytes(path) if data is None else data
    with engine.connect() as conn:
        known = conn.execute(select(Topic.id).where(Topic.name == topic)).scalar_one_or_none()
        has_queue = known is not None and conn.execute(
            select(Queue.id).where(Queue.topic_id == known).limit(1)).first() is not None
    if has_queue and queue_name is None and declared is None:
        fields = dedupe.import_records(engine, path, topic=topic, again=again, data=data, ids=ids)
        return RecordsImportSummary(
            RECORDS_KIND, path, fields.digest, fields.rows, fields.topics, [], fields.import_id, stored=0,
            unlabelled=0, population=False, fields=fields.stored, with_title=fields.with_title,
            with_doi=fields.with_doi, replaced=fields.replaced)
    if path.lower().removesuffix(".gz").endswith((".ris", ".txt")) or TAG_LINE.match(data.lstrip()) is not None:
        raise InputError(path, None, None, "a RIS file becomes a topic's population with `reviewdepth import ris`")
    digest = file_digest(data)
    read = read_screening_records(data, path, ids)
    if not data.startswith(ZIP_MAGIC):  # a workbook's bytes are zip's; its cells were read as text
        checked_bytes(data, path, lambda _start, _offset: None, utf8=False)
    column = read.ids.column or "position"
    docs = [checked_value(validation.doc_id, r.doc_id, path, r.line, column) for r in read.records]
    if len(set(docs)) < len(docs):  # two ids that differ only before NFC normalisation
        raise InputError(path, None, column, "two record ids are the same text once NFC-normalised")
    labelled = [(doc, r.label) for doc, r in zip(docs, read.records, strict=True) if r.label is not None]
    bib = [replace(f, doc_id=doc) for doc, f in zip(docs, read.fields, strict=True)] \
        if read.fields is not None else []
    summary = RecordsImportSummary(
        RECORDS_KIND, path, digest, len(docs), stored=len(labelled), unlabelled=len(docs) - len(labelled),
        relevant=sum(label == 1 for _, label in labelled), ids=read.ids.describe(), id_source=read.ids.source,
        id_column=read.ids.column, label_column=read.label_column,
        titled=sum(r.title is not None for r in read.records), fields=len(bib),
        with_title=sum(r.title is not None for r in bib), with_doi=sum(r.doi is not None for r in bib),
        source_type=None if declared is None else declared.type,
        source_name=None if declared is None else declared.name)
    with engine.begin() as conn:
        check_new_file(conn, RECORDS_KIND, digest, path, again, [topic])
        summary.import_id = record_import(conn, RECORDS_KIND, path, digest, len(docs), 1,
                                          f"queue={queue};ids={read.ids.source}", taken=[topic], source=declared)
        topic_id, queue_id = store_population(conn, path, topic, queue, docs, f"import:{digest}", declared=declared,
                                              lines=[r.line for r in read.records], id_field=column)
        summary.population_size = int(conn.execute(select(Topic.population_size).where(Topic.id == topic_id))
                                      .scalar_one() or 0)
        now = utc_now()
        source = f"import:{digest}"
        append_judgments(conn, [NewJudgment(topic_id, doc, str(label), label == 1, label, reviewer, "review",
                                            source, None, now, summary.import_id) for doc, label in labelled],
                         queue_ids=[queue_id] * len(labelled))
        summary.replaced = dedupe.store_record_fields(conn, topic_id, bib, summary.import_id)
    summary.topics = [topic]
    summary.queues = [queue]
    return summary
