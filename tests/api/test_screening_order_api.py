"""``PUT /topics/{topic}/screening-order`` and ``POST /topics`` with a screening order (issue 25)."""

from __future__ import annotations

from reviewdepth.services.admin.topics import create_topic, get_topic

from .conftest import Api
from .test_auth_and_errors import problem


def test_declare_and_refuse(api: Api) -> None:
    create_topic(api.engine, "T")
    writer, reader = api.new_key("wes", "write"), api.new_key("rita", "read")
    path = "/topics/T/screening-order"
    assert api.client.put(path, json={"screening_order": "random"}, headers=reader).status_code == 403
    body = api.client.put(path, json={"screening_order": "random"}, headers=writer).json()
    assert body["screening_order"] == "random" == get_topic(api.engine, "T").screening_order
    assert api.client.get("/topics/T", headers=reader).json()["screening_order"] == "random"
    problem(api.client.put(path, json={"screening_order": "shuffled"}, headers=writer), 422)
    problem(api.client.put("/topics/nope/screening-order", json={"screening_order": "random"}, headers=writer), 404,
            "unknown topic 'nope'")
    assert get_topic(api.engine, "T").screening_order == "random"
    created = api.client.post("/topics", json={"name": "R", "screening_order": "random"}, headers=writer)
    assert created.status_code == 201 and created.json()["screening_order"] == "random"
