"""Export use cases: a topic's current labels (CSV formats, RIS with ASReview's label notes) and a stored queue as
a run file (writers in `reviewdepth.formats.exports` and `reviewdepth.formats.ris`).

The labels are resolved from the judgment log by a named policy (`reviewdepth.store.labels`) as of a judgment id
or time, like every report. The documents listed are the topic's queued documents (queues in creation order, each
in rank order, every document once) followed by judged documents that are in no queue (first judged first).
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Engine, select

from reviewdepth.formats.exports import LABEL_FORMATS, RUN_FORMATS, write_labels, write_run
from reviewdepth.formats.source import read_bytes
from reviewdepth.services.errors import Invalid
from reviewdepth.services.evidence import topic as evidence_topic
from reviewdepth.store.ingest import db_time
from reviewdepth.store.labels import POLICIES, UNJUDGED, resolve_labels
from reviewdepth.store.loaders import load_judgment_arrays
from reviewdepth.store.models import Queue, QueueEntry


@dataclass(frozen=True)
class ExportedFile:
    """The file's text; ``rows`` documents written in it (below its header), of which ``relevant`` and
    ``nonrelevant`` judged."""

    text: str
    format: str
    topic: str
    rows: int
    relevant: int
    nonrelevant: int


def topic_labels(engine: Engine, topic: str, *, policy: str = "latest",
                 as_of: str | None = None) -> tuple[list[str], list[int]]:
    """The topic's documents (module docstring) and their labels under ``policy`` as of ``as_of`` (a judgment id
    or ISO time): 1 relevant, 0 not, -1 unjudged."""
    if policy not in POLICIES:
        raise Invalid(f"unknown label policy {policy!r}; choose one of {', '.join(POLICIES)}")
    with engine.connect() as conn:
        topic_id = evidence_topic.topic_id(conn, topic)
        as_of_id, as_of_time = evidence_topic.parse_as_of(conn, as_of)
        docs, ids, relevant, adjudication, markers = load_judgment_arrays(
            conn, topic_id, as_of_id, None if as_of_time is None else db_time(conn, as_of_time))
        queued = conn.execute(select(QueueEntry.doc_id).join(Queue, Queue.id == QueueEntry.queue_id)
                              .where(Queue.topic_id == topic_id).order_by(Queue.id, QueueEntry.rank)).scalars()
        order = list(dict.fromkeys(queued))
    resolved = resolve_labels(docs, ids, relevant, adjudication, policy, markers)
    label_of = dict(zip(resolved.doc_ids.tolist(), resolved.labels.tolist(), strict=True))
    listed = set(order)
    order += [d for d in label_of if d not in listed]
    return order, [int(label_of.get(d, UNJUDGED)) for d in order]


def export_labels(engine: Engine, topic: str, fmt: str, *, policy: str = "latest",
                  as_of: str | None = None) -> ExportedFile:
    """The topic's labels under ``policy`` as of ``as_of`` (a judgment id or ISO time) in ``fmt``."""
    if fmt not in LABEL_FORMATS:
        raise Invalid(f"--format must be one of {', '.join(LABEL_FORMATS)}, not {fmt!r}")
    order, labels = topic_labels(engine, topic, policy=policy, as_of=as_of)
    text, written = write_labels(topic, order, labels, fmt)
    return ExportedFile(text, fmt, topic, written, labels.count(1), labels.count(0))


