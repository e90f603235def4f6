"""``reviewdepth judge TOPIC --file F``: many judgments of one topic from a CSV or TSV file, in one transaction.

The file has a header row; columns ``doc`` and ``label`` are required, ``reviewer``, ``role``, ``note``,
``queue``, ``reason`` and ``stage`` optional (an empty cell takes the command's default). A label may be a maybe or
a skip (`reviewdepth.services.evidence.decision_words.read_decision`); a reason only on an exclude, and only one of
the topic's
exclusion reasons; a stage ``title-abstract`` (the default) or ``full-text``. An Excel workbook (``.xlsx``,
recognised by its zip signature) is read the same way from its first worksheet, a row's number standing for the
line (`reviewdepth.formats.xlsx`; ``import xlsx`` and ``judge --file`` both take one). Any bad line refuses the whole
file with ``file:line: field …`` and records nothing. Unlike ``import csv`` (a platform export), a judgment file is a
reviewer's own work: an empty label is an error, not "not screened yet". Like every imported file it is recorded
with its digest, and the same file sent again is refused unless ``again`` (it would record every judgment twice).
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Engine

from reviewdepth.formats.csv_judgments import SHEET_HISTORY, read_sheet
from reviewdepth.formats.errors import InputError
from reviewdepth.formats.source import read_bytes
from reviewdepth.formats.xlsx import ZIP_MAGIC, read_sheet_xlsx
from reviewdepth.services.errors import Conflict, Invalid, NotFound
from reviewdepth.services.evidence.decision_words import checked_stage, decision_name, read_decision
from reviewdepth.services.evidence.screening import add_missing_reasons, first_unknown_reason, unknown_reason_message
from reviewdepth.services.evidence.served_queues import ServedQueues
from reviewdepth.services.files.imports import check_new_file, file_digest, record_import
from reviewdepth.store import validation
from reviewdepth.store.chain import NewJudgment, append_judgments
from reviewdepth.store.ingest import driver_rows, utc_now
from reviewdepth.store.models import DEFAULT_STAGE, USER_ROLES

# the columns' limits (`reviewdepth.store.validation`, which the judgments table's columns are declared with)
LIMITS = {"doc": validation.DOC_ID_LENGTH, "label": validation.LABEL_LENGTH, "reviewer": validation.REVIEWER_LENGTH,
          "reason": validation.REASON_LENGTH}
JUDGE_FILE_KIND = "judge-file"  # its kind in the imports table (reviewdepth.store.models.ImportRecord)


@dataclass(frozen=True)
class FileLine:
    line: int
    doc_id: str
    label: str
    relevant: bool | None
    grade: int | None
    reviewer: str
    role: str
    note: str | None
    queue: str | None
    kind: str | None = None  # maybe / skip
    reason: str | None = None
    stage: str | None = None  # None: the default stage


def read_judgment_file(data: bytes, path: str, *, reviewer: str, role: str = "review",
                       level: int = 1) -> list[FileLine]:
    """The judgments of a CSV/TSV file (``data``, read from ``path``; header row; delimiter chosen by
    `choose_delimiter`: comma, semicolon, tab or |) or of an ``.xlsx`` workbook's first sheet."""
    if role not in USER_ROLES:
        raise InputError("--role", None, "role", f"must be one of {', '.join(USER_ROLES)}, not {role!r}")
    if not reviewer.strip():
        raise InputError("--reviewer", None, "reviewer", "must not be empty")
    if data.startswith(ZIP_MAGIC):
        _, rows = read_sheet_xlsx(data, path)
    else:
        _, rows = read_sheet(data, path)
    out: list[FileLine] = []
    # (document, reviewer, role, stage, recorded at) -> (line, decision): one file says one thing about a document
    # per reviewer and stage (an include on title and abstract and an exclude at full text are two steps of one
    # screening); lines that say the same thing twice are recorded as they are, each a judgment, and change no
    # label; a history (the judgments log, `SHEET_HISTORY`) may hold a change of mind, at another time
    said: dict[tuple[str, str, str, str, str], tuple[int, str]] = {}
    for line, cell in rows:
        for name, limit in LIMITS.items():
            if len(cell.get(name, "")) > limit:
                raise InputError(path, line, name, f"at most {limit} characters")
        if not cell["doc"]:
            raise InputError(path, line, "doc", "empty document id")
        kind, relevant, grade = read_decision(cell["label"], path, line, "label", level)
        if kind is None and relevant is None and grade is None:
            raise InputError(path, line, "label", "empty label (judge files record decisions; leave the line out "
                             "instead, or read a labels export, whose empty labels are unscreened documents, with "
                             "`reviewdepth import csv`)")
        the_role = cell.get("role") or role
        if the_role not in USER_ROLES:
            raise InputError(path, line, "role", f"must be one of {', '.join(USER_ROLES)}, not {the_role!r}")
        reason = cell.get("reason", "").strip() or None
        if reason is not None:
            try:
                reason = validation.reason_text(reason)
            except validation.InvalidValue as exc:
                raise InputError(path, line, "reason", exc.message) from None
            if kind is not None or relevant is not False:
                raise InputError(path, line, "reason", "only an exclude carries a reason, and label "
                                 f"{cell['label']!r} is {decision_name(kind, relevant, grade)!r}")
        try:
            stage = checked_stage(cell.get("stage"), "stage")
        except Invalid as exc:
            raise InputError(path, line, "stage", str(exc).removeprefix("stage: ")) from None
        who = cell.get("reviewer") or reviewer
        decision = decision_name(kind, relevant, grade)
        key = (cell["doc"], who, the_role, stage or DEFAULT_STAGE, cell.get(SHEET_HISTORY, ""))
        earlier = said.setdefault(key, (line, decision))
        if earlier[1] != decision:
            raise InputError(path, line, "label", f"document {cell['doc']!r} is {decision!r} here and "
                             f"{earlier[1]!r} on line {earlier[0]} (same reviewer {who!r}, role and stage): one "
                             "file says one thing about a document; correct one of the two lines")
        out.append(FileLine(line, cell["doc"], cell["label"], relevant, grade, who,
                            the_role, cell.get("note") or None, cell.get("queue") or None, kind, reason, stage))
    if not out:
        raise InputError(path, None, None, "no judgments: the file has a header and no lines")
    return out


