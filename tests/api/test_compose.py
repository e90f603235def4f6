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
        url = interpolate(env["REVIEWDEPTH_DATABASE_URL"], {"POSTGRES_PASSWORD": "pw"})
        assert "@db:5432/" in url
        monkeypatch.setenv("REVIEWDEPTH_DATABASE_URL", url)
        settings = ApiSettings()
        assert settings.database_url.startswith("postgresql+psycopg://") and not settings.uses_embedded_default
    assert int(compose["services"]["api"]["environment"]["REVIEWDEPTH_MAX_BODY_BYTES"]) > 0
    assert shlex.join(compose["services"]["api"]["command"]).count("0.0.0.0") == 1


def interpolate(text: str, env: dict[str, str]) -> str:
    """Compose's variable substitution (``$$``, ``${VAR}``, ``${VAR:-default}``, ``${VAR-default}``,
    ``${VAR:?message}``, ``${VAR?message}``), as the compose specification states it; a required variable that
    is missing raises ``KeyError`` with its message."""

    def one(found: re.Match[str]) -> str:
        if found.group(0) == "$$":
            return "$"
        name, operator, argument = found.group("name"), found.group("op") or "", found.group("arg") or ""
        value = env.get(name)
        unset_or_empty = value is None or (":" in operator and value == "")
        if operator.endswith("?") and unset_or_empty:
            raise KeyError(f"{name}: {argument}")
        if operator.endswith("-") and unset_or_empty:
            return argument
        return value or ""

    return re.sub(r"\$\$|\$\{(?P<name>\w+)(?:(?P<op>:?[-?])(?P<arg>[^}]*))?\}", one, text)


def test_there_is_no_default_password(compose: dict[str, Any]) -> None:
    text = (REPO / "docker-compose.yml").read_text()
    uses = re.findall(r"\$\{POSTGRES_PASSWORD([^}]*)\}", text)
    assert uses and all(use.startswith(":?") for use in uses), uses  # required, never a default
    for line in text.splitlines():
        if "POSTGRES_PASSWORD" in line and not line.lstrip().startswith("#"):
            with pytest.raises(KeyError, match="POSTGRES_PASSWORD"):
                interpolate(line, {})
            with pytest.raises(KeyError):
                interpolate(line, {"POSTGRES_PASSWORD": ""})  # empty is refused too (":?")
    db = compose["services"]["db"]["environment"]
    assert interpolate(db["POSTGRES_PASSWORD"], {"POSTGRES_PASSWORD": "s3cret"}) == "s3cret"
    readme = (REPO / "README.md").read_text() + (REPO / "docs" / "api.md").read_text()
    assert "POSTGRES_PASSWORD" in readme


def memory_bytes(limit: str) -> int:
    number, unit = re.fullmatch(r"(\d+)([kmg]?)b?", str(limit).lower()).groups()  # type: ignore[union-attr]
    return int(number) * 1024 ** " kmg".index(unit or " ")


def test_every_container_is_hardened(compose: dict[str, Any]) -> None:
    for name, service in compose["services"].items():
        assert service.get("read_only") is True, name
        assert service.get("cap_drop") == ["ALL"], name
        assert "no-new-privileges:true" in service.get("security_opt", []), name
        assert 0 < memory_bytes(service["mem_limit"]) <= 4 * 1024 ** 3, name
    # PostgreSQL's entrypoint hands its data folder to the postgres user: these and no more
    assert set(compose["services"]["db"].get("cap_add", [])) <= {"CHOWN", "DAC_OVERRIDE", "FOWNER", "SETGID",
                                                                  "SETUID"}
    for name in ("migrate", "api"):
        assert "cap_add" not in compose["services"][name]
    db_tmpfs = compose["services"]["db"]["tmpfs"]
    assert "/var/run/postgresql" in db_tmpfs and "/tmp" in db_tmpfs  # writable where PostgreSQL writes
    api = compose["services"]["api"]
    assert any(t.startswith("/tmp") for t in api["tmpfs"])
    tmpdir = api["environment"]["TMPDIR"]
    assert any(v.split(":")[1] == tmpdir and v.split(":")[0] in compose["volumes"] for v in api["volumes"])
    assert f"install -d -o reviewdepth -g reviewdepth -m 0700 {tmpdir}" in (REPO / "Dockerfile").read_text()


def test_the_api_limits_in_compose_are_settings_and_fit_the_memory_limit(compose: dict[str, Any],
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    api = compose["services"]["api"]
    for name, value in api["environment"].items():
        if name != "REVIEWDEPTH_DATABASE_URL":
            monkeypatch.setenv(name, value)
    monkeypatch.setenv("REVIEWDEPTH_DATABASE_URL", "postgresql://u@h/db")
    settings = ApiSettings()
    limit = memory_bytes(api["mem_limit"])
    # an upload is held in memory at most once by a worker while it is parsed: several fit in the limit
    for bytes_ in (settings.text_limit, settings.multipart_limit, settings.max_decompressed_bytes):
        assert 0 < bytes_ <= limit // 4
    assert settings.busy_timeout_seconds < 60


def test_base_images_are_pinned_by_version_and_digest(compose: dict[str, Any]) -> None:
    pinned = re.compile(r"^[\w./-]+:\d+(\.\d+)+[\w.-]*@sha256:[0-9a-f]{64}$")
    assert pinned.match(compose["services"]["db"]["image"]), compose["services"]["db"]["image"]
    bases = re.findall(r"^FROM (\S+)", (REPO / "Dockerfile").read_text(), re.M)
    assert len(bases) == 2 and len(set(bases)) == 1 and all(pinned.match(b) for b in bases), bases


def test_health_checks_reach_the_database(compose: dict[str, Any], tmp_path: Path) -> None:
    from fastapi.testclient import TestClient

    from reviewdepth.api import create_app
    from reviewdepth.store import migrate
    from reviewdepth.store.engine import create_engine_for

    db_check = " ".join(compose["services"]["db"]["healthcheck"]["test"])
    assert "SELECT 1" in db_check and "-d reviewdepth" in db_check
    api_check = " ".join(compose["services"]["api"]["healthcheck"]["test"])
    url = re.search(r"http://127\.0\.0\.1:8000(/health\?[^'\"]+)", api_check)
    assert url is not None and url.group(1) in (REPO / "Dockerfile").read_text()
    # the same request against a real app: 200, then 503 once the schema is taken back, 200 again after upgrade
    database = f"sqlite:///{tmp_path / 'health.db'}"
    engine = create_engine_for(database)
    migrate.upgrade(engine)
    with TestClient(create_app(ApiSettings(database_url=database)), raise_server_exceptions=False) as client:
        assert client.get(url.group(1)).status_code == 200
        migrate.downgrade(engine, "0003")
        assert client.get("/health").status_code == 200  # liveness alone does not look at the database
        refused = client.get(url.group(1))
        assert refused.status_code == 503 and "db upgrade" in refused.json()["detail"]
        migrate.upgrade(engine)
        assert client.get(url.group(1)).status_code == 200
