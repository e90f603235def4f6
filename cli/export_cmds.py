"""Export commands: ``export labels`` (ASReview CSV, CSV, overlay), ``export ris`` (RIS with ASReview's label
notes) and ``export queue`` (TREC or CLEF run)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from .common import DbOption, Policy, fail, handled_errors, open_engine

OutputOption = Annotated[str | None, typer.Option("--output", "-o", help="Write to FILE (default: standard output).")]


def _write(text: str, output: str | None) -> None:
    if output is None or output == "-":
        sys.stdout.write(text)
        return
    try:
        Path(output).write_text(text, encoding="utf-8")
    except OSError as exc:
        fail(f"{output}: cannot write: {exc.strerror or exc}")


def export_labels(
    topic: Annotated[str, typer.Argument(help="Topic name.")],
    fmt: Annotated[str, typer.Option("--format", help=(
        "asreview (record_id,asreview_label), csv (topic,doc_id,label) or overlay (Control Number,"
        "Responsiveness: Responsive / Not Responsive, judged documents only).")
    )] = "csv",
    policy: Annotated[Policy, typer.Option(
        "--policy", help="Label policy: latest, adjudicated, majority or any_relevant.")] = Policy.latest,
    as_of: Annotated[str | None, typer.Option("--as-of", help="Judgment id or ISO 8601 time.")] = None,
    output: OutputOption = None,
    db: DbOption = None,
) -> None:
    """Every document of the topic (its queues' documents, then judged ones in no queue) with its label."""
    from reviewdepth.services.review.exports import export_labels as service

    engine = open_engine(db)
    with handled_errors():
        exported = service(engine, topic, fmt, policy=policy, as_of=as_of)
    _write(exported.text, output)
    if output not in (None, "-"):
        typer.echo(f"wrote {exported.rows:,} documents of topic {topic!r} ({exported.relevant:,} relevant, "
                   f"{exported.nonrelevant:,} not) to {output} ({fmt}, policy {policy})")


def export_ris(
    topic: Annotated[str, typer.Argument(help="Topic name.")],
    records: Annotated[str | None, typer.Option(
        "--records", help="RIS file of the records (e.g. the one imported): written with every tag kept, in its "
        "order, then the topic's documents it lacks.")] = None,
    policy: Annotated[Policy, typer.Option(
        "--policy", help="Label policy: latest, adjudicated, majority or any_relevant.")] = Policy.latest,
    as_of: Annotated[str | None, typer.Option("--as-of", help="Judgment id or ISO 8601 time.")] = None,
    output: OutputOption = None,
    db: DbOption = None,
) -> None:
    """Every document of the topic as a RIS record with its label in ASReview's note (N1 ASReview_relevant,
    ASReview_irrelevant or ASReview_not_seen), which import ris and ASReview read back. Needs rispy."""
    from reviewdepth.services.review.exports import export_ris as service

    engine = open_engine(db)
    with handled_errors():
        exported = service(engine, topic, policy=policy, as_of=as_of, records=records)
    _write(exported.text, output)
    if output not in (None, "-"):
        typer.echo(f"wrote {exported.rows:,} records of topic {topic!r} ({exported.relevant:,} relevant, "
                   f"{exported.nonrelevant:,} not) to {output} (ris, policy {policy})")


def export_xlsx(
    topic: Annotated[str, typer.Argument(help="Topic name.")],
    output: Annotated[str, typer.Option("--output", "-o", help="Write to FILE (.xlsx).")],
    as_of: Annotated[str | None, typer.Option("--as-of", help="Judgment id or ISO 8601 time.")] = None,
    db: DbOption = None,
) -> None:
    """The topic's judgment log as an Excel workbook, one row per judgment in recording order, columns doc,
    label, reviewer, role, note, queue: import xlsx reads it back. Needs pip install 'reviewdepth[xlsx]'."""
    from reviewdepth.services.review.exports import export_xlsx as service

    engine = open_engine(db)
    with handled_errors():
        exported = service(engine, topic, as_of=as_of)
    try:
        Path(output).write_bytes(exported.data)
    except OSError as exc:
        fail(f"{output}: cannot write: {exc.strerror or exc}")
    typer.echo(f"wrote {exported.rows:,} judgments of topic {topic!r} ({exported.relevant:,} relevant) to "
               f"{output} (xlsx)")


def export_queue(
    topic: Annotated[str, typer.Argument(help="Topic name.")],
    queue: Annotated[str | None, typer.Option("--queue", help="Queue (default: the topic's only one).")] = None,
    fmt: Annotated[str, typer.Option("--format", help="trec (qid Q0 doc rank score tag) or clef (threshold "
                                     "flag 0/1, or the run's own action codes, in column 2).")] = "trec",
    output: OutputOption = None,
    db: DbOption = None,
) -> None:
    """A queue as a run file that trec_eval and reviewdepth eval rank in the queue's order."""
    from reviewdepth.services.review.exports import export_queue as service

    engine = open_engine(db)
    with handled_errors():
        exported = service(engine, topic, fmt, queue=queue)
    _write(exported.text, output)
    if output not in (None, "-"):
        typer.echo(f"wrote {exported.rows:,} ranked documents of topic {topic!r} to {output} ({fmt})")


def register_export(app: typer.Typer) -> None:
    export_app = typer.Typer(help="Write a topic's labels or a queue to a file other tools read.",
                             no_args_is_help=True, rich_markup_mode=None)
    app.add_typer(export_app, name="export")

    export_app.command("labels")(export_labels)
    export_app.command("queue")(export_queue)
    export_app.command("ris")(export_ris)
    export_app.command("xlsx")(export_xlsx)
