"""A database that does not exist is a usage error (exit code 2) whose one line says what to create, never the
transient "database unavailable … run it again" (exit code 3) that running it again cannot cure: a PostgreSQL
database the server does not have (issue 39), and a SQLite file whose directory does not exist (a read command
creates no directory for a mistyped path; ``db upgrade`` still creates it)."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url
from typer.testing import CliRunner

from reviewdepth.cli.app import create_cli
from reviewdepth.store.engine import create_engine_for

from ..conftest import postgres_server_url


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(create_cli(), list(args))
    return result.exit_code, result.stdout, result.stderr


def missing_postgres_url() -> str:
    """A URL of the test server naming a database it does not have (a random name no test creates)."""
    server = make_url(postgres_server_url())
    return server.set(drivername="postgresql", database=f"rd_nosuch_{uuid.uuid4().hex[:10]}").render_as_string(
        hide_password=False)


@pytest.mark.parametrize("command", [["topics"], ["db", "current"], ["db", "upgrade"], ["report", "1"]])
def test_a_postgres_database_that_does_not_exist_says_create_it(command: list[str]) -> None:
    url = missing_postgres_url()
    name = make_url(url).database
    code, _, err = invoke(*command, "--db", url)
    assert code == 2, err
    assert f"the PostgreSQL database '{name}' does not exist" in err
    assert "createdb" in err and f"CREATE DATABASE {name};" in err
    assert f"reviewdepth db upgrade --db {make_url(url).render_as_string(hide_password=True)}" in err
    assert "unavailable" not in err and "run it again" not in err and len(err.strip().splitlines()) == 1


def test_the_missing_database_is_no_transient_error() -> None:
    from sqlalchemy import text
    from sqlalchemy.exc import OperationalError

    from reviewdepth.store.busy import missing_database_name, transient_error

    url = missing_postgres_url()
    engine = create_engine_for(url)
    try:
        with pytest.raises(OperationalError) as raised, engine.connect() as conn:
            conn.execute(text("SELECT 1"))
    finally:
        engine.dispose()
    assert missing_database_name(raised.value) == make_url(url).database
    assert transient_error(raised.value) is None


def test_a_server_that_does_not_answer_is_still_unavailable() -> None:
    """The other side of the line: a refused connection stays transient (exit code 3)."""
    import socket

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    code, _, err = invoke("topics", "--db", f"postgresql://postgres@127.0.0.1:{port}/anything")
    assert code == 3 and "database unavailable" in err


@pytest.mark.parametrize("command", [["topics"], ["db", "current"], ["report", "1"], ["judge", "1", "d", "1"]])
def test_a_sqlite_file_in_a_missing_directory_says_create_the_directory(tmp_path: Path,
                                                                         command: list[str]) -> None:
    directory = tmp_path / "nope" / "dir"
    url = f"sqlite:///{directory / 'x.sqlite3'}"
    code, _, err = invoke(*command, "--db", url)
    assert code == 2, err
    assert f"its directory {directory} does not exist" in err and f"mkdir -p {directory}" in err
    assert "choose another path" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "nope").exists()  # nothing made of the mistyped path


def test_db_upgrade_creates_the_directory_and_then_the_commands_work(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'new' / 'dir' / 'x.sqlite3'}"
    assert invoke("db", "upgrade", "--db", url)[0] == 0
    code, out, err = invoke("topics", "--db", url)
    assert code == 0 and "no topics" in (out + err).lower(), err


def test_a_directory_that_cannot_be_created_is_one_line(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory\n")
    url = f"sqlite:///{blocker / 'dir' / 'x.sqlite3'}"
    code, _, err = invoke("db", "upgrade", "--db", url)
    assert code == 2 and "could not be created" in err and "Traceback" not in err
