"""``reviewdepth portfolio``: the team's completed topics, and the calibration of the heuristic stopping rules on
them that the depth report then shows beside each heuristic."""

from __future__ import annotations

import json
import sys
from enum import StrEnum
from typing import Annotated

import typer

from reviewdepth.estimation.target import DEFAULT_TARGET, Target

from .common import (
    ConfidenceOption,
    DbOption,
    ListFormat,
    default_reviewer,
    fail,
    handled_errors,
    open_engine,
    target_option,
)


class CalibrationFormat(StrEnum):
    table = "table"
    json = "json"


def portfolio_add(
    topics: Annotated[list[str], typer.Argument(help="Fully judged topics.")],
    reviewer: Annotated[str | None, typer.Option("--reviewer", help="Who adds them (default: login).")] = None,
    db: DbOption = None,
) -> None:
    """Mark completed (fully judged) topics as the team's portfolio. A topic that is not fully judged is
    refused, by name, and then nothing is added."""
    from reviewdepth.services.simulation.portfolio import add_topics

    engine = open_engine(db)
    with handled_errors():
        added = add_topics(engine, topics, reviewer=reviewer or default_reviewer())
    for entry in added:
        typer.echo(f"{entry.topic}\tin the portfolio since {entry.as_dict()['added_at']} ({entry.added_by})")


def portfolio_remove(
    topics: Annotated[list[str], typer.Argument(help="Topics of the portfolio.")],
    db: DbOption = None,
) -> None:
    """Take topics out of the portfolio (their judgments stay)."""
    from reviewdepth.services.simulation.portfolio import remove_topics

    engine = open_engine(db)
    with handled_errors():
        removed = remove_topics(engine, topics)
    for name in removed:
        typer.echo(f"{name}\tremoved from the portfolio")


def portfolio_list(
    output_format: Annotated[ListFormat, typer.Option("--format")] = ListFormat.table,
    db: DbOption = None,
) -> None:
    """The portfolio's topics, and the latest calibration's settings."""
    from reviewdepth.services.simulation.portfolio import latest_calibration, list_portfolio

    engine = open_engine(db)
    rows = [e.as_dict() for e in list_portfolio(engine)]
    calibration = latest_calibration(engine)
    if output_format is ListFormat.json:
        body = {"topics": rows, "calibration": None if calibration is None else calibration.as_dict()}
        sys.stdout.write(json.dumps(body, indent=2, ensure_ascii=False) + "\n")
        return
    if output_format is ListFormat.csv:

        from reviewdepth.formats.cells import CsvRows, safe_row

        writer = CsvRows(sys.stdout)
        writer.writerow(["topic", "added_at", "added_by"])
        writer.writerows(safe_row([r["topic"], r["added_at"], r["added_by"]]) for r in rows)
        return
    for row in rows:
        typer.echo(f"{row['topic']}\t{row['added_at']}\t{row['added_by']}")
    if calibration is None:
        typer.echo("not calibrated yet: reviewdepth portfolio calibrate", err=True)
    else:
        typer.echo(f"latest calibration {calibration.id}: {calibration.topic_count} topics, target "
                   f"{calibration.target}, {calibration.as_dict()['created_at']}", err=True)


def portfolio_calibrate(
    target: Annotated[Target, target_option("Target recall in (0, 1).")] = DEFAULT_TARGET,
    confidence: ConfidenceOption = 0.95,
    replicates: Annotated[int, typer.Option(
        "--replicates", help="Seeded replays per topic (knee and budget read no sample: under the design none "
                             "every replicate is the same run).")] = 1,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the replays.")] = 17,
    workers: Annotated[int, typer.Option("--workers", help="Worker processes.")] = 1,
    looks: Annotated[str, typer.Option(
        "--looks", help="every:K: the replayed team looks after every K ranked documents.")] = "every:100",
    design: Annotated[str, typer.Option(
        "--design", help="none (default: knee and budget), rest, population or audit (adds the one-look rules "
                         "repeated at every look that the design allows).")] = "none",
    sample_size: Annotated[int, typer.Option("--sample-size", help="Sample size (rest, population).")] = 0,
    every: Annotated[int, typer.Option("--every", help="One audit document per EVERY ranked (audit).")] = 0,
    output_format: Annotated[CalibrationFormat, typer.Option("--format")] = CalibrationFormat.table,
    db: DbOption = None,
) -> None:
    """Replay every portfolio topic with the heuristic stopping rules and store, per rule, its failure rate
    (stops below the target) with a Clopper–Pearson interval and its cost; `reviewdepth report` then shows
    them beside each heuristic rule."""
    if replicates < 1 or workers < 1:
        fail("--replicates and --workers must be at least 1")
    from reviewdepth.services.simulation.portfolio import CalibrationInterrupted, calibrate
    from reviewdepth.services.simulation.simulate import parse_looks

    from .simulate_cmds import INTERRUPTED_EXIT_CODE, _Progress

    engine = open_engine(db)
    shown = _Progress(True) if sys.stderr.isatty() else None  # a bar on a terminal only
    try:
        with handled_errors():
            try:
                record = calibrate(engine, target=target, confidence=confidence, replicates=replicates,
                                   seed=seed, look_every=parse_looks(looks), design=design,
                                   sample_size=sample_size, every=every, workers=workers,
                                   reviewer=default_reviewer(), progress=shown)
            except (CalibrationInterrupted, KeyboardInterrupt):
                fail("calibrate interrupted: nothing was stored", INTERRUPTED_EXIT_CODE)
    finally:
        if shown is not None:
            shown.close()
    if output_format is CalibrationFormat.json:
        sys.stdout.write(json.dumps(record.as_dict(), indent=2, ensure_ascii=False) + "\n")
        return
    typer.echo(f"calibration {record.id}: {record.topic_count} topics, target {record.target}, "
               f"confidence {record.confidence:g}")
    for rule in record.rules:
        typer.echo(f"{rule['rule']}\t{rule.get('text', '')}")


def register_portfolio(app: typer.Typer) -> None:
    portfolio_app = typer.Typer(help="Completed topics the heuristic stopping rules are calibrated on.",
                                no_args_is_help=True, rich_markup_mode=None)
    app.add_typer(portfolio_app, name="portfolio")

    portfolio_app.command("add")(portfolio_add)
    portfolio_app.command("remove")(portfolio_remove)
    portfolio_app.command("list")(portfolio_list)
    portfolio_app.command("calibrate")(portfolio_calibrate)
