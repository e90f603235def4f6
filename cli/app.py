"""The ``reviewdepth`` command. Heavy imports stay inside command bodies so ``--help`` is instant."""

from __future__ import annotations

from typing import Annotated

import typer

from reviewdepth import __version__

from .api_cmds import register_api
from .eval_cmd import register_eval
from .report_cmds import register_reports
from .review_cmds import register_review
from .sample_cmds import register_samples
from .store_cmds import register_store


def create_cli() -> typer.Typer:
    """Build the Typer application (a factory: tests build their own)."""
    app = typer.Typer(
        name="reviewdepth",
        help="How deep to review a ranked queue to reach a target recall; trec_eval-exact measures.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        # plain help: Rich's help renderer costs ~0.1 s on every `--help`
        rich_markup_mode=None,
    )

    @app.callback(invoke_without_command=True)
    def root(
        version: Annotated[bool, typer.Option("--version", help="Print the version and exit.")] = False,
    ) -> None:
        if version:
            typer.echo(f"reviewdepth {__version__}")
            raise typer.Exit(0)

    register_eval(app)
    register_store(app)
    register_samples(app)
    register_reports(app)
    register_review(app)
    register_api(app)
    return app


def main() -> None:
    create_cli()(prog_name="reviewdepth")


if __name__ == "__main__":
    main()
