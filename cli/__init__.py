"""Typer command-line interface (installed as ``reviewdepth.cli``). Thin: parse, call services, render."""
