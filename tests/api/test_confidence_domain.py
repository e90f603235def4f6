"""The confidence level is one domain at every route that takes one (issue 26): 0.5 ≤ confidence ≤ 0.999999. A
value outside it (``1e-20``, whose 1 − confidence rounds to 1.0, once a 500) is a 422 problem naming
``confidence``, never a 5xx; the ends of the domain are answered, on SQLite and PostgreSQL. The OpenAPI document
declares the range of each confidence parameter."""

from __future__ import annotations

from typing import Any

import pytest
from httpx import Response

from reviewdepth.services.admin.topics import create_topic
from reviewdepth.services.files.rankings import RankedDocument, store_ranking
from reviewdepth.services.review.audit_stream import create_stream, next_documents
from reviewdepth.services.review.batches import BatchItem, record_batch
from reviewdepth.services.review.samples import draw_sample

from .conftest import Api
from .test_auth_and_errors import problem

DOCS = [f"d{i:02d}" for i in range(40)]
RELEVANT = {"d00", "d01", "d02", "d04", "d07", "d24"}


def judge(api: Api, topic: str, docs: list[str], role: str = "review") -> None:
    record_batch(api.engine, topic, [BatchItem(d, str(int(d in RELEVANT)), role=role) for d in docs],
                 reviewer="ana", source="test")


def seed_topics(api: Api) -> None:
    """T: 40 documents, the top 20 reviewed, a judged sample of the rest and an audit stream with 12 documents
    judged (every computation a confidence reaches has evidence); F: fully judged (for simulations)."""
    for name in ("T", "F"):
        create_topic(api.engine, name)
        store_ranking(api.engine, name, "q", [RankedDocument(d, float(-i)) for i, d in enumerate(DOCS)])
    judge(api, "F", DOCS)
    judge(api, "T", DOCS[:20])
    judge(api, "T", draw_sample(api.engine, "T", 8, frame="unreviewed", seed=3).doc_ids, "sample")
    create_stream(api.engine, "T", every=1, seed=0, reviewer="ana")
    judge(api, "T", [d.doc_id for d in next_documents(api.engine, "T", count=12).documents], "audit")


def simulation_body(confidence: Any) -> dict[str, Any]:
    return {"topics": ["F"], "design": {"kind": "rest", "sample_size": 5}, "rules": ["elusion"],
            "confidence": confidence, "looks": 10, "replicates": 1}


# every route with a confidence parameter: (name, how to send it)
ROUTES = {
    "report": lambda api, c, key: api.client.get("/topics/T/report", params={"confidence": c}, headers=key),
    "validation": lambda api, c, key: api.client.get("/topics/T/validation", params={"confidence": c,
                                                                                      "format": "json"}, headers=key),
    "monitor": lambda api, c, key: api.client.get("/topics/T/monitor", params={"confidence": c}, headers=key),
    "dashboard": lambda api, c, key: api.client.get("/", params={"confidence": c}, headers=key),
    "sample plan": lambda api, c, key: api.client.get("/topics/T/samples/plan", params={"confidence": c},
                                                      headers=key),
    "stop plan": lambda api, c, key: api.client.get("/topics/T/plan", params={"confidence": c}, headers=key),
    "simulations": lambda api, c, key: api.client.post("/simulations", json=simulation_body(c), headers=key),
}
REFUSED = [1e-20, 0.0, 0.4, 0.4999999, 1.0, 0.9999995, 2.0, -0.95]
ACCEPTED = [0.5, 0.95, 0.999999]


@pytest.mark.parametrize("route", sorted(ROUTES))
def test_confidence_outside_the_domain_is_a_422_naming_it_at_every_route(api: Api, route: str) -> None:
    seed_topics(api)
    key = api.writer
    send = ROUTES[route]
    for confidence in REFUSED:
        answer: Response = send(api, confidence, key)
        body = problem(answer, 422, "confidence")
        assert "0.5" in body["detail"] or "0.999999" in body["detail"], (confidence, body)
    for confidence in ACCEPTED:
        answer = send(api, confidence, key)
        assert answer.status_code in (200, 202), (confidence, answer.text)


def test_openapi_declares_the_confidence_range(api: Api) -> None:
    document = api.client.get("/openapi.json").json()
    schemas = document["components"]["schemas"]
    found = 0
    for path, operations in document["paths"].items():
        for operation in operations.values():
            for parameter in operation.get("parameters", []):
                if parameter["name"] == "confidence":
                    found += 1
                    schema = parameter["schema"]
                    assert (schema["minimum"], schema["maximum"]) == (0.5, 0.999999), (path, schema)
    # report, validation, methods, monitor, dashboard, sample plan, stop plan, the topics list and one topic with
    # status
    assert found == 9
    field = schemas["SimulationIn"]["properties"]["confidence"]
    assert (field["minimum"], field["maximum"]) == (0.5, 0.999999)
