"""Scopes that mean something: recording an adjudication needs scope ``adjudicate`` or ``admin`` (a ``write`` key
gets 403 and nothing is recorded; both handlers of the endpoint record through `recording.recorded`, which checks
it); ``keys create --scope adjudicate``."""

from __future__ import annotations

from sqlalchemy import func, select
from typer.testing import CliRunner

from reviewdepth.cli.app import create_cli
from reviewdepth.services.admin.keys import list_keys
from reviewdepth.services.evidence.access import SCOPES
from reviewdepth.store.models import Judgment

from .conftest import Api
from .test_auth_and_errors import problem


def recorded_roles(api: Api) -> list[str]:
    with api.engine.connect() as conn:
        return [r for (r,) in conn.execute(select(Judgment.role).order_by(Judgment.id))]


def test_adjudication_needs_the_adjudicate_scope(api: Api) -> None:
    client = api.client
    writer, adjudicator, admin = api.new_key("ana", "write"), api.new_key("judge", "adjudicate"), \
        api.new_key("boss", "admin")
    assert client.post("/topics", json={"name": "t"}, headers=writer).status_code == 201
    docs = [{"doc_id": f"d{i}"} for i in range(3)]
    assert client.put("/topics/t/queues/q", json={"documents": docs}, headers=writer).status_code == 201
    assert client.get("/whoami", headers=writer).status_code == 200  # the key is cached: the fast path takes it
    one = {"judgments": [{"doc_id": "d1", "label": "0", "role": "adjudication"}]}
    mixed = {"judgments": [{"doc_id": "d0", "label": "1"}, {"doc_id": "d1", "label": "0", "role": "adjudication"}]}
    for body in (one, mixed, {**one, "idempotency_key": "k1"}):
        problem(client.post("/topics/t/judgments", json=body, headers=writer), 403, "adjudication", "'write'",
                "'adjudicate'")
    assert recorded_roles(api) == []
    assert client.post("/topics/t/judgments", json={"judgments": [{"doc_id": "d0", "label": "1"}]},
                       headers=writer).status_code == 201
    for key in (adjudicator, admin):
        response = client.post("/topics/t/judgments", json=one, headers=key)
        assert response.status_code == 201, response.text
    assert recorded_roles(api) == ["review", "adjudication", "adjudication"]
    # adjudicate includes write and read; it is not admin
    assert client.post("/topics/t/judgments", json={"judgments": [{"doc_id": "d2", "label": "1"}]},
                       headers=adjudicator).status_code == 201
    assert client.get("/topics/t", headers=adjudicator).status_code == 200
    with api.engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(Judgment)).scalar_one() == 4


def test_keys_create_offers_the_adjudicate_scope(api: Api) -> None:
    assert SCOPES.index("write") < SCOPES.index("adjudicate") < SCOPES.index("admin")
    result = CliRunner().invoke(create_cli(), ["keys", "create", "--reviewer", "judge", "--scope", "adjudicate",
                                               "--db", api.url])
    assert result.exit_code == 0, result.output
    [key] = [k for k in list_keys(api.engine) if k.reviewer == "judge"]
    assert key.scope == "adjudicate" and key.allows("write") and not key.allows("admin")
    response = api.client.get("/whoami", headers={"Authorization": f"Bearer {result.stdout.strip()}"})
    assert response.json()["scope"] == "adjudicate"
