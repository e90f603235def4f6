"""The CLI's light reader of the database setting agrees with the pydantic-settings `Settings`."""

from __future__ import annotations

import os

import pytest

from reviewdepth.services.database import store_settings
from reviewdepth.settings import Settings

CASES: list[tuple[dict[str, str], str | None]] = [
    ({}, None),
    ({"REVIEWDEPTH_DATABASE_URL": "sqlite:////tmp/x.db"}, None),
    ({"REVIEWDEPTH_DATABASE_URL": "postgres://u@h/db"}, None),
    ({"REVIEWDEPTH_DATABASE_URL": "postgresql://u@h/db"}, None),
    ({"reviewdepth_database_url": "sqlite:////tmp/lower.db"}, None),
    ({"REVIEWDEPTH_DATABASE_URL": ""}, None),
    ({"REVIEWDEPTH_DATABASE_URL": "sqlite:////tmp/env.db"}, "postgres://u@h/explicit"),
    ({"REVIEWDEPTH_DATABASE_URL": "sqlite:////tmp/env.db"}, "sqlite:////tmp/explicit.db"),
    ({}, "sqlite:////tmp/explicit.db"),
    ({"REVIEWDEPTH_BUSY_TIMEOUT_SECONDS": "0.25"}, None),
    ({"reviewdepth_busy_timeout_seconds": "3"}, "sqlite:////tmp/explicit.db"),
]


@pytest.mark.parametrize(("environ", "explicit"), CASES)
def test_same_choice_as_settings(monkeypatch: pytest.MonkeyPatch, environ: dict[str, str],
                                 explicit: str | None) -> None:
    for name in [n for n in os.environ if n.lower() in ("reviewdepth_database_url",
                                                         "reviewdepth_busy_timeout_seconds")]:
        monkeypatch.delenv(name)
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("XDG_DATA_HOME", "/tmp/reviewdepth-test-data")
    heavy = Settings(database_url=explicit) if explicit else Settings()
    light = store_settings(explicit)
    assert light.database_url == heavy.database_url
    assert light.resolved_database_url == heavy.resolved_database_url
    assert light.uses_embedded_default == heavy.uses_embedded_default
    assert light.busy_timeout_seconds == heavy.busy_timeout_seconds
