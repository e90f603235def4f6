"""Import an ASReview LAB project file (``.asreview``): one project → one topic, its review order → one queue, its
labelling decisions → judgments (`reviewdepth.formats.asreview` reads the file).

What is stored, in one transaction (a bad file leaves the database as it was):

- the topic (``--topic``, default the project's name), created when missing;
- a queue (``--queue``, default ``asreview``) of every record in ASReview's review order: the labelled records in
  the order they were labelled, then the others in the last model ranking (`AsreviewProject.review_order`);
  document ids are ASReview's ``record_id`` (the column its exports carry);
- one judgment per decision, label ``1``/``0`` (grade the same number), at the decision's time, by reviewer
  ``asreview`` (or ``--reviewer``) for prior knowledge and projects without accounts, ``<reviewer>-user-<id>``
  for ASReview user ``id``, source ``asreview:<project>``. A decision ASReview replaced (``decision_changes``) is
  stored before the one that replaced it (note ``ASReview decision_changes: replaced``) so the ``latest`` policy
  gives ASReview's current label. ASReview does not change a decision's time when the label changes, so both
  carry the first decision's time. A decision whose record went back to the pool is counted, not stored (the
  judgment log has no "undo").
- unlabelled records (never shown, or shown and not decided) are counted, not judged.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Engine, insert, select

from reviewdepth.formats.asreview import AsreviewDecision, read_asreview
from reviewdepth.formats.source import read_bytes
from reviewdepth.services.errors import Conflict
from reviewdepth.services.files.imports import (
    ImportSummary,
    check_new_file,
    checked_value,
    file_digest,
    record_import,
    topic_ids,
)
from reviewdepth.store import validation
from reviewdepth.store.chain import NewJudgment, append_judgments
from reviewdepth.store.evidence import chain_object
from reviewdepth.store.ingest import bulk_insert, utc_now
from reviewdepth.store.models import Queue
from reviewdepth.store.ranking_blob import encode_ranking

SOURCE_LENGTH = 100  # judgments.source
PRIOR_NOTE = "ASReview prior knowledge"
REPLACED_NOTE = "ASReview decision_changes: replaced"


@dataclass
class AsreviewImportSummary(ImportSummary):
    """``rows``: the project's records; ``stored``: judgments stored (``labelled`` current decisions +
    ``replaced`` earlier ones); ``unlabelled``: records with no decision (``pending`` of them shown, undecided);
    ``withdrawn``: earlier decisions of records now back in the pool (not stored)."""

    project: str = ""
    stored: int = 0
    labelled: int = 0
    relevant: int = 0
    replaced: int = 0
    unlabelled: int = 0
    pending: int = 0
    withdrawn: int = 0


def _reviewer(decision: AsreviewDecision, reviewer: str, path: str) -> str:
    name = reviewer if decision.user_id is None else f"{reviewer}-user-{decision.user_id}"
    return str(checked_value(validation.reviewer_name, name, path, None, "user_id"))


def import_asreview(engine: Engine, path: str, *, topic: str | None = None, queue_name: str | None = None,
                    reviewer: str = "asreview", again: bool = False, data: bytes | None = None,
                    ) -> AsreviewImportSummary:
    """Store an ``.asreview`` project (module docstring); refuses a file already imported unless ``again``.
    ``data``: the file's bytes when they are not read from ``path`` (an upload; ``path`` names it)."""
    reviewer = checked_value(validation.reviewer_name, reviewer, path, None, "--reviewer")
    data = read_bytes(path) if data is None else data
    digest = file_digest(data)
    project = read_asreview(data, path)
    topic_name = checked_value(validation.topic_name, topic or project.name, path, None,
                               "--topic" if topic else "project.json: name")
    queue = checked_value(validation.queue_name, queue_name or "asreview", path, None, "--queue")
    source = f"asreview:{project.name}"[:SOURCE_LENGTH]
    order = [str(r) for r in project.review_order()]
    now = utc_now()
    current = {d.record_id for d in project.labels}
    earlier: dict[int, list[AsreviewDecision]] = {}
    withdrawn = 0
    for decision in project.history:
        if decision.record_id in current:
            earlier.setdefault(decision.record_id, []).append(decision)
        else:
            withdrawn += 1
    rows: list[tuple[str, str, bool, int, str, str | None, datetime]] = []
    for decision in project.labels:
        for old in earlier.get(decision.record_id, []):
            rows.append((str(old.record_id), str(old.label), old.label == 1, old.label,
                         _reviewer(old, reviewer, path), REPLACED_NOTE, old.time or now))
        rows.append((str(decision.record_id), str(decision.label), decision.label == 1, decision.label,
                     _reviewer(decision, reviewer, path), PRIOR_NOTE if decision.prior else None,
                     decision.time or now))
    unlabelled = project.unlabelled()
    summary = AsreviewImportSummary(
        "asreview", path, digest, len(project.records), project=project.name, stored=len(rows),
        labelled=len(project.labels), relevant=sum(d.label == 1 for d in project.labels),
        replaced=len(rows) - len(project.labels), unlabelled=len(unlabelled), pending=len(project.pending),
        withdrawn=withdrawn)
    with engine.begin() as conn:
        check_new_file(conn, "asreview", digest, path, again)
        ids = topic_ids(conn, [topic_name])
        taken = conn.execute(select(Queue.id).where(Queue.topic_id == ids[topic_name], Queue.name == queue)).first()
        if taken is not None:  # queues are never changed once stored (samples refer to their ranks)
            raise Conflict(f"{path}: queue {queue!r} already exists for topic {topic_name!r}; choose --queue NAME")
        import_id = record_import(conn, "asreview", path, digest, len(project.records), 1,
                                   f"project={project.name};queue={queue}")
        queue_id = int(conn.execute(insert(Queue).values(
            topic_id=ids[topic_name], name=queue, ordering="given", run_tag=None, threshold_rank=None,
            size=len(order), source=source, created_at=now, ranking_blob=encode_ranking(order),
        ).returning(Queue.id)).scalar_one())
        bulk_insert(conn, "queue_entries", ("queue_id", "rank", "doc_id", "score", "flag"),
                    ((queue_id, i, d, None, None) for i, d in enumerate(order, start=1)))
        chain_object(conn, "queue", queue_id)
        append_judgments(conn, [NewJudgment(ids[topic_name], doc, label, relevant, grade, who, "review", source, note,
                                            when, import_id) for doc, label, relevant, grade, who, note, when in rows],
                         queue_ids=[queue_id] * len(rows))
        summary.import_id = import_id
    summary.topics = [topic_name]
    summary.queues = [queue]
    return summary

