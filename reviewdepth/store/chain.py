"""The tamper-evident judgment log: every judgment carries a SHA-256 hash chained to the previous one of its topic.

    hash_k = SHA-256( hash_{k-1} + "\\n" + canonical_k )      (hex digests, UTF-8)
    hash_0 = SHA-256( "reviewdepth judgment chain v1\\n" + topic name )
    canonical_k = seq|doc_id|label|relevant|grade|reviewer|role|source|note|recorded_at|import_id
                  [|decision|reason|stage]
        text fields as <length in characters>:<text>, null as ~, relevant as 1/0,
        recorded_at as ISO 8601 in UTC with microseconds (2026-12-02T21:50:00.123456+00:00)

The bracketed part (revision 0015: a ``maybe``/``skip`` decision, an exclusion reason, a screening stage other
than the default) is written only when one of the three is set: a row without them has exactly the canonical
form it had before the columns existed, so every hash recorded earlier stays valid. Old and new forms cannot
coincide: the old one ends with ``import_id`` (digits or ``~``), the new one goes on with ``|``.

``seq`` numbers a topic's judgments 1, 2, 3, … in recording order; the topic row keeps the chain's length and
head. Writers reserve their sequence numbers with one ``UPDATE topics … RETURNING`` as the first write of their
transaction, which takes the row lock (PostgreSQL) or the write lock (SQLite): writers of one topic are
serialised, writers of different topics are not (on PostgreSQL). Editing, deleting or re-ordering a row behind
the application's back breaks the chain at that row; `verify_topic` names the first broken row. The chain
cannot stop someone who rewrites the whole log and every later hash: record the head that ``audit verify``
prints outside the database (a ticket, an email, a court filing) to anchor it.

``queue_id`` (the queue a judgment was served from, revision 0005) is *not* part of the canonical form: the
chain proves what was judged, by whom and when, not which ranking showed the document. Hashes of judgments
recorded before that column existed stay valid, and an edit of ``queue_id`` alone is not detected.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from hashlib import sha256
from itertools import repeat
from types import ModuleType
from typing import Any, NamedTuple

from sqlalchemy import Connection, Engine, insert, select, update

from reviewdepth.measures.extension import optional_extension
from reviewdepth.store.ingest import (
    NULL,
    SMALL,
    Progress,
    bulk_insert,
    copy_field,
    copy_lines,
    db_timestamp,
    driver_rows,
    needs_escape,
)
from reviewdepth.store.models import ChainAcknowledgement, Judgment, Topic

CHAIN_VERSION = "reviewdepth judgment chain v1"


def genesis(topic_name: str) -> str:
    return sha256(f"{CHAIN_VERSION}\n{topic_name}".encode()).hexdigest()


def canonical_time(moment: datetime) -> str:
    """UTC, microseconds; naive values are UTC (as SQLite hands them back)."""
    moment = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
    return moment.isoformat(timespec="microseconds")


def screening_fields(decision: str | None, reason: str | None, stage: str | None) -> str:
    """The optional end of the canonical text (module docstring): empty when none of the three is set."""
    if decision is None and reason is None and stage is None:
        return ""
    return "".join("|~" if value is None else f"|{len(value)}:{value}" for value in (decision, reason, stage))


def canonical(seq: int, doc_id: str, label: str, relevant: bool | None, grade: int | None, reviewer: str,
              role: str, source: str, note: str | None, recorded_at: str, import_id: int | None,
              decision: str | None = None, reason: str | None = None, stage: str | None = None) -> str:
    """The canonical text of one judgment (module docstring): fields joined by ``|``; text as ``length:text``
    (length in characters), so no content can imitate a separator; ``~`` for null; booleans as 1/0."""
    # one f-string, no helper calls: this runs for every judgment written
    return (f"{seq}|{len(doc_id)}:{doc_id}|{len(label)}:{label}|{'~' if relevant is None else int(relevant)}|"
            f"{'~' if grade is None else grade}|{len(reviewer)}:{reviewer}|{len(role)}:{role}|"
            f"{len(source)}:{source}|{'~' if note is None else f'{len(note)}:{note}'}|{recorded_at}|"
            f"{'~' if import_id is None else import_id}{screening_fields(decision, reason, stage)}")


def link_hash(previous: str, seq: int, doc_id: str, label: str, relevant: bool | None, grade: int | None,
              reviewer: str, role: str, source: str, note: str | None, recorded_at: datetime,
              import_id: int | None, decision: str | None = None, reason: str | None = None,
              stage: str | None = None) -> str:
    """The chain hash of one judgment given the previous hash (formula in the module docstring)."""
    text = canonical(seq, doc_id, label, relevant, grade, reviewer, role, source, note, canonical_time(recorded_at),
                     import_id, decision, reason, stage)
    return sha256(f"{previous}\n{text}".encode()).hexdigest()


class ChainBroken(Exception):
    """A write refused because the topic's chain is broken (each door: a conflict, 409 / exit 2)."""


