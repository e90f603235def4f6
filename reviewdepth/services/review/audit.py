"""``audit``: recompute each topic's judgment hash chain and name the first broken row; print the head to keep
outside the database (an anchor) and prove later that the log still extends it; acknowledge a broken chain.

An anchor is one line, safe to paste into a ticket or an e-mail::

    reviewdepth-chain-head v1 topic=<topic, percent-encoded> seq=<n> hash=<64 hex digits> recorded_at=<ISO 8601>
        evidence_seq=<n> evidence_hash=<64 hex digits>

(one line; `format_anchor`; ``--format json`` gives the same fields as JSON). `parse_anchor` reads either form, or
a bare hash. The ``evidence_`` fields are the head of the store's evidence chain (`reviewdepth.store.evidence`:
topics, rankings, sample draws, audit streams); an anchor taken before they existed has none and proves the
judgment log only.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, unquote

from sqlalchemy import Connection, Engine, select, update
from sqlalchemy.exc import DBAPIError

from reviewdepth.services.errors import Conflict, Invalid, NotFound
from reviewdepth.services.review.judgments import topic_id_of
from reviewdepth.store import validation
from reviewdepth.store.chain import (
    ChainCheck,
    acknowledge,
    acknowledged_text,
    chain_head_at,
    check_anchor,
    verify_topic,
)
from reviewdepth.store.evidence import EvidenceCheck, event_at, evidence_head, verify_evidence
from reviewdepth.store.ingest import utc_now
from reviewdepth.store.models import Topic

ANCHOR_TAG = "reviewdepth-chain-head v1"
_HASH = re.compile(r"[0-9a-f]{64}")


def verify_chains(engine: Engine, topic: str | None = None) -> list[ChainCheck]:
    """One check per topic (every topic when ``topic`` is None), in name order. A topic found broken is flagged
    (``topics.chain_broken``): its writes are refused until `acknowledge_chain`."""
    with engine.connect() as conn:
        if topic is not None:
            ids = [topic_id_of(engine, topic)]
        else:
            ids = [int(i) for i in conn.execute(select(Topic.id).order_by(Topic.name)).scalars()]
        checks = [(topic_id, verify_topic(conn, topic_id)) for topic_id in ids]
    broken = [(topic_id, c) for topic_id, c in checks if c.broken is not None]
    if broken:
        try:
            with engine.begin() as conn:
                for topic_id, c in broken:
                    assert c.broken is not None
                    conn.execute(update(Topic).where(Topic.id == topic_id, Topic.chain_broken.is_(None))
                                 .values(chain_broken=c.broken.reason))
        except DBAPIError:  # an auditor's read-only connection still gets the verdict; the flag waits for a writer
            pass
    return [c for _, c in checks]


@dataclass(frozen=True)
class Anchor:
    """A head kept outside the database: the topic (None when only a hash was given), seq and hash."""

    topic: str | None
    seq: int | None
    hash: str
    recorded_at: str | None = None
    evidence_seq: int | None = None
    evidence_hash: str | None = None


def topic_head(engine: Engine, topic: str) -> Anchor:
    """The topic's current head (its recorded length and head hash, and the time of its last entry)."""
    topic_id = topic_id_of(engine, topic)
    head = chain_head_at(engine, topic_id)
    with engine.connect() as conn:
        evidence_seq, evidence = evidence_head(conn)
    return Anchor(validation.topic_name(topic), int(str(head["seq"])), str(head["hash"]),
                  None if head["recorded_at"] is None else str(head["recorded_at"]), evidence_seq, evidence)


def format_anchor(anchor: Anchor) -> str:
    evidence = ("" if anchor.evidence_seq is None else
                f" evidence_seq={anchor.evidence_seq} evidence_hash={anchor.evidence_hash}")
    return (f"{ANCHOR_TAG} topic={quote(anchor.topic or '', safe='')} seq={anchor.seq} hash={anchor.hash} "
            f"recorded_at={anchor.recorded_at or '-'}{evidence}")


def anchor_dict(anchor: Anchor) -> dict[str, object]:
    return {"format": ANCHOR_TAG, "topic": anchor.topic, "seq": anchor.seq, "hash": anchor.hash,
            "recorded_at": anchor.recorded_at, "evidence_seq": anchor.evidence_seq,
            "evidence_hash": anchor.evidence_hash}


def _evidence_fields(value: str, seq: object, digest: object) -> tuple[int | None, str | None]:
    """An anchor's optional evidence head; both or neither."""
    if seq is None and digest is None:
        return None, None
    if isinstance(seq, str) and seq.isascii() and seq.isdigit():
        seq = int(seq)
    if (isinstance(seq, bool) or not isinstance(seq, int) or seq < 0 or not isinstance(digest, str)
            or not _HASH.fullmatch(digest)):
        raise Invalid(f"{value}: the anchor's evidence head needs evidence_seq=<n> and evidence_hash=<64 hex digits>")
    return seq, digest


