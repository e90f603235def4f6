"""What the commands print through: one-line failures and the one result dispatch.

Importable without Typer: ``reviewdepth eval`` runs without it when its arguments need no Typer (`app.main`), and
these are all its body prints with. `common` re-exports both for the other commands."""

from __future__ import annotations

import sys
from typing import Any, NoReturn


def fail(message: str, code: int = 2) -> NoReturn:
    """One clear line on stderr and a non-zero exit; never a traceback for bad input.

    ``SystemExit`` rather than Typer's ``Exit``: inside a Typer command it ends the process with the same code,
    and it needs no Typer where none was imported."""
    sys.stderr.write(f"reviewdepth: error: {message}\n")
    raise SystemExit(code)


def write_result(result: Any, output_format: str, *, per_query: bool = False, output: Any = None) -> None:
    """Print a result (`reviewdepth.report.render.Result`) through the one dispatch: to stdout, or to the path
    ``output``. A table on stdout goes through a Rich console of the terminal's width and colours."""
    from reviewdepth.report.render import render, rich_view

    if output_format == "table" and output is None:
        from rich.console import Console

        Console().print(rich_view(result, per_query=per_query))
        return
    text = render(result, output_format, per_query=per_query)  # type: ignore[arg-type]
    if output is None:
        sys.stdout.write(text)
    else:
        import typer  # only the commands that write files get here, all of them under Typer

        output.write_text(text, encoding="utf-8")
        typer.echo(f"wrote {output}", err=True)
