"""20 clients post 500 judgments each into one topic through a running server (uvicorn on 127.0.0.1), on SQLite
and PostgreSQL: afterwards exactly 10,000 rows, none lost, none doubled, even with retried requests."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from sqlalchemy import Engine, func, select

from reviewdepth.services.admin.keys import create_key
from reviewdepth.services.admin.topics import create_topic
from reviewdepth.store.chain import verify_topic
from reviewdepth.store.models import Judgment

from .server import running_server

CLIENTS = 20
PER_CLIENT = 500
SINGLES = 50  # the first judgments one per request, the rest in batches
BATCH = 50


def client_work(base: str, secret: str, client: int) -> list[int]:
    headers = {"Authorization": f"Bearer {secret}"}
    docs = [f"c{client:02d}-d{j:03d}" for j in range(PER_CLIENT)]
    requests: list[tuple[str, list[str]]] = [(f"single-{j}", [d]) for j, d in enumerate(docs[:SINGLES])]
    requests += [(f"batch-{s}", docs[s:s + BATCH]) for s in range(SINGLES, PER_CLIENT, BATCH)]
    ids: list[int] = []
    with httpx.Client(base_url=base, headers=headers, timeout=60.0) as http:
        for number, (key, batch) in enumerate(requests):
            body = {"judgments": [{"doc_id": d, "label": "1" if hash(d) % 3 == 0 else "0"} for d in batch],
                    "idempotency_key": key, "allow_unqueued": True}
            response = http.post("/topics/shared/judgments", json=body)
            assert response.status_code == 201, response.text
            ids += response.json()["ids"]
            if number % 10 == 0:  # a client retrying after a lost response: same key, nothing new
                again = http.post("/topics/shared/judgments", json=body)
                assert again.status_code == 201 and again.json()["ids"] == response.json()["ids"]
    return ids


@pytest.mark.stress
def test_concurrent_clients_lose_and_double_nothing(engine: Engine, empty_db_url: str, tmp_path: Path) -> None:
    create_topic(engine, "shared")
    secrets = [create_key(engine, f"reviewer-{i:02d}", "write")[1] for i in range(CLIENTS)]
    with running_server(empty_db_url, tmp_path) as base, ThreadPoolExecutor(CLIENTS) as pool:
        results = list(pool.map(lambda i: client_work(base, secrets[i], i), range(CLIENTS)))
    all_ids = [i for ids in results for i in ids]
    assert len(all_ids) == CLIENTS * PER_CLIENT and len(set(all_ids)) == CLIENTS * PER_CLIENT
    with engine.connect() as conn:
        rows = conn.execute(select(Judgment.id, Judgment.reviewer, Judgment.doc_id)).all()
        assert conn.execute(select(func.count()).select_from(Judgment)).scalar_one() == CLIENTS * PER_CLIENT
    assert sorted(r[0] for r in rows) == sorted(all_ids)
    pairs = {(r[1], r[2]) for r in rows}
    assert len(pairs) == CLIENTS * PER_CLIENT
    expected = {(f"reviewer-{c:02d}", f"c{c:02d}-d{j:03d}") for c in range(CLIENTS) for j in range(PER_CLIENT)}
    assert pairs == expected


@pytest.mark.stress
def test_two_workers_share_the_writes(engine: Engine, empty_db_url: str, tmp_path: Path) -> None:
    """Two server processes (on SQLite they queue their inline writes on the write-gate file lock): 8 clients,
    none lost, none doubled, the topic's hash chain intact."""
    create_topic(engine, "shared")
    secrets = [create_key(engine, f"reviewer-{i:02d}", "write")[1] for i in range(8)]

    def work(client: int) -> list[int]:
        ids: list[int] = []
        with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {secrets[client]}"},
                          timeout=60.0) as http:
            for j in range(40):
                batch = [{"doc_id": f"c{client}-d{j}-{k}", "label": "1"} for k in range(1 + j % 3)]
                response = http.post("/topics/shared/judgments", json={"judgments": batch, "allow_unqueued": True})
                assert response.status_code == 201, response.text
                ids += response.json()["ids"]
        return ids

    with running_server(empty_db_url, tmp_path, workers=2) as base, ThreadPoolExecutor(8) as pool:
        all_ids = [i for ids in pool.map(work, range(8)) for i in ids]
    expected = 8 * sum(1 + j % 3 for j in range(40))
    assert len(all_ids) == len(set(all_ids)) == expected
    with engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(Judgment)).scalar_one() == expected
        topic_id = conn.execute(select(Judgment.topic_id).limit(1)).scalar_one()
        assert verify_topic(conn, topic_id).intact
