"""The audit stream over HTTP: ``POST/GET /topics/{topic}/samples/stream``, ``POST .../samples/stream/void`` and
``POST /topics/{topic}/next``: scopes, 404/409/422 problems naming the field with nothing stored, and judgments
with role ``audit``."""

from __future__ import annotations

from sqlalchemy import func, select

from reviewdepth.store.models import AuditStream

from .conftest import Api
from .test_auth_and_errors import problem, seeded


def stream_count(api: Api) -> int:
    with api.engine.connect() as conn:
        return int(conn.execute(select(func.count()).select_from(AuditStream)).scalar_one())


def test_create_read_serve_and_void(api: Api) -> None:
    client = api.client
    ana = seeded(api)  # topic t, queue q of d0..d19
    reader = api.new_key("rita", "read")
    problem(client.get("/topics/t/samples/stream", headers=ana), 404, "no audit stream")
    problem(client.post("/topics/t/samples/stream", json={"every": 2}, headers=reader), 403)
    created = client.post("/topics/t/samples/stream", json={"every": 2, "seed": 5}, headers=ana)
    assert created.status_code == 201, created.text
    body = created.json()
    assert (body["seed"], body["every"], body["rate"], body["population_size"], body["queue"], body["created_by"]) \
        == (5, 2, None, 20, "q", "ana")
    assert body["description"] == "a seeded random permutation of the 20 documents of queue q (every 2)"
    problem(client.post("/topics/t/samples/stream", json={"rate": 0.1}, headers=ana), 409,
            f"(stream {body['id']})")

    problem(client.post("/topics/t/next", json={"count": 4}, headers=reader), 403)
    served = client.post("/topics/t/next", json={"count": 6, "queue": "q"}, headers=ana)
    assert served.status_code == 200, served.text
    batch = served.json()
    assert batch["queue"] == "q" and batch["reviewed"] == 0 and batch["stream"]["id"] == body["id"]
    roles = [d["role"] for d in batch["documents"]]
    assert roles.count("audit") == 2 and len(roles) == 6 and roles[:2] == ["review", "review"]
    judged = client.post("/topics/t/judgments", json={"judgments": [
        {"doc_id": d["doc_id"], "label": "1" if i % 2 else "0", "role": d["role"]}
        for i, d in enumerate(batch["documents"])]}, headers=ana)
    assert judged.status_code == 201, judged.text
    log = client.get("/topics/t/judgments", headers=ana).json()["judgments"]
    assert [j["role"] for j in log] == roles
    shown = client.get("/topics/t/samples/stream", headers=reader).json()
    assert shown["served"] == 2 and shown["judged"] >= 2 and shown["pending"] == []
    assert client.post("/topics/t/next", json={}, headers=ana).json()["stream"]["due"] == 2

    problem(client.post("/topics/t/samples/stream/void", json={"reason": "x"}, headers=ana), 403, "'admin'")
    boss = api.new_key("boss", "admin")
    problem(client.post("/topics/t/samples/stream/void", json={"reason": ""}, headers=boss), 422, "reason")
    voided = client.post("/topics/t/samples/stream/void", json={"reason": "pace too slow"}, headers=boss)
    assert voided.status_code == 200 and voided.json()["voided"] is True and voided.json()["voided_by"] == "boss"
    problem(client.post("/topics/t/samples/stream/void", json={"reason": "again"}, headers=boss), 409,
            "no active audit stream")
    again = client.post("/topics/t/samples/stream", json={"rate": 0.25}, headers=ana)
    assert again.status_code == 201 and again.json()["id"] != body["id"] and again.json()["rate"] == 0.25


def test_bad_requests_name_the_field_and_store_nothing(api: Api) -> None:
    client = api.client
    ana = seeded(api)
    cases = [
        ({"rate": 0}, 422, "rate"), ({"rate": 1}, 422, "rate"), ({"rate": -0.1}, 422, "rate"),
        ({"every": 0}, 422, "every"), ({"every": 2**31}, 422, "every"), ({"every": True}, 422, "every"),
        ({"every": 2, "rate": 0.5}, 422, "not both"), ({}, 422, "every, rate"),
        ({"every": 2, "seed": -1}, 422, "seed"), ({"every": 2, "seed": 2**63}, 422, "seed"),
        ({"every": 2, "queue": "nope"}, 404, "queue"), ({"every": 2, "queue": "a\nb"}, 422, "queue"),
        ({"every": 2, "extra": 1}, 422, "extra"),
    ]
    for payload, status, word in cases:
        problem(client.post("/topics/t/samples/stream", json=payload, headers=ana), status, word)
    problem(client.post("/topics/nope/samples/stream", json={"every": 2}, headers=ana), 404, "unknown topic")
    assert stream_count(api) == 0
    for payload, status, word in [({"count": 0}, 422, "count"), ({"count": 10_001}, 422, "count"),
                                  ({"count": "3"}, 422, "count"), ({"queue": "nope"}, 404, "queue")]:
        problem(client.post("/topics/t/next", json=payload, headers=ana), status, word)
    problem(client.post("/topics/nope/next", json={}, headers=ana), 404, "unknown topic")
    problem(client.post("/topics/t/judgments", json={"judgments": [{"doc_id": "d1", "label": "1",
                                                                     "role": "auditor"}]}, headers=ana), 422, "audit")
