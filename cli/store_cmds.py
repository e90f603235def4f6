"""Store commands: ``db``, ``import``, ``judge``, ``judgments``, ``topics`` and ``queue``."""

from __future__ import annotations

import getpass
import json
import sys
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated

import typer

from reviewdepth.estimation.plural import counted, noun
from reviewdepth.estimation.target import DEFAULT_TARGET, Target

from .common import (
    DbOption,
    ListFormat,
    Policy,
    SourceNameOption,
    SourceTypeOption,
    default_reviewer,
    fail,
    handled_errors,
    open_engine,
    population_words,
    row_progress,
    settings_for,
    target_option,
    write_rows,
)
from .dedupe_cmds import register_dedupe

if TYPE_CHECKING:
    from reviewdepth.services.files.rayyan_import import RayyanImportSummary


class Role(StrEnum):
    """The role a judgment is given in (`reviewdepth.store.models.USER_ROLES`)."""

    review = "review"
    sample = "sample"
    qc = "qc"
    adjudication = "adjudication"
    audit = "audit"


def db_upgrade(revision: Annotated[str, typer.Argument(help="Target revision.")] = "head",
               db: DbOption = None) -> None:
    """Apply migrations up to REVISION (default: the latest)."""
    from reviewdepth.services.admin.database import upgrade_database

    with handled_errors():
        current = upgrade_database(settings_for(db), revision)
    typer.echo(f"database at revision {current}")


def db_downgrade(revision: Annotated[str, typer.Argument(help="Target revision (base = empty).")],
                 yes: Annotated[bool, typer.Option("--yes", help=(
                     "Really revert: the tables and columns listed are dropped with their data."))] = False,
                 force: Annotated[bool, typer.Option("--force", help=(
                     "Also revert a migration whose loss changes what the remaining data mean (listed as LOSES "
                     "MEANING: revision 0015's maybe decisions, 0019's evidence chain)."))] = False,
                 db: DbOption = None) -> None:
    """Revert migrations down to REVISION. Prints what each reverted migration drops; needs --yes, and --force
    when a reverted migration's loss changes what the remaining data mean."""
    from reviewdepth.services.admin.database import downgrade_database, downgrade_plan

    settings = settings_for(db)
    with handled_errors():
        plan = downgrade_plan(settings, revision)
    if plan:
        sys.stderr.write(f"reviewdepth db downgrade {revision} reverts {counted(len(plan), 'migration')}; each "
                         f"drops its tables and columns with the data in them:\n")
        for step in plan:
            sys.stderr.write(f"  {step.describe()}\n")
        # down to base nothing is left whose meaning could change: the listing already says every table goes
        lossy = [step for step in plan if step.loses is not None] if revision != "base" else []
        if lossy and not force:
            lost = "; ".join(f"{step.revision}: {step.loses}" for step in lossy)
            fail(f"nothing was changed: this downgrade loses meaning ({lost}); run again with --yes --force to "
                 "downgrade anyway")
        if not yes:
            fail("nothing was changed: run again with --yes to downgrade")
    with handled_errors():
        current = downgrade_database(settings, revision)
    typer.echo(f"database at revision {current or 'base'}")


def db_current(db: DbOption = None) -> None:
    """Print the database's schema revision and the latest one."""
    from reviewdepth.services.admin.database import database_revisions

    with handled_errors():
        current, head = database_revisions(settings_for(db))
    typer.echo(f"current: {current or 'none (run reviewdepth db upgrade)'}\nlatest:  {head}")


def import_run(
    file: Annotated[str, typer.Argument(help="TREC or CLEF TAR run (gzip ok, '-' for stdin).")],
    queue: Annotated[str | None, typer.Option(
        "--queue", help="Queue name (default: each topic's run tag, the one most of its lines carry).")] = None,
    order: Annotated[str, typer.Option("--order", help="given (file order) or trec_eval (score).")] = "given",
    topic: Annotated[list[str] | None, typer.Option(
        "--topic", help="Import only this topic of the file (repeat for more; default: every topic).")] = None,
    again: Annotated[bool, typer.Option("--again", help="Import a file already imported.")] = False,
    db: DbOption = None,
) -> None:
    """Store a run: one queue per topic; topics are created as needed. With --topic, only those topics (a
    topic not in the file is refused, and nothing is stored); the file is refused as already imported only for
    topics an earlier import of it took."""
    from reviewdepth.services.files.imports import import_run as service

    engine = open_engine(db)
    with handled_errors(), row_progress("importing") as progress:
        summary = service(engine, file, queue_name=queue, order=order, again=again, progress=progress,
                          topics=topic)
    queues = summary.queues
    into = f"queue {queues[0]!r}" if len(queues) == 1 else (
        f"{len(queues):,} queues named after their topics' run tags ("
        + ", ".join(repr(q) for q in queues[:3]) + (", …" if len(queues) > 3 else "") + ")")
    typer.echo(f"imported {counted(summary.rows, 'ranked document')} into {into} of "
               f"{counted(len(summary.topics), 'topic')} (import {summary.import_id}, sha256 {summary.digest[:12]}…)")
    for note in summary.notes:
        typer.echo(f"  {note}")


