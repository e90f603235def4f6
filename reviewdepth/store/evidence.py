"""The evidence chain: what a report rests on besides the judgments, hash-chained like the judgment log.

Each topic, queue (its ranking), sample (its draw) and audit stream (its seed and pace) is recorded as an
*evidence event* when the application stores it, and again whenever the application changes it (a stream's pace,
a void). An event keeps the object's state as canonical JSON (`topic_state`, `queue_state`, `sample_state`,
`stream_state`; the drawn documents and the ranking enter as SHA-256 digests over their rows in order) and one
store-wide chain links the events::

    hash_k = SHA-256( hash_{k-1} + "\\n" + seq|kind|object_id|<len>:topic|action|recorded_at|state )
    hash_0 = SHA-256( "reviewdepth evidence chain v1" )

The table ``evidence_chain`` keeps the chain's length and head (one row, also the writers' lock: appending
starts with ``UPDATE evidence_chain … RETURNING``). Events name their topic by name and have no foreign key, so
``DELETE FROM topics`` (or of any object) leaves the events that prove the object existed.

`verify_evidence` recomputes the chain and every chained object's state from the live rows and names, one line
each, an object whose state differs from its latest event, an object chained but missing, and an object stored
behind the application's back (no event). Like the judgment log, the chain cannot stop someone who rewrites an
object, its events and every later hash: an anchor (``audit head``) records the evidence head outside the
database, and ``audit verify --head`` proves the chain still extends it.

A topic's protocol fields (``reviewdepth topic protocol``, table ``topic_protocols``, migration 0020) are part of
its state once entered: each change chains a ``topic`` event (action ``protocol``) whose state carries them under
``protocol``; a topic without protocol fields has the same state as before 0020, so no earlier event changes
meaning. Not covered: a queue's ``queue_id`` on judgments, an audit stream's serving progress (``position``,
``served``: they move with every ``next``), a topic's other settings (population size, screening order,
conflict rule, exclusion reasons), imported record fields and the derived tables (summaries, calibrations,
simulation jobs).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from hashlib import sha256
from typing import Any

from sqlalchemy import BigInteger, Connection, DateTime, Float, String, text

from reviewdepth.store.chain import canonical_time
from reviewdepth.store.ingest import driver_rows

EVIDENCE_VERSION = "reviewdepth evidence chain v1"
KINDS = ("topic", "queue", "sample", "stream")
ENTRY_CHUNK = 50_000  # queue entries or sample items hashed per query: bounded memory for queues of millions


def evidence_genesis() -> str:
    return sha256(EVIDENCE_VERSION.encode()).hexdigest()


def event_hash(previous: str, seq: int, kind: str, object_id: int, topic: str, action: str, recorded_at: str,
               state: str) -> str:
    """One link of the evidence chain (module docstring)."""
    body = f"{seq}|{kind}|{object_id}|{len(topic)}:{topic}|{action}|{recorded_at}|{state}"
    return sha256(f"{previous}\n{body}".encode()).hexdigest()


def _time(value: datetime | None) -> str | None:
    return None if value is None else canonical_time(value)


def _float(value: float | None) -> str | None:
    # repr round-trips a double exactly; both databases store these columns as double precision
    return None if value is None else repr(float(value))


def _rows_digest(conn: Connection, sql: str, key: int, line: Any) -> tuple[int, str]:
    """SHA-256 over one line per row of ``sql`` (keyset-paged on its first column, ascending), and the row count.
    ``sql`` is qmark SQL taking the object's id, the last key seen and the page size, run on the driver
    (`driver_rows`: no per-row result objects, which cost more than the hashing on a queue of millions)."""
    digest = sha256()
    after, count = -1, 0
    while True:
        rows = driver_rows(conn, sql, (key, after, ENTRY_CHUNK))
        if not rows:
            break
        digest.update("".join([line(r) for r in rows]).encode())
        count += len(rows)
        after = int(rows[-1][0])
        if len(rows) < ENTRY_CHUNK:
            break
    return count, digest.hexdigest()


def _text(value: str | None) -> str:
    return "~" if value is None else f"{len(value)}:{value}"


def _entry_line(row: Any) -> str:
    rank, doc_id, score, flag = row
    return f"{rank}|{_text(doc_id)}|{_float(score) or '~'}|{_text(flag)}\n"


def _item_line(row: Any) -> str:
    position, doc_id, rank = row
    return f"{position}|{_text(doc_id)}|{'~' if rank is None else rank}\n"


BLOB_CHUNK = 1 << 22  # bytes of a ranking index hashed at a time on SQLite


def _blob_digest(conn: Connection, queue_id: int) -> str | None:
    """SHA-256 of a queue's ranking index (None when it has none), never holding the whole value in Python: a
    6,000,000-entry index is some 150 MB. PostgreSQL hashes it in the server; SQLite reads it in slices."""
    if conn.dialect.name != "sqlite":
        found = conn.execute(text("SELECT encode(sha256(ranking_blob), 'hex') FROM queues WHERE id = :id"),
                             {"id": queue_id}).scalar_one_or_none()
        return None if found is None else str(found)
    length = conn.execute(text("SELECT length(ranking_blob) FROM queues WHERE id = :id"),
                          {"id": queue_id}).scalar_one_or_none()
    if length is None:
        return None
    digest = sha256()
    raw = conn.connection.driver_connection
    assert raw is not None
    with raw.blobopen("queues", "ranking_blob", queue_id, readonly=True) as blob:
        while piece := blob.read(BLOB_CHUNK):
            digest.update(piece)
    return digest.hexdigest()


def topic_state_v1(conn: Connection, topic_id: int) -> tuple[str, dict[str, Any]] | None:
    """A topic's state as migration 0019 chained it (name and creation time): before ``topic_protocols`` exists."""
    row = conn.execute(text("SELECT name, created_at FROM topics WHERE id = :id")
                       .columns(name=String, created_at=DateTime(timezone=True)), {"id": topic_id}).first()
    if row is None:
        return None
    return str(row[0]), {"name": row[0], "created_at": _time(row[1])}


