"""The import formats (`reviewdepth.formats.importers.FORMATS`) bound to their use cases.

`use_case` gives the function that stores a format's file: a format's own use case (``services/*_import.py``,
``services/imports.py``, ``services/judgment_files.py``), or, for a format that declares ``stores="decisions"``
and has none, `import_decisions`, which stores any reader's `DecidedRecord` rows: the records as the topic's
population and a queue in file order (``store_population``, as ``import rayyan`` does), each member's decision
as that member's judgment (1 include, 0 exclude, None a maybe decision), role ``review``, served from that queue,
at the import time; records nobody decided are counted as unlabelled. One transaction; a bad record refuses the
file at its line and nothing is stored.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

from sqlalchemy import Engine

from reviewdepth.formats.errors import InputError
from reviewdepth.formats.importers import BY_NAME, DecidedRecord, ImportFormat
from reviewdepth.formats.source import read_bytes
from reviewdepth.services.files.imports import ImportSummary, check_new_file, checked_value, file_digest, record_import
from reviewdepth.services.files.ris_import import MAYBE_LABEL, store_population
from reviewdepth.store import validation
from reviewdepth.store.chain import NewJudgment, append_judgments
from reviewdepth.store.ingest import utc_now


@dataclass
class DecisionsImportSummary(ImportSummary):
    """``rows``: records; ``stored``: judgments (``maybe`` of them maybe decisions); ``unlabelled``: records no
    member decided; ``reviewers``: the members who decided."""

    maybe: int = 0
    reviewers: int = 0


def import_decisions(engine: Engine, path: str, *, format: str, topic: str, queue_name: str | None = None,
                     again: bool = False, data: bytes | None = None) -> DecisionsImportSummary:
    """Store a ``stores="decisions"`` file of ``format`` (module docstring); refuses a file already imported
    unless ``again``. ``data``: the file's bytes when they are not read from ``path`` (an upload)."""
    entry = BY_NAME[format]
    topic = checked_value(validation.topic_name, topic, path, None, "--topic")
    queue = checked_value(validation.queue_name, queue_name or entry.name, path, None, "--queue")
    data = read_bytes(path) if data is None else data
    digest = file_digest(data)
    records = cast(Sequence[DecidedRecord], entry.load_reader()(data, path))
    docs = [checked_value(validation.doc_id, r.doc_id, path, r.line, "id") for r in records]
    if len(set(docs)) < len(docs):
        raise InputError(path, None, "id", "two ids are the same text once NFC-normalised")
    decisions = [(doc, checked_value(validation.reviewer_name, who, path, record.line, "decision"), label)
                 for doc, record in zip(docs, records, strict=True) for who, label in record.decisions]
    summary = DecisionsImportSummary(
        entry.name, path, digest, len(records), stored=len(decisions),
        unlabelled=sum(not r.decisions for r in records), maybe=sum(label is None for _, _, label in decisions),
        reviewers=len({who for _, who, _ in decisions}))
    with engine.begin() as conn:
        check_new_file(conn, entry.name, digest, path, again)
        summary.import_id = record_import(conn, entry.name, path, digest, len(records), 1, f"queue={queue}")
        source = f"import:{digest}"
        topic_id, queue_id = store_population(conn, path, topic, queue, docs, source)
        now = utc_now()
        append_judgments(conn, [
            NewJudgment(topic_id, doc, MAYBE_LABEL, None, None, who, "review", source, None, now,
                        summary.import_id, "maybe") if label is None else
            NewJudgment(topic_id, doc, str(label), label == 1, label, who, "review", source, None, now,
                        summary.import_id, None)
            for doc, who, label in decisions], queue_ids=[queue_id] * len(decisions))
    summary.topics = [topic]
    summary.queues = [queue]
    return summary


def use_case(entry: ImportFormat) -> Callable[..., Any]:
    """The function that stores a file of ``entry``'s format (module docstring); a `LookupError` for a format
    with neither its own use case nor a shared one."""
    match entry.name:
        case "run":
            from reviewdepth.services.files.imports import import_run
            return import_run
        case "qrels":
            from reviewdepth.services.files.imports import import_qrels
            return import_qrels
        case "csv":
            from reviewdepth.services.files.imports import import_csv
            return import_csv
        case "asreview":
            from reviewdepth.services.files.asreview_import import import_asreview
            return import_asreview
        case "ris":
            from reviewdepth.services.files.ris_import import import_ris
            return import_ris
        case "xlsx":
            from reviewdepth.services.files.judgment_files import record_judgment_file
            return record_judgment_file
        case "rayyan":
            from reviewdepth.services.files.rayyan_import import import_rayyan
            return import_rayyan
        case "covidence":
            from reviewdepth.services.files.covidence_import import import_covidence
            return import_covidence
        case "records":
            from reviewdepth.services.files.records_import import import_records
            return import_records
    if entry.stores == "decisions":
        return import_decisions
    raise LookupError(f"import format {entry.name!r} has no use case: give it one in "
                      "reviewdepth/services/files/importers.py, or a reader of decisions (stores='decisions')")

