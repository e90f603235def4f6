"""Import a Rayyan CSV export (``articles.csv``, `reviewdepth.formats.rayyan` reads it): its articles as a topic's
population, each member's decision as that member's judgment.

What is stored, in one transaction (a bad row leaves the database as it was):

- the articles as the topic's population and a queue in file order (``--queue``, default ``rayyan``), as
  ``import ris`` stores records (`reviewdepth.services.ris_import.store_population`); ids are Rayyan's keys;
- one judgment per member decision ``Included`` (label ``1``) or ``Excluded`` (label ``0``), by that member
  (Rayyan's display name, a reviewer name here), role ``review``, served from that queue, at the import time
  (Rayyan's export carries no decision time); an excluded article's ``RAYYAN-EXCLUSION-REASONS`` go in the
  note of its exclusions (``Rayyan exclusion reasons: …``);
- ``Maybe`` decisions are counted and not stored (the judgment log has no maybe yet); articles nobody decided
  are counted as unlabelled.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Engine

from reviewdepth.formats.errors import InputError
from reviewdepth.formats.rayyan import NOTES_COLUMN, read_rayyan
from reviewdepth.formats.source import read_bytes
from reviewdepth.services.imports import ImportSummary, check_new_file, checked_value, file_digest, record_import
from reviewdepth.services.ris_import import store_population
from reviewdepth.store import validation
from reviewdepth.store.chain import NewJudgment, append_judgments
from reviewdepth.store.ingest import utc_now

REASONS_NOTE = "Rayyan exclusion reasons: "


@dataclass
class RayyanImportSummary(ImportSummary):
    """``rows``: articles; ``stored``: judgments; ``maybe``: Maybe decisions not stored; ``unlabelled``: articles
    no member decided; ``reviewers``: the members who decided."""

    maybe: int = 0
    reviewers: int = 0


def import_rayyan(engine: Engine, path: str, *, topic: str, queue_name: str | None = None,
                  again: bool = False) -> RayyanImportSummary:
    """Store a Rayyan export (module docstring); refuses a file already imported unless ``again``."""
    topic = checked_value(validation.topic_name, topic, path, None, "--topic")
    queue = checked_value(validation.queue_name, queue_name or "rayyan", path, None, "--queue")
    data = read_bytes(path)
    digest = file_digest(data)
    articles = read_rayyan(data, path)
    docs = [checked_value(validation.doc_id, a.doc_id, path, a.line, "key") for a in articles]
    if len(set(docs)) < len(docs):
        raise InputError(path, None, "key", "two keys are the same text once NFC-normalised")
    rows: list[tuple[str, int, str, str | None]] = []  # doc, label, reviewer, note
    maybe = 0
    for doc, article in zip(docs, articles, strict=True):
        note = None
        if article.reasons:
            note = checked_value(validation.free_text, REASONS_NOTE + ", ".join(article.reasons), path,
                                 article.line, NOTES_COLUMN)
        for who, label in article.decisions:
            if label is None:
                maybe += 1
                continue
            reviewer = checked_value(validation.reviewer_name, who, path, article.line, NOTES_COLUMN)
            rows.append((doc, label, reviewer, note if label == 0 else None))
    summary = RayyanImportSummary(
        "rayyan", path, digest, len(articles), stored=len(rows),
        unlabelled=sum(not a.decisions for a in articles), maybe=maybe,
        reviewers=len({who for _, _, who, _ in rows}))
    with engine.begin() as conn:
        check_new_file(conn, "rayyan", digest, path, again)
        summary.import_id = record_import(conn, "rayyan", path, digest, len(articles), 1, f"queue={queue}")
        topic_id, queue_id = store_population(conn, path, topic, queue, docs, f"import:{digest}")
        now = utc_now()
        append_judgments(conn, [NewJudgment(topic_id, doc, str(label), label == 1, label, who, "review",
                                            f"import:{digest}", note, now, summary.import_id)
                                for doc, label, who, note in rows], queue_ids=[queue_id] * len(rows))
    summary.topics = [topic]
    summary.queues = [queue]
    return summary