def import_qrels(
    file: Annotated[str, typer.Argument(help="TREC qrels (gzip ok, '-' for stdin).")],
    reviewer: Annotated[str, typer.Option("--reviewer", help="Who judged.")] = "qrels",
    level: Annotated[int, typer.Option("--level", help="Values >= N are relevant.")] = 1,
    again: Annotated[bool, typer.Option("--again", help="Import a file already imported.")] = False,
    db: DbOption = None,
) -> None:
    """Store qrels as judgments (graded values kept; relevant = value >= --level)."""
    from reviewdepth.services.files.imports import import_qrels as service

    engine = open_engine(db)
    with handled_errors(), row_progress("importing") as progress:
        summary = service(engine, file, reviewer=reviewer, level=level, again=again, progress=progress)
    typer.echo(f"imported {counted(summary.rows, 'judgment')} for {counted(len(summary.topics), 'topic')} "
               f"(import {summary.import_id}, sha256 {summary.digest[:12]}…)")


def import_csv(
    file: Annotated[str, typer.Argument(help="CSV/TSV export (UTF-8, UTF-8-BOM or Windows-1252).")],
    mapping: Annotated[str | None, typer.Option(
        "--map", help="doc=COL,label=COL[,topic=COL,rank=COL,score=COL,reviewer=COL,time=COL,role=COL]")] = None,
    topic: Annotated[str | None, typer.Option("--topic", help="Topic (when no topic column).")] = None,
    reviewer: Annotated[str, typer.Option("--reviewer", help="Reviewer when no column names one.")] = "import",
    level: Annotated[int, typer.Option("--level", help="Numeric labels >= N are relevant.")] = 1,
    again: Annotated[bool, typer.Option("--again", help="Import a file already imported.")] = False,
    role: Annotated[str, typer.Option(
        "--role", help="review, sample, qc, adjudication or audit (when no role column is mapped).")] = "review",
    queue: Annotated[str | None, typer.Option(
        "--queue", help="The queue the judgments were served from (default: the topic's newest); with a "
        "rank column, the name of the queue the file stores (default: the file name).")] = None,
    allow_unqueued: Annotated[bool, typer.Option(
        "--allow-unqueued", help="Record documents that are in no queue of the topic.")] = False,
    date_format: Annotated[str | None, typer.Option(
        "--date-format", help="Format of the time column in strftime syntax, e.g. '%m/%d/%Y %H:%M' (default: "
        "ISO 8601, or day/month/year or month/day/year when a day above 12 in the file decides).")] = None,
    db: DbOption = None,
) -> None:
    """Store a screening or review-platform export. Document, label and topic columns are recognised by their
    names without --map (doc, doc_id, record_id, …; label, asreview_label, relevance, …; topic, qid, …); a
    header naming none or two is refused with the --map values that would read it. Documents in no queue of
    the topic are refused unless --allow-unqueued."""
    from reviewdepth.services.files.imports import import_csv as service

    engine = open_engine(db)
    with handled_errors(), row_progress("importing") as progress:
        summary = service(engine, file, mapping=mapping, topic=topic, reviewer=reviewer, level=level,
                          again=again, progress=progress, role=role, queue_name=queue,
                          allow_unqueued=allow_unqueued, date_format=date_format)
    typer.echo(f"imported {counted(summary.rows, 'row')} for {noun(len(summary.topics), 'topic')} "
               f"{', '.join(summary.topics)} (import {summary.import_id}, sha256 {summary.digest[:12]}…): stored "
               f"{counted(summary.stored, 'judgment')}, skipped {counted(summary.unlabelled, 'unlabelled row')}, "
               "refused 0"
               + (f"; queue {summary.queues[0]!r} from the rank column" if summary.queues else ""))


