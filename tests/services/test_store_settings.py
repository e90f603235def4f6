"""`store_settings`, the CLI's way to the one reader of ``REVIEWDEPTH_*`` (`reviewdepth.settings.Settings`):
the variables, their defaults, and bad values named (exit code 2 at the CLI)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from reviewdepth.cli.app import create_cli
from reviewdepth.services.admin.database import store_settings
from reviewdepth.services.errors import Invalid
from reviewdepth.settings import Settings
from reviewdepth.store.busy import DEFAULT_BUSY_TIMEOUT_SECONDS

DATA = "/tmp/reviewdepth-test-data"
EMBEDDED = f"sqlite:///{DATA}/reviewdepth/reviewdepth.sqlite3"

# environment, explicit --db, then the URL used and the busy timeout expected
CASES: list[tuple[dict[str, str], str | None, str, float]] = [
    ({}, None, EMBEDDED, DEFAULT_BUSY_TIMEOUT_SECONDS),
    ({"REVIEWDEPTH_DATABASE_URL": "sqlite:////tmp/x.db"}, None, "sqlite:////tmp/x.db", 10.0),
    ({"REVIEWDEPTH_DATABASE_URL": "postgres://u@h/db"}, None, "postgresql+psycopg://u@h/db", 10.0),
    ({"REVIEWDEPTH_DATABASE_URL": "postgresql://u@h/db"}, None, "postgresql+psycopg://u@h/db", 10.0),
    ({"reviewdepth_database_url": "sqlite:////tmp/lower.db"}, None, "sqlite:////tmp/lower.db", 10.0),
    ({"REVIEWDEPTH_DATABASE_URL": ""}, None, EMBEDDED, 10.0),
    ({"REVIEWDEPTH_DATABASE_URL": "sqlite:////tmp/env.db"}, "postgres://u@h/explicit",
     "postgresql+psycopg://u@h/explicit", 10.0),
    ({"REVIEWDEPTH_DATABASE_URL": "sqlite:////tmp/env.db"}, "sqlite:////tmp/explicit.db",
     "sqlite:////tmp/explicit.db", 10.0),
    ({"REVIEWDEPTH_BUSY_TIMEOUT_SECONDS": "0.25"}, None, EMBEDDED, 0.25),
    ({"reviewdepth_busy_timeout_seconds": "3"}, "sqlite:////tmp/explicit.db", "sqlite:////tmp/explicit.db", 3.0),
]


def clean_environment(monkeypatch: pytest.MonkeyPatch, environ: dict[str, str]) -> None:
    for name in [n for n in os.environ if n.upper().startswith("REVIEWDEPTH_")]:
        monkeypatch.delenv(name)
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("XDG_DATA_HOME", DATA)


@pytest.mark.parametrize(("environ", "explicit", "url", "busy"), CASES)
def test_variables_and_defaults(monkeypatch: pytest.MonkeyPatch, environ: dict[str, str], explicit: str | None,
                                url: str, busy: float) -> None:
    clean_environment(monkeypatch, environ)
    settings = store_settings(explicit)
    assert isinstance(settings, Settings)  # the one reader, not a copy of its rules
    assert settings.resolved_database_url == url
    assert settings.uses_embedded_default == (url == EMBEDDED)
    assert settings.busy_timeout_seconds == busy


@pytest.mark.parametrize(("value", "message"), [
    ("abc", "REVIEWDEPTH_BUSY_TIMEOUT_SECONDS must be a number of seconds, not 'abc'"),
    ("-1", "REVIEWDEPTH_BUSY_TIMEOUT_SECONDS: Input should be greater than or equal to 0, not '-1'"),
])
def test_a_bad_value_names_the_variable(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, value: str,
                                        message: str) -> None:
    clean_environment(monkeypatch, {"REVIEWDEPTH_BUSY_TIMEOUT_SECONDS": value})
    with pytest.raises(Invalid) as raised:
        store_settings()
    assert str(raised.value) == message
    db = tmp_path / "x.db"
    result = CliRunner().invoke(create_cli(), ["db", "upgrade", "--db", f"sqlite:///{db}"])
    assert result.exit_code == 2 and result.stderr == f"reviewdepth: error: {message}\n"
    assert not db.exists()  # refused before the database was opened


@pytest.mark.parametrize("variable,value", [("REVIEWDEPTH_MAX_BODY_BYTES", "abc"),
                                            ("REVIEWDEPTH_BUSY_TIMEOUT_SECONDS", "-1")])
def test_the_server_factory_names_a_bad_value_and_exits_2(variable: str, value: str, tmp_path: Path) -> None:
    import subprocess
    import sys

    environ = {n: v for n, v in os.environ.items() if not n.upper().startswith("REVIEWDEPTH_")}
    environ |= {variable: value, "REVIEWDEPTH_DATABASE_URL": f"sqlite:///{tmp_path}/s.db"}
    done = subprocess.run([sys.executable, "-c", "from reviewdepth.api.app import app_from_environment as f; f()"],
                          env=environ, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and variable in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize(("url", "problem"), [
    ("bogus://x", "reviewdepth stores its data in SQLite or PostgreSQL, not 'bogus'; use sqlite:///PATH or "
                  "postgresql://USER@HOST/DATABASE"),
    ("mysql://u:secret@h/db", "reviewdepth stores its data in SQLite or PostgreSQL, not 'mysql'; use sqlite:///PATH "
                              "or postgresql://USER@HOST/DATABASE"),
    ("not a url", "'not a url' is not a database URL; use sqlite:///PATH or postgresql://USER@HOST/DATABASE"),
    ("postgresql+nodriver://u@h/db", "'postgresql+nodriver://u@h/db': SQLAlchemy has no driver 'nodriver' for "
                                     "postgresql; leave the driver out (postgresql://USER@HOST/DATABASE)"),
])
def test_a_database_url_reviewdepth_cannot_open_is_one_line(monkeypatch: pytest.MonkeyPatch, url: str,
                                                            problem: str) -> None:
    """Issue 26 item 4: ``--db bogus://x`` was a 57-line traceback from SQLAlchemy's dialect loader."""
    clean_environment(monkeypatch, {})
    result = CliRunner().invoke(create_cli(), ["report", "T", "--db", url])
    assert result.exit_code == 2 and result.stderr == f"reviewdepth: error: --db: {problem}\n"
    assert "secret" not in result.stderr
    # the variable's value is named by the variable, at every command and at the server's start
    clean_environment(monkeypatch, {"REVIEWDEPTH_DATABASE_URL": url})
    with pytest.raises(Invalid) as raised:
        store_settings()
    assert str(raised.value) == f"REVIEWDEPTH_DATABASE_URL: {problem}"
    for command in (["db", "upgrade"], ["judgments", "T"]):
        result = CliRunner().invoke(create_cli(), command)
        assert result.exit_code == 2 and result.stderr == f"reviewdepth: error: REVIEWDEPTH_DATABASE_URL: {problem}\n"
    result = CliRunner().invoke(create_cli(), ["serve", "--db", url])
    assert result.exit_code == 2 and result.stderr == f"reviewdepth: error: --db: {problem}\n"