def _refuse_broken(name: str, why: str) -> ChainBroken:
    return ChainBroken(f"the judgment chain of topic {name!r} is broken ({why}); writes are refused until an admin "
                       f"acknowledges it: reviewdepth audit acknowledge {name} --reason TEXT")


def _check_tail(conn: Connection, topic_id: int, name: str, length: int, previous: str | None,
                last_hash: str | None, last_seq: int | None, top: int, written: int = 0) -> None:
    """The O(1) check of every write: the topic's recorded length and head must be those of the log's last row
    (or of an acknowledgement recorded right after it), and no row may lie beyond. Catches a deleted tail, a
    rewritten head and rows added behind the application's back; edits inside the log are found by
    `verify_topic` (``audit verify``), which flags the topic.

    ``length`` and ``previous`` are the topic's recorded length and head before the write; ``last_hash`` (the
    stored hash of judgment ``length``) and ``last_seq`` (the highest seq) come with a statement the write makes
    anyway (`_reserve` on SQLite, the head update on PostgreSQL), at no extra round trip; ``top`` is the highest
    seq there should be. Anything but a match is looked up again, then checked against an acknowledgement;
    ``written``: rows the write inserted that the first check did not see but the lookup does."""
    if last_seq == (top or None) and (last_hash == previous if length else previous is None):
        return
    [(last, highest)] = driver_rows(
        conn, "SELECT (SELECT chain_hash FROM judgments WHERE topic_id = ? AND seq = ?), "
        "(SELECT max(seq) FROM judgments WHERE topic_id = ?)", (topic_id, length, topic_id))
    if length and last is None:
        raise _refuse_broken(name, f"the topic records {length} judgments but the log has no judgment seq {length}")
    if (highest or 0) > top + written:
        raise _refuse_broken(name, f"the log holds judgment seq {highest} beyond the {length} the topic records")
    last = last or genesis(name)
    if (previous or genesis(name)) == last:
        return
    acknowledged = driver_rows(conn, "SELECT chain_hash, previous_head FROM chain_acknowledgements WHERE topic_id = ? "
                               "AND seq = ? ORDER BY id DESC LIMIT 1", (topic_id, length))
    if not acknowledged or tuple(acknowledged[0]) != (previous, last):
        raise _refuse_broken(name, "the topic's recorded head is not the hash of its last judgment: the head was "
                                   "rewritten")


def _reserve(conn: Connection, counts: dict[int, int]) -> tuple[dict[int, int], dict[int, str | None],
                                                                 dict[int, str]]:
    """Reserve ``counts[topic]`` sequence numbers per topic (taking each topic's lock, in id order so two writers
    cannot deadlock): the first new seq, the recorded head and the name of each topic. A topic whose chain is
    flagged broken refuses the write (`ChainBroken`). On SQLite the tail is checked here (`_check_tail`): the
    statement that takes the write lock reads the latest data. On PostgreSQL a statement that waited for the row
    lock reads from a snapshot taken before the wait, so `append_judgments` checks it in its last statement."""
    first: dict[int, int] = {}
    head: dict[int, str | None] = {}
    names: dict[int, str] = {}
    sqlite = conn.dialect.name == "sqlite"
    for topic_id in sorted(counts):
        count = counts[topic_id]
        if sqlite:
            [(length, previous, name, broken, last_hash, last_seq)] = driver_rows(
                conn, "UPDATE topics SET chain_length = chain_length + ? WHERE id = ? RETURNING chain_length, "
                "chain_head, name, chain_broken, (SELECT j.chain_hash FROM judgments j WHERE j.topic_id = topics.id "
                "AND j.seq = topics.chain_length - ?), (SELECT max(j.seq) FROM judgments j WHERE "
                "j.topic_id = topics.id)", (count, topic_id, count))
        else:
            [(length, previous, name, broken)] = driver_rows(
                conn, "UPDATE topics SET chain_length = chain_length + ? WHERE id = ? "
                "RETURNING chain_length, chain_head, name, chain_broken", (count, topic_id))
        if broken is not None:
            raise _refuse_broken(name, broken)
        before = int(length) - count
        if sqlite:
            _check_tail(conn, topic_id, name, before, previous, last_hash,
                        None if last_seq is None else int(last_seq), before)
        first[topic_id] = before + 1
        head[topic_id] = previous
        names[topic_id] = name
    return first, head, names


class NewJudgment(NamedTuple):
    """One judgment to append (`append_judgments`): a tuple, so that the linking loop slices the fields an import
    repeats on every row (reviewer to import_id) without a look-up per field."""

    topic_id: int
    doc_id: str
    label: str
    relevant: bool | None
    grade: int | None
    reviewer: str
    role: str
    source: str
    note: str | None
    recorded_at: datetime
    import_id: int | None = None
    decision: str | None = None  # ``maybe`` / ``skip`` (null: ``relevant`` is the decision)
    reason: str | None = None  # an exclude's reason
    stage: str | None = None  # ``full-text`` (null: the default stage)