def import_asreview(
    file: Annotated[str, typer.Argument(help="ASReview LAB project file (.asreview).")],
    topic: Annotated[str | None, typer.Option("--topic", help="Topic (default: the project's name).")] = None,
    queue: Annotated[str | None, typer.Option(
        "--queue", help="Name of the queue of ASReview's review order (default: asreview).")] = None,
    reviewer: Annotated[str, typer.Option(
        "--reviewer", help="Reviewer of decisions without an ASReview user (user N: REVIEWER-user-N)."
    )] = "asreview",
    again: Annotated[bool, typer.Option("--again", help="Import a file already imported.")] = False,
    db: DbOption = None,
) -> None:
    """Store an ASReview project: a topic, a queue in ASReview's order (labelled records in labelling order,
    then the model's ranking), and its decisions as judgments with their reviewer and time."""
    from reviewdepth.services.files.asreview_import import import_asreview as service

    engine = open_engine(db)
    with handled_errors():
        s = service(engine, file, topic=topic, queue_name=queue, reviewer=reviewer, again=again)
    typer.echo(f"imported ASReview project {s.project!r} into topic {s.topics[0]!r}: {counted(s.rows, 'record')} in "
               f"queue {s.queues[0]!r}; stored {counted(s.stored, 'judgment')} "
               f"({counted(s.labelled, 'current decision')}, {s.relevant:,} relevant; "
               f"{counted(s.replaced, 'replaced decision')}); {counted(s.unlabelled, 'record')} unlabelled "
               f"({s.pending:,} shown, undecided); {counted(s.withdrawn, 'withdrawn decision')} not stored; 0 refused "
               f"(import {s.import_id}, sha256 {s.digest[:12]}…)")


def import_ris(
    file: Annotated[str, typer.Argument(help="RIS file of the records to screen.")],
    topic: Annotated[str, typer.Option("--topic", help="The topic whose population the records are.")],
    queue: Annotated[str | None, typer.Option(
        "--queue", help="Name of the queue of the records in file order (default: records).")] = None,
    reviewer: Annotated[str, typer.Option(
        "--reviewer", help="Reviewer of the labels in ASReview's notes (N1 ASReview_relevant/_irrelevant).")
    ] = "asreview",
    ids: Annotated[str, typer.Option(
        "--ids", help="Document ids: auto (each record's ID tag, else AN, when every record has one and none "
        "repeats; else positions), position (0-based, as ASReview's record_id) or tag (refuse a missing or "
        "repeated one).")] = "auto",
    again: Annotated[bool, typer.Option("--again", help="Import a file already imported into this topic.")
                     ] = False,
    source_type: SourceTypeOption = None,
    source_name: SourceNameOption = None,
    db: DbOption = None,
) -> None:
    """Store a RIS file's records as the topic's population: its population size, and a queue of the records
    in file order (ids: --ids); labels in ASReview's notes (N1 ASReview_relevant,
    ASReview_irrelevant) and Rayyan's (RAYYAN-INCLUSION, each member's; Maybe a maybe decision) become judgments.
    With --source-type and --source-name (one search's export: MEDLINE, Embase, a trial register) the records
    are added to the topic's population, each source in its own queue, with their bibliographic fields for
    `reviewdepth dedupe`, for PRISMA's per-source counts. Needs pip install 'reviewdepth[ris]'."""
    from reviewdepth.services.files.ris_import import import_ris as service

    engine = open_engine(db)
    with handled_errors():
        s = service(engine, file, topic=topic, queue_name=queue, again=again, reviewer=reviewer, ids=ids,
                    source_type=source_type, source_name=source_name)
    typer.echo(f"{population_words(s.rows, s.topics[0], s.source_type, s.source_name, s.population_size)} (queue "
               f"{s.queues[0]!r} in file order; {s.ids}): stored {counted(s.stored, 'judgment')} from ASReview's "
               "notes"
               + (f" and Rayyan's ({counted(s.decisions, 'member decision')}, {s.maybe:,} of them Maybe)"
                  if s.decisions else "")
               + f", {counted(s.unlabelled, 'record')} unlabelled, 0 refused (import {s.import_id}, sha256 "
               f"{s.digest[:12]}…)")


def import_rayyan(
    file: Annotated[str, typer.Argument(help="Rayyan CSV export (articles.csv).")],
    topic: Annotated[str, typer.Option("--topic", help="The topic whose population the articles are.")],
    queue: Annotated[str | None, typer.Option(
        "--queue", help="Name of the queue of the articles in file order (default: rayyan).")] = None,
    add_reasons: Annotated[bool, typer.Option(
        "--add-reasons/--known-reasons", help="Add the file's exclusion reasons the topic lacks to its list "
        "(default), or refuse the file at the first article whose reason the topic lacks.")] = True,
    again: Annotated[bool, typer.Option("--again", help="Import a file already imported.")] = False,
    db: DbOption = None,
) -> None:
    """Store a Rayyan export: its articles (ids: the key column) as the topic's population and a queue in file
    order, and each member's decision in the notes column (RAYYAN-INCLUSION) as that member's judgment:
    Included 1, Excluded 0, Maybe a maybe decision; an article's first RAYYAN-EXCLUSION-REASONS is its
    exclusions' reason (all of them in their note)."""
    from reviewdepth.services.files.rayyan_import import import_rayyan as service

    engine = open_engine(db)
    with handled_errors():
        s = service(engine, file, topic=topic, queue_name=queue, again=again, add_reasons=add_reasons)
    typer.echo(rayyan_summary(s))


