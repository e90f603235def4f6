"""Idempotency records expire: within ``idempotency_ttl_seconds`` the same key replays (and a different body is
409); once the record is older, the key is new (the batch is recorded again, a different body is accepted);
0 or None keeps records for ever. The record's age is set in the database, as time passing would."""

from __future__ import annotations

from datetime import timedelta

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine, func, select, update

from reviewdepth.api import ApiSettings, create_app
from reviewdepth.services.admin.keys import create_key
from reviewdepth.services.admin.topics import create_topic
from reviewdepth.services.errors import Conflict
from reviewdepth.services.files.rankings import RankedDocument, store_ranking
from reviewdepth.services.review.batches import BatchItem, record_batch
from reviewdepth.store.ingest import utc_now
from reviewdepth.store.models import ApiIdempotency, Judgment

HOUR = 3600.0


def age_records(engine: Engine, seconds: float) -> None:
    with engine.begin() as conn:
        conn.execute(update(ApiIdempotency).values(created_at=utc_now() - timedelta(seconds=seconds)))


def judgment_count(engine: Engine) -> int:
    with engine.connect() as conn:
        return int(conn.execute(select(func.count()).select_from(Judgment)).scalar_one())


@pytest.fixture
def topic(engine: Engine) -> str:
    create_topic(engine, "t")
    store_ranking(engine, "t", "q", [RankedDocument(f"d{i}", None) for i in range(5)])
    return "t"


def test_a_record_replays_until_it_expires(engine: Engine, topic: str) -> None:
    batch = [BatchItem("d1", "1"), BatchItem("d2", "0")]
    other = [BatchItem("d3", "1")]

    def send(items: list[BatchItem], ttl: float | None = HOUR) -> tuple[list[int], bool]:
        result = record_batch(engine, topic, items, reviewer="ana", idempotency_key="k", idempotency_ttl_seconds=ttl)
        return result.ids, result.replayed

    first, replayed = send(batch)
    assert not replayed and judgment_count(engine) == 2
    assert send(batch) == (first, True)
    age_records(engine, HOUR - 60)  # a minute before expiry: still remembered
    assert send(batch) == (first, True)
    with pytest.raises(Conflict, match="already used"):
        send(other)
    age_records(engine, HOUR + 60)  # expired: the key is new, the batch is recorded again
    second, replayed = send(batch)
    assert not replayed and set(second).isdisjoint(first) and judgment_count(engine) == 4
    assert send(batch) == (second, True)  # and remembered again from now on
    age_records(engine, HOUR + 60)
    third, replayed = send(other)  # an expired key may carry another request
    assert not replayed and judgment_count(engine) == 5
    with engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(ApiIdempotency)).scalar_one() == 1
    age_records(engine, 1000 * HOUR)
    for forever in (None, 0):
        assert send(other, forever) == (third, True)


def test_the_api_setting(engine: Engine, empty_db_url: str, topic: str) -> None:
    app = create_app(ApiSettings(database_url=empty_db_url, idempotency_ttl_seconds=60))
    with TestClient(app) as client:
        client.headers["Authorization"] = f"Bearer {create_key(engine, 'ana', 'write')[1]}"
        body = {"judgments": [{"doc_id": "d1", "label": "1"}], "idempotency_key": "retry-1"}
        first = client.post("/topics/t/judgments", json=body)
        again = client.post("/topics/t/judgments", json=body)
        assert first.status_code == again.status_code == 201 and again.headers["idempotent-replayed"] == "true"
        age_records(engine, 61)
        late = client.post("/topics/t/judgments", json=body)
        assert late.status_code == 201 and "idempotent-replayed" not in late.headers
        assert late.json()["ids"] != first.json()["ids"] and judgment_count(engine) == 2
