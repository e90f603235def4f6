"""The per-application cache of verified API keys (`reviewdepth.api.auth.KeyCache`): a key revoked in the
server's process is refused at once; one revoked behind SQLAlchemy's back (as another process would) at most
``REVIEWDEPTH_KEY_CACHE_SECONDS`` later; 0 turns the cache off. Time is a fake clock: no sleeps, no timings."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from reviewdepth.api import ApiSettings, create_app
from reviewdepth.api.key_cache import KeyCache
from reviewdepth.services.admin.keys import create_key, revoke_key
from reviewdepth.services.evidence.access import KeyRecord

from .test_auth_and_errors import problem


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def cached_client(engine: Engine, empty_db_url: str, clock: Clock) -> Iterator[TestClient]:
    """A client of an app whose key cache trusts a verified key for 60 s of ``clock``."""
    app = create_app(ApiSettings(database_url=empty_db_url))
    app.state.key_cache = KeyCache(60, clock=clock)
    with TestClient(app) as client:
        yield client


def revoke_unseen(engine: Engine, key_id: int) -> None:
    """Revoke through a raw DBAPI cursor, which SQLAlchemy's events do not see: as ``reviewdepth keys revoke``
    in another process would."""
    raw = engine.raw_connection()
    try:
        cursor = raw.cursor()
        cursor.execute(f"UPDATE api_keys SET revoked_at = CURRENT_TIMESTAMP WHERE id = {int(key_id)}")
        cursor.close()
        raw.commit()
    finally:
        raw.close()


def bearer(secret: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {secret}"}


def test_revoked_in_process_is_refused_at_once(engine: Engine, cached_client: TestClient) -> None:
    record, secret = create_key(engine, "ana", "write")
    assert cached_client.get("/whoami", headers=bearer(secret)).status_code == 200  # now cached for 60 s
    revoke_key(engine, record.id)
    problem(cached_client.get("/whoami", headers=bearer(secret)), 401, "revoked")
    problem(cached_client.post("/topics/t/judgments", json={"judgments": [{"doc_id": "d", "label": "1"}]},
                               headers=bearer(secret)), 401, "revoked")


def test_revoked_elsewhere_is_refused_when_the_entry_expires(engine: Engine, cached_client: TestClient,
                                                             clock: Clock) -> None:
    record, secret = create_key(engine, "ana", "read")
    other_record, other = create_key(engine, "bob", "read")
    assert cached_client.get("/whoami", headers=bearer(secret)).status_code == 200
    clock.now += 30
    revoke_unseen(engine, record.id)
    revoke_unseen(engine, other_record.id)
    # the documented window: verified 30 s ago, still trusted until 60 s after verification
    assert cached_client.get("/whoami", headers=bearer(secret)).status_code == 200
    # never cached, so looked up: refused at once
    problem(cached_client.get("/whoami", headers=bearer(other)), 401, "revoked")
    clock.now += 30
    problem(cached_client.get("/whoami", headers=bearer(secret)), 401, "revoked")


def test_zero_seconds_looks_every_key_up(engine: Engine, empty_db_url: str) -> None:
    app = create_app(ApiSettings(database_url=empty_db_url, key_cache_seconds=0))
    with TestClient(app) as client:
        record, secret = create_key(engine, "ana", "read")
        assert client.get("/whoami", headers=bearer(secret)).status_code == 200
        revoke_unseen(engine, record.id)
        problem(client.get("/whoami", headers=bearer(secret)), 401, "revoked")


def test_unknown_keys_are_not_cached(engine: Engine, cached_client: TestClient) -> None:
    problem(cached_client.get("/whoami", headers=bearer("rd_unknown")), 401, "unknown API key")
    _, secret = create_key(engine, "ana", "read")
    assert cached_client.get("/whoami", headers=bearer(secret)).json()["reviewer"] == "ana"


def record(active: bool = True) -> KeyRecord:
    moment = datetime(2026, 1, 1, tzinfo=UTC)
    return KeyRecord(1, "ana", "write", "rd_abcdefg", moment, None if active else moment)


def test_a_lookup_that_overlapped_a_change_is_not_cached(clock: Clock) -> None:
    cache = KeyCache(60, clock=clock)
    started = cache.generation
    cache.invalidate()  # an UPDATE of api_keys ran (or its connection came back) while the lookup ran
    cache.put("digest", record(), started)
    assert cache.get("digest") is None
    cache.put("digest", record(), cache.generation)
    assert cache.get("digest") == record()
    clock.now += 60
    assert cache.get("digest") is None


def test_revoked_records_and_disabled_caches_store_nothing(clock: Clock) -> None:
    cache = KeyCache(60, clock=clock)
    cache.put("digest", record(active=False), cache.generation)
    assert cache.get("digest") is None
    off = KeyCache(0, clock=clock)
    off.put("digest", record(), off.generation)
    assert off.get("digest") is None


def test_the_cache_is_bounded(clock: Clock) -> None:
    cache = KeyCache(60, max_entries=3, clock=clock)
    for i in range(10):
        cache.put(f"d{i}", record(), cache.generation)
    assert sum(cache.get(f"d{i}") is not None for i in range(10)) <= 3
    assert cache.get("d9") is not None
