"""Settings (pydantic-settings, ``REVIEWDEPTH_`` prefix). Built by callers and passed down, never global.

The CLI reads only the database choice, with `reviewdepth.services.database.store_settings` (same rules, no
pydantic-settings import); a test keeps the two readers in step."""

from __future__ import annotations

from pydantic import field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from reviewdepth.store.engine import DatabaseChoice, normalise_url


class Settings(DatabaseChoice, BaseSettings):
    """``REVIEWDEPTH_DATABASE_URL`` picks the database; the default is an embedded SQLite file."""

    model_config = SettingsConfigDict(env_prefix="REVIEWDEPTH_", extra="ignore")

    database_url: str = ""

    @field_validator("database_url")
    @classmethod
    def _normalise(cls, value: str) -> str:
        return normalise_url(value) if value else value
