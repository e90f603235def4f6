"""What the commands print through: one-line failures, the one result dispatch, and listings of records.

Importable without Typer: ``reviewdepth eval`` runs without it when its arguments need no Typer (`app.main`), and
these are all its body prints with. `common` re-exports both for the other commands."""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
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


def write_rows(rows: Sequence[Mapping[str, object]], output_format: str, columns: Sequence[str], *, title: str,
               shown: Sequence[str] | Mapping[str, str] | None = None, as_json: object = None) -> None:
    """A listing of records on stdout: ``json`` (``as_json`` when given, else ``rows``), ``csv`` (a header of
    ``columns``, then each row's), or a ``table`` of the ``shown`` columns (default: ``columns``) under ``title``,
    headed by the headings ``shown`` maps them to, else by their names in words (``doc_id``: "doc id"); a narrow
    terminal folds long values rather than cut them. None is an empty cell."""
    if output_format == "json":
        import json

        sys.stdout.write(json.dumps(rows if as_json is None else as_json, indent=2) + "\n")
        return
    cells = [["" if row[c] is None else str(row[c]) for c in columns] for row in rows]
    if output_format == "csv":

        from reviewdepth.formats.cells import CsvRows, neutralised

        writer = CsvRows(sys.stdout)
        writer.writerow(columns)
        # text cells (notes, ids, names) that start like a formula are marked as text; numbers are left as they are
        writer.writerows([neutralised(cell) if isinstance(row[c], str) else cell for c, cell in zip(columns, line,
                                                                                                  strict=True)]
                         for row, line in zip(rows, cells, strict=True))
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title)
    headings = shown if isinstance(shown, Mapping) else {c: c.replace("_", " ") for c in shown or columns}
    picked = [columns.index(c) for c in headings]
    for heading in headings.values():
        table.add_column(heading, overflow="fold")
    for line in cells:
        table.add_row(*(line[i] for i in picked))
    Console().print(table)
