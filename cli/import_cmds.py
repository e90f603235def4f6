"""``reviewdepth import FORMAT``: one command per format of `reviewdepth.formats.importers.FORMATS`, in its order.

A format with a command of its own (its options and summary line, in `cli.store_cmds` and `cli.dedupe_cmds`)
is registered with it; a format that stores decisions and has none gets the shared command `decisions_command`
builds from its registry entry.
"""

# no `from __future__ import annotations`: the shared command's annotations carry the entry's help texts, read
# by Typer from the function object, so they are evaluated where the command is built
from collections.abc import Callable, Mapping
from enum import StrEnum
from typing import Annotated

import typer

from reviewdepth.estimation.plural import counted
from reviewdepth.formats.importers import DECISIONS_OPTIONS, FORMATS, ImportFormat

from .common import DbOption, handled_errors, open_engine

# the format choices, from the registry
ImportFormatName = StrEnum("ImportFormatName", [(f.name, f.name) for f in FORMATS])  # type: ignore[misc]

_HELP = {option.name: option.help for option in DECISIONS_OPTIONS}


def decisions_command(entry: ImportFormat) -> Callable[..., None]:
    """The command of a format whose reader gives decided records (`reviewdepth.services.files.importers`)."""

    def command(
        file: Annotated[str, typer.Argument(help=entry.file_help)],
        topic: Annotated[str, typer.Option("--topic", help=_HELP["topic"])],
        queue: Annotated[str | None, typer.Option("--queue", help=_HELP["queue_name"])] = None,
        again: Annotated[bool, typer.Option("--again", help=_HELP["again"])] = False,
        db: DbOption = None,
    ) -> None:
        from reviewdepth.services.files.importers import use_case

        engine = open_engine(db)
        with handled_errors():
            s = use_case(entry)(engine, file, format=entry.name, topic=topic, queue_name=queue, again=again)
        typer.echo(f"imported {counted(s.rows, 'record')} as the population of topic {s.topics[0]!r} (queue "
                   f"{s.queues[0]!r} in file order): stored {counted(s.stored, 'judgment')} by "
                   f"{counted(s.reviewers, 'reviewer')} ({s.maybe:,} Maybe), {counted(s.unlabelled, 'record')} "
                   f"undecided, 0 refused (import {s.import_id}, sha256 {s.digest[:12]}…)")

    command.__doc__ = f"Store {entry.description}."
    command.__name__ = f"import_{entry.name}"
    return command


def register_imports(import_app: typer.Typer, commands: Mapping[str, Callable[..., None]]) -> None:
    """Register one command per registered format, in the registry's order: ``commands`` (the formats' own, by
    format name), else the shared decisions command. A command of an unregistered format (`ValueError`) or a
    format with neither (`LookupError`) is a programming error, caught by every CLI test."""
    own = {ImportFormatName(name): command for name, command in commands.items()}
    for entry in FORMATS:
        command = own.get(ImportFormatName(entry.name))
        if command is None:
            if entry.stores != "decisions":
                raise LookupError(f"import format {entry.name!r} has no command")
            command = decisions_command(entry)
        import_app.command(entry.name)(command)
