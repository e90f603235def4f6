"""API tests run against a migrated SQLite file and, when REVIEWDEPTH_TEST_PG_URL is set, PostgreSQL (the store
fixtures), through the TestClient with the application's real lifespan."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from reviewdepth.api import ApiSettings, create_app
from reviewdepth.services.admin.keys import create_key


@dataclass
class Api:
    """A TestClient on a fresh database, the database URL, and a way to mint keys."""

    client: TestClient
    url: str
    engine: Engine
    new_key: Callable[..., dict[str, str]]

    @property
    def writer(self) -> dict[str, str]:
        return self.new_key("ana", "write")


@pytest.fixture
def api(engine: Engine, empty_db_url: str) -> Iterator[Api]:
    def new_key(reviewer: str = "ana", scope: str = "write") -> dict[str, str]:
        return {"Authorization": f"Bearer {create_key(engine, reviewer, scope)[1]}"}

    app = create_app(ApiSettings(database_url=empty_db_url, max_body_bytes=256 * 1024,
                                 max_upload_bytes=2 * 1024 * 1024))
    with TestClient(app) as client:
        yield Api(client, empty_db_url, engine, new_key)
