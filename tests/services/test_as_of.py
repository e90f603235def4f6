"""`--as-of` naming a judgment that was never recorded (issue 26 item 3): every command that takes it refuses it
in one line with exit code 2 instead of answering as of the whole log; an id of any topic's judgment stays a point
in the one log. On SQLite and PostgreSQL."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import Engine
from typer.testing import CliRunner

from reviewdepth.cli.app import create_cli
from reviewdepth.services.answers.monitor import build_monitor
from reviewdepth.services.errors import NotFound
from reviewdepth.services.files.imports import import_run
from reviewdepth.services.review.judgments import list_judgments, record_judgment

NEVER = "99999999"


def reviewed(engine: Engine, tmp_path: Path) -> list[int]:
    """Topics T (a queue of six, two reviewers on d1 and d2) and U (one judgment); the judgment ids."""
    run = tmp_path / "q.run"
    run.write_text("".join(f"{topic} Q0 d{i} {i} {7 - i} s\n" for topic in "TU" for i in range(1, 7)))
    import_run(engine, str(run))
    return [record_judgment(engine, topic, doc, label, reviewer=who).id
            for topic, doc, label, who in (("T", "d1", "1", "ann"), ("T", "d2", "0", "ann"), ("U", "d1", "1", "ann"),
                                           ("T", "d1", "0", "bob"), ("T", "d2", "0", "bob"))]


COMMANDS = [["report", "T"], ["plot", "T", "-o", "{tmp}/gain.svg"], ["judgments", "T"], ["queue", "show", "T"],
            ["export", "labels", "T"], ["conflicts", "T"], ["agreement", "T"], ["prisma", "T"]]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c[:2]))
def test_every_as_of_command_refuses_an_id_never_recorded(engine: Engine, tmp_path: Path,
                                                           command: list[str]) -> None:
    ids = reviewed(engine, tmp_path)
    args = [a.replace("{tmp}", str(tmp_path)) for a in command]
    db = ["--db", engine.url.render_as_string(hide_password=False)]
    result = CliRunner().invoke(create_cli(), [*args, "--as-of", NEVER, *db])
    assert result.exit_code == 2 and result.stderr == (
        f"reviewdepth: error: --as-of {NEVER}: no judgment has this id (the last one recorded is {ids[-1]})\n")
    # U's judgment, between T's, is a point of T's log too
    result = CliRunner().invoke(create_cli(), [*args, "--as-of", str(ids[2]), *db])
    assert result.exit_code == 0, result.stderr


def test_the_services_refuse_it_at_both_doors(engine: Engine, tmp_path: Path) -> None:
    ids = reviewed(engine, tmp_path)
    with pytest.raises(NotFound, match=f"--as-of {NEVER}: no judgment has this id"):
        list_judgments(engine, "T", as_of=NEVER)
    with pytest.raises(NotFound, match="--as-of 0: no judgment has this id"):
        build_monitor(engine, "T", target="0.5", as_of=0)
    assert [j.id for j in list_judgments(engine, "T", as_of=str(ids[2]))] == ids[:2]
    assert [j.id for j in list_judgments(engine, "T", as_of="2999-01-01T00:00:00")] == ids[:2] + ids[3:]
