"""MkDocs hook: the CLI reference and the HTTP API reference, generated at every build from the code itself —
the Typer application (`reviewdepth.cli.app.create_cli`) and the OpenAPI document of `reviewdepth.api.app.create_app`
(built over a throwaway settings object; no server starts and no database is opened) — so neither page can drift
from what the program does."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # MkDocs is needed by the build only; the tests import the generators without it
    from mkdocs.config.defaults import MkDocsConfig
    from mkdocs.structure.files import Files

CLI_PAGE = "reference/cli.md"
HTTP_PAGE = "reference/http-api.md"


def _escape(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ").replace("<", "&lt;").replace(">", "&gt;")


def _default(param: Any) -> str:
    default = param.default
    if param.required or default is None or callable(default):
        return ""
    if isinstance(default, bool):
        return "on" if default else "off"
    if isinstance(default, (list, tuple)):
        return " ".join(str(v) for v in default) if default else ""
    value = getattr(default, "value", default)
    return f"`{value}`"


def _command_section(name: str, command: Any, depth: int) -> list[str]:
    lines = [f"{'#' * depth} `reviewdepth {name}`", ""]
    ctx = command.context_class(command, info_name=f"reviewdepth {name}")
    group = hasattr(command, "commands")  # Typer's own Click classes: no isinstance check against click's
    if not group:
        lines += ["```text", command.get_usage(ctx), "```", ""]
    lines += [(command.help or "").strip(), ""]
    if group:
        for sub_name, sub in sorted(command.commands.items()):
            if not sub.hidden:
                lines += _command_section(f"{name} {sub_name}", sub, min(depth + 1, 4))
        return lines
    rows = []
    for param in command.params:
        if getattr(param, "hidden", False) or param.name == "help":
            continue
        if param.param_type_name == "argument":
            what = f"`{param.human_readable_name}` (argument{'' if param.required else ', optional'})"
        else:
            what = ", ".join(f"`{opt}`" for opt in [*param.opts, *param.secondary_opts])
        choices = getattr(param.type, "choices", None)
        kind = " | ".join(str(c) for c in choices) if choices else param.type.name
        meaning = getattr(param, "help", "") or ""
        rows.append(f"| {what} | {_escape(kind)} | {_escape(_default(param))} | {_escape(meaning)} |")
    if rows:
        lines += ["| parameter | type | default | meaning |", "| --- | --- | --- | --- |", *rows, ""]
    return lines


def cli_reference() -> str:
    """The reference of every ``reviewdepth`` command, from the Typer application."""
    import typer.main

    from reviewdepth.cli.app import create_cli

    root = typer.main.get_command(create_cli())
    lines = ["# CLI reference", "",
             "Generated from the Typer application at every build of this site (`docs/hooks/reference.py`); "
             "`reviewdepth COMMAND --help` prints the same text.", "",
             "```text", (root.help or "").strip(), "```", ""]
    for name, command in sorted(root.commands.items()):  # type: ignore[attr-defined]
        if not command.hidden:
            lines += _command_section(name, command, 2)
    return "\n".join(lines) + "\n"


def _schema_name(schema: dict[str, Any]) -> str:
    if "$ref" in schema:
        return str(schema["$ref"]).rsplit("/", 1)[-1]
    if "items" in schema:
        return f"array of {_schema_name(schema['items'])}"
    if "anyOf" in schema:
        return " or ".join(_schema_name(s) for s in schema["anyOf"])
    return str(schema.get("type", "object"))


def http_reference() -> str:
    """The reference of every HTTP route, from the OpenAPI document of the application factory."""
    from reviewdepth.api.app import create_app
    from reviewdepth.settings import Settings

    with tempfile.TemporaryDirectory() as folder:
        app = create_app(Settings(database_url=f"sqlite:///{Path(folder) / 'unused.sqlite3'}"))
        document = app.openapi()
    lines = ["# HTTP API reference", "",
             f"Generated from the OpenAPI {document['openapi']} document of `reviewdepth serve` (version "
             f"{document['info']['version']}) at every build of this site (`docs/hooks/reference.py`). A running "
             "server serves the same document at `/openapi.json`, with Swagger UI at `/docs`. Every route but "
             "`/health` needs an API key (`Authorization: Bearer KEY`, from `reviewdepth keys create`).", ""]
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            lines += [f"## `{method.upper()} {path}`", "", (operation.get("summary") or "").strip(), "",
                      (operation.get("description") or "").strip(), ""]
            params = operation.get("parameters", [])
            if params:
                lines += ["| parameter | in | type | required | meaning |", "| --- | --- | --- | --- | --- |"]
                lines += [f"| `{p['name']}` | {p['in']} | {_escape(_schema_name(p.get('schema', {})))} | "
                          f"{'yes' if p.get('required') else 'no'} | {_escape(p.get('description', ''))} |"
                          for p in params]
                lines.append("")
            body = operation.get("requestBody", {}).get("content", {})
            if body:
                lines += ["Request body: " + ", ".join(f"`{kind}` ({_schema_name(spec.get('schema', {}))})"
                                                       for kind, spec in body.items()), ""]
            responses = operation.get("responses", {})
            lines += ["Responses: " + ", ".join(f"{code} {_escape(r.get('description', ''))}"
                                                for code, r in responses.items()), ""]
    lines += ["## Schemas", "", "```json",
              json.dumps(sorted(document.get("components", {}).get("schemas", {})), indent=1), "```", ""]
    return "\n".join(lines) + "\n"


def on_files(files: Files, config: MkDocsConfig) -> Files:
    from mkdocs.structure.files import File

    for uri, content in ((CLI_PAGE, cli_reference()), (HTTP_PAGE, http_reference())):
        files.append(File.generated(config, uri, content=content))
    return files
