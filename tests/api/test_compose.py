"""docker-compose.yml and the Dockerfile, checked statically (no container engine runs here)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import pytest
import typer
import yaml

from reviewdepth.api import ApiSettings
from reviewdepth.cli.app import create_cli

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    data = yaml.safe_load((REPO / "docker-compose.yml").read_text())
    assert isinstance(data, dict)
    return data


def parse_command(argv: list[str]) -> Any:
    """Parse ``argv`` with the real ``reviewdepth`` command tree (options and types checked; nothing runs).
    Typer vendors Click, so the command objects are walked by their interface."""
    assert argv[0] == "reviewdepth"
    command: Any = typer.main.get_command(create_cli())
    args = argv[1:]
    parent: Any = None
    while hasattr(command, "get_command"):
        ctx = command.context_class(command, info_name=command.name, parent=parent)
        name, *args = args
        sub = command.get_command(ctx, name)
        assert sub is not None, f"reviewdepth has no command {name!r}"
        parent, command = ctx, sub
    return command.make_context(command.name, list(args), parent=parent)


def test_services_health_and_order(compose: dict[str, Any]) -> None:
    services = compose["services"]
    assert set(services) == {"db", "migrate", "api"}
    db = services["db"]
    assert db["image"].startswith("postgres:")
    assert any(v.endswith(":/var/lib/postgresql/data") for v in db["volumes"])
    volume = db["volumes"][0].split(":")[0]
    assert volume in compose["volumes"]
    check = db["healthcheck"]
    assert "pg_isready" in " ".join(check["test"]) and check["retries"] >= 3
    migrate, api = services["migrate"], services["api"]
    assert migrate["depends_on"]["db"]["condition"] == "service_healthy"
    assert api["depends_on"]["migrate"]["condition"] == "service_completed_successfully"
    assert api["depends_on"]["db"]["condition"] == "service_healthy"
    assert migrate.get("restart") == "no" and "build" in migrate and api["image"] == migrate["image"]


def test_commands_are_real_reviewdepth_commands(compose: dict[str, Any]) -> None:
    services = compose["services"]
    upgrade = parse_command(services["migrate"]["command"])
    assert upgrade.command.name == "upgrade" and upgrade.parent is not None and upgrade.parent.info_name == "db"
    serve = parse_command(services["api"]["command"])
    assert serve.command.name == "serve" and serve.params["host"] == "0.0.0.0" and serve.params["port"] == 8000
    assert serve.params["db"] is None  # the database URL comes from the environment
    for cmd in (services["migrate"]["command"], services["api"]["command"]):
        assert "--db" not in cmd
    with pytest.raises(Exception, match="no-such-option") as refused:
        parse_command(["reviewdepth", "serve", "--no-such-option"])
    assert type(refused.value).__name__ == "NoSuchOption"
    with pytest.raises(AssertionError, match="no command 'upgrayedd'"):
        parse_command(["reviewdepth", "db", "upgrayedd"])
    dockerfile = (REPO / "Dockerfile").read_text()
    cmd = re.search(r"^CMD (\[.*\])$", dockerfile, re.M)
    assert cmd is not None
    assert parse_command(yaml.safe_load(cmd.group(1))).command.name == "serve"
    assert re.search(r"pip (install|wheel)[^\n]* \.", dockerfile)


def test_database_url_reaches_the_settings(compose: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("migrate", "api"):
        env = compose["services"][name]["environment"]
        url = env["REVIEWDEPTH_DATABASE_URL"].replace("${POSTGRES_PASSWORD:-reviewdepth}", "pw")
        assert "@db:5432/" in url
        monkeypatch.setenv("REVIEWDEPTH_DATABASE_URL", url)
        settings = ApiSettings()
        assert settings.database_url.startswith("postgresql+psycopg://") and not settings.uses_embedded_default
    assert int(compose["services"]["api"]["environment"]["REVIEWDEPTH_MAX_BODY_BYTES"]) > 0
    assert shlex.join(compose["services"]["api"]["command"]).count("0.0.0.0") == 1