def parse_anchor(value: str) -> Anchor:
    """``--head``: a 64-hex-digit hash, or a file holding an anchor line or its JSON (the first anchor found)."""
    text = value.strip()
    if _HASH.fullmatch(text.lower()):
        return Anchor(None, None, text.lower())
    path = Path(value)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise Invalid(f"--head: neither a 64-hex-digit hash nor a readable anchor file ({exc})") from None
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, list) and data:
        data = data[0]
    if isinstance(data, dict) and isinstance(data.get("hash"), str) and _HASH.fullmatch(data["hash"]):
        seq = data.get("seq")
        if seq is not None and (isinstance(seq, bool) or not isinstance(seq, int) or seq < 0):
            raise Invalid(f"{value}: seq must be a non-negative integer")
        return Anchor(data.get("topic"), seq, data["hash"], data.get("recorded_at"),
                      *_evidence_fields(value, data.get("evidence_seq"), data.get("evidence_hash")))
    for line in text.splitlines():
        if not line.startswith(ANCHOR_TAG):
            continue
        fields = dict(part.split("=", 1) for part in line[len(ANCHOR_TAG):].split() if "=" in part)
        digest, seq_text = fields.get("hash", ""), fields.get("seq", "")
        if not _HASH.fullmatch(digest) or not (seq_text.isascii() and seq_text.isdigit()):
            raise Invalid(f"{value}: the anchor line needs seq=<n> and hash=<64 hex digits>")
        return Anchor(unquote(fields["topic"]) if "topic" in fields else None, int(seq_text), digest,
                      fields.get("recorded_at"),
                      *_evidence_fields(value, fields.get("evidence_seq"), fields.get("evidence_hash")))
    raise Invalid(f"{value}: no anchor found (a line starting {ANCHOR_TAG!r}, its JSON, or a bare hash)")


@dataclass(frozen=True)
class AnchorCheck:
    """Whether the log still extends an anchored head, and the full chain check made with it."""

    anchor: Anchor
    seq: int
    extends: bool
    reason: str | None
    check: ChainCheck | None  # None: the topic is gone
    evidence: list[str]  # the topic's altered, missing or unchained objects, and breaks of the evidence chain

    def as_dict(self) -> dict[str, object]:
        return {"anchor": anchor_dict(self.anchor), "seq": self.seq, "extends": self.extends, "reason": self.reason,
                "chain": None if self.check is None else self.check.as_dict(), "evidence": self.evidence}


def verify_store_evidence(engine: Engine) -> EvidenceCheck:
    """The evidence chain recomputed and every chained topic, queue, sample and audit stream compared with its
    live rows (`reviewdepth.store.evidence.verify_evidence`)."""
    with engine.connect() as conn:
        return verify_evidence(conn)


def _evidence_reason(conn: Connection, anchor: Anchor) -> str | None:
    """Why the evidence chain no longer extends the anchor's evidence head (None: it does, or none anchored)."""
    if anchor.evidence_seq is None or anchor.evidence_hash is None or anchor.evidence_seq == 0:
        return None
    stored = event_at(conn, anchor.evidence_seq)
    if stored is None:
        return (f"the evidence chain no longer holds event {anchor.evidence_seq}, the anchored evidence head: "
                "events were deleted")
    if stored != anchor.evidence_hash:
        return (f"evidence event {anchor.evidence_seq} carries hash {stored[:16]}…, not the anchored "
                f"{anchor.evidence_hash[:16]}…: the evidence chain was rewritten and re-sealed")
    return None


def verify_against(engine: Engine, topic: str, anchor: Anchor) -> AnchorCheck:
    """Prove that ``topic``'s log still extends ``anchor``: the judgment at the anchored seq carries the anchored
    hash, and the chain up to it recomputes without a break (breaks acknowledged before the anchor excepted).
    Detects a deleted tail (even with the head copied back), an emptied topic, a re-sealed log (every hash
    recomputed after an edit, by hand or by `db downgrade` then `db upgrade`)."""
    if anchor.topic is not None and validation.topic_name(anchor.topic) != validation.topic_name(topic):
        raise Invalid(f"--head: the anchor is of topic {anchor.topic!r}, not {topic!r}")
    topic = validation.topic_name(topic)
    with engine.connect() as conn:
        evidence = verify_evidence(conn)
        problems = [p.message for p in evidence.for_topic(topic)]
        evidence_reason = _evidence_reason(conn, anchor)
        if evidence_reason is not None:
            problems.insert(0, evidence_reason)
    try:
        topic_id = topic_id_of(engine, topic)
    except NotFound:
        if topic not in evidence.chained_topics and evidence_reason is None:
            raise
        return AnchorCheck(anchor, -1, False, problems[0] if problems else f"topic {topic!r} is missing", None,
                           problems)
    with engine.connect() as conn:
        seq, reason = check_anchor(conn, topic_id, anchor.seq, anchor.hash)
        check = verify_topic(conn, topic_id, strict_through=max(seq, 0))
    if reason is None:
        early = [b for b in check.breaks if b.seq is not None and b.judgment_id is not None and b.seq <= seq]
        if early:
            reason = f"the log changed at or before the anchored seq {seq}: {early[0].reason}"
    if reason is None and problems:
        reason = problems[0]
    return AnchorCheck(anchor, seq, reason is None, reason, check, problems)


def acknowledge_chain(engine: Engine, topic: str, *, reason: str, reviewer: str) -> tuple[ChainCheck, int, str]:
    """Record an admin's acceptance of ``topic``'s broken chain as it is now (one transaction): the breaks a
    full check finds are listed in the acknowledgement, which is linked into the chain and becomes the head;
    the broken flag is cleared and writes are accepted again. Refused when the chain is intact (`Conflict`).
    Returns the check that was acknowledged, the accepted length and the new head."""
    reason = validation.free_text(reason.strip(), "reason")
    if not reason:
        raise Invalid("reason: say why the broken chain is accepted (it is kept in the chain)")
    reviewer = validation.reviewer_name(reviewer)
    topic_id = topic_id_of(engine, topic)
    with engine.begin() as conn:
        check = verify_topic(conn, topic_id)
        flagged = conn.execute(select(Topic.chain_broken).where(Topic.id == topic_id)).scalar_one()
        if check.broken is None and flagged is None:
            raise Conflict(f"the judgment chain of topic {topic!r} is intact: nothing to acknowledge")
        seq, head = acknowledge(conn, topic_id, reason=reason, reviewer=reviewer, broken=acknowledged_text(check),
                                now=utc_now())
    return check, seq, head