JUDGMENT_COLUMNS = ("topic_id", "doc_id", "label", "relevant", "grade", "reviewer", "role", "source", "note",
                    "recorded_at", "import_id", "decision", "reason", "stage", "seq", "chain_hash")


@dataclass(frozen=True)
class SharedJudgments:
    """An import's judgments as columns (one value per judgment) and the fields they all share: the form of
    `append_judgments` for a large file, where building and unpacking a tuple per judgment would cost more than
    linking it."""

    topic_ids: Sequence[int]
    doc_ids: Sequence[str]
    labels: Sequence[str]
    relevant: Sequence[bool | None]
    grades: Sequence[int | None]
    reviewer: str
    role: str
    source: str
    note: str | None
    recorded_at: datetime
    import_id: int | None

    def __len__(self) -> int:
        return len(self.doc_ids)


def _link(previous: str, seq: int, doc_id: str, label: str, relevant: bool | None, grade: int | None,
          tail: str) -> str:
    """`link_hash` with the judgment's fixed fields already formatted (``tail``, `_tail`): the one chain step of
    both bulk writers."""
    return sha256(f"{previous}\n{seq}|{len(doc_id)}:{doc_id}|{len(label)}:{label}|"
                  f"{'~' if relevant is None else '1' if relevant else '0'}|{'~' if grade is None else grade}"
                  f"{tail}".encode()).hexdigest()


LINK_BLOCK = 4096  # judgments chained per call of `chain_steps` by the column writer
PURE_PYTHON_CHAIN_ENV = "REVIEWDEPTH_PURE_PYTHON_CHAIN"  # set to 1: `chain_steps` never uses the compiled step
compiled_link: ModuleType | None = optional_extension("reviewdepth.store._chainlink", PURE_PYTHON_CHAIN_ENV)


def chain_steps(previous: str, first_seq: int, doc_ids: Sequence[str], labels: Sequence[str],
                relevant: Sequence[bool | None], grades: Sequence[int | None], tail: str) -> list[str]:
    """`_link` for consecutive judgments of one topic (seq ``first_seq``, ``first_seq + 1``, …), each chained to
    the one before: the hex digests, in order. The compiled step when it was built (`_chainlink.c`, a fifth of
    the cost per judgment), else `_link` itself; the tests compare the two."""
    if compiled_link is not None:
        digests: list[str] = compiled_link.link(previous, first_seq, doc_ids, labels, relevant, grades, tail)
        return digests
    out = []
    for seq, doc_id, label, decided, grade in zip(range(first_seq, first_seq + len(doc_ids)), doc_ids, labels,
                                                  relevant, grades, strict=True):
        previous = _link(previous, seq, doc_id, label, decided, grade, tail)
        out.append(previous)
    return out


def _copy_line(topic_id: int, doc_id: str, label: str, relevant: bool | None, grade: int | None, fixed: str,
               seq: int, digest: str, queue: tuple[int | None] | None, escape: bool) -> str:
    """One judgment as a line of PostgreSQL COPY text (``fixed``: `_copy_tail`; ``queue``: the queue id column,
    when the table has it)."""
    if escape:
        doc_id, label = copy_field(doc_id), copy_field(label)
    queue_column = "" if queue is None else f"\t{NULL if queue[0] is None else queue[0]}"
    return (f"{int(topic_id)}\t{doc_id}\t{label}\t{NULL if relevant is None else 'tf'[not relevant]}\t"
            f"{NULL if grade is None else int(grade)}\t{fixed}\t{seq}\t{digest}{queue_column}\n")


def _tail(reviewer: str, role: str, source: str, note: str | None, when: str, import_id: int | None,
          decision: str | None = None, reason: str | None = None, stage: str | None = None) -> str:
    """The end of the canonical text (module docstring) from ``reviewer`` on; ``when`` is `canonical_time`'s."""
    return (f"|{len(reviewer)}:{reviewer}|{len(role)}:{role}|{len(source)}:{source}|"
            f"{'~' if note is None else f'{len(note)}:{note}'}|{when}|{'~' if import_id is None else import_id}"
            f"{screening_fields(decision, reason, stage)}")


def _copy_tail(reviewer: str, role: str, source: str, note: str | None, when: str, import_id: int | None,
               decision: str | None = None, reason: str | None = None, stage: str | None = None) -> str:
    """The same fields as COPY text (`reviewdepth.store.ingest.copy_lines`)."""
    return (f"{copy_field(reviewer)}\t{copy_field(role)}\t{copy_field(source)}\t"
            f"{NULL if note is None else copy_field(note)}\t{when}\t{NULL if import_id is None else int(import_id)}"
            + "".join(f"\t{NULL if value is None else copy_field(value)}" for value in (decision, reason, stage)))


