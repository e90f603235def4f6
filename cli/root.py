"""The ``reviewdepth`` group's own callback (``--version``): a module of its own because its option needs Typer
where it is defined, and `app` imports no Typer (``reviewdepth eval`` runs without it)."""

from __future__ import annotations

from typing import Annotated

import typer


# no docstring: the group's help is the one `create_cli` gives the Typer application
def root(version: Annotated[bool, typer.Option("--version", help="Print the version and exit.")] = False) -> None:
    if version:
        from reviewdepth import __version__

        typer.echo(f"reviewdepth {__version__}")
        raise typer.Exit(0)
