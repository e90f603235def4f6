"""`reviewdepth eval` without Typer (issue 16 item 2): the fast reading of its command line (`eval_cmd.parse_args`)
takes exactly what the Typer command built from the same table (`eval_cmd.PARAMS`) takes, leaves everything else
to Typer, and an ordinary evaluation loads neither Typer, nor the other commands, nor the tar suite, nor the
report models."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any
from unittest.mock import patch

import pytest
import typer
from typer.main import get_command
from typer.testing import CliRunner

from reviewdepth.cli import eval_cmd
from reviewdepth.cli.app import create_cli
from reviewdepth.cli.eval_cmd import PARAMS, parse_args, register_eval

# command lines the fast path must take (and read as Typer does)
ORDINARY = [
    ["q", "r"],
    ["-q", "q", "r"],
    ["q", "r", "-m", "map", "-m", "P.5,10", "--format", "json"],
    ["-qcJ", "-l2", "-M100", "-mmap", "q", "r"],
    ["q", "-", "--format=csv", "--measure=map", "--measure", "bpref", "-N", "12"],
    ["--suite", "tar", "--compat", "clef2017", "--run-format", "clef", "--num-docs", "5000", "q", "r"],
    ["--suite=tar", "--compat=asreview", "--num-docs=7", "--format", "table", "q", "r"],
    ["q", "r", "--trec-eval-version", "10", "-c", "--format", "html"],
    ["q", "r", "-l", "1", "-l", "2", "--format", "trec", "--format", "tar"],
    ["q", "r", "-m", "-q", "-q", "-q"],
    ["q", "r", "-l", " 2", "-M", "+3", "-N", "1_000"],
    ["q", "r", "-M", "-5", "-l", "-1"],
    ["-m=", "", "r"],
    ["q", "r", "-m", "--help"],
]
# command lines Typer must read (help, mistakes) or may read (what the fast path does not take)
UNUSUAL = [
    [], ["q"], ["q", "r", "x"], ["--help"], ["q", "r", "--help"], ["-h"], ["q", "r", "-qh"],
    ["q", "r", "--bogus"], ["q", "r", "-x"], ["q", "r", "-qx"], ["q", "r", "--q"], ["-5", "q", "r"],
    ["q", "r", "-l"], ["q", "r", "-m"], ["q", "r", "-J", "--measure"], ["q", "r", "-l", "abc"], ["q", "r", "-l=2"],
    ["q", "r", "-l", "2.0"], ["q", "r", "-q=1"], ["q", "r", "--format", "nope"], ["q", "r", "--format="],
    ["q", "r", "--suite", "TREC"], ["q", "r", "--for", "json"], ["q", "r", "--compat", "clef"],
    ["--", "q", "r"], ["q", "--", "-r"], ["q", "r", "--trec-eval-version", "ten"],
]


def typer_reading(args: list[str]) -> dict[str, Any] | None:
    """What the Typer command passes to its body for ``reviewdepth eval ARGS``; ``None`` when it runs no body
    (help, a usage error)."""
    seen: list[dict[str, Any]] = []
    app = typer.Typer()

    @app.callback()
    def root() -> None:
        """A group, as the real application is."""

    register_eval(app)
    with patch.object(eval_cmd, "run_eval", lambda **values: seen.append(values)):  # the body `eval_command` calls
        result = CliRunner().invoke(app, ["eval", *args])
    assert result.exit_code == 0 if seen else result.exit_code in (0, 2), result.output  # 0: help, 2: usage
    return seen[0] if seen else None


def typed(values: dict[str, Any] | None) -> dict[str, tuple[type, Any]] | None:
    return None if values is None else {name: (type(value), value) for name, value in values.items()}


@pytest.mark.parametrize("args", ORDINARY, ids=" ".join)
def test_the_fast_path_reads_ordinary_command_lines_as_typer(args: list[str]) -> None:
    fast = parse_args(args)
    assert fast is not None, "the fast path must take an ordinary command line"
    assert typed(fast) == typed(typer_reading(args))


@pytest.mark.parametrize("args", UNUSUAL, ids=" ".join)
def test_the_fast_path_leaves_help_and_mistakes_to_typer(args: list[str]) -> None:
    fast = parse_args(args)
    reading = typer_reading(args)
    if reading is None:
        assert fast is None, "Typer gives help or a usage error here; the fast path must leave it to Typer"
    elif fast is not None:
        assert typed(fast) == typed(reading)


def test_the_typer_command_is_the_table() -> None:
    """Names, option names, flags, types, choices, defaults and repetition of the Click parameters are the
    table's, the fast path's only source."""
    app = typer.Typer()

    @app.callback()
    def root() -> None:
        """A group."""

    register_eval(app)
    command = get_command(app).commands["eval"]  # type: ignore[attr-defined]
    assert [p.name for p in command.params] == [p.name for p in PARAMS]
    for param, clicked in zip(PARAMS, command.params, strict=True):
        if not param.flags:
            assert clicked.param_type_name == "argument" and clicked.required and clicked.nargs == 1
            continue
        assert tuple(clicked.opts) == param.flags and not clicked.secondary_opts
        assert clicked.is_flag == (param.kind is bool) and clicked.multiple == param.multiple
        expected = {bool: "boolean", int: "integer", str: "text"}.get(param.kind, "choice")
        assert clicked.type.name == expected
        if expected == "choice":
            assert list(clicked.type.choices) == [member.value for member in param.kind]  # type: ignore[attr-defined]
        default = clicked.default.value if hasattr(clicked.default, "value") else clicked.default
        assert default == (param.default.value if hasattr(param.default, "value") else param.default)


def write_tiny_files(tmp_path: Path) -> tuple[Path, Path]:
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text("301 0 d1 0\n301 0 d2 1\n302 0 d3 1\n")
    run.write_text("301 Q0 d1 1 2.5 tag\n301 Q0 d2 2 1.5 tag\n301 Q0 d4 3 1.0 tag\n302 Q0 d3 1 0.5 tag\n")
    return qrels, run


def console_script() -> str:
    # the installed console script (from a checkout, the source tree's reviewdepth/ has no cli/)
    return str(Path(sys.executable).with_name("reviewdepth"))


# what `reviewdepth eval` on a small trec-suite run may not load: Typer and Click, the other commands, the
# database, the tar suite, the report models and renderers other than trec_eval's lines
NOT_AT_START = ("typer", "click", "rich", "sqlalchemy", "scipy", "jinja2", "reviewdepth.store",
                "reviewdepth.estimation", "reviewdepth.measures.tar", "reviewdepth.measures.tar_suite",
                "reviewdepth.measures.depth", "reviewdepth.services.evaluation.evaluate_tar",
                "reviewdepth.report.model",
                "reviewdepth.report.tar_model", "reviewdepth.report.tar_output", "reviewdepth.report.monitor_model",
                "reviewdepth.report.compare_model", "reviewdepth.report.simulation_model")
ALLOWED_CLI = {"reviewdepth.cli", "reviewdepth.cli.app", "reviewdepth.cli.eval_cmd", "reviewdepth.cli.output",
               "reviewdepth.cli.allocator"}  # allocator: os and sys only, ctypes for large inputs alone


def test_eval_starts_without_typer_other_commands_or_the_tar_suite(tmp_path: Path) -> None:
    qrels, run = write_tiny_files(tmp_path)
    args = ["eval", "-q", "-m", "official", "-m", "ndcg", str(qrels), str(run)]
    done = subprocess.run([sys.executable, "-X", "importtime", console_script(), *args], capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    loaded = {line.split("|")[2].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    assert "reviewdepth.measures.suite" in loaded  # it did evaluate
    heavy = sorted(m for m in loaded if any(m == name or m.startswith(name + ".") for name in NOT_AT_START))
    assert heavy == []
    assert sorted(m for m in loaded if m.startswith("reviewdepth.cli") and m not in ALLOWED_CLI) == []
    # the same lines as through Typer
    through_typer = CliRunner().invoke(create_cli(), args)
    assert through_typer.exit_code == 0 and done.stdout == through_typer.stdout


def test_the_console_script_gives_typers_usage_errors_and_the_fast_paths_own(tmp_path: Path) -> None:
    qrels, run = write_tiny_files(tmp_path)
    usage = subprocess.run([console_script(), "eval", str(qrels), str(run), "-l", "abc"], capture_output=True,
                           text=True, timeout=120, check=False)
    assert usage.returncode == 2
    assert "Invalid value for '-l': 'abc' is not a valid integer." in usage.stderr
    assert usage.stderr.startswith("Usage: reviewdepth eval [OPTIONS] QRELS RUN")
    bad = subprocess.run([console_script(), "eval", str(qrels), str(tmp_path / "missing")], capture_output=True,
                         text=True, timeout=120, check=False)
    assert bad.returncode == 2 and bad.stderr.startswith("reviewdepth: error: ")
    assert len(bad.stderr.splitlines()) == 1 and "missing" in bad.stderr
