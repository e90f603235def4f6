"""Every Python example of the documentation runs: each page's ```python blocks are executed in order in one
namespace (as a reader pastes them into a notebook); a page that defines ``review_through(client)`` has it called
with an `rd.Client` on a live server. No page's example imports a private module of the package."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from contextlib import redirect_stdout
from io import StringIO
from pathlib import Path

import pytest

import reviewdepth as rd

from ..api.server import started_server

ROOT = Path(__file__).parents[2]
DOCS = ROOT / "docs"
PAGES = sorted(path for path in [*DOCS.rglob("*.md"), ROOT / "README.md"]
               if "```python" in path.read_text(encoding="utf-8"))
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
PRIVATE = re.compile(r"^\s*(from|import)\s+reviewdepth\.(?!cli\b)", re.M)


def test_the_pages_with_python_are_found() -> None:
    names = {path.relative_to(ROOT).as_posix().removeprefix("docs/") for path in PAGES}
    assert {"README.md", "getting-started/systematic-review.md", "getting-started/ediscovery.md",
            "getting-started/ir-research.md", "simulate.md"} <= names


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_the_python_examples_of_a_page_run(page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # the README's example reads the repository's test data by relative path
    blocks = BLOCK.findall(page.read_text(encoding="utf-8"))
    assert blocks
    for block in blocks:
        assert not PRIVATE.search(block), f"{page.name}: an example imports a private module:\n{block}"
    namespace: dict[str, object] = {"__name__": "__docs__"}
    printed = StringIO()
    with redirect_stdout(printed):
        for block in blocks:
            exec(compile(block, str(page), "exec"), namespace)  # the documentation's own code
    review_through = namespace.get("review_through")
    if callable(review_through):
        db_url = f"sqlite:///{tmp_path / 'server.sqlite3'}"
        env = {**os.environ, "REVIEWDEPTH_DATABASE_URL": db_url}
        command = [sys.executable, "-m", "reviewdepth.cli.app"]
        # from tmp_path: from the checkout's root `-m` would find the source folder before the installed package
        subprocess.run([*command, "db", "upgrade"], env=env, check=True, capture_output=True, timeout=120,
                       cwd=tmp_path)
        key = subprocess.run([*command, "keys", "create", "--reviewer", "docs"], env=env, check=True,
                             capture_output=True, text=True, timeout=120, cwd=tmp_path).stdout.strip()
        with started_server(db_url, tmp_path) as server:
            plan = review_through(rd.Client(server.base, key))
        assert plan["topic"] == "matter-17" and plan["reviewed"] == 40


def _hook() -> object:
    import importlib.util

    spec = importlib.util.spec_from_file_location("docs_reference_hook", DOCS / "hooks" / "reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_generated_cli_reference_has_every_command_and_option() -> None:
    import typer.main

    from reviewdepth.cli.app import create_cli

    page = _hook().cli_reference()  # type: ignore[attr-defined]
    root = typer.main.get_command(create_cli())

    def walk(prefix: str, command: object) -> None:
        commands = getattr(command, "commands", None)
        if commands is None:
            assert f"`reviewdepth {prefix}`" in page, prefix
            for param in command.params:  # type: ignore[attr-defined]
                for opt in param.opts if param.param_type_name == "option" else []:
                    assert f"`{opt}`" in page.split(f"`reviewdepth {prefix}`", 1)[1], (prefix, opt)
            return
        for name, sub in commands.items():
            walk(f"{prefix} {name}".strip(), sub)

    walk("", root)


def test_the_generated_http_reference_has_every_route(tmp_path: Path) -> None:
    from reviewdepth.api.app import create_app
    from reviewdepth.settings import Settings

    page = _hook().http_reference()  # type: ignore[attr-defined]
    document = create_app(Settings(database_url=f"sqlite:///{tmp_path / 'x.sqlite3'}")).openapi()
    for path, operations in document["paths"].items():
        for method in operations:
            assert f"## `{method.upper()} {path}`" in page
