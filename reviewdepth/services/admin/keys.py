"""API keys: create (the secret is shown once, only its SHA-256 digest is stored), list, revoke, authenticate."""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable

from sqlalchemy import Engine, insert, select, update

from reviewdepth.services.errors import Invalid, NotFound
from reviewdepth.services.evidence.access import SCOPES, KeyRecord
from reviewdepth.store import validation
from reviewdepth.store.ingest import utc_now
from reviewdepth.store.models import ApiKey
from reviewdepth.store.table_changes import TableChanges

# ordered: each scope allows what the ones before it allow; `adjudicate` adds recording adjudications, `admin`
# everything (voiding samples, ...)
KEY_PREFIX = "rd_"
_SHOWN = 10  # characters of the key kept in clear (prefix) to tell keys apart


def key_digest(secret: str) -> str:
    """SHA-256 of the key text. Keys carry 256 random bits, so a fast digest is enough (no guessing attack)."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def _record(row: ApiKey) -> KeyRecord:
    return KeyRecord(int(row.id), row.reviewer, row.scope, row.prefix, row.created_at, row.revoked_at)


def create_key(engine: Engine, reviewer: str, scope: str = "write") -> tuple[KeyRecord, str]:
    """Store a new key for ``reviewer``; returns the record and the secret (shown once, never stored)."""
    if scope not in SCOPES:
        raise Invalid(f"scope must be one of {', '.join(SCOPES)}, not {scope!r}")
    if not reviewer.strip():
        raise Invalid("reviewer must not be empty")
    reviewer = validation.reviewer_name(reviewer.strip())
    secret = KEY_PREFIX + secrets.token_urlsafe(32)
    now = utc_now()
    with engine.begin() as conn:
        new_id = conn.execute(insert(ApiKey).values(
            reviewer=reviewer.strip(), scope=scope, prefix=secret[:_SHOWN], digest=key_digest(secret),
            created_at=now).returning(ApiKey.id)).scalar_one()
    return KeyRecord(int(new_id), reviewer.strip(), scope, secret[:_SHOWN], now, None), secret


def list_keys(engine: Engine, *, include_revoked: bool = True) -> list[KeyRecord]:
    stmt = select(ApiKey).order_by(ApiKey.id)
    if not include_revoked:
        stmt = stmt.where(ApiKey.revoked_at.is_(None))
    from sqlalchemy.orm import Session

    with Session(engine) as session:
        return [_record(r) for r in session.execute(stmt).scalars()]


def revoke_key(engine: Engine, key_id: int) -> KeyRecord:
    """Mark a key revoked (kept for the record); revoking twice keeps the first time."""
    with engine.begin() as conn:
        found = conn.execute(select(ApiKey.id, ApiKey.revoked_at).where(ApiKey.id == key_id)).first()
        if found is None:
            raise NotFound(f"no API key with id {key_id}")
        if found[1] is None:
            conn.execute(update(ApiKey).where(ApiKey.id == key_id).values(revoked_at=utc_now()))
    return next(k for k in list_keys(engine) if k.id == key_id)


def authenticate(engine: Engine, secret: str) -> KeyRecord | None:
    """The stored key whose digest matches ``secret`` (revoked ones too: callers say which failure), or None."""
    with engine.connect() as conn:
        row = conn.execute(select(ApiKey.id, ApiKey.reviewer, ApiKey.scope, ApiKey.prefix, ApiKey.created_at,
                                  ApiKey.revoked_at).where(ApiKey.digest == key_digest(secret))).first()
    if row is None:
        return None
    return KeyRecord(int(row[0]), row[1], row[2], row[3], row[4], row[5])


def key_changes(changed: Callable[[], None]) -> TableChanges:
    """Calls ``changed()`` when a key is revoked or changed in this process (once `watch` is called): what a
    cache of verified keys needs to refuse a revoked key from the next request on."""
    return TableChanges(ApiKey.__tablename__, changed)
