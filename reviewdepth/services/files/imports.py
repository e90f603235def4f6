"""Atomic imports of runs (TREC and CLEF TAR variants), qrels and review-platform CSV exports.

Each import runs in one transaction: any bad line rejects the whole file (the error names file:line:field)
and leaves the database exactly as it was. A file already imported (same SHA-256) is refused unless
``again`` is set; a run imported for some of its topics only (``import_run(topics=…)``) is refused again only
for those topics.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal, get_args

import numpy as np
from sqlalchemy import Connection, Engine, insert, select

from reviewdepth.estimation.plural import counted
from reviewdepth.formats.csv_judgments import read_export
from reviewdepth.formats.errors import InputError
from reviewdepth.formats.runs import (
    RUN_FIELDS,
    Run,
    TopicRunTag,
    parse_run,
    parse_run_blocks,
    threshold_rank,
    topic_run_tag,
)
from reviewdepth.formats.scan import StringColumn
from reviewdepth.formats.source import line_blocks, plain_file, read_bytes
from reviewdepth.formats.trec import QRELS_FIELDS, parse_qrels
from reviewdepth.measures.ranking import factorize_queries, rank_order, repeated_rows
from reviewdepth.report.prisma_model import SOURCE_TYPES
from reviewdepth.services.errors import Conflict
from reviewdepth.services.evidence.decision_words import read_decision
from reviewdepth.services.evidence.served_queues import ServedQueues
from reviewdepth.store import validation
from reviewdepth.store.chain import NewJudgment, SharedJudgments, append_judgments
from reviewdepth.store.evidence import chain_object, record_evidence
from reviewdepth.store.import_options import RecordSource, imported_topics, leading_options
from reviewdepth.store.ingest import Progress, bulk_insert, insert_entries, insert_entry_arrays, utc_now
from reviewdepth.store.models import USER_ROLES, ImportRecord, Queue, Topic
from reviewdepth.store.ranking_blob import encode_ranking, store_ranking_blob

# a run's ranking: its file order, or trec_eval's (score descending, docno descending on ties)
RunOrder = Literal["given", "trec_eval"]
RUN_ORDERS: tuple[str, ...] = get_args(RunOrder)
ASREVIEW_RANK_COLUMN = "asreview_ranking"  # ASReview exports: the rank each record had in the review

@dataclass
class ImportSummary:
    kind: str
    file: str
    digest: str
    rows: int
    topics: list[str] = field(default_factory=list)
    queues: list[str] = field(default_factory=list)
    import_id: int = 0
    # every row of a judgment file is either stored as a judgment or skipped as unlabelled (a bad row refuses
    # the whole file, so a stored import refused none)
    stored: int = 0
    unlabelled: int = 0
    # what the summary line should add: e.g. the topics of a run whose lines carry different run tags
    notes: list[str] = field(default_factory=list)


def file_digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def check_new_file(conn: Connection, kind: str, digest: str, path: str, again: bool,
                   topics: Collection[str] | None = None) -> None:
    """Refuse (`Conflict`) a file of ``kind`` whose content (``digest``) was recorded before by `record_import`,
    unless ``again``: the one check every file import makes against sending the same file twice.

    ``topics``: the topics of the file this import takes, when it takes only some (None: all of them). An
    import repeats an earlier one of the same file when the two take a topic in common; so a run imported one
    topic at a time takes each topic once, and the whole file after some of its topics is a repeat for those."""
    if again:
        return
    wanted = None if topics is None else frozenset(topics)
    for prior, file_name, created_at, options in conn.execute(
            select(ImportRecord.id, ImportRecord.file_name, ImportRecord.created_at, ImportRecord.options)
            .where(ImportRecord.digest == digest, ImportRecord.kind == kind).order_by(ImportRecord.id)):
        taken = imported_topics(options)
        common = taken if wanted is None else wanted if taken is None else taken & wanted
        if common is not None and not common:
            continue
        earlier = f"import {prior} ({file_name}, {created_at:%Y-%m-%d %H:%M})"
        if common is None:
            raise Conflict(f"{path}: this file (sha256 {digest[:12]}…) was already imported as {earlier}; use "
                           "--again to import it once more")
        others = " (or --topic for its other topics)" if wanted is None else ""
        one = len(common) == 1
        raise Conflict(f"{path}: {_topic_list(sorted(common))} of this file (sha256 {digest[:12]}…) "
                       f"{'was' if one else 'were'} already imported as {earlier}; use --again to import "
                       f"{'it' if one else 'them'} once more{others}")


def _topic_list(names: Sequence[str], shown: int = 5) -> str:
    """``topic 'A'``, ``topics 'A', 'B'``, ``topics 'A', …, 'E' and 7 more``."""
    words = ", ".join(repr(n) for n in names[:shown]) + (f" and {len(names) - shown:,} more" if len(names) > shown
                                                         else "")
    return f"topic{'' if len(names) == 1 else 's'} {words}"


def topic_ids(conn: Connection, names: Sequence[str], create: bool = True) -> dict[str, int]:
    """Ids of the named topics, creating missing ones."""
    wanted = sorted(set(names))
    found: dict[str, int] = {}
    for start in range(0, len(wanted), 5000):
        part = wanted[start:start + 5000]
        found.update({n: i for i, n in conn.execute(select(Topic.id, Topic.name).where(Topic.name.in_(part)))})
    missing = [n for n in wanted if n not in found]
    if missing and create:
        now = utc_now()
        for name in missing:
            found[name] = int(conn.execute(insert(Topic).values(name=name, created_at=now)
                                           .returning(Topic.id)).scalar_one())
        record_evidence(conn, [("topic", found[name], "created") for name in missing], now)
    return found


def record_import(conn: Connection, kind: str, path: str, digest: str, rows: int, topics: int,
                  options: str, taken: Collection[str] | None = None, source: RecordSource | None = None) -> int:
    """Record an imported file (its kind, name, digest and counts); its id, which its judgments carry. ``taken``:
    the topics of the file it took when only some (`check_new_file`), and ``source``: where its records were
    identified, when declared; both kept at the head of its options (`reviewdepth.store.import_options`)."""
    options = leading_options(None if taken is None else list(taken), source) + options
    return int(conn.execute(insert(ImportRecord).values(
        kind=kind, file_name=Path(path).name if path != "-" else "<stdin>", digest=digest, rows=rows, topics=topics,
        options=options, created_at=utc_now()).returning(ImportRecord.id)).scalar_one())


def import_run(engine: Engine, path: str, *, queue_name: str | None = None, order: str = "given",
               again: bool = False, progress: Progress | None = None,
               topics: Sequence[str] | None = None) -> ImportSummary:
    """A TREC run (``qid Q0 docno rank score tag``) or a CLEF TAR run (a 2017 action code or a ``0/1`` threshold
    flag in the second column, `reviewdepth.formats.runs`): one queue per topic, topics created as needed.

    ``topics``: store only these topics of the run (None or empty: all); one the file does not hold is refused,
    naming it. The whole file is read and checked either way, and the duplicate check is per topic
    (`check_new_file`).

    ``order``: ``given`` keeps file order as the ranking (CLEF's rule); ``trec_eval`` ranks by score descending
    (float32), ties by docno descending. The run's own stopping point is kept (`threshold_rank`): the last shown
    rank before ``NS`` entries, or the rank of the last line flagged ``1``.
    """
    if order not in RUN_ORDERS:
        raise InputError(path, None, "order", f"--order must be given or trec_eval, not {order!r}")
    selected = [checked_value(validation.topic_name, t, path, None, "--topic") for t in topics] if topics else None
    run, digest = _read_run_file(path)
    scores = run.scores()
    lines = run.line
    doc_col = run.docno
    infinite = np.flatnonzero(~np.isfinite(scores))
    if len(infinite):
        raise InputError(path, int(lines[infinite[0]]), "score", "must be a finite number")
    renamed_docs = checked_column(doc_col.values, lines, path, "docno", validation.doc_id,
                                  validation.DOC_ID_LENGTH)
    qids = run.qid
    flags = run.actions()
    flag_kind = run.kind()
    given_name = None if queue_name is None else checked_value(validation.queue_name, queue_name, path, None,
                                                               "--queue")
    line_tags = run.tag
    assert line_tags is not None

    # group rows by topic (topics in order of first appearance), keeping file order inside each topic
    codes = factorize_queries(qids, qids[:0]).run
    by_topic = np.argsort(codes, kind="stable")
    bounds = np.searchsorted(codes[by_topic], np.arange(codes.max() + 2))
    first_seen = np.argsort([int(by_topic[bounds[c]]) for c in range(len(bounds) - 1)])
    topic_names: list[str] = []
    tags: dict[str, TopicRunTag] = {}
    rows_by_topic: dict[str, np.ndarray | slice] = {}
    hash_orders: dict[str, np.ndarray] = {}
    doc_hashes = doc_col.hashed()
    for c in first_seen.tolist():
        rows: np.ndarray | slice = by_topic[bounds[c]:bounds[c + 1]]
        assert isinstance(rows, np.ndarray)
        topic = checked_value(validation.topic_name, qids[rows[0]].decode("utf-8", "surrogateescape"), path,
                              int(lines[rows[0]]), "qid")
        topic_names.append(topic)
        if order == "trec_eval":
            rows = rows[rank_order(np.zeros(len(rows), dtype=np.int64), scores[rows], doc_col.values[rows], 9)]
        else:
            rows = _as_slice(rows)  # one block of the file (a one-topic run): arrays read as views, not copies
        # the ranking blob's hash order (`encode_ranking`) is also the duplicate check: no two equal hashes, no
        # repeated docno; a shared hash takes the exact check (`repeated_rows`) of the topic's lines in file order
        topic_hashes = doc_hashes[rows]
        hash_order = np.argsort(topic_hashes, kind="stable").astype(np.int64)
        sorted_hashes = topic_hashes[hash_order]
        if bool(np.any(sorted_hashes[1:] == sorted_hashes[:-1])):
            in_file_order = _file_order(rows)
            twice = np.flatnonzero(repeated_rows(np.zeros(_count(rows), dtype=np.int32),
                                                 doc_hashes[in_file_order], doc_col.values[in_file_order]))
            if len(twice):
                row = _nth(in_file_order, int(twice[0]))
                raise InputError(path, int(lines[row]), "docno", f"duplicate docno "
                                 f"{doc_col.values[row].decode(errors='replace')!r} for topic {topic!r}")
        del topic_hashes, sorted_hashes
        rows_by_topic[topic] = rows
        hash_orders[topic] = hash_order
        # the topic's run tag names its queue: the tag most of its lines carry, never the last line's of the file
        # (a CLEF run tagging each topic with its own number named every topic's queue after the last topic's)
        in_file_order = _file_order(rows)
        tags[topic] = topic_run_tag(line_tags[in_file_order])
        first_with = _nth(in_file_order, int(np.flatnonzero(line_tags[in_file_order] == tags[topic].tag.encode(
            "utf-8", "surrogateescape"))[0]))
        checked_value(validation.queue_name, tags[topic].tag, path, int(lines[first_with]), "run_id")
        del in_file_order
    if selected is not None:
        absent = [t for t in dict.fromkeys(selected) if t not in rows_by_topic]
        if absent:
            raise InputError(path, None, "--topic", f"{_topic_list(absent)} {'is' if len(absent) == 1 else 'are'} "
                             f"not in the file (it holds {_topic_list(topic_names)})")
        chosen = set(selected)
        topic_names = [t for t in topic_names if t in chosen]

    # what the inserts no longer need, released before the ranking blobs are made and stored (a 10-million-line
    # run: about 25 bytes a line of qids, line numbers, run tags and the grouping)
    del run, qids, lines, line_tags, codes, by_topic, bounds
    stored = sum(_count(rows_by_topic[t]) for t in topic_names)
    names = {t: tags[t].tag if given_name is None else given_name for t in topic_names}
    summary = ImportSummary("run", path, digest, stored)
    with engine.begin() as conn:
        check_new_file(conn, "run", digest, path, again, selected)
        ids = topic_ids(conn, topic_names)
        existing = {(int(topic_id), str(queue)) for topic_id, queue in conn.execute(
            select(Queue.topic_id, Queue.name).where(Queue.name.in_(set(names.values())),
                                                     Queue.topic_id.in_(list(ids.values())))).all()}
        taken = [t for t in topic_names if (ids[t], names[t]) in existing]
        if taken:
            raise Conflict(f"{path}: queue {names[taken[0]]!r} already exists for topic {taken[0]!r}; choose "
                           "--queue NAME")
        shown_names = list(dict.fromkeys(names[t] for t in topic_names))
        import_id = record_import(conn, "run", path, digest, stored, len(topic_names),
                                   f"queue={','.join(shown_names)};order={order}", selected)
        done = 0
        for topic in topic_names:
            rows = rows_by_topic[topic]
            threshold = threshold_rank(flags[rows].tolist(), flag_kind) if flag_kind != "other" else None
            normalised = [(i, renamed_docs[r]) for i, r in enumerate(_positions(rows))
                          if r in renamed_docs] if renamed_docs else []
            docs: list[str] | None = None
            if normalised:  # NFC made a few doc ids differ from the file's bytes: stored as Python strings
                docs = text_values(doc_col.values[rows])
                for i, text in normalised:
                    docs[i] = text
                if len(set(docs)) < len(docs):
                    raise InputError(path, None, "docno", f"two docnos of topic {topic!r} are the same text once "
                                     "NFC-normalised")
            # the file's ranking index is written a slice at a time after the row (`store_ranking_blob`), not
            # passed whole as a parameter (which SQLite copies, and psycopg holds beside it: 270 MB for 10 M lines)
            in_place = docs is None
            queue_id = int(conn.execute(insert(Queue).values(
                topic_id=ids[topic], name=names[topic], ordering=order, run_tag=tags[topic].tag,
                threshold_rank=threshold,
                size=_count(rows), source=f"import:{digest}", created_at=utc_now(),
                ranking_blob=None if in_place else encode_ranking(docs) if docs is not None else encode_ranking(
                    [], StringColumn(doc_col.values[rows], doc_hashes[rows]), hash_orders[topic]),
            ).returning(Queue.id)).scalar_one())
            if in_place:
                store_ranking_blob(conn, queue_id, StringColumn(doc_col.values[rows], doc_hashes[rows]),
                                   hash_orders[topic])
            base = done

            def report(n: int, base: int = base) -> None:
                if progress:
                    progress(base + n)

            topic_flags = flags[rows] if flag_kind != "other" else None
            if docs is None:  # the file's bytes as stored: COPY lines written from the arrays (`insert_entry_arrays`)
                insert_entry_arrays(conn, queue_id, doc_col.values[rows], scores[rows], topic_flags, report)
            else:
                insert_entries(conn, queue_id, docs, scores[rows].tolist(),
                               None if topic_flags is None else [f.decode() for f in topic_flags.tolist()], report)
            done += _count(rows)
            chain_object(conn, "queue", queue_id)
        summary.import_id = import_id
    summary.topics = topic_names
    summary.queues = shown_names
    summary.notes = [mixed_tags_note(t, tags[t], names[t]) for t in topic_names if tags[t].mixed]
    return summary


RUN_BLOCK_BYTES = 64 << 20  # a plain run file is checked and scanned this much at a time (`_read_run_file`)


def _read_run_file(path: str) -> tuple[Run, str]:
    """The run file parsed (with actions and run tags) and its SHA-256, after the byte check (`checked_text`) of the
    whole file. A plain file is read in pieces of about `RUN_BLOCK_BYTES` cut after a newline, twice: once for the
    digest and the byte check, once for the scan (the same errors, in the same order, as the whole file read at
    once: a bad byte anywhere before any bad field); the first pass also counts the lines, the scan's columns are
    written into arrays of that many rows. So the file's bytes (41 bytes a line, 411 MB for 10,000,000 lines) are
    never held beside its columns, nor the columns twice. Standard input and gzip are read whole."""
    if not plain_file(path):
        data = read_bytes(path)
        digest = file_digest(data)
        checked_text(data, path, RUN_FIELDS)
        return parse_run(data, path, actions=True, tags=True), digest
    stamp = _file_stamp(path)
    hasher = hashlib.sha256()
    lines = 1  # the newlines, and a last line without one
    for piece, before in line_blocks(path, RUN_BLOCK_BYTES):
        hasher.update(piece)
        lines += piece.count(b"\n")
        try:
            checked_text(piece, path, RUN_FIELDS)
        except InputError as exc:
            raise InputError(exc.path, None if exc.line is None else exc.line + before, exc.field,
                             exc.message) from None
    try:
        run = parse_run_blocks(line_blocks(path, RUN_BLOCK_BYTES), path, records_at_most=lines, actions=True,
                               tags=True)
    except OverflowError:  # more records than the first pass saw lines
        run = None
    if run is None or _file_stamp(path) != stamp:
        # the digest and the byte check were of the first read: they must be of what was parsed
        raise InputError(path, None, None, "the file changed while it was being read; import it again")
    return run, hasher.hexdigest()


def _file_stamp(path: str) -> tuple[int, int, int]:
    """Size, modification time and inode of a file: what changes when it is rewritten between two reads."""
    try:
        found = Path(path).stat()
    except OSError as exc:
        raise InputError(path, None, None, f"cannot read file: {exc.strerror or exc}") from None
    return found.st_size, found.st_mtime_ns, found.st_ino


def _as_slice(rows: np.ndarray) -> np.ndarray | slice:
    """``rows`` (ascending) as the slice they are when they are one block of consecutive rows, else as they are:
    indexing by the slice gives the same values as by ``rows``, as views instead of copies."""
    first, last = int(rows[0]), int(rows[-1])
    return slice(first, last + 1) if last - first + 1 == len(rows) else rows


def _file_order(rows: np.ndarray | slice) -> np.ndarray | slice:
    """``np.sort(rows)``: the topic's rows in file order (a slice is in file order already)."""
    return rows if isinstance(rows, slice) else np.sort(rows)


def _nth(rows: np.ndarray | slice, k: int) -> int:
    """``rows[k]``, a row number."""
    return rows.start + k if isinstance(rows, slice) else int(rows[k])


def _count(rows: np.ndarray | slice) -> int:
    return rows.stop - rows.start if isinstance(rows, slice) else len(rows)


def _positions(rows: np.ndarray | slice) -> list[int]:
    return list(range(rows.start, rows.stop)) if isinstance(rows, slice) else rows.tolist()


def mixed_tags_note(topic: str, tag: TopicRunTag, queue: str) -> str:
    """What an import says of a topic whose lines carry different run tags: which, on how many lines, and the
    one its queue is named after (or stores as its run tag, under --queue)."""
    counts = ", ".join(f"{t!r} on {counted(n, 'line')}" for t, n in tag.counts)
    kept = f"its queue is named {queue!r}" if queue == tag.tag else f"queue {queue!r} keeps run tag {tag.tag!r}"
    return f"topic {topic!r}: its lines carry {len(tag.counts)} run tags ({counts}); {kept}, the tag most of them carry"


def checked_text(data: bytes, path: str, names: Sequence[str]) -> None:
    """Refuse a whitespace-separated file (run, qrels) holding a byte no stored field may hold, or invalid UTF-8,
    naming the line and field (`reviewdepth.store.validation`)."""
    def field_at(start: int, offset: int) -> str:
        position = len(data[start:offset].split()) - (0 if offset == start or data[offset - 1:offset].isspace()
                                                      else 1)
        return names[position] if position < len(names) else f"field {position + 1}"

    checked_bytes(data, path, field_at)


def checked_bytes(data: bytes, path: str, field_at: Callable[[int, int], str | None], *, utf8: bool = True) -> None:
    """Refuse a file holding a byte no stored field may hold (`reviewdepth.store.validation.refused_byte`), or,
    when ``utf8``, invalid UTF-8, at its line and the field ``field_at(line_start, offset)`` names."""
    bad = validation.refused_byte(data)
    if bad is None and utf8:
        invalid = validation.invalid_utf8_offset(data)
        bad = None if invalid is None else (invalid, "is not valid UTF-8")
    if bad is None:
        return
    offset, reason = bad
    start = data.rfind(b"\n", 0, offset) + 1
    raise InputError(path, data.count(b"\n", 0, offset) + 1, field_at(start, offset), reason)


def checked_column(values: np.ndarray, lines: np.ndarray, path: str, field: str,
                   check: Callable[[object, str], str], max_length: int) -> dict[int, str]:
    """`reviewdepth.store.validation.bytes_column` with the error as ``path:line: field``: the rows whose value
    NFC normalisation changed."""
    changed, refused = validation.bytes_column(values, check, field, max_length)
    if refused is not None:
        row, exc = refused
        raise InputError(path, int(lines[row]), field, exc.message)
    return changed


def checked_value(check: Callable[[object, str], object], value: object, path: str, line: int | None,
                  field: str) -> Any:
    """``check(value, field)`` with the error as ``path:line: field``."""
    try:
        return check(value, field)
    except validation.InvalidValue as exc:
        raise InputError(path, line, field, exc.message) from None


SOURCE_NAME_LENGTH = 200


def checked_source(source_type: str | None, source_name: str | None, path: str) -> RecordSource | None:
    """The source a population import declares for its records (``--source-type`` one of `SOURCE_TYPES`, and
    ``--source-name``; both or neither), or None; a bad one is an `InputError` naming the option."""
    if source_type is None and source_name is None:
        return None
    if source_type is None or source_name is None:
        given, missing = ("--source-type", "--source-name") if source_name is None else ("--source-name",
                                                                                          "--source-type")
        raise InputError(path, None, missing, f"{given} needs {missing} too (both name where the records were "
                         "identified)")
    if source_type not in SOURCE_TYPES:
        raise InputError(path, None, "--source-type", f"must be {', '.join(SOURCE_TYPES[:-1])} or "
                         f"{SOURCE_TYPES[-1]} (PRISMA 2020's identification boxes), not {source_type!r}")
    name = checked_value(lambda v, f: validation.identifier(v, f, SOURCE_NAME_LENGTH), source_name, path, None,
                         "--source-name")
    return RecordSource(source_type, name)


def text_values(values: np.ndarray) -> list[str]:
    """Byte strings as Python str (UTF-8; decoding each costs less than numpy's cast to fixed-width unicode)."""
    return [v.decode("utf-8", "surrogateescape") for v in values.tolist()]


def import_qrels(engine: Engine, path: str, *, reviewer: str = "qrels", level: int = 1, again: bool = False,
                 progress: Progress | None = None) -> ImportSummary:
    """TREC qrels as judgments: the graded value is kept as the label and grade; relevant = value >= level;
    negative values ("in the pool, unjudged") are kept with no decision."""
    if level < 0:
        raise InputError(path, None, "level", "--level must be >= 0")
    reviewer = checked_value(validation.reviewer_name, reviewer, path, None, "--reviewer")
    data = read_bytes(path)
    digest = file_digest(data)
    checked_text(data, path, QRELS_FIELDS)
    qrels = parse_qrels(data, path)
    outside = np.flatnonzero((qrels.rel < validation.INT32_MIN) | (qrels.rel > validation.INT32_MAX))
    if len(outside):
        raise InputError(path, int(qrels.line[outside[0]]), "rel",
                         f"must be between {validation.INT32_MIN} and {validation.INT32_MAX}")
    decided = np.flatnonzero(qrels.rel >= 0)
    if len(decided):
        top = int(decided[np.argmax(qrels.rel[decided])])
        check_level_reached(level, int(qrels.rel[top]), path, int(qrels.line[top]))
    renamed_docs = checked_column(qrels.docno.values, qrels.line, path, "docno", validation.doc_id,
                                  validation.DOC_ID_LENGTH)
    doc_list = text_values(qrels.docno.values)
    for row, text in renamed_docs.items():
        doc_list[row] = text
    # each distinct query id is decoded and checked once, in the order of first appearance (the first bad one is
    # the one on the earliest line); rows keep only their query's code
    query_codes = factorize_queries(qrels.qid, qrels.qid[:0])
    codes = query_codes.run
    first_row = np.full(len(query_codes.qids), len(codes), dtype=np.int64)
    np.minimum.at(first_row, codes, np.arange(len(codes), dtype=np.int64))
    topic_of_code: list[str] = [""] * len(query_codes.qids)
    renamed_topics = False
    for code in np.argsort(first_row, kind="stable").tolist():
        raw = query_codes.qids[code].decode("utf-8", "surrogateescape")
        topic_of_code[code] = checked_value(validation.topic_name, raw, path, int(qrels.line[first_row[code]]), "qid")
        renamed_topics = renamed_topics or topic_of_code[code] != raw
    # the file's bytes are checked at numpy speed; the pairs as stored (NFC) only when normalisation changed a
    # value or a pair repeats, by the loop that names the first line of the pair
    if renamed_docs or renamed_topics or repeated_rows(codes, qrels.docno.hashed(), qrels.docno.values).any():
        qid_list = [topic_of_code[c] for c in codes.tolist()]
        seen: dict[tuple[str, str], int] = {}
        for i, key in enumerate(zip(qid_list, doc_list, strict=True)):
            if key in seen:
                raise InputError(path, int(qrels.line[i]), "docno",
                                 f"duplicate docno {key[1]!r} for query {key[0]!r} (first on line {seen[key]})")
            seen[key] = int(qrels.line[i])
    rels = qrels.rel.tolist()
    summary = ImportSummary("qrels", path, digest, len(rels))
    with engine.begin() as conn:
        check_new_file(conn, "qrels", digest, path, again)
        ids = topic_ids(conn, topic_of_code)
        import_id = record_import(conn, "qrels", path, digest, len(rels), len(ids), f"level={level}")
        now = utc_now()
        source = f"import:{digest}"
        row_topics = np.array([ids[name] for name in topic_of_code], dtype=np.int64)[codes].tolist()
        append_judgments(conn, SharedJudgments(
            row_topics, doc_list, list(map(str, rels)), [None if r < 0 else r >= level for r in rels],
            rels, reviewer, "review", source, None, now, import_id), progress=progress)
        summary.import_id = import_id
    summary.topics = sorted(ids)
    return summary


def check_level_reached(level: int, top_grade: int, path: str, top_line: int) -> None:
    """Refuse a ``--level`` above 1 that the file's highest grade (``top_grade``, on ``top_line``) does not reach:
    binary qrels read with ``--level 2`` would store every judgment as non-relevant. Level 1, the binary reading,
    is never refused (a file of non-relevant judgments is a file like any other)."""
    if level > 1 and top_grade < level:
        raise InputError(path, None, "--level", f"no judgment reaches --level {level}: the highest grade in the "
                         f"file is {top_grade} (line {top_line}), so no graded judgment would be relevant; use "
                         f"--level {max(top_grade, 1)} or lower")


def _served_queue_ids(conn: Connection, path: str, topic_ids: dict[str, int], judged: Sequence[tuple[str, str]],
                      lines: Sequence[int], queue_name: str | None, doc_field: str,
                      allow_unqueued: bool) -> list[int | None]:
    """The queue each ``(topic, doc)`` judgment of a file was served from; a document in no queue of its topic
    refuses the file at its line unless ``allow_unqueued``."""
    positions: dict[str, list[int]] = {}
    for position, (topic, _) in enumerate(judged):
        positions.setdefault(topic, []).append(position)
    out: list[int | None] = [None] * len(judged)
    for topic, where in positions.items():
        served = ServedQueues(conn, topic_ids[topic], topic)
        try:
            queue_id = served.queue_id(queue_name)
        except Conflict as exc:
            raise InputError(path, None, "queue", str(exc)) from None

        def refuse(i: int, message: str, where: list[int] = where) -> InputError:
            return InputError(path, lines[where[i]], doc_field, message)

        served.require_queued([judged[p][1] for p in where], allow_unqueued=allow_unqueued, refuse=refuse)
        for p in where:
            out[p] = queue_id
    return out


def import_csv(engine: Engine, path: str, *, mapping: str | None = None, topic: str | None = None,
               reviewer: str = "import", level: int = 1, again: bool = False, queue_name: str | None = None,
               progress: Progress | None = None, role: str = "review",
               allow_unqueued: bool = False, date_format: str | None = None,
               data: bytes | None = None) -> ImportSummary:
    """A review-platform or screening export: one judgment per labelled row (empty label = not screened).

    Columns come from ``mapping`` (``doc=COL,label=COL[,topic=COL,rank=COL,score=COL,reviewer=COL,time=COL]``);
    the document, label and topic columns it leaves out are recognised by their names (``doc``, ``doc_id``,
    ``record_id``, …; ``label``, ``asreview_label``, ``relevance``, …; ``topic``, ``qid``, …), and a header
    that names none or several refuses the file (`reviewdepth.formats.csv_judgments.recognise_columns`). A
    ``rank`` column also stores the rows as a queue (in rank order); ASReview's ``asreview_ranking`` column is that
    rank column unless ``rank`` is mapped.

    A topic column gives each row's topic; ``topic`` then fills its empty cells, and a row of another topic refuses
    the file. Without a topic column every row is ``topic``'s (default: the file's stem).

    ``role`` is every judgment's role unless a ``role`` column gives it (an empty cell takes ``role``; users may
    give review, sample, qc, adjudication or audit). The judgments are recorded as served from ``queue_name``: with a
    rank column, the queue the file creates (named ``queue_name``, default the file's stem); without one, an
    existing queue of the topic (default: its newest). A document in no queue of its topic refuses the file
    (``path:line: field doc``) unless ``allow_unqueued`` (`reviewdepth.services.evidence.served_queues`). ``data``: the
    file's bytes when they are not read from ``path`` (an upload; ``path`` names it).
    """
    if role not in USER_ROLES:
        raise InputError("--role", None, "role", f"must be one of {', '.join(USER_ROLES)}, not {role!r}")
    data = read_bytes(path) if data is None else data
    digest = file_digest(data)
    if data.startswith(b"PK\x03\x04"):  # a zip: an ASReview project (.asreview) or an XLSX workbook
        raise InputError(path, None, None, "a zip archive, not CSV text: for an ASReview project file use "
                         "`reviewdepth import asreview`; for an Excel workbook of judgments `reviewdepth import xlsx`")
    export = read_export(data, path, mapping, topic, date_format=date_format)
    # a topic column is each row's topic; --topic beside it only fills its empty cells and must agree with the rest
    given_topic = checked_value(validation.topic_name, topic, path, None, "--topic") if topic else None
    ranking_column = next((h for h in export.header if h.lower() == ASREVIEW_RANK_COLUMN), None)
    if "rank" not in export.columns and ranking_column is not None:
        export.columns["rank"] = ranking_column
    topic, cols = export.topic, export.columns
    judgments: list[tuple[str, str, str, bool | None, int | None, str, datetime | None]] = []
    kinds: list[str | None] = []  # per judgment, beside `judgments`: maybe / skip (`read_decision`)
    ranked: dict[str, list[tuple[float, str, float | None]]] = {}
    seen_docs: dict[tuple[str, str], int] = {}
    judgment_roles: list[str] = []  # per judgment, beside `judgments`
    judgment_lines: list[int] = []
    top_grade: tuple[int, int] | None = None  # the highest numeric label and its line
    rows = 0
    for row in export.rows():
        rows = row.ordinal
        line_no = row.line
        doc = row.raw("doc").strip()
        if not doc:
            raise InputError(path, line_no, cols["doc"], "empty document id")
        doc = checked_value(validation.doc_id, doc, path, line_no, cols["doc"])
        the_topic = (row.raw("topic").strip() or given_topic or "") if row.has("topic") else str(topic)
        the_topic = checked_value(validation.topic_name, the_topic, path, line_no, row.field("topic", "--topic"))
        if given_topic is not None and the_topic != given_topic:
            raise InputError(path, line_no, cols["topic"], f"topic {the_topic!r} is not --topic {given_topic!r}; leave "
                             "--topic out to store each row under its own topic")
        doc_key = (the_topic, doc)
        if doc_key in seen_docs:
            raise InputError(path, line_no, cols["doc"],
                             f"duplicate document {doc!r} (first on line {seen_docs[doc_key]})")
        seen_docs[doc_key] = line_no
        label = row.raw("label")
        kind, relevant, grade = read_decision(label, path, line_no, cols["label"], level)
        if grade is not None and grade >= 0 and (top_grade is None or grade > top_grade[0]):
            top_grade = (grade, line_no)
        if kind is not None or relevant is not None or grade is not None:
            label = checked_value(validation.label_text, label.strip(), path, line_no, cols["label"])
        who = row.raw("reviewer").strip() if row.has("reviewer") else reviewer
        who = checked_value(validation.reviewer_name, who or reviewer, path, line_no,
                            row.field("reviewer", "--reviewer"))
        when = row.time()
        the_role = (row.raw("role").strip() or role) if row.has("role") else role
        if the_role not in USER_ROLES:
            raise InputError(path, line_no, cols["role"], f"role must be one of {', '.join(USER_ROLES)}, "
                             f"not {the_role!r}")
        if kind is not None or relevant is not None or grade is not None:
            judgments.append((the_topic, doc, label.strip(), relevant, grade, who or reviewer, when))
            kinds.append(kind)
            judgment_roles.append(the_role)
            judgment_lines.append(line_no)
        if row.has("rank"):
            rank, score = row.rank_score()
            checked_value(validation.score, rank, path, line_no, cols["rank"])
            if score is not None:
                checked_value(validation.score, score, path, line_no, cols["score"])
            ranked.setdefault(the_topic, []).append((rank, doc, score))
    if top_grade is not None:
        check_level_reached(level, top_grade[0], path, top_grade[1])
    if rows == 0:
        # as `judge --file` refuses it: a header and nothing under it is an export that went wrong, not data
        raise InputError(path, None, None, "no rows: the file has a header and no lines (export the screening "
                                           "decisions again, or leave the file out)")
    if ranked:
        checked_value(validation.queue_name, queue_name or Path(path).stem, path, None, "--queue")
    summary = ImportSummary("csv", path, digest, rows, stored=len(judgments), unlabelled=rows - len(judgments))
    with engine.begin() as conn:
        check_new_file(conn, "csv", digest, path, again)
        names = sorted({j[0] for j in judgments} | set(ranked) | ({str(topic)} if topic else set()))
        ids = topic_ids(conn, names)
        import_id = record_import(conn, "csv", path, digest, rows, len(names), f"map={mapping or ''}")
        now = utc_now()
        source = f"import:{digest}"
        qname = validation.queue_name(queue_name or Path(path).stem)
        taken = conn.execute(select(Topic.name).join(Queue, Queue.topic_id == Topic.id).where(
            Queue.name == qname, Topic.name.in_(list(ranked)))).scalars().first() if ranked else None
        if taken is not None:  # queues are never changed once stored (samples refer to their ranks)
            raise Conflict(f"{path}: queue {qname!r} already exists for topic {taken!r}; name the file's queue with "
                           "--queue NAME")
        for the_topic, entries in ranked.items():
            entries.sort(key=lambda e: e[0])
            queue_id = int(conn.execute(insert(Queue).values(
                topic_id=ids[the_topic], name=qname, ordering="given", run_tag=None, threshold_rank=None,
                size=len(entries), source=source, created_at=utc_now(),
                ranking_blob=encode_ranking([d for _, d, _ in entries]),
            ).returning(Queue.id)).scalar_one())
            bulk_insert(conn, "queue_entries", ("queue_id", "rank", "doc_id", "score", "flag"),
                        ((queue_id, i, d, s, None) for i, (_, d, s) in enumerate(entries, start=1)))
            chain_object(conn, "queue", queue_id)
            summary.queues = [qname]
        # after the file's own queue is stored: its documents are queued, and it is the topic's newest queue
        queue_ids = _served_queue_ids(conn, path, ids, [(j[0], j[1]) for j in judgments], judgment_lines,
                                      queue_name, cols["doc"], allow_unqueued)
        append_judgments(conn, [NewJudgment(ids[t], d, lab, rel, g, who, the_role, source, None,
                                            now if when is None else when, import_id, kind)
                                for (t, d, lab, rel, g, who, when), the_role, kind in zip(
                                    judgments, judgment_roles, kinds, strict=True)],
                         progress=progress, queue_ids=queue_ids)
        summary.import_id = import_id
        summary.topics = names
    return summary
