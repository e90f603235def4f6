"""``reviewdepth serve`` (the HTTP API under uvicorn) and ``reviewdepth keys`` (its bearer keys)."""

from __future__ import annotations

import functools
import json
import os
import sys
from enum import StrEnum
from typing import Annotated, cast

import typer

from .common import DbOption, ListFormat, fail, handled_errors, open_engine

# after SIGTERM, how long uvicorn waits for requests in flight before it cancels them; then the application's
# shutdown (at most `reviewdepth.api.jobs.STOP_GRACE_SECONDS` for a running simulation job): the server is gone
# well within the 10 s a container manager gives before SIGKILL
SHUTDOWN_REQUEST_SECONDS = 5


class Scope(StrEnum):
    read = "read"
    write = "write"
    adjudicate = "adjudicate"
    admin = "admin"


def serve(
    host: Annotated[str, typer.Option("--host", help="Interface to bind (0.0.0.0 in a container).")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="TCP port.")] = 8000,
    workers: Annotated[int, typer.Option("--workers", help=(
        "Worker processes. On SQLite one is fastest (writes run one at a time on the event loop; more workers "
        "queue on a file lock); on PostgreSQL, up to one per core."))] = 1,
    access_log: Annotated[bool, typer.Option("--access-log/--no-access-log", help="Log every request.")] = True,
    db: DbOption = None,
) -> None:
    """Run the HTTP API (FastAPI under uvicorn) over the review store."""
    import asyncio

    import uvicorn
    from pydantic import ValidationError

    from reviewdepth.api import ApiSettings, create_app
    from reviewdepth.api.timeouts import HeaderTimeoutProtocol
    from reviewdepth.services.admin.database import open_store
    from reviewdepth.settings import settings_problem
    from reviewdepth.store.schema import SchemaNotReady

    if workers < 1:
        fail("--workers must be at least 1")
    try:
        settings = ApiSettings(database_url=db) if db else ApiSettings()
    except ValidationError as exc:
        fail(settings_problem(exc, {"database_url": "--db"} if db else None))
    def notify(message: str) -> None:
        sys.stderr.write(f"reviewdepth: {message}\n")

    try:  # fail fast, before binding the port, when the schema is missing
        open_store(settings, notify=notify).dispose()
    except SchemaNotReady as exc:
        fail(str(exc))
    from reviewdepth.api.memory import return_large_buffers

    return_large_buffers()  # a request's large arrays go back to the system when freed (api/memory.py)
    # forwarded headers only from the configured proxies (uvicorn alone would trust any local client)
    # headers within REVIEWDEPTH_HEADER_TIMEOUT_SECONDS (uvicorn has no such bound: api/timeouts.py); uvicorn
    # calls the protocol "class" it is given, so a partial carries the setting (pickled to --workers N)
    protocol = cast(type[asyncio.Protocol], functools.partial(
        HeaderTimeoutProtocol, header_timeout_seconds=settings.header_timeout_seconds))
    run = functools.partial(uvicorn.run, host=host, port=port, access_log=access_log, http=protocol,
                            timeout_graceful_shutdown=SHUTDOWN_REQUEST_SECONDS,
                            proxy_headers=bool(settings.forwarded_allow_ips),
                            forwarded_allow_ips=settings.forwarded_allow_ips or None)
    if workers == 1:
        run(create_app(settings))
        return
    if db:
        os.environ["REVIEWDEPTH_DATABASE_URL"] = db
    run("reviewdepth.api:app_from_environment", factory=True, workers=workers)


def keys_create(
    reviewer: Annotated[str, typer.Option("--reviewer", help="The reviewer this key records judgments as.")],
    scope: Annotated[Scope, typer.Option("--scope", help=(
        "read; write (record judgments); adjudicate (write, and record adjudications); admin (everything, "
        "e.g. voiding samples)."))] = Scope.write,
    db: DbOption = None,
) -> None:
    """Create a key and print it once on stdout (only its SHA-256 digest is stored)."""
    from reviewdepth.services.admin.keys import create_key

    engine = open_engine(db)
    with handled_errors():
        record, secret = create_key(engine, reviewer, scope.value)
    typer.echo(f"key {record.id} for {record.reviewer} (scope {record.scope}); it is shown only now:", err=True)
    typer.echo(secret)


def keys_list(
    output_format: Annotated[ListFormat, typer.Option("--format")] = ListFormat.table,
    db: DbOption = None,
) -> None:
    """Keys with their reviewer, scope, prefix and state (never the secret)."""
    from reviewdepth.services.admin.keys import list_keys

    engine = open_engine(db)
    rows = [k.as_dict() for k in list_keys(engine)]
    if output_format is not ListFormat.table:
        sys.stdout.write(json.dumps(rows, indent=2) + "\n")
        return
    for row in rows:
        state = "active" if row["revoked_at"] is None else f"revoked {row['revoked_at']}"
        typer.echo(f"{row['id']}\t{row['reviewer']}\t{row['scope']}\t{row['prefix']}…\t{state}")


def keys_revoke(
    key_id: Annotated[int, typer.Argument(help="Key id (from `keys list`).")],
    db: DbOption = None,
) -> None:
    """Revoke a key: requests with it get 401 from now on."""
    from reviewdepth.services.admin.keys import revoke_key

    engine = open_engine(db)
    with handled_errors():
        record = revoke_key(engine, key_id)
    typer.echo(f"key {record.id} ({record.reviewer}, {record.prefix}…) revoked")


def register_api(app: typer.Typer) -> None:
    app.command("serve")(serve)

    keys_app = typer.Typer(help="Bearer keys of the HTTP API.", no_args_is_help=True, rich_markup_mode=None)
    app.add_typer(keys_app, name="keys")
    keys_app.command("create")(keys_create)
    keys_app.command("list")(keys_list)
    keys_app.command("revoke")(keys_revoke)