def rayyan_summary(s: RayyanImportSummary) -> str:
    """The line ``import rayyan`` prints."""
    added = (f"; added {counted(len(s.reasons_added), 'exclusion reason')} to the topic's list" if s.reasons_added
             else "")
    return (f"imported {counted(s.rows, 'Rayyan article')} as the population of topic {s.topics[0]!r} (queue "
            f"{s.queues[0]!r} in file order): stored {counted(s.stored, 'judgment')} by "
            f"{counted(s.reviewers, 'reviewer')} ({s.maybe:,} Maybe, {counted(s.reasons, 'exclusion')} with a "
            f"reason{added}), {counted(s.unlabelled, 'article')} undecided, 0 refused (import {s.import_id}, "
            f"sha256 {s.digest[:12]}…)")


def import_covidence(
    files: Annotated[list[str], typer.Argument(
        help="Covidence reference exports (CSV), one per list: LIST=FILE (LIST: screen, irrelevant, fulltext, "
        "excluded, included) or Covidence's own file names (review_<id>_<list>_csv_<time>.csv).")],
    topic: Annotated[str, typer.Option("--topic", help="The topic whose population the studies are.")],
    level: Annotated[str, typer.Option(
        "--level", help="final (included 1; excluded, irrelevant 0) or abstract (included, excluded, fulltext 1; "
        "irrelevant 0).")] = "final",
    reviewer: Annotated[str, typer.Option("--reviewer", help="Reviewer of the lists' decisions.")] = "covidence",
    queue: Annotated[str | None, typer.Option(
        "--queue", help="Name of the queue of the studies in file order (default: covidence).")] = None,
    again: Annotated[bool, typer.Option("--again", help="Import files already imported.")] = False,
    db: DbOption = None,
) -> None:
    """Store a Covidence review's list exports together: their studies (ids: Covidence #) as the topic's
    population and a queue, each study's list as its label (--level)."""
    from reviewdepth.services.files.covidence_import import import_covidence as service

    engine = open_engine(db)
    with handled_errors():
        s = service(engine, files, topic=topic, queue_name=queue, reviewer=reviewer, level=level, again=again)
    lists = ", ".join(f"{n:,} {name}" for name, n in s.lists.items())
    typer.echo(f"imported {counted(s.rows, 'Covidence study', 'Covidence studies')} ({lists}) as the population "
               f"of topic {s.topics[0]!r} (queue {s.queues[0]!r}): stored {counted(s.stored, 'judgment')} (level "
               f"{level}), {counted(s.unlabelled, 'study', 'studies')} undecided, 0 refused (imports "
               f"{', '.join(map(str, s.import_ids))})")


def import_xlsx(
    file: Annotated[str, typer.Argument(help="Excel workbook (.xlsx) of judgments.")],
    topic: Annotated[str, typer.Option("--topic", help="The topic the judgments are of (it must exist).")],
    reviewer: Annotated[str | None, typer.Option(
        "--reviewer", help="Reviewer of rows with no reviewer cell (default: login).")] = None,
    role: Annotated[str, typer.Option(
        "--role", help="Role of rows with no role cell: review, sample, qc, adjudication or audit.")] = "review",
    queue: Annotated[str | None, typer.Option(
        "--queue", help="Queue of rows with no queue cell (default: the topic's newest).")] = None,
    allow_unqueued: Annotated[bool, typer.Option(
        "--allow-unqueued", help="Record documents that are in no queue of the topic.")] = False,
    add_reasons: Annotated[bool, typer.Option(
        "--add-reasons/--known-reasons", help="Add the reason column's exclusion reasons the topic lacks to its "
        "list, or refuse the workbook at the first row whose reason the topic lacks (default).")] = False,
    again: Annotated[bool, typer.Option("--again", help="Import a file already imported.")] = False,
    db: DbOption = None,
) -> None:
    """Record the judgments of a workbook's first sheet: a header row with doc and label, optionally reviewer,
    role, note, queue (the columns of judge --file and of export xlsx), one judgment per row, in one
    transaction; a bad row refuses the file naming its row and column. Needs pip install 'reviewdepth[xlsx]'."""
    from reviewdepth.services.files.judgment_files import record_judgment_file

    engine = open_engine(db)
    with handled_errors():
        ids = record_judgment_file(engine, topic, file, reviewer=reviewer or default_reviewer(), role=role,
                                   queue=queue, allow_unqueued=allow_unqueued, again=again, source="xlsx",
                                   add_reasons=add_reasons)
    which = f"id {ids[0]}" if len(ids) == 1 else f"ids {ids[0]}..{ids[-1]}"
    typer.echo(f"imported {counted(len(ids), 'judgment')} of topic {topic!r} from {file} ({which}), refused 0")


