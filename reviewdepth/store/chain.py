"""The tamper-evident judgment log: every judgment carries a SHA-256 hash chained to the previous one of its topic.

    hash_k = SHA-256( hash_{k-1} + "\\n" + canonical_k )      (hex digests, UTF-8)
    hash_0 = SHA-256( "reviewdepth judgment chain v1\\n" + topic name )
    canonical_k = seq|doc_id|label|relevant|grade|reviewer|role|source|note|recorded_at|import_id
        text fields as <length in characters>:<text>, null as ~, relevant as 1/0,
        recorded_at as ISO 8601 in UTC with microseconds (2026-12-02T21:50:00.123456+00:00)

``seq`` numbers a topic's judgments 1, 2, 3, … in recording order; the topic row keeps the chain's length and
head. Writers reserve their sequence numbers with one ``UPDATE topics … RETURNING`` as the first write of their
transaction, which takes the row lock (PostgreSQL) or the write lock (SQLite): writers of one topic are
serialised, writers of different topics are not (on PostgreSQL). Editing, deleting or re-ordering a row behind
the application's back breaks the chain at that row; `verify_topic` names the first broken row. The chain
cannot stop someone who rewrites the whole log and every later hash: record the head that ``audit verify``
prints outside the database (a ticket, an email, a court filing) to anchor it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from hashlib import sha256

from sqlalchemy import Connection, select

from reviewdepth.store.ingest import Progress, bulk_insert, db_timestamp, driver_rows
from reviewdepth.store.models import Judgment, Topic

CHAIN_VERSION = "reviewdepth judgment chain v1"


def genesis(topic_name: str) -> str:
    return sha256(f"{CHAIN_VERSION}\n{topic_name}".encode()).hexdigest()


def canonical_time(moment: datetime) -> str:
    """UTC, microseconds; naive values are UTC (as SQLite hands them back)."""
    moment = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
    return moment.isoformat(timespec="microseconds")


def canonical(seq: int, doc_id: str, label: str, relevant: bool | None, grade: int | None, reviewer: str,
              role: str, source: str, note: str | None, recorded_at: str, import_id: int | None) -> str:
    """The canonical text of one judgment (module docstring): fields joined by ``|``; text as ``length:text``
    (length in characters), so no content can imitate a separator; ``~`` for null; booleans as 1/0."""
    # one f-string, no helper calls: this runs for every judgment written
    return (f"{seq}|{len(doc_id)}:{doc_id}|{len(label)}:{label}|{'~' if relevant is None else int(relevant)}|"
            f"{'~' if grade is None else grade}|{len(reviewer)}:{reviewer}|{len(role)}:{role}|"
            f"{len(source)}:{source}|{'~' if note is None else f'{len(note)}:{note}'}|{recorded_at}|"
            f"{'~' if import_id is None else import_id}")


def link_hash(previous: str, seq: int, doc_id: str, label: str, relevant: bool | None, grade: int | None,
              reviewer: str, role: str, source: str, note: str | None, recorded_at: datetime,
              import_id: int | None) -> str:
    """The chain hash of one judgment given the previous hash (formula in the module docstring)."""
    text = canonical(seq, doc_id, label, relevant, grade, reviewer, role, source, note, canonical_time(recorded_at),
                     import_id)
    return sha256(f"{previous}\n{text}".encode()).hexdigest()


def _reserve(conn: Connection, counts: dict[int, int]) -> tuple[dict[int, int], dict[int, str]]:
    """Reserve ``counts[topic]`` sequence numbers per topic (taking each topic's lock, in id order so two writers
    cannot deadlock): the first new seq and the current head of each topic."""
    first: dict[int, int] = {}
    head: dict[int, str] = {}
    for topic_id in sorted(counts):
        [(length, previous, name)] = driver_rows(
            conn, "UPDATE topics SET chain_length = chain_length + ? WHERE id = ? "
            "RETURNING chain_length, chain_head, name", (counts[topic_id], topic_id))
        first[topic_id] = int(length) - counts[topic_id] + 1
        head[topic_id] = previous or genesis(name)
    return first, head


# topic_id, doc_id, label, relevant, grade, reviewer, role, source, note, recorded_at, import_id
NewJudgment = tuple[int, str, str, bool | None, int | None, str, str, str, str | None, datetime, int | None]
JUDGMENT_COLUMNS = ("topic_id", "doc_id", "label", "relevant", "grade", "reviewer", "role", "source", "note",
                    "recorded_at", "import_id", "seq", "chain_hash")


def append_judgments(conn: Connection, rows: Sequence[NewJudgment], *, return_ids: bool = False,
                     progress: Progress | None = None) -> list[int]:
    """The one way judgments enter the log: link ``rows`` into their topics' chains and bulk-insert them in the
    caller's transaction. With ``return_ids``, their ids in the order given."""
    counts = Counter(row[0] for row in rows)
    first, head = _reserve(conn, dict(counts))
    next_seq = dict(first)
    sqlite = conn.dialect.name == "sqlite"

    def linked() -> Iterator[tuple[object, ...]]:
        # the loop of every import: `link_hash` inlined (verify_topic recomputes with `link_hash`, and the tests
        # check that both agree on every insert path). The fields an import repeats on every row (reviewer, role,
        # source, note, time, import) are formatted once per change, not once per row.
        last: tuple[object, ...] = ()
        stored: object = None
        tail = ""
        for row in rows:
            topic_id, doc_id, label, relevant, grade = row[:5]
            if row[5:] != last:
                last = row[5:]
                reviewer, role, source, note, recorded_at, import_id = row[5:]
                when = canonical_time(recorded_at)
                # text for both drivers: psycopg adapting a datetime per row costs more than parsing text
                stored = db_timestamp(conn, recorded_at) if sqlite else when
                tail = (f"|{len(reviewer)}:{reviewer}|{len(role)}:{role}|{len(source)}:{source}|"
                        f"{'~' if note is None else f'{len(note)}:{note}'}|{when}|"
                        f"{'~' if import_id is None else import_id}")
            seq = next_seq[topic_id]
            next_seq[topic_id] = seq + 1
            digest = head[topic_id] = sha256(
                f"{head[topic_id]}\n{seq}|{len(doc_id)}:{doc_id}|{len(label)}:{label}|"
                f"{'~' if relevant is None else int(relevant)}|{'~' if grade is None else grade}{tail}".encode()
            ).hexdigest()
            yield (*row[:9], stored, row[10], seq, digest)

    bulk_insert(conn, "judgments", JUDGMENT_COLUMNS, linked(), progress)
    for topic_id, last in head.items():
        if next_seq[topic_id] != first[topic_id] + counts[topic_id]:
            raise RuntimeError(f"reserved judgments of topic id {topic_id} were not all written")
        driver_rows(conn, "UPDATE topics SET chain_head = ? WHERE id = ?", (last, topic_id), fetch=False)
    if not return_ids:
        return []
    by_topic: dict[int, list[int]] = {}
    for topic_id, first_seq in first.items():
        found = driver_rows(conn, "SELECT id FROM judgments WHERE topic_id = ? AND seq >= ? AND seq < ? ORDER BY seq",
                            (topic_id, first_seq, first_seq + counts[topic_id]))
        by_topic[topic_id] = [int(jid) for (jid,) in found]
    taken = dict.fromkeys(by_topic, 0)
    ids = []
    for row in rows:
        ids.append(by_topic[row[0]][taken[row[0]]])
        taken[row[0]] += 1
    return ids