def record_judgment_file(engine: Engine, topic: str, path: str, *, reviewer: str, role: str = "review",
                         queue: str | None = None, allow_unqueued: bool = False, source: str = "cli",
                         level: int = 1, again: bool = False, data: bytes | None = None,
                         add_reasons: bool = False) -> list[int]:
    """Record every judgment of the file for ``topic`` (all or nothing); their ids in file order. A file recorded
    before (the same content) is refused (`Conflict`) unless ``again``.

    Each is recorded as served from its line's ``queue``, else ``queue``, else the topic's newest queue; a
    document in no queue of the topic refuses the file at its line unless ``allow_unqueued``. An exclusion reason
    the topic's list lacks refuses the file at its line, unless ``add_reasons``: then the reasons it lacks are
    added to the list, in file order, in the same transaction (as ``import rayyan`` adds Rayyan's). ``data``: the
    file's bytes when they are not read from ``path`` (an upload; ``path`` names it)."""
    data = read_bytes(path) if data is None else data
    lines = read_judgment_file(data, path, reviewer=reviewer, role=role, level=level)
    digest = file_digest(data)
    with engine.begin() as conn:
        found = driver_rows(conn, "SELECT id FROM topics WHERE name = ?", (topic,))
        if not found:
            raise NotFound(f"unknown topic {topic!r}")
        topic_id = int(found[0][0])
        check_new_file(conn, JUDGE_FILE_KIND, digest, path, again)
        served = ServedQueues(conn, topic_id, topic)
        try:
            default_queue = served.queue_id(queue)
        except Conflict as exc:
            raise InputError("--queue", None, "queue", str(exc)) from None
        queue_ids: list[int | None] = []
        for item in lines:
            try:
                queue_ids.append(default_queue if item.queue is None else served.queue_id(item.queue))
            except Conflict as exc:
                raise InputError(path, item.line, "queue", str(exc)) from None
        if add_reasons:
            add_missing_reasons(conn, topic_id, [item.reason for item in lines])
        unknown = first_unknown_reason(conn, topic_id, [item.reason for item in lines])
        if unknown is not None:
            bad = lines[unknown]
            raise InputError(path, bad.line, "reason", unknown_reason_message(topic, str(bad.reason)))
        served.require_queued([item.doc_id for item in lines], allow_unqueued=allow_unqueued,
                              refuse=lambda i, message: InputError(path, lines[i].line, "doc", message))
        import_id = record_import(conn, JUDGE_FILE_KIND, path, digest, len(lines), 1, f"topic={topic}")
        now = utc_now()
        return append_judgments(conn, [NewJudgment(topic_id, item.doc_id, item.label, item.relevant, item.grade,
                                                   item.reviewer, item.role, source, item.note, now, import_id,
                                                   item.kind, item.reason, item.stage)
                                       for item in lines],
                                return_ids=True, queue_ids=queue_ids)
