"""Duplicate records: ``import records`` (their bibliographic fields) and ``dedupe``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from .common import (
    DbOption,
    ListFormat,
    SourceNameOption,
    SourceTypeOption,
    default_reviewer,
    handled_errors,
    open_engine,
    population_words,
)
from .output import write_rows

if TYPE_CHECKING:
    from reviewdepth.services.files.records_import import RecordsImportSummary

DUPLICATE_COLUMNS = ("doc_id", "kept", "basis", "similarity", "rank", "kept_rank", "flagged", "decisions")


def import_records(
    file: Annotated[str, typer.Argument(help="Records file: CSV, TSV or .xlsx (Scopus, Embase, SYNERGY, ASReview "
                                             "datasets; one record per row), or RIS for a topic's fields.")],
    topic: Annotated[str, typer.Option("--topic", help="The topic whose population (a new topic, one without a "
                                                       "queue, or with --queue) or documents the records are.")],
    queue: Annotated[str | None, typer.Option(
        "--queue", help="Store the records as the topic's population, a queue of this name in file order "
        "(default for a new topic or one without a queue: records).")] = None,
    ids: Annotated[str, typer.Option(
        "--ids", help="Document ids: auto (the id column, record_id, id, doc_id …, when every row has a value "
        "and none repeats; else positions), position (0-based, as ASReview's record_id) or a column's name "
        "(RIS: auto, position or tag).")] = "auto",
    reviewer: Annotated[str, typer.Option(
        "--reviewer", help="Reviewer of the labels in the file's label column (asreview_label, included, label, "
        "final_included, label_included …).")] = "asreview",
    again: Annotated[bool, typer.Option("--again", help="Import a file already imported into this topic.")
                     ] = False,
    source_type: SourceTypeOption = None,
    source_name: SourceNameOption = None,
    db: DbOption = None,
) -> None:
    """Store a records file as a topic's population (a new topic, one without a queue, or with --queue): its
    population size and a queue of the records in file order, labels in a label column, as ASReview reads them
    (1/0, yes/no, y/n; empty: none), as judgments. Into a topic that has a queue (without --queue) the records
    must be its documents and only their bibliographic fields are stored, for `reviewdepth dedupe`. Either way
    title, year, DOI, PMID and first author are stored when the file has them. With --source-type and
    --source-name (one search's records: MEDLINE, a trial register, citation searching) the records are added
    to the topic's population, each source in its own queue, for PRISMA's per-source counts. Needs pip install
    'reviewdepth[xlsx]' for a workbook."""
    from reviewdepth.services.files.records_import import import_records as service

    engine = open_engine(db)
    with handled_errors():
        s = service(engine, file, topic=topic, queue_name=queue, ids=ids, reviewer=reviewer, again=again,
                    source_type=source_type, source_name=source_name)
    typer.echo(records_summary(s))


def records_summary(s: RecordsImportSummary) -> str:
    """The line ``import records`` prints."""
    from reviewdepth.estimation.plural import counted

    if not s.population:
        return (f"stored the bibliographic fields of {counted(s.fields, 'record')} of topic {s.topics[0]!r} "
                f"({s.with_title:,} with a title, {s.with_doi:,} with a DOI; {s.replaced:,} replaced) "
                f"(import {s.import_id}, sha256 {s.digest[:12]}…)")
    label = f"from column {s.label_column!r}" if s.label_column else "(no label column)"
    return (f"{population_words(s.rows, s.topics[0], s.source_type, s.source_name, s.population_size)} (queue "
            f"{s.queues[0]!r} in file order; {s.ids}): stored {counted(s.stored, 'judgment')} {label} "
            f"({s.relevant:,} relevant), {counted(s.unlabelled, 'record')} unlabelled, 0 refused (import "
            f"{s.import_id}, sha256 {s.digest[:12]}…)")


def dedupe(
    topic: Annotated[str, typer.Argument(help="The topic whose records to check.")],
    apply: Annotated[bool, typer.Option(
        "--apply", help="Flag the duplicates in the judgment log and copy their decisions to the record kept.")
    ] = False,
    queue: Annotated[str | None, typer.Option(
        "--queue", help="The queue whose order decides the record kept (default: the topic's only queue).")] = None,
    threshold: Annotated[float, typer.Option(
        "--title-threshold", min=50.0, max=100.0,
        help="Title similarity (0-100, RapidFuzz ratio on normalised titles of one year) that makes a match.")
    ] = 95.0,
    not_duplicate: Annotated[str | None, typer.Option(
        "--not-duplicate", help="Withdraw the duplicate flag of this document (it counts in its own right again).")
    ] = None,
    reviewer: Annotated[str | None, typer.Option(
        "--reviewer", help="Who flags (or withdraws) them (default: login).")] = None,
    output_format: Annotated[ListFormat, typer.Option("--format", help="table, json or csv.")] = ListFormat.table,
    db: DbOption = None,
) -> None:
    """Find records that are one work (same DOI, same PMID, or titles of one year at least --title-threshold
    similar, first authors agreeing) and list them; with --apply, flag each duplicate (every label policy then
    excludes it, PRISMA counts it as removed before screening) and copy each reviewer's decision on it to the
    record kept when they have none there. Needs `reviewdepth import records` first and pip install
    'reviewdepth[dedupe]'."""
    from reviewdepth.services.files import dedupe as service
    engine = open_engine(db)
    who = reviewer or default_reviewer()
    with handled_errors():
        if not_duplicate is not None:
            judgment = service.withdraw_duplicate(engine, topic, not_duplicate, reviewer=who)
            typer.echo(f"withdrew the duplicate flag of {not_duplicate!r} (judgment {judgment})")
            return
        result = service.apply_duplicates(engine, topic, reviewer=who, queue=queue, title_threshold=threshold) \
            if apply else service.find_topic_duplicates(engine, topic, queue=queue, title_threshold=threshold)
    rows = [dict(d.__dict__) for d in result.duplicates]
    if output_format != ListFormat.table:
        write_rows(rows, output_format, DUPLICATE_COLUMNS, title="duplicates", as_json=result.as_dict())
        return
    write_rows(rows, "table", DUPLICATE_COLUMNS, title=f"duplicates of topic {topic!r}")
    flagged = sum(d.flagged for d in result.duplicates)
    typer.echo(f"{result.records:,} records compared: {result.groups:,} groups, {len(result.duplicates):,} "
               f"duplicates ({flagged:,} flagged)"
               + (f"; flagged {result.flags_written:,} now and merged {result.decisions_merged:,} decisions into "
                  "the records kept" if result.applied else
                  "; nothing written (--apply flags them)" if len(result.duplicates) > flagged else ""))


def register_dedupe(app: typer.Typer) -> None:
    app.command("dedupe")(dedupe)