@dataclass(frozen=True)
class ChainBreak:
    """The first row where a topic's log stops matching its chain."""

    judgment_id: int | None
    seq: int | None
    reason: str


@dataclass(frozen=True)
class ChainCheck:
    topic: str
    judgments: int
    head: str
    broken: ChainBreak | None

    @property
    def intact(self) -> bool:
        return self.broken is None

    def as_dict(self) -> dict[str, object]:
        return {"topic": self.topic, "judgments": self.judgments, "head": self.head, "intact": self.intact,
                "first_broken": None if self.broken is None else {
                    "judgment_id": self.broken.judgment_id, "seq": self.broken.seq, "reason": self.broken.reason}}


def verify_topic(conn: Connection, topic_id: int) -> ChainCheck:
    """Recompute a topic's chain from its first judgment and compare with the stored hashes and head."""
    name, length, stored_head = conn.execute(
        select(Topic.name, Topic.chain_length, Topic.chain_head).where(Topic.id == topic_id)).one()
    head = genesis(name)
    expected = 1
    last_id = 0
    count = 0
    stmt = (select(Judgment.id, Judgment.seq, Judgment.doc_id, Judgment.label, Judgment.relevant, Judgment.grade,
                   Judgment.reviewer, Judgment.role, Judgment.source, Judgment.note, Judgment.recorded_at,
                   Judgment.import_id, Judgment.chain_hash)
            .where(Judgment.topic_id == topic_id).order_by(Judgment.seq, Judgment.id))
    for (jid, seq, doc_id, label, relevant, grade, reviewer, role, source, note, recorded_at, import_id,
         stored) in conn.execution_options(yield_per=20_000).execute(stmt):
        count += 1
        if seq != expected:
            reason = (f"judgment seq {expected} is missing before judgment id {jid} (seq {seq}): a row was deleted"
                      if seq > expected else
                      f"judgment id {jid} has seq {seq}, expected {expected}: rows were duplicated or re-numbered")
            return ChainCheck(name, count, head, ChainBreak(jid, expected, reason))
        if jid <= last_id:
            return ChainCheck(name, count, head, ChainBreak(jid, expected,
                              f"judgment id {jid} (seq {seq}) is out of recording order"))
        digest = link_hash(head, expected, doc_id, label, None if relevant is None else bool(relevant), grade,
                           reviewer, role, source, note, recorded_at, import_id)
        if digest != stored:
            return ChainCheck(name, count, head, ChainBreak(
                jid, expected,
                f"judgment id {jid} (seq {expected}, document {doc_id!r}) does not match its chain hash: the row "
                "or its stored hash was changed after it was recorded"))
        head = digest
        last_id = jid
        expected += 1
    recorded_length = int(length or 0)
    if count != recorded_length or (count and stored_head != head):
        return ChainCheck(name, count, head, ChainBreak(
            None, count + 1 if count < recorded_length else count,
            f"the log has {count} judgments ending in {head[:16]}…, but the topic records {recorded_length} ending "
            f"in {(stored_head or '-')[:16]}…: judgments were deleted from the end, or the head was changed"))
    return ChainCheck(name, count, head, None)