def append_judgments(conn: Connection, rows: Sequence[NewJudgment] | SharedJudgments, *, return_ids: bool = False,
                     progress: Progress | None = None,
                     queue_ids: Sequence[int | None] | None = None) -> list[int]:
    """The one way judgments enter the log: link ``rows`` into their topics' chains and bulk-insert them in the
    caller's transaction. ``queue_ids`` (one per row) records the queue each was served from (not hashed: see
    the module docstring). With ``return_ids``, their ids in the order given."""
    if queue_ids is not None and len(queue_ids) != len(rows):
        raise ValueError(f"{len(queue_ids)} queue ids for {len(rows)} judgments")
    shared = rows if isinstance(rows, SharedJudgments) else None
    tuples: Sequence[NewJudgment] = () if isinstance(rows, SharedJudgments) else rows
    topic_of = list(shared.topic_ids) if shared is not None else [row[0] for row in tuples]
    counts = Counter(topic_of)
    first, recorded, names = _reserve(conn, dict(counts))
    head = {topic_id: previous or genesis(names[topic_id]) for topic_id, previous in recorded.items()}
    next_seq = dict(first)
    sqlite = conn.dialect.name == "sqlite"
    # PostgreSQL's bulk path gets COPY text lines made here, not tuples for psycopg to adapt value by value
    as_text = not sqlite and len(rows) >= SMALL
    if shared is not None:
        escape = as_text and (needs_escape(shared.doc_ids) or needs_escape(shared.labels))
    else:
        escape = as_text and (needs_escape(row[1] for row in tuples) or needs_escape(row[2] for row in tuples))

    def linked() -> Iterator[Any]:
        # the loop of every judgment write: `link_hash` inlined (verify_topic recomputes with `link_hash`, and the
        # tests check that both agree on every insert path). The fields an import repeats on every row (reviewer,
        # role, source, note, time, import) are formatted once per change, not once per row.
        last: tuple[object, ...] = ()
        stored: object = None
        tail = fixed = ""
        for number, row in enumerate(tuples):
            topic_id, doc_id, label, relevant, grade = row[:5]
            if row[5:] != last:
                last = row[5:]
                reviewer, role, source, note, recorded_at, import_id, decision, reason, stage = row[5:]
                when = canonical_time(recorded_at)
                # text for both drivers: psycopg adapting a datetime per row costs more than parsing text
                stored = db_timestamp(conn, recorded_at) if sqlite else when
                tail = _tail(reviewer, role, source, note, when, import_id, decision, reason, stage)
                fixed = _copy_tail(reviewer, role, source, note, when, import_id, decision, reason, stage)
            seq = next_seq[topic_id]
            next_seq[topic_id] = seq + 1
            digest = head[topic_id] = _link(head[topic_id], seq, doc_id, label, relevant, grade, tail)
            if as_text:
                yield _copy_line(topic_id, doc_id, label, relevant, grade, fixed, seq, digest,
                                 None if queue_ids is None else (queue_ids[number],), escape)
            elif queue_ids is None:
                yield (*row[:9], stored, *row[10:], seq, digest)
            else:
                yield (*row[:9], stored, *row[10:], seq, digest, queue_ids[number])

    def linked_shared(batch: SharedJudgments) -> Iterator[Any]:
        # `linked` for columns with one tail: no per-row tuple to unpack; the chain is computed a block at a time,
        # one call of `chain_steps` per run of one topic's rows (an import lists each topic's judgments together)
        when = canonical_time(batch.recorded_at)
        tail = _tail(batch.reviewer, batch.role, batch.source, batch.note, when, batch.import_id)
        fixed = _copy_tail(batch.reviewer, batch.role, batch.source, batch.note, when, batch.import_id)
        stored = db_timestamp(conn, batch.recorded_at) if sqlite else when
        reviewer, role, source, note, import_id = batch.reviewer, batch.role, batch.source, batch.note, batch.import_id
        topic_ids, doc_ids, labels, relevant, grades = (batch.topic_ids, batch.doc_ids, batch.labels, batch.relevant,
                                                        batch.grades)
        if not len(topic_ids) == len(doc_ids) == len(labels) == len(relevant) == len(grades):
            raise ValueError("the columns of a judgment batch differ in length")
        for block in range(0, len(doc_ids), LINK_BLOCK):
            run_start, block_end = block, min(len(doc_ids), block + LINK_BLOCK)
            while run_start < block_end:
                topic_id = topic_ids[run_start]
                run_end = run_start + 1
                while run_end < block_end and topic_ids[run_end] == topic_id:
                    run_end += 1
                first_seq = next_seq[topic_id]
                digests = chain_steps(head[topic_id], first_seq, doc_ids[run_start:run_end],
                                      labels[run_start:run_end], relevant[run_start:run_end],
                                      grades[run_start:run_end], tail)
                next_seq[topic_id], head[topic_id] = first_seq + len(digests), digests[-1]
                seqs = range(first_seq, first_seq + len(digests))
                if as_text:
                    for number, seq, digest in zip(range(run_start, run_end), seqs, digests, strict=True):
                        yield _copy_line(topic_id, doc_ids[number], labels[number], relevant[number], grades[number],
                                         fixed, seq, digest, None if queue_ids is None else (queue_ids[number],),
                                         escape)
                else:
                    # the rows made by zip, in C: no bytecode per judgment
                    span = slice(run_start, run_end)
                    yield from zip(repeat(topic_id), doc_ids[span], labels[span], relevant[span], grades[span],
                                   repeat(reviewer), repeat(role), repeat(source), repeat(note), repeat(stored),
                                   repeat(import_id), repeat(None), repeat(None), repeat(None), seqs, digests,
                                   *(() if queue_ids is None else (queue_ids[span],)))
                run_start = run_end

    columns = JUDGMENT_COLUMNS if queue_ids is None else (*JUDGMENT_COLUMNS, "queue_id")
    lines = linked() if shared is None else linked_shared(shared)
    if not sqlite and not as_text and len(counts) == 1:
        return _append_one_topic(conn, columns, list(lines), first, recorded, names, counts, head)
    try:
        if as_text:
            copy_lines(conn, "judgments", columns, lines, progress)
        else:
            bulk_insert(conn, "judgments", columns, lines, progress)
    except Exception as exc:  # the driver's or SQLAlchemy's unique violation: a row already holds a reserved seq
        if "uq_judgments_topic_id_seq" not in str(exc):  # (PostgreSQL; SQLite was checked in `_reserve`)
            raise
        topic_id = min(counts)
        raise _refuse_broken(names[topic_id], "the log holds judgments beyond the length the topic records") from None
    for topic_id, last in head.items():
        if next_seq[topic_id] != first[topic_id] + counts[topic_id]:
            raise RuntimeError(f"reserved judgments of topic id {topic_id} were not all written")
        if sqlite:
            driver_rows(conn, "UPDATE topics SET chain_head = ? WHERE id = ?", (last, topic_id), fetch=False)
            continue
        # the tail check of PostgreSQL (see `_reserve`): this statement's snapshot follows the topic's lock
        before = first[topic_id] - 1
        [(last_hash, last_seq)] = driver_rows(
            conn, "UPDATE topics SET chain_head = ? WHERE id = ? RETURNING (SELECT j.chain_hash FROM judgments j "
            "WHERE j.topic_id = topics.id AND j.seq = ?), (SELECT max(j.seq) FROM judgments j WHERE "
            "j.topic_id = topics.id)", (last, topic_id, before))
        _check_tail(conn, topic_id, names[topic_id], before, recorded[topic_id], last_hash,
                    None if last_seq is None else int(last_seq), before + counts[topic_id])
    if not return_ids:
        return []
    by_topic: dict[int, list[int]] = {}
    for topic_id, first_seq in first.items():
        found = driver_rows(conn, "SELECT id FROM judgments WHERE topic_id = ? AND seq >= ? AND seq < ? ORDER BY seq",
                            (topic_id, first_seq, first_seq + counts[topic_id]))
        by_topic[topic_id] = [int(jid) for (jid,) in found]
    taken = dict.fromkeys(by_topic, 0)
    ids = []
    for topic_id in topic_of:
        ids.append(by_topic[topic_id][taken[topic_id]])
        taken[topic_id] += 1
    return ids


