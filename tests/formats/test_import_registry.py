"""The registry of import formats (`reviewdepth.formats.importers`) is what the CLI, the API and docs/formats.md
read: a format registered there has its command, its route and its row; a command, a route or a documented
``import NAME`` section without a registered format fails here."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from sqlalchemy import Engine
from typer.testing import CliRunner

from reviewdepth.api import ApiSettings, create_app
from reviewdepth.cli.app import create_cli
from reviewdepth.formats import importers
from reviewdepth.formats.importers import FORMATS, ImportFormat

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs" / "formats.md"
ARTICLES = ROOT / "tests" / "data" / "screening" / "rayyan_articles.csv"


def _import_group() -> typer.core.TyperGroup:
    group = typer.main.get_command(create_cli()).commands["import"]  # type: ignore[attr-defined]
    assert isinstance(group, typer.core.TyperGroup)
    return group


def test_docs_table_is_generated_from_the_registry() -> None:
    assert importers.docs_section(DOCS.read_text()) == importers.markdown()
    for entry in FORMATS:
        assert f"| `import {entry.name}` |" in importers.markdown()


def test_every_documented_import_is_registered() -> None:
    headings = [line for line in DOCS.read_text().splitlines() if line.startswith("#")]
    documented = {name for h in headings for name in re.findall(r"`import ([a-z]+)", h)}
    assert documented, "no `import NAME` heading found: the check would pass vacuously"
    assert documented <= {f.name for f in FORMATS}, documented - {f.name for f in FORMATS}


def test_the_cli_commands_and_options_are_the_registry_s() -> None:
    group = _import_group()
    assert list(group.commands) == [f.name for f in FORMATS]
    for entry in FORMATS:
        flags = tuple(p.opts[0] for p in group.commands[entry.name].params
                      if p.param_type_name == "option" and p.opts[0] not in ("--db", "--help"))
        assert flags == entry.option_flags, entry.name


def test_the_api_routes_and_media_types_are_the_registry_s() -> None:
    paths = create_app(ApiSettings(database_url="sqlite:///:memory:")).openapi()["paths"]
    routes = {p.removeprefix("/topics/{topic}/imports/"): item for p, item in paths.items() if "/imports/" in p}
    assert set(routes) == {f.name for f in FORMATS if f.api != "none"}
    for entry in FORMATS:
        if entry.api == "body":
            assert tuple(routes[entry.name]["post"]["requestBody"]["content"]) == entry.media_types, entry.name


def test_building_the_cli_loads_no_reader() -> None:
    """The CLI builds its import commands from the registry on every run; the readers (numpy, zip, SQLite) load
    only when a file is read."""
    probe = ("import sys; from reviewdepth.cli.app import create_cli; create_cli(); "
             "print(sorted(m for m in sys.modules if m.startswith('reviewdepth.formats.') or m == 'numpy'))")
    loaded = subprocess.run([sys.executable, "-P", "-c", probe], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "['reviewdepth.formats.importers']", loaded


def test_every_format_has_a_use_case() -> None:
    from reviewdepth.services.files.importers import import_decisions, use_case

    assert all(callable(use_case(entry)) for entry in FORMATS)
    assert all(callable(entry.load_reader()) for entry in FORMATS)
    assert use_case(ImportFormat("x", "x", "rayyan.read_rayyan", "decisions", "x")) is import_decisions
    with pytest.raises(LookupError):
        use_case(ImportFormat("x", "x", "rayyan.read_rayyan", "population", "x"))


# a format that only declares a reader of decided records: Rayyan's reader stands in for a new platform's
NEW = ImportFormat("newplatform", "a new platform's export: its records and each member's decision",
                   "rayyan.read_rayyan",
                   "decisions", "The platform's CSV export.", importers.CSV_TYPES)


@pytest.fixture
def with_new_format(monkeypatch: pytest.MonkeyPatch) -> ImportFormat:
    import reviewdepth.cli.import_cmds as import_cmds

    formats = (*FORMATS, NEW)
    monkeypatch.setattr(importers, "FORMATS", formats)
    monkeypatch.setitem(importers.BY_NAME, NEW.name, NEW)
    monkeypatch.setattr(import_cmds, "FORMATS", formats)
    monkeypatch.setattr(import_cmds, "ImportFormatName",
                        import_cmds.StrEnum("ImportFormatName", [(f.name, f.name) for f in formats]))
    return NEW


def test_a_decisions_format_needs_only_its_entry(with_new_format: ImportFormat, engine: Engine) -> None:
    """A registered decisions format gets a command (and, through the shared use case, its judgments): each
    member's decision stored as that member's judgment, a Maybe a maybe decision, in a queue named after it."""
    from reviewdepth.services.review.judgments import list_judgments

    assert with_new_format.name in _import_group().commands
    result = CliRunner().invoke(create_cli(), ["import", "newplatform", str(ARTICLES), "--topic", "S",
                                               "--db", engine.url.render_as_string(hide_password=False)])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("imported 5 records as the population of topic 'S' (queue 'newplatform' in "
                                    "file order): stored 8 judgments by 3 reviewers (2 Maybe), 1 record undecided")
    log = [(j.doc_id, j.reviewer, j.label, j.queue) for j in list_judgments(engine, "S")]
    assert log[:3] == [("r101", "Alice", "1", "newplatform"), ("r101", "Bob", "1", "newplatform"),
                       ("r102", "Alice", "0", "newplatform")]
    assert sum(label == "maybe" for _, _, label, _ in log) == 2
    again = CliRunner().invoke(create_cli(), ["import", "newplatform", str(ARTICLES), "--topic", "T",
                                              "--db", engine.url.render_as_string(hide_password=False)])
    assert again.exit_code == 2 and "already imported" in again.output, again.output
    assert list_judgments(engine, "S") and len(list_judgments(engine, "S")) == 8


def test_a_decisions_format_gets_its_route(with_new_format: ImportFormat, engine: Engine, empty_db_url: str) -> None:
    """The same format through the API: its route takes the file as the body under the entry's media types."""
    from fastapi.testclient import TestClient

    from reviewdepth.services.admin.keys import create_key

    writer = {"Authorization": f"Bearer {create_key(engine, 'ana', 'write')[1]}"}
    with TestClient(create_app(ApiSettings(database_url=empty_db_url))) as client:
        assert "/topics/{topic}/imports/newplatform" in client.get("/openapi.json").json()["paths"]
        response = client.post("/topics/S/imports/newplatform?queue=q1", content=ARTICLES.read_bytes(),
                               headers={**writer, "content-type": "text/csv"})
        assert response.status_code == 201, response.text
        body = response.json()
        assert (body["rows"], body["stored"], body["maybe"], body["queues"]) == (5, 8, 2, ["q1"])
        refused = client.post("/topics/T/imports/newplatform", content=b"x",
                              headers={**writer, "content-type": "image/png"})
        assert refused.status_code == 415
