"""What the commands print through: one-line failures, the one result dispatch, and listings of records.

Importable without Typer: ``reviewdepth eval`` runs without it when its arguments need no Typer (`app.main`), and
these are all its body prints with. `common` re-exports both for the other commands."""

from __future__ import annotations

import re
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
               shown: Sequence[str] | Mapping[str, str] | None = None, as_json: object = None,
               keep_whole: Sequence[str] = ()) -> None:
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
    from rich import box
    from rich.console import Console
    from rich.table import Table

    # a narrow, frameless table (80 columns hold a topic listing): every id, count and timestamp stays whole on one
    # line (so `grep` finds it); only words wrap
    table = Table(title=title, box=box.SIMPLE_HEAD, padding=(0, 0, 0, 0), show_edge=False)
    headings = shown if isinstance(shown, Mapping) else {c: c.replace("_", " ") for c in shown or columns}
    shown_cells = [[display_cell(row[c], identifier=c == "id" or c.endswith("_id") or c in ("seed", "as_of"))
                    for c in headings] for row in rows]
    for index, (key, heading) in enumerate(headings.items()):
        values = [line[index] for line in shown_cells]
        numeric = bool(values) and all(_NUMBER.fullmatch(v) or v == "—" for v in values)
        # the row's id and the columns named in ``keep_whole`` never fold; other ids, names, counts and timestamps
        # stay whole while they are short; a long token (a digest, a path, a long queue name) may fold
        longest = WHOLE_KEPT if key in keep_whole else WHOLE_MAX
        whole = numeric or all(" " not in v and len(v) <= longest for v in values)
        if not whole and all(_SHOWN_TIMESTAMP.fullmatch(v) or v == "—" for v in values):
            # a time stays one line where there is room, else its date over its time (never inside either)
            table.add_column(heading.replace(" ", "\n"), no_wrap=False, overflow="fold", min_width=10)
            continue
        table.add_column(heading.replace(" ", "\n"),  # headings stack their words: columns as narrow as their values
                         justify="right" if numeric else "left", no_wrap=whole, overflow="fold",
                         min_width=max([len(v) for v in values] + [len(w) for w in heading.split()]) if whole
                         # a token column with a long value: the shorter tokens stay whole, the long one folds
                         else max([min(longest, len(v)) for v in values if " " not in v]
                                  + [len(w) for w in heading.split()]),
                         # words wrap at their spaces before any whole column is squeezed
                         max_width=None if whole or any(" " not in v and len(v) > longest for v in values)
                         else max([len(w) for v in values for w in v.split()] + [len(w) for w in heading.split()]))
    for line in shown_cells:
        table.add_row(*line)
    Console().print(table)


# a token up to this long stays whole (up to WHOLE_KEPT in a column the caller keeps whole: the row's id)
WHOLE_MAX = 12
WHOLE_KEPT = 16
_NUMBER = re.compile(r"-?[\d,]+(\.\d+)?")
_SHOWN_TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}")
_TIMESTAMP = re.compile(r"(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2})(\.\d+)?(\+00:00|Z)?")


def display_cell(value: object, *, identifier: bool = False) -> str:
    """A value as a person reads it in a table: counts with thousands separators (an ``identifier`` without), yes/no
    for booleans, "—" for none, timestamps to the second (UTC, no microseconds); no Python literal (True, None)
    ever shows."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value) if identifier else f"{value:,}"
    text = str(value)
    stamp = _TIMESTAMP.fullmatch(text)
    if stamp:
        return f"{stamp.group(1)} {stamp.group(2)}"
    return text