def _append_one_topic(conn: Connection, columns: Sequence[str], rows: list[tuple[object, ...]], first: dict[int, int],
                      recorded: dict[int, str | None], names: dict[int, str], counts: Counter[int],
                      head: dict[int, str]) -> list[int]:
    """A few judgments of one topic on PostgreSQL (the API's posts): the insert, the head update with its tail
    check and the new ids in one statement, one round trip instead of three. The subqueries of the update's
    RETURNING see the log without the rows the statement inserts, so the highest seq expected is the one before."""
    [(topic_id, count)] = counts.items()
    before = first[topic_id] - 1
    marks = ", ".join("%s" for _ in columns)
    try:
        [(last_hash, last_seq, ids)] = driver_rows(
            conn, f"WITH new AS (INSERT INTO judgments ({', '.join(columns)}) VALUES "
            f"{', '.join(f'({marks})' for _ in rows)} RETURNING id, seq) "
            "UPDATE topics SET chain_head = ? WHERE id = ? RETURNING (SELECT j.chain_hash FROM judgments j "
            "WHERE j.topic_id = topics.id AND j.seq = ?), (SELECT max(j.seq) FROM judgments j WHERE "
            "j.topic_id = topics.id), (SELECT array_agg(new.id ORDER BY new.seq) FROM new)",
            (*(value for row in rows for value in row), head[topic_id], topic_id, before))
    except Exception as exc:  # the driver's unique violation: a row already holds a reserved seq
        if "uq_judgments_topic_id_seq" not in str(exc):
            raise
        raise _refuse_broken(names[topic_id], "the log holds judgments beyond the length the topic records") from None
    _check_tail(conn, topic_id, names[topic_id], before, recorded[topic_id], last_hash,
                None if last_seq is None else int(last_seq), before, count)
    if len(ids) != count:
        raise RuntimeError(f"reserved judgments of topic id {topic_id} were not all written")
    return [int(i) for i in ids]


