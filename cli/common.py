"""Helpers shared by the CLI commands."""

from __future__ import annotations

import getpass
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from enum import StrEnum
from typing import Annotated, Any

import typer

from reviewdepth.estimation.target import Target, TargetError

from .output import fail as fail
from .output import write_result as write_result
from .output import write_rows as write_rows


class ListFormat(StrEnum):
    """How a listing command prints its rows."""

    table = "table"
    json = "json"
    csv = "csv"


# the choices below repeat declarations of the core (named beside each) because importing those modules would load
# numpy or SQLAlchemy on every command, `--help` included; tests/cli/test_choice_enums.py fails when they drift


class Policy(StrEnum):
    """How a document's judgments make its label (`reviewdepth.store.labels.POLICIES`)."""

    latest = "latest"
    adjudicated = "adjudicated"
    majority = "majority"
    any_relevant = "any_relevant"


class ReportInterval(StrEnum):
    """The exact intervals a report uses (`reviewdepth.estimation.assessment.REPORT_INTERVALS`)."""

    hypergeometric = "hypergeometric"
    clopper_pearson = "clopper-pearson"


def default_reviewer() -> str:
    """Who a command records as the reviewer when ``--reviewer`` is not given: the login name."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "cli"


def database_option_help() -> str:
    return "Database URL (default: $REVIEWDEPTH_DATABASE_URL, else the embedded SQLite file)."


# the --db option every store command takes
DbOption = Annotated[str | None, typer.Option("--db", help=database_option_help())]
# where a population import's records were identified (PRISMA 2020's identification boxes): declaring it adds the
# records to the topic's population (`reviewdepth.services.files.ris_import.store_population`); checked by the service
# so a bad type is the one-line error every bad input gets
SourceTypeOption = Annotated[str | None, typer.Option(
    "--source-type", help="Where the records were identified: database, register or other (websites, "
    "organisations, citation searching). With --source-name, the records are added to the topic's population "
    "(in a queue named after the source unless --queue names it) and counted per source by `reviewdepth prisma`.")]
SourceNameOption = Annotated[str | None, typer.Option(
    "--source-name", help="The source's name as the PRISMA diagram should show it (MEDLINE, Embase, "
    "ClinicalTrials.gov, citation searching); with --source-type.")]


def population_words(records: int, topic: str, source_type: str | None, source_name: str | None,
                     population: int) -> str:
    """How a population import's line begins: the records replaced the topic's population, or (a declared
    source) were added to it, with the population they make."""
    from reviewdepth.estimation.plural import counted

    if source_type is None:
        return f"imported {counted(records, 'record')} as the population of topic {topic!r}"
    return (f"added {counted(records, 'record')} from {source_type} {source_name!r} to the population of topic "
            f"{topic!r} (now {population:,})")


def target_option_value(given: str | Target) -> Target:
    """``--target`` as a `Target` (one parse, one range for every command); a bad value is Typer's usage error."""
    try:
        return Target.parse(given)
    except TargetError as exc:
        raise typer.BadParameter(str(exc)) from None


def target_option(help_text: str) -> Any:
    """The ``--target`` option of a command, parsed into a `Target` (`target_option_value`)."""
    return typer.Option("--target", parser=target_option_value, metavar="RECALL", help=help_text)


def confidence_option_help() -> str:
    from reviewdepth.services.evidence.confidence import CONFIDENCE_RULE

    return f"Confidence level, {CONFIDENCE_RULE}."


# the --confidence option of every command that takes one; the service checks the value (one line, exit 2)
ConfidenceOption = Annotated[float, typer.Option("--confidence", help=confidence_option_help())]


def settings_for(db: str | None) -> Any:
    """The settings (`reviewdepth.settings.Settings`) for ``--db``, or the environment's; a bad value of a
    ``REVIEWDEPTH_`` variable is one line naming it and exit code 2."""
    from reviewdepth.services.admin.database import store_settings
    from reviewdepth.services.errors import Invalid

    try:
        return store_settings(db or None, given_as="--db")
    except Invalid as exc:
        fail(str(exc))


def open_engine(db: str | None, *, migrate_default: bool = True, create_empty: bool = False) -> Any:
    """Engine for ``--db`` (or the environment, or the embedded default, created on first use); ``create_empty``:
    a database with no tables at all gets the schema too (the demo's first run on a new file)."""
    from reviewdepth.services.admin.database import open_store
    from reviewdepth.store.schema import SchemaNotReady

    def notify(message: str) -> None:
        sys.stderr.write(f"reviewdepth: {message}\n")

    try:
        return open_store(settings_for(db), notify=notify, create_empty=create_empty)
    except SchemaNotReady as exc:
        fail(str(exc))
    except Exception as exc:  # a database that does not answer: commands open it outside `handled_errors` too
        busy_exit(exc)
        raise


# the database was busy (a write gave up waiting for a lock: nothing was written) or unavailable: running the
# command again later is the remedy
BUSY_EXIT_CODE = 3


def busy_exit(exc: BaseException) -> None:
    """When ``exc`` says the database was busy or unavailable (`reviewdepth.store.busy`), one line naming the
    command and exit code 3; otherwise return."""
    from reviewdepth.store.busy import transient_error

    busy = transient_error(exc)
    if busy is None:
        return
    try:  # Typer runs on its own copy of Click
        from typer._click.globals import get_current_context
    except ImportError:
        from click import get_current_context  # type: ignore[no-redef]
    context = get_current_context(silent=True)
    words = context.command_path.split()[1:] if context is not None else []
    command = " ".join(["reviewdepth", *words])  # the program's own name, also under a test runner
    fail(busy.during(command, settings_for(None).busy_timeout_seconds).describe(), BUSY_EXIT_CODE)


@contextmanager
def handled_errors() -> Iterator[None]:
    """Bad input and refused requests become one line on stderr and exit code 2."""
    from reviewdepth.formats.errors import InputError
    from reviewdepth.services.errors import ServiceError
    from reviewdepth.store.chain import ChainBroken
    from reviewdepth.store.schema import SchemaNotReady
    from reviewdepth.store.validation import InvalidValue

    try:
        yield
    except InputError as exc:
        fail(exc.describe())
    except (ServiceError, InvalidValue, ChainBroken, SchemaNotReady) as exc:  # SchemaNotReady: a `db` command
        # on a database that does not exist (`store.schema.DatabaseMissing`)
        fail(str(exc))
    except Exception as exc:  # a busy database is the one other error with its own message
        busy_exit(exc)
        raise


@contextmanager
def row_progress(description: str) -> Iterator[Callable[[int], None] | None]:
    """A Rich progress counter on a terminal; nothing when output is redirected."""
    if not sys.stderr.isatty():
        yield None
        return
    from rich.progress import Progress, SpinnerColumn, TextColumn

    with Progress(SpinnerColumn(), TextColumn("{task.description} {task.completed:,} rows"), transient=True) as bar:
        task = bar.add_task(description, total=None)
        yield lambda n: bar.update(task, completed=n)


@contextmanager
def one_shot() -> Iterator[None]:
    """A command that runs once and exits: the cycle collector off for its run (the imports and the work make
    ~10⁶ objects and next to no cyclic garbage; its passes over them cost ~0.08 s; reference counting still frees
    everything). The status services load scipy on a second core themselves, once their reads begin
    (`reviewdepth.estimation.distributions.import_scipy_in_background`)."""
    import gc

    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()