def topic_state(conn: Connection, topic_id: int) -> tuple[str, dict[str, Any]] | None:
    """A topic's name and creation time, and its protocol fields when it has any (module docstring)."""
    found = topic_state_v1(conn, topic_id)
    if found is None:
        return None
    row = conn.execute(text("SELECT fields, recorded_at, recorded_by FROM topic_protocols WHERE topic_id = :id")
                       .columns(recorded_at=DateTime(timezone=True)), {"id": topic_id}).first()
    if row is not None:
        found[1]["protocol"] = {"fields": json.loads(row[0]), "recorded_at": _time(row[1]),
                                "recorded_by": row[2]}
    return found


def queue_state(conn: Connection, queue_id: int) -> tuple[str, dict[str, Any]] | None:
    """A queue's stored fields, and its ranking: the digest of its entries in rank order (rank, doc id, score,
    flag) and of its ranking index (``ranking_blob``, which `next` and the report read)."""
    row = conn.execute(text(
        "SELECT t.name, q.topic_id, q.name, q.ordering, q.run_tag, q.threshold_rank, q.size, q.source, "
        "q.created_at FROM queues q JOIN topics t ON t.id = q.topic_id WHERE q.id = :id")
        .columns(created_at=DateTime(timezone=True)), {"id": queue_id}).first()
    if row is None:
        return None
    count, entries = _rows_digest(
        conn, "SELECT rank, doc_id, score, flag FROM queue_entries WHERE queue_id = ? AND rank > ? "
        "ORDER BY rank LIMIT ?", queue_id, _entry_line)
    blob = _blob_digest(conn, queue_id)
    return str(row[0]), {"topic_id": int(row[1]), "name": row[2], "ordering": row[3], "run_tag": row[4],
                         "threshold_rank": row[5], "size": int(row[6]), "source": row[7],
                         "created_at": _time(row[8]), "entries": count, "ranking": entries, "ranking_index": blob}


