"""``reviewdepth watch``: the anytime-valid stop signal, printed again whenever the topic changes."""

from __future__ import annotations

import json
import math
import sys
import time
from enum import StrEnum
from typing import Annotated, Any

import typer

from reviewdepth.estimation.target import DEFAULT_TARGET, Target

from .common import (
    ConfidenceOption,
    DbOption,
    Policy,
    fail,
    handled_errors,
    one_shot,
    open_engine,
    target_option,
    write_result,
)


class WatchFormat(StrEnum):
    table = "table"
    json = "json"


def _show(report: Any, output_format: WatchFormat, compact: bool) -> None:
    if output_format is WatchFormat.json and compact:  # one JSON document per line while watching (JSON Lines)
        sys.stdout.write(json.dumps(report.to_dict(), ensure_ascii=False, allow_nan=False) + "\n")
    else:
        write_result(report, output_format.value)
    sys.stdout.flush()


def watch(
    topic: Annotated[str, typer.Argument(help="Topic name.")],
    queue: Annotated[str | None, typer.Option(
        "--queue", help="The queue the review follows (default: the topic's newest).")] = None,
    target: Annotated[Target, target_option("Target recall in (0, 1], fixed before the review starts.")]
    = DEFAULT_TARGET,
    confidence: ConfidenceOption = 0.95,
    interval: Annotated[float, typer.Option(
        "--interval", help="Seconds between checks for a change (judgments, queues, samples, the stream).")
    ] = 10.0,
    once: Annotated[bool, typer.Option(
        "--once", help="Print once and exit: 0 when the stop is certified, 1 otherwise (for scripts).")] = False,
    policy: Annotated[Policy, typer.Option("--policy", help="Label policy (latest, adjudicated, …).")] = Policy.latest,
    output_format: Annotated[WatchFormat, typer.Option(
        "--format", help="table, or json (while watching: one JSON document per line).")] = WatchFormat.table,
    db: DbOption = None,
) -> None:
    """Can we stop now? The anytime-valid stop signal from the topic's audit stream: valid however often you
    look. Prints the status, then again after each change, until the stop is certified (exit 0) or Ctrl-C
    (exit 1). With --once: print and exit 0 (certified) or 1 (continue). Bad input exits 2."""
    if not math.isfinite(interval) or interval <= 0:
        fail(f"--interval: must be a positive number of seconds, not {interval!r}")
    if once:  # one look and exit: the report command's set-up (no cycle collector, scipy.special loading aside)
        with one_shot():
            _watch(topic, queue, target, confidence, interval, once, policy, output_format, db)
    else:
        _watch(topic, queue, target, confidence, interval, once, policy, output_format, db)


def _watch(topic: str, queue: str | None, target: Target, confidence: float, interval: float, once: bool,
           policy: str, output_format: WatchFormat, db: str | None) -> None:
    from reviewdepth.services.answers.monitor import build_monitor, change_marker

    engine = open_engine(db)

    def current() -> Any:
        with handled_errors():
            return build_monitor(engine, topic, queue=queue, target=target, confidence=confidence,
                                 policy=policy)

    def marker() -> Any:
        with handled_errors():
            return change_marker(engine, topic)

    try:
        seen = marker()
        report = current()
        _show(report, output_format, compact=not once)
        if once or report.certified:
            raise typer.Exit(0 if report.certified else 1)
        while True:
            time.sleep(interval)
            now = marker()
            if now == seen:
                continue
            seen = now
            report = current()
            if output_format is WatchFormat.table:
                typer.echo("")
            _show(report, output_format, compact=True)
            if report.certified:
                raise typer.Exit(0)
    except KeyboardInterrupt:
        typer.echo("reviewdepth: watch stopped (the stop is not certified)", err=True)
        raise typer.Exit(1) from None


def register_monitor(app: typer.Typer) -> None:
    app.command("watch")(watch)
