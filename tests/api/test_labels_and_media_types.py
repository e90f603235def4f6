"""What a JSON body may say (issue 26), on SQLite and PostgreSQL:

* a judgment's ``label`` may be a JSON integer (``1``, ``0``, a grade; ``1.0`` too, which JSON Schema's
  ``integer`` includes) or boolean, recorded as the text the same label has in a file (``"1"``, ``"true"``),
  beside the strings accepted before; anything else (a fraction, null, a list) is a 422 naming the label, and
  nothing is recorded;
* a body sent to a JSON endpoint in another media type (or none) is 415, as docs/api.md promises, on every
  endpoint that takes a JSON body; JSON that does not parse stays 422."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi import params
from fastapi.routing import APIRoute

from .conftest import Api
from .test_auth_and_errors import problem, seeded

ACCEPTED: list[tuple[Any, str, bool]] = [  # the label sent, the label recorded, relevant
    (1, "1", True), (0, "0", False), (True, "true", True), (False, "false", False), (2, "2", True),
    ("1", "1", True), ("yes", "yes", True), ("irrelevant", "irrelevant", False), (1.0, "1", True), (3e1, "30", True)]
REFUSED: list[Any] = [1.5, 0.5, None, [1], {"label": 1}, 2**31, -(2**31) - 1, "", "perhaps"]


def test_integer_and_boolean_labels_are_recorded_as_their_text(api: Api) -> None:
    ana = seeded(api)
    batch = {"judgments": [{"doc_id": f"d{i}", "label": sent} for i, (sent, _, _) in enumerate(ACCEPTED)]}
    answer = api.client.post("/topics/t/judgments", json=batch, headers=ana)
    assert answer.status_code == 201, answer.text
    logged = api.client.get("/topics/t/judgments", headers=ana).json()["judgments"]
    assert [(j["doc_id"], j["label"]) for j in logged] == [(f"d{i}", text) for i, (_, text, _) in enumerate(ACCEPTED)]
    relevant = {f"d{i}" for i, (_, _, yes) in enumerate(ACCEPTED) if yes}
    entries = api.client.get("/topics/t/queues/q/entries", headers=ana).json()["entries"]
    assert {e["doc_id"] for e in entries if e["label"] == "relevant"} == relevant
    # the same batch with string labels is the same request: an idempotency key replays it
    keyed = {**batch, "idempotency_key": "k"}
    assert api.client.post("/topics/t/judgments", json=keyed, headers=ana).status_code == 201
    as_text = {"judgments": [{"doc_id": f"d{i}", "label": text} for i, (_, text, _) in enumerate(ACCEPTED)],
               "idempotency_key": "k"}
    replayed = api.client.post("/topics/t/judgments", json=as_text, headers=ana)
    assert replayed.headers.get("idempotent-replayed") == "true", replayed.text


@pytest.mark.parametrize("label", REFUSED, ids=repr)
def test_other_labels_are_422_naming_the_label(api: Api, label: Any) -> None:
    ana = seeded(api)
    answer = api.client.post("/topics/t/judgments", json={"judgments": [{"doc_id": "d1", "label": label}]},
                             headers=ana)
    problem(answer, 422, "judgments[0].label")
    assert api.client.get("/topics/t/judgments", headers=ana).json()["judgments"] == []


def json_body_routes(api: Api) -> list[APIRoute]:
    routes = [r for r in api.client.app.routes  # type: ignore[attr-defined]
              if isinstance(r, APIRoute) and r.body_field is not None
              and not isinstance(r.body_field.field_info, params.Form)]
    assert len(routes) >= 8, [r.path for r in routes]
    return routes


@pytest.mark.parametrize("content_type", ["text/plain", "application/xml", "application/x-www-form-urlencoded",
                                          "multipart/form-data; boundary=x", "application/jsonx", "text/json",
                                          None])
def test_a_json_endpoint_answers_415_to_another_media_type(api: Api, content_type: str | None) -> None:
    admin = api.new_key("boss", "admin")
    seeded(api)
    body = b'{"name": "x", "judgments": [{"doc_id": "d1", "label": "1"}], "size": 1, "reason": "r", "every": 2}'
    headers = {**admin, **({"Content-Type": content_type} if content_type else {})}
    for route in json_body_routes(api):
        path = route.path.replace("{topic}", "t").replace("{sample_id}", "1")
        (method,) = route.methods
        problem(api.client.request(method, path, content=body, headers=headers), 415, "application/json")
    assert api.client.get("/topics/x", headers=admin).status_code == 404  # nothing was done


def test_json_in_its_media_types_is_still_taken(api: Api) -> None:
    ana = seeded(api)
    one = b'{"judgments": [{"doc_id": "d1", "label": 1}]}'
    for content_type in ("application/json", "application/json; charset=utf-8", "Application/JSON",
                         "application/vnd.reviewdepth+json"):
        answer = api.client.post("/topics/t/judgments", content=one, headers={**ana, "Content-Type": content_type})
        assert answer.status_code == 201, (content_type, answer.text)
    problem(api.client.post("/topics/t/judgments", content=b"{not json", headers={**ana, "Content-Type":
                                                                                  "application/json"}), 422)
    problem(api.client.post("/topics", headers=ana), 422, "body: Field required")  # no body: no media type to refuse