def judge(
    topic: Annotated[str, typer.Argument(help="Topic name.")],
    doc: Annotated[str | None, typer.Argument(help="Document id (not with --file).")] = None,
    label: Annotated[str | None, typer.Argument(
        help="1/0, yes/no, relevant/irrelevant, include/exclude, a grade, maybe (recorded, decides no label) or "
        "skip (logged, the document stays unscreened) (not with --file).")] = None,
    reviewer: Annotated[str | None, typer.Option("--reviewer", help="Who judged (default: login).")] = None,
    role: Annotated[Role, typer.Option("--role", help="review, sample, qc, adjudication or audit.")] = Role.review,
    note: Annotated[str | None, typer.Option("--note", help="Free text kept with the judgment.")] = None,
    reason: Annotated[str | None, typer.Option(
        "--reason", help="An exclude's reason, one of the topic's (reviewdepth topic reasons).")] = None,
    stage: Annotated[str | None, typer.Option(
        "--stage", help="Screening stage: title-abstract (default) or full-text.")] = None,
    file: Annotated[str | None, typer.Option(
        "--file", help="CSV/TSV (or .xlsx) with a header: doc and label, optionally reviewer, role, note, queue, "
        "reason, stage (--reviewer, --role and --queue are the defaults). One transaction.")] = None,
    queue: Annotated[str | None, typer.Option(
        "--queue", help="The queue the document was served from (default: the topic's newest).")] = None,
    allow_unqueued: Annotated[bool, typer.Option(
        "--allow-unqueued", help="Record documents that are in no queue of the topic.")] = False,
    again: Annotated[bool, typer.Option("--again", help="Record a --file recorded before once more.")] = False,
    db: DbOption = None,
) -> None:
    """Record one judgment, or every judgment of a --file (appended to the log; nothing is overwritten; a file
    recorded before is refused unless --again). Documents in no queue of the topic are refused unless
    --allow-unqueued."""
    if file is not None:
        if doc is not None or label is not None or note is not None or reason is not None or stage is not None:
            fail("judge --file takes no DOC, LABEL, --note, --reason or --stage (put them in the file)")
        from reviewdepth.services.files.judgment_files import record_judgment_file

        engine = open_engine(db)
        with handled_errors():
            ids = record_judgment_file(engine, topic, file, reviewer=reviewer or default_reviewer(), role=role,
                                       queue=queue, allow_unqueued=allow_unqueued, again=again)
        recorded = f"1 judgment of {topic} (id {ids[0]})" if len(ids) == 1 else \
            f"{len(ids):,} judgments of {topic} (ids {ids[0]}..{ids[-1]})"
        typer.echo(f"recorded {recorded}")
        return
    if doc is None or label is None:
        fail("judge needs TOPIC DOC LABEL, or TOPIC --file FILE")
    if again:
        fail("--again applies to judge --file")
    from reviewdepth.services.review.judgments import record_judgment

    engine = open_engine(db)
    with handled_errors():
        record = record_judgment(engine, topic, doc, label, reviewer=reviewer or default_reviewer(), role=role,
                                 note=note, source="cli", queue=queue, allow_unqueued=allow_unqueued, reason=reason,
                                 stage=stage)
    meaning = {"include": "relevant", "exclude": "not relevant", "maybe": "maybe: decides no label",
               "skip": "skipped: not screened"}.get(record.decision, record.decision)
    more = "".join(f", {v}" for v in (record.reason, None if stage is None else record.stage) if v)
    typer.echo(f"judgment {record.id}: {topic} {doc} = {record.label} ({meaning}{more}) by {record.reviewer}")


def judgments(
    topic: Annotated[str, typer.Argument(help="Topic name.")],
    as_of: Annotated[str | None, typer.Option("--as-of", help="Judgment id or ISO time.")] = None,
    reviewer: Annotated[str | None, typer.Option("--reviewer", help="Only this reviewer.")] = None,
    output_format: Annotated[ListFormat, typer.Option("--format")] = ListFormat.table,
    db: DbOption = None,
) -> None:
    """List a topic's judgment log in recording order."""
    from reviewdepth.services.review.judgments import list_judgments

    engine = open_engine(db)
    with handled_errors():
        records = list_judgments(engine, topic, as_of=as_of, reviewer=reviewer)
    columns = ["id", "topic", "doc_id", "label", "relevant", "grade", "reviewer", "role", "source", "note",
               "recorded_at", "queue", "decision", "reason", "stage"]
    write_rows([r.as_dict() for r in records], output_format, columns, title=f"judgments of {topic}",
               shown=("id", "doc_id", "label", "relevant", "reviewer", "role", "recorded_at", "source", "queue"))


