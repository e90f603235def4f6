"""Who may do what: the scopes of an API key, in rising order, and a stored key as every use case that checks a
caller's scope sees it (the keys themselves are made and revoked by `reviewdepth.services.admin.keys`)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from reviewdepth.store.ingest import as_utc

SCOPES = ("read", "write", "adjudicate", "admin")
ADJUDICATE = "adjudicate"
ADMIN = "admin"


@dataclass(frozen=True)
class KeyRecord:
    """A stored key (never its secret)."""

    id: int
    reviewer: str
    scope: str
    prefix: str
    created_at: datetime
    revoked_at: datetime | None

    @property
    def active(self) -> bool:
        return self.revoked_at is None

    def allows(self, needed: str) -> bool:
        """``read`` < ``write`` < ``adjudicate`` < ``admin``."""
        return SCOPES.index(self.scope) >= SCOPES.index(needed)

    def as_dict(self) -> dict[str, object]:
        return {"id": self.id, "reviewer": self.reviewer, "scope": self.scope, "prefix": self.prefix,
                "created_at": as_utc(self.created_at).isoformat(),
                "revoked_at": None if self.revoked_at is None else as_utc(self.revoked_at).isoformat()}
