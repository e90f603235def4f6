"""Settings (pydantic-settings, ``REVIEWDEPTH_`` prefix). Built by callers and passed down, never global.

The CLI reads only the database choice, with `reviewdepth.services.database.store_settings` (same rules, no
pydantic-settings import); a test keeps the two readers in step."""

from __future__ import annotations

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from reviewdepth.store.busy import DEFAULT_BUSY_TIMEOUT_SECONDS
from reviewdepth.store.engine import DatabaseChoice, normalise_url


class Settings(DatabaseChoice, BaseSettings):
    """``REVIEWDEPTH_DATABASE_URL`` picks the database; the default is an embedded SQLite file.
    ``REVIEWDEPTH_BUSY_TIMEOUT_SECONDS`` (default 10): how long a write waits for a lock another connection
    holds before it gives up (503 at the API, exit code 3 at the CLI; see `reviewdepth.store.busy`)."""

    model_config = SettingsConfigDict(env_prefix="REVIEWDEPTH_", extra="ignore")

    database_url: str = ""
    busy_timeout_seconds: float = Field(default=DEFAULT_BUSY_TIMEOUT_SECONDS, ge=0)

    @field_validator("database_url")
    @classmethod
    def _normalise(cls, value: str) -> str:
        return normalise_url(value) if value else value