def topics(
    output_format: Annotated[ListFormat, typer.Option("--format")] = ListFormat.table,
    target: Annotated[Target, target_option("Target recall of the status.")] = DEFAULT_TARGET,
    confidence: Annotated[float, typer.Option("--confidence", help="Confidence of the status.")] = 0.95,
    db: DbOption = None,
) -> None:
    """What the store holds: one row per topic with its status (the dashboard's and the report's: reached,
    not reached, unknown), its queues (how many, and the newest), the newest queue's size, its reviewed set
    as the report counts it and the relevant documents in it (latest label policy), the judgments logged and
    when the last one was."""
    from reviewdepth.services.admin.topics import list_topics
    from reviewdepth.services.answers.monitor import topic_statuses

    engine = open_engine(db)
    with handled_errors():
        records = list_topics(engine)
        statuses = topic_statuses(engine, [r.name for r in records], target=target, confidence=confidence)
    for record in records:
        record.status, record.status_text = statuses.get(record.name, (None, None))
    if not records:
        hint = "no topics in the store yet: reviewdepth import run FILE (or import qrels, csv, asreview, ris)"
        if output_format is ListFormat.table:
            typer.echo(hint)
            return
        typer.echo(hint, err=True)
    columns = ["topic", "status", "queues", "newest_queue", "queue_size", "reviewed",
               "relevant_found_in_reviewed", "judgments", "last_activity", "screening_order", "status_text"]
    rows = [{**r.as_dict(), "topic": r.name, "queues": len(r.queues)} for r in records]
    write_rows(rows, output_format, columns, title="topics in the store", as_json=[r.as_dict() for r in records],
               shown={"topic": "topic", "status": "status", "newest_queue": "newest queue",
                      "queue_size": "size", "reviewed": "reviewed", "relevant_found_in_reviewed": "relevant in "
                      "reviewed", "judgments": "judged", "last_activity": "last judgment"},
               keep_whole=("topic", "last_activity"))


def screening_order(
    topic: Annotated[str, typer.Argument(help="Topic name.")],
    order: Annotated[str | None, typer.Argument(
        help="random (screened in a uniformly random order fixed in advance) or queue (the default).")] = None,
    db: DbOption = None,
) -> None:
    """Show, or declare, how the team screens TOPIC. Declared random, the screened set is a random sample of
    the queue and the report estimates |R| and recall from it (basis 'screened', valid for one look);
    reviewdepth never guesses it from the data."""
    from reviewdepth.services.admin.topics import declare_screening_order, get_topic

    engine = open_engine(db)
    with handled_errors():
        record = get_topic(engine, topic) if order is None else declare_screening_order(engine, topic, order)
    typer.echo(f"{record.name}: screening order {record.screening_order}")


def topic_reasons(
    topic: Annotated[str, typer.Argument(help="Topic name.")],
    add: Annotated[list[str] | None, typer.Option("--add", help="Add an exclusion reason (repeatable).")] = None,
    remove: Annotated[list[str] | None, typer.Option(
        "--remove", help="Remove a reason no judgment carries (repeatable).")] = None,
    db: DbOption = None,
) -> None:
    """Show, or change, the exclusion reasons TOPIC's excludes may carry (judge --reason, a judgment file's reason
    column, the API's reason field). One transaction: all the changes or none."""
    from reviewdepth.services.review.screening import screening_settings

    engine = open_engine(db)
    with handled_errors():
        settings = screening_settings(engine, topic, add=add or (), remove=remove or ())
    typer.echo(f"{settings.topic}: {counted(len(settings.reasons), 'exclusion reason')}")
    for reason in settings.reasons:
        typer.echo(f"  {reason}")


class ProtocolFormat(StrEnum):
    text = "text"
    json = "json"


