"""Every API endpoint and every CLI command is a module-level function, importable by the name it carries
(issue 27): ``from reviewdepth.api.routers.topics import list_topics``, ``from reviewdepth.cli.report_cmds import
report``. The factories (`create_app`, `create_cli`) only register them; none is a closure of a ``register_*`` or
``add_routes`` call, so a tool or a test can walk the doors by name."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import typer
from starlette.routing import Route

from reviewdepth.api.app import create_app
from reviewdepth.api.settings import ApiSettings
from reviewdepth.cli.app import create_cli


def reachable_by_name(function: Callable[..., Any]) -> bool:
    """Whether importing ``function.__module__`` and following ``function.__qualname__`` gives ``function``
    itself (a nested function's qualified name holds ``<locals>``, which no attribute leads through)."""
    target: Any = importlib.import_module(function.__module__)
    for part in function.__qualname__.split("."):
        target = getattr(target, part, None)
    return target is function


def endpoints(tmp_path: Path) -> list[tuple[str, Callable[..., Any]]]:
    """The application's routes, each as methods and path: the API's and the docs pages' (not FastAPI's own
    ``/openapi.json``, defined in FastAPI)."""
    app = create_app(ApiSettings(database_url=f"sqlite:///{tmp_path / 'unused.db'}"))  # opened only at startup
    routes = [route for route in app.routes if isinstance(route, Route)]
    assert len(routes) == len(app.routes)  # no mount or other kind of route the walk would miss
    return [(f"{sorted(route.methods or ())} {route.path}", route.endpoint) for route in routes
            if not route.endpoint.__module__.startswith("fastapi.")]


def commands(app: typer.Typer, path: str = "reviewdepth") -> Iterator[tuple[str, Callable[..., Any]]]:
    """The callbacks of ``app``: its own, each command's, and those of its groups, each with its command line."""
    if app.registered_callback is not None and app.registered_callback.callback is not None:
        yield path, app.registered_callback.callback
    for command in app.registered_commands:
        assert command.callback is not None
        yield f"{path} {command.name}", command.callback
    for group in app.registered_groups:
        assert group.typer_instance is not None
        yield from commands(group.typer_instance, f"{path} {group.name}")


def test_every_api_endpoint_is_a_module_level_function(tmp_path: Path) -> None:
    found = endpoints(tmp_path)
    paths = {route.split("] ", 1)[1] for route, _ in found}
    assert len(found) >= 35 and {"/topics", "/docs", "/docs/assets/swagger-ui.css"} <= paths  # routers, docs pages
    nested = [f"{route}: {e.__module__}.{e.__qualname__}" for route, e in found
              if "<locals>" in e.__qualname__ or not reachable_by_name(e)]
    assert nested == []
    # and each is the function its router module names
    from reviewdepth.api.routers.topics import list_topics

    assert list_topics in [e for _, e in found]


def test_every_cli_command_is_a_module_level_function() -> None:
    found = list(commands(create_cli()))
    names = {line for line, _ in found}
    assert {"reviewdepth", "reviewdepth eval", "reviewdepth report", "reviewdepth keys create",
            "reviewdepth audit verify", "reviewdepth sample plan", "reviewdepth plan"} <= names
    nested = [f"{line}: {c.__module__}.{c.__qualname__}" for line, c in found
              if "<locals>" in c.__qualname__ or not reachable_by_name(c)]
    assert nested == []


@pytest.mark.parametrize("made", ["closure", "lambda"])
def test_the_walk_tells_a_nested_function(made: str) -> None:
    """The check can fail: a command defined inside a registering function is refused."""
    app = typer.Typer()

    def register(app: typer.Typer) -> None:
        if made == "closure":
            @app.command("inner")
            def inner() -> None:
                """A closure."""
        else:
            app.command("inner")(lambda: None)

    register(app)
    ((line, callback),) = commands(app)
    assert line == "reviewdepth inner"
    assert "<locals>" in callback.__qualname__ and not reachable_by_name(callback)
