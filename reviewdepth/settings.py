"""Settings (pydantic-settings, ``REVIEWDEPTH_`` prefix): the one reader of every ``REVIEWDEPTH_`` variable.
Built by callers and passed down, never global. The CLI builds it through
`reviewdepth.services.admin.database.store_settings`, inside its command bodies (importing pydantic-settings costs
~0.15 s, which ``reviewdepth --help`` does not pay)."""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import Field, ValidationError, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from reviewdepth.store.busy import DEFAULT_BUSY_TIMEOUT_SECONDS
from reviewdepth.store.engine import DatabaseChoice, database_url_problem, normalise_url

ENV_PREFIX = "REVIEWDEPTH_"


class Settings(DatabaseChoice, BaseSettings):
    """``REVIEWDEPTH_DATABASE_URL`` picks the database; the default is an embedded SQLite file.
    ``REVIEWDEPTH_BUSY_TIMEOUT_SECONDS`` (default 10): how long a write waits for a lock another connection
    holds before it gives up (503 at the API, exit code 3 at the CLI; see `reviewdepth.store.busy`)."""

    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, extra="ignore")

    database_url: str = ""
    busy_timeout_seconds: float = Field(default=DEFAULT_BUSY_TIMEOUT_SECONDS, ge=0)

    @field_validator("database_url")
    @classmethod
    def _normalise(cls, value: str) -> str:
        if not value:
            return value
        problem = database_url_problem(value)
        if problem is not None:
            raise ValueError(problem)
        return normalise_url(value)


def settings_problem(exc: ValidationError, given: Mapping[str, str] | None = None) -> str:
    """The bad values of ``exc`` on one line, each named by its environment variable, or by ``given``'s name for a
    value the caller passed (a command's ``--db``), with the value (a validator's own sentence shows it as it may:
    a database URL without its password)."""
    lines = []
    for error in exc.errors():
        field = str(error["loc"][0]) if error["loc"] else ""
        variable = (given or {}).get(field, f"{ENV_PREFIX}{field.upper()}")
        value = error.get("input")
        if error["type"] == "value_error":
            lines.append(f"{variable}: {error['ctx']['error']}")
        elif field == "busy_timeout_seconds" and error["type"] != "greater_than_equal":
            lines.append(f"{variable} must be a number of seconds, not {value!r}")
        else:
            lines.append(f"{variable}: {error['msg']}, not {value!r}")
    return "; ".join(lines)