def sample_state(conn: Connection, sample_id: int) -> tuple[str, dict[str, Any]] | None:
    """A sample's draw (queue, frame, sizes, seed, as-of, the drawn documents in order) and its void."""
    row = conn.execute(text(
        "SELECT t.name, s.topic_id, s.queue_id, s.frame, s.below_rank, s.from_rank, s.to_rank, s.frame_size, "
        "s.size, s.seed, s.as_of, s.created_at, s.queue_size, s.voided_at, s.void_reason, s.voided_by, "
        "s.void_judgment_id FROM samples s JOIN topics t ON t.id = s.topic_id WHERE s.id = :id")
        .columns(created_at=DateTime(timezone=True), voided_at=DateTime(timezone=True), seed=BigInteger),
        {"id": sample_id}).first()
    if row is None:
        return None
    count, drawn = _rows_digest(
        conn, "SELECT position, doc_id, rank FROM sample_items WHERE sample_id = ? AND position > ? "
        "ORDER BY position LIMIT ?", sample_id, _item_line)
    return str(row[0]), {"topic_id": int(row[1]), "queue_id": int(row[2]), "frame": row[3], "below_rank": row[4],
                         "from_rank": row[5], "to_rank": row[6], "frame_size": int(row[7]), "size": int(row[8]),
                         "seed": int(row[9]), "as_of": row[10], "created_at": _time(row[11]),
                         "queue_size": row[12], "drawn_count": count, "drawn_documents": drawn,
                         "voided_at": _time(row[13]), "void_reason": row[14], "voided_by": row[15],
                         "void_judgment_id": row[16]}


def stream_state(conn: Connection, stream_id: int) -> tuple[str, dict[str, Any]] | None:
    """An audit stream's permutation (seed, population), pace and void; not its serving progress."""
    row = conn.execute(text(
        "SELECT t.name, a.topic_id, a.queue_id, a.seed, a.population_size, a.population_digest, a.every_k, a.rate, "
        "a.as_of, a.created_at, a.created_by, a.voided_at, a.void_reason, a.voided_by, a.pace_from_reviewed, "
        "a.pace_from_served FROM audit_streams a JOIN topics t ON t.id = a.topic_id WHERE a.id = :id")
        .columns(created_at=DateTime(timezone=True), voided_at=DateTime(timezone=True), rate=Float),
        {"id": stream_id}).first()
    if row is None:
        return None
    return str(row[0]), {"topic_id": int(row[1]), "queue_id": row[2], "seed": int(row[3]),
                         "population_size": int(row[4]), "population_digest": row[5], "every_k": row[6],
                         "rate": _float(row[7]), "as_of": row[8], "created_at": _time(row[9]),
                         "created_by": row[10], "voided_at": _time(row[11]), "void_reason": row[12],
                         "voided_by": row[13], "pace_from_reviewed": int(row[14]),
                         "pace_from_served": int(row[15])}


STATES = {"topic": topic_state, "queue": queue_state, "sample": sample_state, "stream": stream_state}
TABLES = {"topic": "topics", "queue": "queues", "sample": "samples", "stream": "audit_streams"}