def protocol_lines(record: object) -> list[str]:
    """The protocol fields as ``name: value`` lines, "not recorded" for each one absent."""
    from dataclasses import fields as dataclass_fields

    from reviewdepth.report.protocol_model import RecordedProtocol

    assert isinstance(record, RecordedProtocol)
    recorded = record.fields.as_fields()
    lines = [f"{record.topic}: protocol fields" + (
        "" if record.recorded_at is None else f", recorded {record.recorded_at} by {record.recorded_by}")]
    for f in dataclass_fields(record.fields):
        value = recorded.get(f.name)
        if value is None:
            shown = "not recorded"
        elif f.name == "acceptance":
            shown = record.fields.acceptance.text if record.fields.acceptance is not None else "not recorded"
        elif f.name == "reviewers":
            shown = "; ".join(f"{r['name']} ({r['role']})" for r in value)
        elif isinstance(value, list):
            shown = "; ".join(str(v) for v in value)
        elif isinstance(value, bool):
            shown = "yes" if value else "no"
        else:
            shown = f"{value:,}" if isinstance(value, int) else str(value)
        lines.append(f"  {f.name}: {shown}")
    return lines


def topic_protocol(
    topic: Annotated[str, typer.Argument(help="Topic name.")],
    workflow: Annotated[str | None, typer.Option(help="TAR 1.0, TAR 2.0 or linear.")] = None,
    platform: Annotated[str | None, typer.Option(help="The TAR platform.")] = None,
    model: Annotated[str | None, typer.Option(help="The ranking model.")] = None,
    tool_version: Annotated[str | None, typer.Option("--tool-version", help="The platform's version.")] = None,
    custodian: Annotated[list[str] | None, typer.Option("--custodian", help="A custodian (repeatable).")] = None,
    date_from: Annotated[str | None, typer.Option(help="Collection date range start, YYYY-MM-DD.")] = None,
    date_to: Annotated[str | None, typer.Option(help="Collection date range end, YYYY-MM-DD.")] = None,
    excluded_type: Annotated[list[str] | None, typer.Option(
        "--excluded-type", help="A document type excluded from the collection (repeatable).")] = None,
    processing_exceptions: Annotated[str | None, typer.Option(help="Processing exceptions, in words.")] = None,
    duplicates_removed: Annotated[int | None, typer.Option(help="Documents removed by de-duplication.")] = None,
    threaded: Annotated[int | None, typer.Option(help="Documents suppressed by e-mail threading.")] = None,
    acceptance: Annotated[str | None, typer.Option(
        help="The acceptance criterion agreed in advance: recall>=0.8@0.95 (recall shown at a confidence) or "
             "elusion<=2%@95% (the upper 95 % bound of the elusion rate at most 2 %).")] = None,
    reviewer: Annotated[list[str] | None, typer.Option(
        "--reviewer", help="A reviewer as NAME:ROLE (repeatable; the roster).")] = None,
    blind: Annotated[bool | None, typer.Option(
        "--blind/--not-blind", help="Whether the validation sample was coded blind.")] = None,
    produced: Annotated[int | None, typer.Option(help="Documents produced.")] = None,
    withheld: Annotated[int | None, typer.Option(help="Documents withheld (privilege).")] = None,
    clear: Annotated[list[str] | None, typer.Option("--clear", help="Drop a recorded field (repeatable).")] = None,
    by: Annotated[str | None, typer.Option("--by", help="Who records the fields (default: the OS user).")] = None,
    output_format: Annotated[ProtocolFormat, typer.Option("--format")] = ProtocolFormat.text,
    db: DbOption = None,
) -> None:
    """Show, or enter, TOPIC's protocol fields: what a TAR protocol discloses (workflow, platform, collection,
    acceptance criterion, reviewer roster, production counts). Entered once per topic; the options given change
    those fields and keep the others; each change is chained with the topic (``audit verify``). The validation
    packet prints each field, "not recorded" when absent."""
    from reviewdepth.services.answers.protocol import get_protocol, set_protocol

    given = {"workflow": workflow, "platform": platform, "model": model, "version": tool_version,
             "custodians": custodian or None, "date_from": date_from, "date_to": date_to,
             "excluded_types": excluded_type or None, "processing_exceptions": processing_exceptions,
             "duplicates_removed": duplicates_removed, "threaded": threaded, "acceptance": acceptance,
             "reviewers": reviewer or None, "blind": blind, "produced": produced, "withheld": withheld}
    engine = open_engine(db)
    with handled_errors():
        if any(v is not None for v in given.values()) or clear:
            record = set_protocol(engine, topic, given, recorded_by=by or getpass.getuser(), merge=True,
                                  clear=tuple(clear or ()))
        else:
            record = get_protocol(engine, topic)
    if output_format == ProtocolFormat.json:
        typer.echo(json.dumps(record.as_dict(), indent=2, ensure_ascii=False))
        return
    for line in protocol_lines(record):
        typer.echo(line)


