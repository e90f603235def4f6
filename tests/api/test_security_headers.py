"""``X-Content-Type-Options: nosniff`` on every response (success, 401, 413, 404, 500, the docs page) and a
restrictive Content-Security-Policy on HTML responses; the report's HTML needs nothing the policy forbids."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient
from sqlalchemy import Engine

from reviewdepth.api import ApiSettings, create_app
from reviewdepth.services.admin.keys import create_key

from .conftest import Api


def policy_of(response: object) -> dict[str, str]:
    from httpx import Response

    assert isinstance(response, Response)
    header = response.headers.get("content-security-policy", "")
    return {part.split()[0]: " ".join(part.split()[1:]) for part in header.split(";") if part.strip()}


def test_nosniff_everywhere(api: Api) -> None:
    client, writer = api.client, api.writer
    responses = [client.get("/health"), client.get("/topics"), client.get("/topics", headers=writer),
                 client.get("/topics/nope", headers=writer),
                 client.post("/topics", content=b"{}", headers={**writer, "Content-Type": "application/json",
                                                                   "Content-Length": str(10**9)}),
                 client.get("/openapi.json"), client.get("/docs")]
    assert [r.status_code for r in responses] == [200, 401, 200, 404, 413, 200, 200]
    for response in responses:
        assert response.headers.get_list("x-content-type-options") == ["nosniff"], response.request.url
    assert not policy_of(responses[0]) and not policy_of(responses[-1])  # JSON, and FastAPI's own docs page


def test_server_errors_carry_it_too(engine: Engine, empty_db_url: str) -> None:
    """A 500 is sent from outside the app's middleware (Starlette's ServerErrorMiddleware): it has its own."""
    app = create_app(ApiSettings(database_url=empty_db_url))

    def broken() -> None:
        raise RuntimeError("a bug")

    app.add_api_route("/broken", broken)
    key = {"Authorization": f"Bearer {create_key(engine, 'ana', 'read')[1]}"}
    with TestClient(app, raise_server_exceptions=False) as client:
        response = client.get("/broken", headers=key)
        assert response.status_code == 500 and "a bug" not in response.text
        assert response.headers.get_list("x-content-type-options") == ["nosniff"]


def test_html_report_has_a_restrictive_policy_it_complies_with(api: Api) -> None:
    client, writer = api.client, api.writer
    assert client.post("/topics", json={"name": "t"}, headers=writer).status_code == 201
    docs = [{"doc_id": f"d{i}", "score": 10 - i} for i in range(10)]
    assert client.put("/topics/t/queues/q", json={"documents": docs}, headers=writer).status_code == 201
    judged = {"judgments": [{"doc_id": f"d{i}", "label": "1" if i % 3 == 0 else "0"} for i in range(6)]}
    assert client.post("/topics/t/judgments", json=judged, headers=writer).status_code == 201
    response = client.get("/topics/t/report", headers={**writer, "Accept": "text/html"})
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/html")
    policy = policy_of(response)
    assert policy["default-src"] == "'none'" and "script-src" not in policy  # no script may run
    # forms (the dashboard's filter, the sign-in page) may only go to this server; the report has none
    assert policy["frame-ancestors"] == "'none'" and policy["form-action"] == "'self'" and "<form" not in response.text
    html = response.text
    # what the policy allows is all the report uses: no script, no external resource, inline style only
    assert not re.search(r"<script|javascript:|\son\w+\s*=", html, re.I)
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", html, re.I)
    assert not re.search(r"<link[^>]+stylesheet|@import|url\(\s*['\"]?(https?:|//)", html, re.I)
    assert response.headers["x-content-type-options"] == "nosniff"
    as_json = client.get("/topics/t/report", headers=writer)
    assert as_json.status_code == 200 and not policy_of(as_json)
