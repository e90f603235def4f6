"""The judgment endpoint records the queue each judgment was served from and refuses documents in no queue of the
topic (409 naming the item: the request is well formed, the topic's queues refuse it), on both of its paths (the
fast path and FastAPI's handler); ``allow_unqueued`` lets them in; the log lists the queue."""

from __future__ import annotations

from .conftest import Api
from .test_auth_and_errors import problem, seeded


def test_queue_recorded_and_unqueued_documents_refused(api: Api) -> None:
    client = api.client
    ana = seeded(api)  # topic t, queue q of d0..d19
    docs = [{"doc_id": f"r{i}"} for i in range(5)] + [{"doc_id": "d0"}]
    assert client.put("/topics/t/queues/rerank", json={"documents": docs}, headers=ana).status_code == 201
    before = client.get("/topics/t/judgments", headers=ana).json()["judgments"]
    for _ in range(2):  # a new key takes FastAPI's handler first, then the fast path
        r = client.post("/topics/t/judgments", headers=ana,
                        json={"judgments": [{"doc_id": "d1", "label": "1"}, {"doc_id": "nowhere", "label": "0"}]})
        problem(r, 409, "judgments[1].doc_id: document 'nowhere' is in no queue of topic 't'", "allow_unqueued")
        r = client.post("/topics/t/judgments", headers=ana,
                        json={"judgments": [{"doc_id": "d1", "label": "1"}], "queue": "missing"})
        problem(r, 409, "queue: topic 't' has no queue 'missing' (its queues: q, rerank)")
        r = client.post("/topics/t/judgments", headers=ana,
                        json={"judgments": [{"doc_id": "d1", "label": "1", "queue": "missing"}]})
        problem(r, 409, "judgments[0].queue: topic 't' has no queue 'missing'")
        problem(client.post("/topics/t/judgments", headers=ana,
                            json={"judgments": [{"doc_id": "d1", "label": "1"}], "allow_unqueued": "yes"}), 422)
    assert client.get("/topics/t/judgments", headers=ana).json()["judgments"] == before

    r = client.post("/topics/t/judgments", headers=ana, json={"judgments": [
        {"doc_id": "d1", "label": "1"}, {"doc_id": "d2", "label": "0", "queue": "q"}]})
    assert r.status_code == 201, r.text
    r = client.post("/topics/t/judgments", headers=ana, json={"judgments": [
        {"doc_id": "r1", "label": "1"}, {"doc_id": "nowhere", "label": "0"}], "queue": "q", "allow_unqueued": True})
    assert r.status_code == 201, r.text
    log = client.get("/topics/t/judgments", headers=ana).json()["judgments"]
    assert [(j["doc_id"], j["queue"]) for j in log] == [("d1", "rerank"), ("d2", "q"), ("r1", "q"), ("nowhere", "q")]

    assert client.post("/topics", json={"name": "bare"}, headers=ana).status_code == 201
    problem(client.post("/topics/bare/judgments", headers=ana, json={"judgments": [{"doc_id": "a", "label": "1"}]}),
            409, "topic 'bare' has no queue; import one first or send \"allow_unqueued\": true")
    r = client.post("/topics/bare/judgments", headers=ana,
                    json={"judgments": [{"doc_id": "a", "label": "1"}], "allow_unqueued": True})
    assert r.status_code == 201
    assert client.get("/topics/bare/judgments", headers=ana).json()["judgments"][0]["queue"] is None