def topic_conflict_rule(
    topic: Annotated[str, typer.Argument(help="Topic name.")],
    rule: Annotated[str | None, typer.Argument(
        help="rayyan (default: exclude vs maybe is not a conflict) or strict (any difference is).")] = None,
    db: DbOption = None,
) -> None:
    """Show, or set, which differing votes on a document are a conflict for TOPIC."""
    from reviewdepth.services.review.screening import screening_settings

    engine = open_engine(db)
    with handled_errors():
        settings = screening_settings(engine, topic, conflict_rule=rule)
    typer.echo(f"{settings.topic}: conflict rule {settings.conflict_rule}")


def queue_list(
    topic: Annotated[str, typer.Argument(help="Topic name.")],
    output_format: Annotated[ListFormat, typer.Option("--format")] = ListFormat.table,
    db: DbOption = None,
) -> None:
    """A topic's queues, oldest first: size, ordering, source, run tag and stopping point, when stored, and
    which is the newest (the queue judgments are served from unless they name another)."""
    from reviewdepth.services.answers.queues import list_queues

    engine = open_engine(db)
    with handled_errors():
        records = list_queues(engine, topic)
    if not records and output_format is ListFormat.table:
        typer.echo(f"topic {topic!r} has no queue yet: reviewdepth import run FILE")
        return
    columns = ["name", "size", "ordering", "source", "run_tag", "threshold_rank", "created_at", "newest"]
    write_rows([r.as_dict() for r in records], output_format, columns, title=f"queues of topic {topic!r}",
               shown=("name", "size", "ordering", "source", "created_at", "newest"))


def queue_show(
    topic: Annotated[str, typer.Argument(help="Topic name.")],
    queue: Annotated[str | None, typer.Option("--queue", help="Queue name (default: the only one).")] = None,
    policy: Annotated[
        Policy, typer.Option("--policy", help="latest, adjudicated, majority, any_relevant.")
    ] = Policy.latest,
    as_of: Annotated[str | None, typer.Option("--as-of", help="Judgment id or ISO time.")] = None,
    output_format: Annotated[ListFormat, typer.Option("--format")] = ListFormat.table,
    db: DbOption = None,
) -> None:
    """Size, judged, relevant found, deepest judged rank and trec_eval measures of a stored queue."""
    from reviewdepth.services.answers.queues import queue_summary

    engine = open_engine(db)
    with handled_errors():
        summary = queue_summary(engine, topic, queue, policy=policy, as_of=as_of)
    data = summary.as_dict()
    if output_format is ListFormat.json:
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
        return
    if output_format is ListFormat.csv:
        fail("queue show prints table or json")
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"queue {summary.queue!r} of topic {topic!r} (policy {policy})")
    table.add_column("field")
    table.add_column("value", justify="right")
    for key, value in data.items():
        if key != "measures":
            table.add_row(key, "" if value is None else str(value))
    for key, value in summary.measures.items():
        table.add_row(key, f"{value:.4f}" if isinstance(value, float) else str(value))
    Console().print(table)


def register_store(app: typer.Typer) -> None:
    db_app = typer.Typer(
        help="Create, inspect and migrate the database schema.", no_args_is_help=True, rich_markup_mode=None
    )
    import_app = typer.Typer(
        help="Import runs, qrels and review-platform exports (atomic).", no_args_is_help=True, rich_markup_mode=None
    )
    queue_app = typer.Typer(
        help="Inspect stored review queues.", no_args_is_help=True, rich_markup_mode=None
    )
    app.add_typer(db_app, name="db")
    app.add_typer(import_app, name="import")
    app.add_typer(queue_app, name="queue")
    topic_app = typer.Typer(help="A topic's settings: exclusion reasons, conflict rule, protocol fields.",
                            no_args_is_help=True, rich_markup_mode=None)
    app.add_typer(topic_app, name="topic")
    topic_app.command("reasons")(topic_reasons)
    topic_app.command("conflict-rule")(topic_conflict_rule)
    topic_app.command("protocol")(topic_protocol)

    db_app.command("upgrade")(db_upgrade)
    db_app.command("downgrade")(db_downgrade)
    db_app.command("current")(db_current)
    from .dedupe_cmds import import_records
    from .import_cmds import register_imports

    # the formats' own commands; register_imports adds them in the registry's order (reviewdepth.formats.importers)
    register_imports(import_app, {"run": import_run, "qrels": import_qrels, "csv": import_csv,
                                  "asreview": import_asreview, "ris": import_ris, "xlsx": import_xlsx,
                                  "rayyan": import_rayyan, "covidence": import_covidence, "records": import_records})
    register_dedupe(app)
    app.command("judge")(judge)
    app.command("judgments")(judgments)
    app.command("topics")(topics)
    app.command("screening-order")(screening_order)
    queue_app.command("list")(queue_list)
    queue_app.command("show")(queue_show)
