"""Import Covidence's reference exports (`reviewdepth.formats.covidence` reads them): the lists' studies as a
topic's population, each study's list as its label.

All the files of one review are imported together, in one transaction (any bad row leaves the database as it
was): their studies, in the order the files are given and each in file order, become the topic's population and
a queue (``--queue``, default ``covidence``), as ``import ris`` stores records
(`reviewdepth.services.files.ris_import.store_population`); a study in two files refuses them. Each study of a decided
list becomes one judgment by ``reviewer`` (default ``covidence``: the lists hold the team's consensus, not each
vote), role ``review``, at the import time, labelled by ``level`` (`LABELS`):

- ``final`` (default): ``included`` 1; ``excluded`` and ``irrelevant`` 0; ``fulltext`` and ``screen`` unlabelled
  (their final decision is not taken);
- ``abstract``: title-and-abstract relevance, as SYNERGY's and CLEF's abstract-level labels: ``included``,
  ``excluded`` and ``fulltext`` 1 (they passed that stage), ``irrelevant`` 0, ``screen`` unlabelled.

Each file is recorded as an import of its own (its judgments carry its id) and refused when sent before unless
``again``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from sqlalchemy import Engine

from reviewdepth.formats.covidence import ID_COLUMN, CovidenceFile, file_list, read_covidence
from reviewdepth.formats.errors import InputError
from reviewdepth.formats.source import read_bytes
from reviewdepth.services.files.imports import ImportSummary, check_new_file, checked_value, file_digest, record_import
from reviewdepth.services.files.ris_import import store_population
from reviewdepth.store import validation
from reviewdepth.store.chain import NewJudgment, append_judgments
from reviewdepth.store.ingest import utc_now

LABELS: dict[str, dict[str, int | None]] = {
    "final": {"screen": None, "irrelevant": 0, "fulltext": None, "excluded": 0, "included": 1},
    "abstract": {"screen": None, "irrelevant": 0, "fulltext": 1, "excluded": 1, "included": 1},
}


@dataclass
class CovidenceImportSummary(ImportSummary):
    """``rows``: studies over all files; ``stored``: judgments; ``unlabelled``: studies of undecided lists;
    ``lists``: studies per list; ``import_ids``: one per file."""

    lists: dict[str, int] = field(default_factory=dict)
    import_ids: list[int] = field(default_factory=list)


def import_covidence(engine: Engine, files: list[str], *, topic: str, queue_name: str | None = None,
                     reviewer: str = "covidence", level: str = "final",
                     again: bool = False, contents: Sequence[bytes] | None = None) -> CovidenceImportSummary:
    """Store a Covidence review's list exports (module docstring). ``files``: ``LIST=FILE`` or Covidence's own
    file names; ``contents``: the files' bytes, one per file, when they are not read from the files (uploads;
    ``files`` then name them)."""
    if level not in LABELS:
        raise InputError("--level", None, "level", f"must be one of {', '.join(LABELS)}, not {level!r}")
    if not files:
        raise InputError("-", None, "FILE", "name at least one Covidence export")
    topic = checked_value(validation.topic_name, topic, files[0], None, "--topic")
    queue = checked_value(validation.queue_name, queue_name or "covidence", files[0], None, "--queue")
    reviewer = checked_value(validation.reviewer_name, reviewer, files[0], None, "--reviewer")
    read: list[tuple[CovidenceFile, str, list[str]]] = []  # a file, its digest, its studies' ids as stored
    seen: dict[str, tuple[str, int]] = {}
    docs: list[str] = []
    for position, spec in enumerate(files):
        list_name, path = file_list(spec)
        data = read_bytes(path) if contents is None else contents[position]
        parsed = read_covidence(data, path, list_name)
        file_docs: list[str] = []
        for doc, line in parsed.studies:
            doc = checked_value(validation.doc_id, doc, path, line, ID_COLUMN)
            if doc in seen:
                where = seen[doc]
                raise InputError(path, line, ID_COLUMN, f"study {doc!r} is also in {where[0]} (line {where[1]}): "
                                 "a study is in one Covidence list")
            seen[doc] = (path, line)
            file_docs.append(doc)
        docs += file_docs
        read.append((parsed, file_digest(data), file_docs))
    labels = LABELS[level]
    summary = CovidenceImportSummary("covidence", ", ".join(p.path for p, _, _ in read), read[0][1], len(docs))
    for parsed, _, _ in read:
        summary.lists[parsed.list_name] = summary.lists.get(parsed.list_name, 0) + len(parsed.studies)
    with engine.begin() as conn:
        import_ids = []
        for parsed, digest, _ in read:
            check_new_file(conn, "covidence", digest, parsed.path, again)
            import_ids.append(record_import(conn, "covidence", parsed.path, digest, len(parsed.studies), 1,
                                            f"list={parsed.list_name};level={level};queue={queue}"))
        topic_id, queue_id = store_population(conn, read[0][0].path, topic, queue, docs,
                                              f"import:{read[0][1]}")
        now = utc_now()
        rows = [NewJudgment(topic_id, doc, str(label), label == 1, label, reviewer, "review", f"import:{digest}",
                            None, now, import_id)
                for (parsed, digest, file_docs), import_id in zip(read, import_ids, strict=True)
                if (label := labels[parsed.list_name]) is not None
                for doc in file_docs]
        append_judgments(conn, rows, queue_ids=[queue_id] * len(rows))
    summary.stored = len(rows)
    summary.unlabelled = len(docs) - len(rows)
    summary.import_id = import_ids[0]
    summary.import_ids = import_ids
    summary.topics = [topic]
    summary.queues = [queue]
    return summary
