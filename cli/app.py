"""The ``reviewdepth`` command. Heavy imports stay inside command bodies so ``--help`` is instant."""

from __future__ import annotations

import errno
import gc
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import typer


def create_cli() -> typer.Typer:
    """Build the Typer application (a factory: tests build their own)."""
    import typer

    from .api_cmds import register_api
    from .compare_cmds import register_compare
    from .eval_cmd import register_eval
    from .export_cmds import register_export
    from .monitor_cmds import register_monitor
    from .portfolio_cmds import register_portfolio
    from .report_cmds import register_reports
    from .review_cmds import register_review
    from .root import root
    from .sample_cmds import register_plan, register_samples
    from .simulate_cmds import register_simulate
    from .store_cmds import register_store

    app = typer.Typer(
        name="reviewdepth",
        help="How deep to review a ranked queue to reach a target recall; trec_eval-exact measures.",
        no_args_is_help=True,
        add_completion=True,
        pretty_exceptions_enable=False,
        # plain help: Rich's help renderer costs ~0.1 s on every `--help`
        rich_markup_mode=None,
    )

    app.callback(invoke_without_command=True)(root)
    register_eval(app)
    register_compare(app)
    register_store(app)
    register_export(app)
    register_samples(app)
    register_plan(app)
    register_reports(app)
    register_review(app)
    register_monitor(app)
    register_portfolio(app)
    register_simulate(app)
    register_api(app)
    return app


def only_the_invoked_command(app: typer.Typer, args: list[str]) -> typer.Typer:
    """``app`` keeping only the command or group that ``args`` invoke.

    Typer turns the signature of every registered command into a Click command on each run (~20 ms for two dozen
    commands); when the first argument names a command or group, no other one can run. Any other first argument
    (none, ``--help``, ``--version``, a typo) keeps them all, so help and "no such command" are unchanged."""
    from typer.main import get_command_name

    if not args or args[0].startswith("-"):
        return app
    names = [(info, info.name or (info.callback and get_command_name(info.callback.__name__)))
             for info in app.registered_commands]
    commands = [info for info, name in names if name == args[0]]
    groups = [info for info in app.registered_groups if info.name == args[0]]
    if commands or groups:
        app.registered_commands, app.registered_groups = commands, groups
    return app


# Read-only commands that have written and flushed everything when they return: the process ends there, without
# the interpreter's teardown of the ~700 modules a report loads (~0.15 s; the OS closes the database files).
QUICK_EXIT_COMMANDS = frozenset({"report", "eval", "watch"})


# the variable that asks the program for shell completions (Click's `_{PROG}_COMPLETE`)
COMPLETION_VARIABLE = "_REVIEWDEPTH_COMPLETE"


def eval_without_typer(args: list[str]) -> bool:
    """Run ``reviewdepth eval`` when ``args`` are an ordinary eval command line (`eval_cmd.parse_args`), without
    importing Typer or any other command (together ~0.1 s, most of the start-up on a small file), and end with
    `SystemExit` as Click would; ``False``, having done nothing, for anything else."""
    if args[:1] != ["eval"] or COMPLETION_VARIABLE in os.environ:
        return False
    # The process ends with this one evaluation, which makes few reference cycles, while the imports it starts
    # allocate enough objects to set off the cycle collector again and again (7 % of the CPU of an eval of the
    # CLEF 2019 runs). Only here, in the command's own process: in-process callers (tests) keep theirs.
    gc.disable()
    from .eval_cmd import parse_args, run_eval

    values = parse_args(args[1:])
    if values is None:
        gc.enable()  # Typer takes the command line over
        return False
    as_click_runs_it(lambda: run_eval(**values))
    sys.exit(0)  # as Click's standalone mode ends: main() then skips the interpreter's teardown (QUICK_EXIT_COMMANDS)


def as_click_runs_it(command: Callable[[], None]) -> None:
    """Run a command with the endings Click's standalone mode gives a command it runs (``typer.core._main``):
    end of input is "Aborted!" and exit 1, Ctrl-C exit 130, a closed output pipe exit 1 with nothing printed."""
    try:
        command()
    except EOFError:
        sys.stderr.write("\nAborted!\n")
        sys.exit(1)
    except KeyboardInterrupt:
        sys.exit(130)
    except OSError as exc:
        if exc.errno != errno.EPIPE:
            raise
        # as Click's PacifyFlushWrapper: the interpreter's last flush of the closed pipe must not complain
        sink = os.open(os.devnull, os.O_WRONLY)
        for stream in (sys.stdout, sys.stderr):
            os.dup2(sink, stream.fileno())
        sys.exit(1)


def one_blas_thread() -> None:
    """One OpenBLAS thread unless the user chose otherwise: no command does large linear algebra, and numpy's
    import otherwise starts a pool of spinning BLAS threads (0.04 s of CPU at every start on 2 cores, and
    threads competing with the run scanner's)."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def main() -> None:
    one_blas_thread()  # before anything imports numpy
    args = sys.argv[1:]
    try:
        if not eval_without_typer(args):
            only_the_invoked_command(create_cli(), args)(prog_name="reviewdepth")
    except Exception as exc:  # commands outside `handled_errors` get the busy message too
        from .common import busy_exit

        busy_exit(exc)
        raise
    except SystemExit as done:
        if args[:1] and args[0] in QUICK_EXIT_COMMANDS and (done.code is None or isinstance(done.code, int)):
            try:
                sys.stdout.flush()
                sys.stderr.flush()
            except OSError:  # e.g. a closed pipe: the interpreter's own exit reports it
                raise done from None
            os._exit(done.code or 0)
        raise


if __name__ == "__main__":
    main()