@dataclass(frozen=True)
class ChainBreak:
    """The first row where a topic's log stops matching its chain (``judgment_id`` None: the topic's head)."""

    judgment_id: int | None
    seq: int | None
    reason: str

    def as_dict(self) -> dict[str, object]:
        return {"judgment_id": self.judgment_id, "seq": self.seq, "reason": self.reason}


@dataclass(frozen=True)
class ChainCheck:
    """``broken``: the first break no acknowledgement covers; ``acknowledged``: breaks an admin accepted."""

    topic: str
    judgments: int
    head: str
    broken: ChainBreak | None
    acknowledged: tuple[ChainBreak, ...] = ()
    breaks: tuple[ChainBreak, ...] = ()  # every break no acknowledgement covers (``broken`` is the first)

    @property
    def intact(self) -> bool:
        return self.broken is None

    def as_dict(self) -> dict[str, object]:
        return {"topic": self.topic, "judgments": self.judgments, "head": self.head, "intact": self.intact,
                "first_broken": None if self.broken is None else self.broken.as_dict(),
                "acknowledged": [b.as_dict() for b in self.acknowledged]}


ACK_PREFIX = "acknowledgement"


def acknowledgement_hash(previous: str, seq: int, broken: str, reason: str, reviewer: str,
                         recorded_at: datetime) -> str:
    """The chain link of an acknowledgement, as a judgment's (module docstring)::

        hash = SHA-256( previous + "\\n" + "acknowledgement|" + seq|broken|reason|reviewer|recorded_at )

    text fields as ``length:text``; ``previous`` is the stored hash of judgment ``seq`` (genesis for 0)."""
    text = (f"{ACK_PREFIX}|{seq}|{len(broken)}:{broken}|{len(reason)}:{reason}|{len(reviewer)}:{reviewer}|"
            f"{canonical_time(recorded_at)}")
    return sha256(f"{previous}\n{text}".encode()).hexdigest()


@dataclass(frozen=True)
class _Acknowledgement:
    seq: int
    previous_head: str
    broken: str
    reason: str
    reviewer: str
    recorded_at: datetime
    chain_hash: str

    def accepts(self, found: ChainBreak) -> bool:
        """Whether ``found`` is one of the breaks this acknowledgement accepted (listed in ``broken``)."""
        try:
            listed = json.loads(self.broken)["breaks"]
        except (ValueError, KeyError, TypeError):
            return False
        return [found.seq, found.judgment_id] in listed


def acknowledged_text(check: ChainCheck) -> str:
    """What an acknowledgement accepts, as stored (and hashed): the first reason and every break's seq and id."""
    return json.dumps({"reason": None if check.broken is None else check.broken.reason,
                       "breaks": [[b.seq, b.judgment_id] for b in check.breaks]}, ensure_ascii=False)


def _acknowledgements(conn: Connection, topic_id: int) -> list[_Acknowledgement]:
    rows = conn.execute(select(ChainAcknowledgement.seq, ChainAcknowledgement.previous_head,
                               ChainAcknowledgement.broken, ChainAcknowledgement.reason, ChainAcknowledgement.reviewer,
                               ChainAcknowledgement.recorded_at, ChainAcknowledgement.chain_hash)
                        .where(ChainAcknowledgement.topic_id == topic_id).order_by(ChainAcknowledgement.id)).all()
    return [_Acknowledgement(int(r[0]), *r[1:]) for r in rows]


