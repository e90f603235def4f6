"""Shell completion (issue 15 item 5): the root command offers --install-completion/--show-completion and the
completion protocol answers with the command names and options."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from reviewdepth.cli.app import create_cli


def complete(words: str, cword: int) -> str:
    """What bash completion asks the real command for ``words`` with the cursor on word ``cword``."""
    env = {**os.environ, "_REVIEWDEPTH_COMPLETE": "complete_bash", "COMP_WORDS": words, "COMP_CWORD": str(cword)}
    # the installed console script, as the shell runs it (``python -c`` from a checkout would import the source
    # tree's reviewdepth/, which has no cli/: the CLI package is mapped in at install time)
    script = Path(sys.executable).with_name("reviewdepth")
    done = subprocess.run([str(script)], env=env, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_help_offers_completion_installation() -> None:
    result = CliRunner().invoke(create_cli(), ["--help"])
    assert result.exit_code == 0
    assert "--install-completion" in result.stdout and "--show-completion" in result.stdout


def test_bash_completion_names_commands_subcommands_and_options() -> None:
    assert complete("reviewdepth imp", 1).split() == ["import"]
    assert complete("reviewdepth import c", 2).split() == ["csv", "covidence"]
    assert complete("reviewdepth import csv --da", 3).split() == ["--date-format"]
    assert "--level" in complete("reviewdepth import csv --le", 3).split()