def canonical_state(state: dict[str, Any]) -> str:
    return json.dumps(state, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


StateReader = Callable[[Connection, int], "tuple[str, dict[str, Any]] | None"]
# the states as migration 0019 read them (it runs before ``topic_protocols`` exists)
STATES_V1: dict[str, StateReader] = {**STATES, "topic": topic_state_v1}


def record_evidence(conn: Connection, events: Iterable[tuple[str, int, str]], now: datetime,
                    states: Mapping[str, StateReader] | None = None) -> None:
    """Chain ``(kind, object_id, action)`` events, each with the object's state as it is now in this transaction
    (call it after the object's rows are written). Takes the evidence chain's lock: call it late in the
    transaction, so writers of other topics wait for it only briefly. ``states``: the state readers (a
    migration passes the ones of its schema; default `STATES`)."""
    wanted = list(events)
    if not wanted:
        return
    readers = STATES if states is None else states
    built = []
    for kind, object_id, action in wanted:
        found = readers[kind](conn, object_id)
        if found is None:
            raise LookupError(f"{kind} {object_id} is not stored")
        built.append((kind, object_id, action, found[0], canonical_state(found[1])))
    length, head = conn.execute(text(
        "UPDATE evidence_chain SET length = length + :n WHERE id = 1 RETURNING length, head"),
        {"n": len(built)}).one()
    seq = int(length) - len(built)
    recorded = canonical_time(now)
    rows = []
    for kind, object_id, action, topic, state in built:
        seq += 1
        head = event_hash(str(head), seq, kind, object_id, topic, action, recorded, state)
        rows.append({"seq": seq, "kind": kind, "object_id": object_id, "topic": topic, "action": action,
                     "state": state, "recorded_at": now, "chain_hash": head})
    conn.execute(text("INSERT INTO evidence_events (seq, kind, object_id, topic, action, state, recorded_at, "
                      "chain_hash) VALUES (:seq, :kind, :object_id, :topic, :action, :state, :recorded_at, "
                      ":chain_hash)"), rows)
    conn.execute(text("UPDATE evidence_chain SET head = :head WHERE id = 1"), {"head": head})


def lock_evidence(conn: Connection) -> None:
    """Take the evidence chain's lock now, for the rest of the transaction. Writers take it before any topic's
    judgment-chain lock (`reviewdepth.store.chain.append_judgments`): an import chains its topics and queues
    before it appends judgments, so a writer that appends judgments first and chains afterwards (a sample's
    void) takes this lock first, and two writers never wait for each other in opposite orders."""
    conn.execute(text("UPDATE evidence_chain SET length = length WHERE id = 1"))


def evidence_head(conn: Connection) -> tuple[int, str]:
    """The evidence chain's recorded length and head (0 and the genesis before any event)."""
    row = conn.execute(text("SELECT length, head FROM evidence_chain WHERE id = 1")).first()
    if row is None:
        return 0, evidence_genesis()
    return int(row[0]), str(row[1])


@dataclass(frozen=True)
class EvidenceProblem:
    """One altered, missing or unchained object, or one break of the evidence chain (``topic`` None)."""

    topic: str | None
    message: str


@dataclass
class EvidenceCheck:
    events: int
    head: str
    problems: list[EvidenceProblem] = field(default_factory=list)
    chained_topics: set[str] = field(default_factory=set)

    @property
    def intact(self) -> bool:
        return not self.problems

    def for_topic(self, topic: str | None) -> list[EvidenceProblem]:
        return [p for p in self.problems if topic is None or p.topic is None or p.topic == topic]


_NAMES = {"topic": "topic", "queue": "queue", "sample": "sample", "stream": "audit stream"}
_FIELD_WORDS = {"ranking": "ranking entries", "ranking_index": "ranking index", "entries": "number of entries",
                "drawn_documents": "drawn documents", "drawn_count": "number of drawn documents",
                "every_k": "pace (every K)", "rate": "pace (rate)"}
_PLURAL = {"ranking", "drawn_documents"}
_WHAT = {"queue": "chained ranking", "sample": "chained draw", "stream": "chained stream", "topic": "chained topic"}


def _label(kind: str, object_id: int, topic: str, state: dict[str, Any] | None) -> str:
    if kind == "topic":
        return f"topic {topic}"
    name = f" {state['name']!r}" if kind == "queue" and state else ""
    return f"{_NAMES[kind]} {object_id}{name} of topic {topic}"


def verify_evidence(conn: Connection) -> EvidenceCheck:
    """Recompute the evidence chain and compare every chained object with its live rows (module docstring). On a
    schema before 0020 (no ``topic_protocols``: a store between migrations) topics are read as 0019 chained them."""
    from sqlalchemy import inspect

    states = STATES if inspect(conn).has_table("topic_protocols") else STATES_V1
    length, stored_head = evidence_head(conn)
    check = EvidenceCheck(length, stored_head)
    problems = check.problems
    head = evidence_genesis()
    expected = 1
    latest: dict[tuple[str, int], tuple[int, str, str]] = {}
    broken = False
    result = conn.execute(text("SELECT seq, kind, object_id, topic, action, state, recorded_at, chain_hash "
                               "FROM evidence_events ORDER BY seq").columns(recorded_at=DateTime(timezone=True)))
    for seq, kind, object_id, topic, action, state, recorded_at, chain_hash in result:
        seq, object_id = int(seq), int(object_id)
        check.chained_topics.add(str(topic))
        if seq != expected and not broken:
            problems.append(EvidenceProblem(None, f"evidence event(s) {expected}–{seq - 1} are missing from the "
                                                  "chain: they were deleted"))
            broken = True
        link = event_hash(head, seq, kind, object_id, topic, action, canonical_time(recorded_at), state)
        if link != chain_hash and not broken:
            problems.append(EvidenceProblem(topic, f"evidence event {seq} ({kind} {object_id} of topic {topic}) "
                                                   "does not match its chain hash: it was changed"))
            broken = True
        # after a break, go on from the stored hash so that later objects are still compared with their events
        head = str(chain_hash)
        expected = seq + 1
        latest[(kind, object_id)] = (seq, str(topic), str(state))
    if expected - 1 != length or head != stored_head:
        if not broken:
            problems.append(EvidenceProblem(None, f"the evidence chain's recorded head (length {length}) is not its "
                                                  f"last event ({expected - 1}): events were deleted or added"))
    check.head = head
    chained_ids: dict[str, set[int]] = {k: set() for k in KINDS}
    for (kind, object_id), (seq, topic, state_text) in latest.items():
        chained_ids[kind].add(object_id)
        chained = json.loads(state_text)
        live = states[kind](conn, object_id)
        label = _label(kind, object_id, topic, chained)
        if live is None:
            problems.append(EvidenceProblem(topic, f"{label} (chained at event {seq}) is missing"))
            continue
        live_topic, live_state = live
        differ = sorted(k for k in set(chained) | set(live_state) if chained.get(k) != live_state.get(k))
        if live_topic != topic and kind != "topic":
            differ.insert(0, "topic")
        if differ:
            words = ", ".join(_FIELD_WORDS.get(k, k) for k in differ)
            plural = len(differ) > 1 or differ[0] in _PLURAL
            problems.append(EvidenceProblem(topic, f"{label}: {words} differ{'' if plural else 's'} "
                                                   f"from the {_WHAT[kind]} (event {seq})"))
    for kind in KINDS:
        table = TABLES[kind]
        join = "" if kind == "topic" else " JOIN topics t ON t.id = x.topic_id"
        name = "x.name" if kind == "topic" else "t.name"
        for object_id, topic in conn.execute(text(f"SELECT x.id, {name} FROM {table} x{join} ORDER BY x.id")):
            if int(object_id) not in chained_ids[kind]:
                label = _label(kind, int(object_id), str(topic), None)
                problems.append(EvidenceProblem(str(topic), f"{label} is not in the evidence chain: it was stored "
                                                            "behind the application's back"))
    return check


def event_at(conn: Connection, seq: int) -> str | None:
    """The chain hash of evidence event ``seq`` (None when there is none)."""
    found = conn.execute(text("SELECT chain_hash FROM evidence_events WHERE seq = :seq"), {"seq": seq}).first()
    return None if found is None else str(found[0])


def backfill(conn: Connection, now: datetime) -> int:
    """Chain every stored object (migration 0019): topics, queues, samples, audit streams, each by id, with the
    states of that schema (`STATES_V1`)."""
    events: list[tuple[str, int, str]] = []
    for kind in KINDS:
        ids = conn.execute(text(f"SELECT id FROM {TABLES[kind]} ORDER BY id")).scalars()
        events.extend((kind, int(i), "found") for i in ids)
    record_evidence(conn, events, now, STATES_V1)
    return len(events)


def unchain_protocols(conn: Connection, now: datetime) -> int:
    """Before ``topic_protocols`` is dropped (migration 0020's downgrade): chain each topic that has protocol fields
    again in its state without them (action ``downgraded``), so the chain still verifies on the older schema and
    its history keeps the fields the topic had."""
    ids = [int(i) for i in conn.execute(text("SELECT topic_id FROM topic_protocols ORDER BY topic_id")).scalars()]
    record_evidence(conn, [("topic", i, "downgraded") for i in ids], now, STATES_V1)
    return len(ids)


def chain_object(conn: Connection, kind: str, object_id: int, action: str = "created") -> None:
    """`record_evidence` of one object, now: what each write path calls once the object's rows are written."""
    from reviewdepth.store.ingest import utc_now

    record_evidence(conn, [(kind, object_id, action)], utc_now())
