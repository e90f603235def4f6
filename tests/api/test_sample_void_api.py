"""``POST /topics/{topic}/samples/{sample_id}/void``: admin keys only, the key's reviewer logged, 404/409/422 as
problem+json, and the voided sample as the reply and in ``GET .../samples/{id}``."""

from __future__ import annotations

from .conftest import Api
from .test_auth_and_errors import problem, seeded


def test_void_needs_an_admin_key_and_is_logged_as_its_reviewer(api: Api) -> None:
    client = api.client
    ana = seeded(api)
    drawn = client.post("/topics/t/samples", json={"size": 3, "seed": 1}, headers=ana)
    assert drawn.status_code == 201 and drawn.json()["voided"] is False
    sample_id = drawn.json()["id"]
    url = f"/topics/t/samples/{sample_id}/void"
    problem(client.post(url, json={"reason": "test"}, headers=ana), 403, "scope 'write'", "'admin'")
    problem(client.post(url, json={"reason": "test"}, headers=api.new_key("rita", "read")), 403)
    problem(client.post(url, json={"reason": "test"}), 401)
    boss = api.new_key("boss", "admin")
    problem(client.post(url, json={"reason": ""}, headers=boss), 422, "reason")
    problem(client.post(url, json={"reason": "   "}, headers=boss), 422, "reason")
    problem(client.post(url, json={}, headers=boss), 422)
    problem(client.post(url, json={"reason": "x", "extra": 1}, headers=boss), 422)
    problem(client.post("/topics/t/samples/999/void", json={"reason": "x"}, headers=boss), 404, "no sample 999")
    problem(client.post("/topics/nope/samples/1/void", json={"reason": "x"}, headers=boss), 404, "unknown topic")
    assert client.get("/topics/t/judgments", headers=ana).json()["judgments"] == []

    r = client.post(url, json={"reason": "3-document sample drawn by mistake"}, headers=boss)
    assert r.status_code == 200, r.text
    assert r.json()["voided"] is True and r.json()["void_reason"] == "3-document sample drawn by mistake"
    assert r.json()["id"] == sample_id and r.json()["queue_size"] == 20
    shown = client.get(f"/topics/t/samples/{sample_id}", headers=ana).json()
    assert shown["voided"] is True and shown["void_reason"] == "3-document sample drawn by mistake"
    problem(client.post(url, json={"reason": "again"}, headers=boss), 409, "already voided by 'boss'")
    [row] = client.get("/topics/t/judgments", headers=ana).json()["judgments"]
    assert (row["doc_id"], row["role"], row["reviewer"], row["label"], row["relevant"], row["source"],
            row["note"]) == (f"sample:{sample_id}", "void", "boss", "void", None, "api",
                             "3-document sample drawn by mistake")
    assert client.get("/topics/t", headers=ana).json()["judgments"] == 0