def export_ris(engine: Engine, topic: str, *, policy: str = "latest", as_of: str | None = None,
               records: str | None = None) -> ExportedFile:
    """The topic's documents as RIS records, each with its label in ASReview's note (``N1 ASReview_relevant`` /
    ``ASReview_irrelevant`` / ``ASReview_not_seen``, `reviewdepth.formats.ris.write_ris`), which ``import ris``
    and ASReview read back. ``records``: a RIS file of the records (the one imported, say): its records are
    written in its order with every tag kept and their label added, then the topic's documents it lacks."""
    from reviewdepth.formats.ris import read_ris_entries, write_ris

    originals = read_ris_entries(read_bytes(records), records) if records is not None else None
    order, labels = topic_labels(engine, topic, policy=policy, as_of=as_of)
    if originals is not None:
        label_of = dict(zip(order, labels, strict=True))
        order = list(originals) + [d for d in order if d not in originals]
        labels = [label_of.get(d, UNJUDGED) for d in order]
    text = write_ris(order, labels, originals)
    return ExportedFile(text, "ris", topic, len(order), labels.count(1), labels.count(0))


def export_queue(engine: Engine, topic: str, fmt: str, *, queue: str | None = None) -> ExportedFile:
    """The queue as a run (``trec`` or ``clef``) whose every reader (reviewdepth, trec_eval, the CLEF scripts)
    ranks it in the queue's order; the run tag is the queue's run tag, else its name (spaces as ``_``)."""
    if fmt not in RUN_FORMATS:
        raise Invalid(f"--format must be one of {', '.join(RUN_FORMATS)}, not {fmt!r}")
    with engine.connect() as conn:
        _, row = evidence_topic.find_queue(conn, topic, queue)
    with engine.connect() as conn:
        entries = conn.execute(select(QueueEntry.doc_id, QueueEntry.score, QueueEntry.flag)
                               .where(QueueEntry.queue_id == row.id).order_by(QueueEntry.rank)).all()
    if any(ch.isspace() for ch in topic):
        raise Invalid(f"topic {topic!r} contains white space: a run file's fields are separated by it")
    spaced = next((e.doc_id for e in entries if any(ch.isspace() for ch in e.doc_id)), None)
    if spaced is not None:
        raise Invalid(f"document {spaced!r} of queue {row.name!r} contains white space: a run file cannot hold it")
    tag = "_".join((row.run_tag or row.name).split())
    flags: list[str] | None = None
    if fmt == "clef":
        stored = [e.flag for e in entries]
        if all(f is not None and not any(ch.isspace() for ch in f) for f in stored):
            flags = [str(f) for f in stored]
        else:
            flags = ["1" if rank == row.threshold_rank else "0" for rank in range(1, len(entries) + 1)]
    text = write_run(topic, [e.doc_id for e in entries], [e.score for e in entries], tag, fmt, flags)
    return ExportedFile(text, fmt, topic, len(entries), 0, 0)


@dataclass(frozen=True)
class ExportedWorkbook:
    """An ``.xlsx`` file's bytes; ``rows`` judgments in it (below its header), ``relevant`` of them relevant."""

    data: bytes
    topic: str
    rows: int
    relevant: int


def export_xlsx(engine: Engine, topic: str, *, as_of: str | None = None) -> ExportedWorkbook:
    """The topic's judgment log as of ``as_of`` (a judgment id or ISO time), one row per judgment in recording
    order, in the columns a judge file takes (`reviewdepth.formats.csv_judgments.SHEET_REQUIRED` and
    `SHEET_OPTIONAL`: doc, label, reviewer, role, note, queue), so ``import xlsx`` (or ``judge --file``) into a
    topic holding the same queues records the same judgments."""
    from reviewdepth.formats.csv_judgments import SHEET_OPTIONAL, SHEET_REQUIRED
    from reviewdepth.formats.xlsx import write_xlsx
    from reviewdepth.services.review.judgments import list_judgments

    records = list_judgments(engine, topic, as_of=as_of)
    header = (*SHEET_REQUIRED, *SHEET_OPTIONAL)
    # each column from the record's field of that name (doc: doc_id), so a column the judge file gains is exported
    rows = [tuple(getattr(r, "doc_id" if column == "doc" else column, None) for column in header) for r in records]
    return ExportedWorkbook(write_xlsx(header, rows), topic, len(rows), sum(r.relevant is True for r in records))
