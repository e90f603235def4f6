"""``--target`` is parsed once, by the option, into a `Target` for every command that takes one: a value outside
(0, 1] or not a number is Typer's usage error (exit 2, before any database is opened); recall 1 is accepted by
the commands that read it (report, watch, topics) and refused in one line by those that certify it with a sample."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from reviewdepth.cli.app import create_cli

# every command with a --target option, with the arguments it needs before the option
COMMANDS = [
    ("report", "T"), ("watch", "T", "--once"), ("plan", "T"), ("validation", "T", "--format", "json"),
    ("methods", "T"), ("topics",), ("sample", "plan", "T"), ("sample", "stream", "start", "T", "--every", "auto"),
    ("sample", "stream", "pace", "T", "auto"), ("simulate", "T"), ("portfolio", "calibrate"),
]


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(create_cli(), list(args))
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c[:3]))
@pytest.mark.parametrize("value, words", [
    ("1.2", "the target recall must be in (0, 1], not 1.2"), ("0", "the target recall must be in (0, 1], not 0"),
    ("-0.5", "the target recall must be in (0, 1], not -0.5"),
    ("x", "'x' is not a number (a recall in (0, 1], e.g. 0.95)"),
])
def test_a_bad_target_is_the_usage_error_of_every_command(tmp_path: Path, command: tuple[str, ...], value: str,
                                                          words: str) -> None:
    db = tmp_path / "never.db"
    code, out, err = invoke(*command, "--target", value, "--db", f"sqlite:///{db}")
    assert code == 2 and out == "", err
    assert f"Error: Invalid value for '--target': {words}" in err and "Usage: reviewdepth " in err, err
    assert not db.exists()  # refused before the database is opened


@pytest.mark.parametrize("command", [("plan", "T"), ("sample", "plan", "T"), ("validation", "T", "--format", "json"),
                                     ("simulate", "T")], ids=lambda c: " ".join(c[:2]))
def test_recall_1_is_refused_in_one_line_where_a_sample_must_certify_it(tmp_path: Path,
                                                                         command: tuple[str, ...]) -> None:
    db = f"sqlite:///{tmp_path / 'x.db'}"
    assert invoke("db", "upgrade", "--db", db)[0] == 0
    run = tmp_path / "t.run"
    run.write_text("".join(f"T Q0 d{i} {i + 1} {20 - i} sys\n" for i in range(20)))
    assert invoke("import", "run", str(run), "--db", db)[0] == 0
    code, out, err = invoke(*command, "--target", "1.0", "--db", db)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1, err
    assert "target: no random sample can certify recall 1.0 (only judging every document knows it)" in err, err


def test_recall_1_and_every_spelling_reach_the_report(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'r.db'}"
    assert invoke("db", "upgrade", "--db", db)[0] == 0
    run = tmp_path / "t.run"
    run.write_text("".join(f"T Q0 d{i} {i + 1} {20 - i} sys\n" for i in range(20)))
    assert invoke("import", "run", str(run), "--db", db)[0] == 0
    for i in range(8):
        assert invoke("judge", "T", f"d{i}", "1" if i % 3 == 0 else "0", "--db", db)[0] == 0
    code, out, err = invoke("report", "T", "--target", ".90", "--target", "1", "--target", "19/20", "--format",
                            "json", "--db", db)
    assert code == 0, err
    assert '"targets": [\n      ".90",\n      "1",\n      "19/20"\n    ]' in out  # the text as given