def verify_topic(conn: Connection, topic_id: int, *, strict_through: int = 0) -> ChainCheck:
    """Recompute a topic's chain from its first judgment and compare with the stored hashes and head.

    An acknowledgement recorded at seq L accepts the breaks at or before L: each is reported under
    ``acknowledged``, and the walk goes on from the stored hash of the broken row; after row L the chain
    continues from the acknowledgement's own link. ``strict_through``: breaks at or before that seq count
    even when acknowledged later (an anchored head must be proven by the log as it was when it was taken), unless
    the acknowledgement came before the anchor (its seq is below ``strict_through``)."""
    name, length, stored_head = conn.execute(
        select(Topic.name, Topic.chain_length, Topic.chain_head).where(Topic.id == topic_id)).one()
    acks = _acknowledgements(conn, topic_id)
    head = genesis(name)
    expected = 1
    last_id = 0
    count = 0
    accepted: list[ChainBreak] = []
    refused: list[ChainBreak] = []

    def covered(found: ChainBreak) -> bool:
        seq = found.seq or 0
        return any(a.accepts(found) and (seq > strict_through or a.seq < strict_through) for a in acks)

    def result() -> ChainCheck:
        return ChainCheck(name, count, head, refused[0] if refused else None, tuple(accepted), tuple(refused))

    def splice(after_seq: int, current: str) -> tuple[str, ChainBreak | None]:
        """Acknowledgements recorded right after judgment ``after_seq``, linked in."""
        for ack in acks:
            if ack.seq != after_seq:
                continue
            link = acknowledgement_hash(ack.previous_head, ack.seq, ack.broken, ack.reason, ack.reviewer,
                                        ack.recorded_at)
            if ack.previous_head != current or link != ack.chain_hash:
                return current, ChainBreak(None, after_seq, f"the acknowledgement recorded after seq {after_seq} by "
                                           f"{ack.reviewer!r} does not match its chain link: it was changed")
            current = link
        return current, None

    head, problem = splice(0, head)
    if problem is not None:
        refused.append(problem)
    stmt = (select(Judgment.id, Judgment.seq, Judgment.doc_id, Judgment.label, Judgment.relevant, Judgment.grade,
                   Judgment.reviewer, Judgment.role, Judgment.source, Judgment.note, Judgment.recorded_at,
                   Judgment.import_id, Judgment.decision, Judgment.reason, Judgment.stage, Judgment.chain_hash)
            .where(Judgment.topic_id == topic_id).order_by(Judgment.seq, Judgment.id))
    for (jid, seq, doc_id, label, relevant, grade, reviewer, role, source, note, recorded_at, import_id, decision,
         reason, stage, stored) in conn.execute(stmt, execution_options={"yield_per": 20_000}):
        count += 1
        found: ChainBreak | None = None
        if seq != expected:
            reason = (f"judgment seq {expected} is missing before judgment id {jid} (seq {seq}): a row was deleted"
                      if seq > expected else
                      f"judgment id {jid} has seq {seq}, expected {expected}: rows were duplicated or re-numbered")
            found = ChainBreak(jid, expected, reason)
        elif jid <= last_id:
            found = ChainBreak(jid, expected, f"judgment id {jid} (seq {seq}) is out of recording order")
        else:
            digest = link_hash(head, expected, doc_id, label, None if relevant is None else bool(relevant), grade,
                               reviewer, role, source, note, recorded_at, import_id, decision, reason, stage)
            if digest != stored:
                found = ChainBreak(jid, expected, (
                    f"judgment id {jid} (seq {expected}, document {doc_id!r}) does not match its chain hash: the row "
                    "or its stored hash was changed after it was recorded"))
        if found is not None:  # noted, and the walk goes on from the row as stored
            (accepted if covered(found) else refused).append(found)
            expected = int(seq)
        head = stored
        last_id = max(last_id, jid)
        head, problem = splice(int(seq), head)
        if problem is not None:
            refused.append(problem)
        expected += 1
    recorded_length = int(length or 0)
    last_seq = expected - 1
    if last_seq != recorded_length or (stored_head or genesis(name)) != head:
        if last_seq < recorded_length:
            reason = (f"the topic records {recorded_length} judgments but the log ends at seq {last_seq}: judgments "
                      "were deleted from the end")
        elif last_seq > recorded_length:
            reason = (f"the log holds {last_seq} judgments but the topic records {recorded_length}: the topic's "
                      "length was changed")
        else:
            reason = (f"the topic's recorded head {(stored_head or '-')[:16]}… is not the chain's {head[:16]}…: the "
                      "topic's head was rewritten (the judgments themselves match their hashes)")
        # an acknowledgement leaves length and head consistent: a mismatch here is always later than any
        refused.append(ChainBreak(None, recorded_length, reason))
    return result()


def acknowledge(conn: Connection, topic_id: int, *, reason: str, reviewer: str, broken: str,
                now: datetime) -> tuple[int, str]:
    """Accept a topic's log as it is now (in the caller's transaction, under the topic's lock): record the
    acknowledgement linked to the stored hash of the log's last judgment, make it the topic's head, set the
    length to the last judgment's seq and clear the broken flag. Returns (seq, new head)."""
    [(name,)] = driver_rows(conn, "UPDATE topics SET chain_length = chain_length WHERE id = ? RETURNING name",
                            (topic_id,))
    last = driver_rows(conn, "SELECT seq, chain_hash FROM judgments WHERE topic_id = ? ORDER BY seq DESC LIMIT 1",
                       (topic_id,))
    seq, previous = (int(last[0][0]), str(last[0][1])) if last else (0, genesis(name))
    link = acknowledgement_hash(previous, seq, broken, reason, reviewer, now)
    conn.execute(insert(ChainAcknowledgement).values(
        topic_id=topic_id, seq=seq, previous_head=previous, broken=broken, reason=reason, reviewer=reviewer,
        recorded_at=now, chain_hash=link))
    conn.execute(update(Topic).where(Topic.id == topic_id).values(chain_length=seq, chain_head=link,
                                                                  chain_broken=None))
    return seq, link


