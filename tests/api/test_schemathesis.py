"""Property-based run of the OpenAPI document (schemathesis, bounded, SQLite only): no 5xx, and every response
conforms to the schema, status codes and content types the document declares."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from schemathesis import checks

from reviewdepth.api import ApiSettings, create_app
from reviewdepth.services.keys import create_key
from reviewdepth.services.rankings import RankedDocument, store_ranking
from reviewdepth.services.topics import create_topic
from reviewdepth.store import migrate
from reviewdepth.store.engine import create_engine_for

SECRET: dict[str, str] = {}


@pytest.fixture(scope="module")
def api_schema(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    url = f"sqlite:///{Path(tmp_path_factory.mktemp('schemathesis')) / 'api.db'}"
    engine = create_engine_for(url)
    migrate.upgrade(engine)
    create_topic(engine, "t", 50)
    store_ranking(engine, "t", "q", [RankedDocument(f"d{i}", float(-i)) for i in range(30)])
    SECRET["key"] = create_key(engine, "fuzzer", "admin")[1]
    engine.dispose()
    app = create_app(ApiSettings(database_url=url, max_body_bytes=64 * 1024, max_upload_bytes=256 * 1024))
    with TestClient(app):  # runs the lifespan: the engine is open while schemathesis calls the app
        yield schemathesis.openapi.from_asgi("/openapi.json", app)


def test_api_conforms_to_its_openapi(api_schema: Any) -> None:
    """Each operation gets up to 20 generated requests (schemathesis' pytest plugin does not load under this
    pytest, so the operations' Hypothesis strategies are driven directly)."""
    headers = {"Authorization": f"Bearer {SECRET['key']}"}
    selected = [checks.not_a_server_error, checks.response_schema_conformance, checks.status_code_conformance,
                checks.content_type_conformance]
    operations = [result.ok() for result in api_schema.get_all_operations()]
    assert len(operations) >= 14
    for operation in operations:

        @given(case=operation.as_strategy())
        @settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True,
                  database=None)
        def exercise(case: Any) -> None:
            case.call_and_validate(headers=headers, checks=selected)

        try:
            exercise()
        except Exception as exc:
            raise AssertionError(f"{operation.label}: {exc}") from exc
