"""Import a Rayyan CSV export (``articles.csv``, `reviewdepth.formats.rayyan` reads it): its articles as a topic's
population, each member's decision as that member's judgment.

What is stored, in one transaction (a bad row leaves the database as it was):

- the articles as the topic's population and a queue in file order (``--queue``, default ``rayyan``), as
  ``import ris`` stores records (`reviewdepth.services.files.ris_import.store_population`); ids are Rayyan's keys;
- one judgment per member decision: ``Included`` (label ``1``), ``Excluded`` (label ``0``) or ``Maybe`` (label
  ``maybe``, a maybe decision: recorded, decides no label, `reviewdepth.services.review.screening`), by that member
  (Rayyan's display name, a reviewer name here), role ``review``, served from that queue, at the import time
  (Rayyan's export carries no decision time);
- an excluded article's ``RAYYAN-EXCLUSION-REASONS``: the first is the exclusion reason of each of its
  exclusions (a judgment carries one reason, PRISMA counts an exclusion under one), and all of them, in the
  file's order, stay in those exclusions' note (``Rayyan exclusion reasons: …``). Rayyan keeps one list of
  reasons per review, so every reason the file names that the topic's list lacks is added to it, in file order,
  in the same transaction (``add_reasons``, the default); with ``add_reasons=False`` an exclusion whose reason
  the list lacks refuses the file at its article's line, field ``notes``, as ``judge --reason`` refuses one;
- articles nobody decided are counted as unlabelled.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlalchemy import Engine

from reviewdepth.formats.errors import InputError
from reviewdepth.formats.rayyan import NOTES_COLUMN, read_rayyan
from reviewdepth.formats.source import read_bytes
from reviewdepth.services.evidence.screening import add_missing_reasons, first_unknown_reason, unknown_reason_message
from reviewdepth.services.files.imports import ImportSummary, check_new_file, checked_value, file_digest, record_import
from reviewdepth.services.files.ris_import import MAYBE_LABEL, store_population
from reviewdepth.store import validation
from reviewdepth.store.chain import NewJudgment, append_judgments
from reviewdepth.store.ingest import utc_now

REASONS_NOTE = "Rayyan exclusion reasons: "


@dataclass
class RayyanImportSummary(ImportSummary):
    """``rows``: articles; ``stored``: judgments (``maybe`` of them Maybe decisions); ``unlabelled``: articles no
    member decided; ``reviewers``: the members who decided; ``reasons``: exclusions stored with a reason;
    ``reasons_added``: the reasons added to the topic's list."""

    maybe: int = 0
    reviewers: int = 0
    reasons: int = 0
    reasons_added: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _Row:
    doc: str
    label: int | None  # None: Maybe
    reviewer: str
    note: str | None
    reason: str | None
    line: int


def import_rayyan(engine: Engine, path: str, *, topic: str, queue_name: str | None = None,
                  again: bool = False, add_reasons: bool = True, data: bytes | None = None) -> RayyanImportSummary:
    """Store a Rayyan export (module docstring); refuses a file already imported unless ``again``. ``data``: the
    file's bytes when they are not read from ``path`` (an upload; ``path`` then names it in errors)."""
    topic = checked_value(validation.topic_name, topic, path, None, "--topic")
    queue = checked_value(validation.queue_name, queue_name or "rayyan", path, None, "--queue")
    data = read_bytes(path) if data is None else data
    digest = file_digest(data)
    articles = read_rayyan(data, path)
    docs = [checked_value(validation.doc_id, a.doc_id, path, a.line, "key") for a in articles]
    if len(set(docs)) < len(docs):
        raise InputError(path, None, "key", "two keys are the same text once NFC-normalised")
    rows: list[_Row] = []
    named: list[str] = []  # every reason the file names, in file order
    for doc, article in zip(docs, articles, strict=True):
        note = reason = None
        if article.reasons:
            note = checked_value(validation.free_text, REASONS_NOTE + ", ".join(article.reasons), path,
                                 article.line, NOTES_COLUMN)
            named += [checked_value(validation.reason_text, r, path, article.line, NOTES_COLUMN)
                      for r in article.reasons]
            reason = named[-len(article.reasons)]
        for who, label in article.decisions:
            reviewer = checked_value(validation.reviewer_name, who, path, article.line, NOTES_COLUMN)
            excluded = label == 0
            rows.append(_Row(doc, label, reviewer, note if excluded else None, reason if excluded else None,
                             article.line))
    summary = RayyanImportSummary(
        "rayyan", path, digest, len(articles), stored=len(rows),
        unlabelled=sum(not a.decisions for a in articles), maybe=sum(r.label is None for r in rows),
        reviewers=len({r.reviewer for r in rows}), reasons=sum(r.reason is not None for r in rows))
    with engine.begin() as conn:
        check_new_file(conn, "rayyan", digest, path, again)
        summary.import_id = record_import(conn, "rayyan", path, digest, len(articles), 1, f"queue={queue}")
        topic_id, queue_id = store_population(conn, path, topic, queue, docs, f"import:{digest}")
        if add_reasons:
            summary.reasons_added = add_missing_reasons(conn, topic_id, named)
        else:
            unknown = first_unknown_reason(conn, topic_id, [r.reason for r in rows])
            if unknown is not None:
                raise InputError(path, rows[unknown].line, NOTES_COLUMN,
                                 unknown_reason_message(topic, str(rows[unknown].reason)))
        now = utc_now()
        source = f"import:{digest}"
        append_judgments(conn, [
            NewJudgment(topic_id, r.doc, MAYBE_LABEL, None, None, r.reviewer, "review", source, None, now,
                        summary.import_id, "maybe") if r.label is None else
            NewJudgment(topic_id, r.doc, str(r.label), r.label == 1, r.label, r.reviewer, "review", source, r.note,
                        now, summary.import_id, None, r.reason)
            for r in rows], queue_ids=[queue_id] * len(rows))
    summary.topics = [topic]
    summary.queues = [queue]
    return summary