def chain_head_at(conn_or_engine: Connection | Engine, topic_id: int,
                  as_of_judgment_id: int | None = None) -> dict[str, object]:
    """The head of a topic's chain as it was after judgment ``as_of_judgment_id`` (None: now), for a report's
    provenance and for anchoring: ``{"seq", "hash", "recorded_at"}`` (ISO 8601 UTC; None before any judgment).
    Now, it is the topic's recorded head (an acknowledgement's link when one was recorded last); as of a
    judgment, the stored hash of the topic's last judgment with an id up to it."""
    if isinstance(conn_or_engine, Engine):
        with conn_or_engine.connect() as conn:
            return chain_head_at(conn, topic_id, as_of_judgment_id)
    conn = conn_or_engine
    name, length, stored_head = conn.execute(
        select(Topic.name, Topic.chain_length, Topic.chain_head).where(Topic.id == topic_id)).one()
    if as_of_judgment_id is None:
        row = conn.execute(select(Judgment.seq, Judgment.chain_hash, Judgment.recorded_at).where(
            Judgment.topic_id == topic_id, Judgment.seq == int(length or 0))).first()
        moment = None if row is None else row[2]
        acked = conn.execute(select(ChainAcknowledgement.recorded_at).where(
            ChainAcknowledgement.topic_id == topic_id, ChainAcknowledgement.chain_hash == stored_head)).first()
        if acked is not None:
            moment = acked[0]
        return {"seq": int(length or 0), "hash": stored_head or genesis(name),
                "recorded_at": None if moment is None else canonical_time(moment)}
    row = conn.execute(select(Judgment.seq, Judgment.chain_hash, Judgment.recorded_at)
                       .where(Judgment.topic_id == topic_id, Judgment.id <= as_of_judgment_id)
                       .order_by(Judgment.id.desc()).limit(1)).first()
    if row is None:
        return {"seq": 0, "hash": genesis(name), "recorded_at": None}
    return {"seq": int(row[0]), "hash": str(row[1]), "recorded_at": canonical_time(row[2])}


def check_anchor(conn: Connection, topic_id: int, seq: int | None, anchored: str) -> tuple[int, str | None]:
    """Whether the log still extends an anchored head (``seq`` None: find the judgment carrying ``anchored``):
    the anchored seq and None when it does, else why not. The caller also runs `verify_topic` with
    ``strict_through`` the anchored seq, which proves the rows up to the anchor still produce it."""
    name = conn.execute(select(Topic.name).where(Topic.id == topic_id)).scalar_one()
    if seq is None:
        if anchored == genesis(name):
            return 0, None
        found = conn.execute(select(Judgment.seq).where(Judgment.topic_id == topic_id,
                                                        Judgment.chain_hash == anchored)).first()
        if found is None:
            acked = conn.execute(select(ChainAcknowledgement.seq).where(
                ChainAcknowledgement.topic_id == topic_id, ChainAcknowledgement.chain_hash == anchored)).first()
            if acked is not None:
                return int(acked[0]), None
            return -1, (f"no judgment of topic {name!r} carries the anchored hash {anchored[:16]}…: the log was "
                        "rewritten, re-sealed or emptied since the head was taken")
        return int(found[0]), None
    if seq == 0:
        return 0, None if anchored == genesis(name) else f"the anchored head of seq 0 is not topic {name!r}'s genesis"
    row = conn.execute(select(Judgment.chain_hash).where(Judgment.topic_id == topic_id, Judgment.seq == seq)).first()
    if row is None:
        last = conn.execute(select(Judgment.seq).where(Judgment.topic_id == topic_id)
                            .order_by(Judgment.seq.desc()).limit(1)).scalar_one_or_none()
        return seq, (f"the log no longer holds judgment seq {seq}, the anchored head (it ends at seq {last or 0}): "
                     "judgments were deleted (the tail, or the whole topic)")
    if row[0] != anchored:
        acked = conn.execute(select(ChainAcknowledgement.id).where(
            ChainAcknowledgement.topic_id == topic_id, ChainAcknowledgement.seq == seq,
            ChainAcknowledgement.chain_hash == anchored)).first()
        if acked is None:
            return seq, (f"judgment seq {seq} carries hash {str(row[0])[:16]}…, not the anchored {anchored[:16]}…: "
                         "the log was rewritten and re-sealed at or before that judgment")
    return seq, None
