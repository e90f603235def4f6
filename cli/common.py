"""Helpers shared by the CLI commands."""

from __future__ import annotations

import sys
from typing import NoReturn

import typer


def fail(message: str, code: int = 2) -> NoReturn:
    """One clear line on stderr and a non-zero exit; never a traceback for bad input."""
    sys.stderr.write(f"reviewdepth: error: {message}\n")
    raise typer.Exit(code)
