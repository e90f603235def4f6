"""``reviewdepth sample``: draw random samples and follow their judging."""

from __future__ import annotations

import json
import shlex
import sys
from enum import StrEnum
from typing import Annotated, Any

import typer

from reviewdepth.estimation.percent import percent
from reviewdepth.estimation.plural import counted
from reviewdepth.estimation.target import DEFAULT_TARGET, Target

from .common import (
    ConfidenceOption,
    DbOption,
    ListFormat,
    Policy,
    default_reviewer,
    fail,
    handled_errors,
    open_engine,
    target_option,
)


class PlanFrame(StrEnum):
    """What a planned sample is drawn from (`reviewdepth.services.answers.sample_plan.PLAN_FRAMES`)."""

    unreviewed = "unreviewed"
    all = "all"


class PlanFormat(StrEnum):
    """How ``plan`` prints."""

    table = "table"
    json = "json"
    html = "html"


def sample_draw(
    topic: Annotated[str, typer.Argument(help="Topic name.")],
    size: Annotated[int, typer.Option("--size", help="Number of documents to draw.")],
    frame: Annotated[str, typer.Option(
        "--frame", help="all, unreviewed, judged, below-rank:K or ranks:A-B.")] = "all",
    seed: Annotated[int | None, typer.Option("--seed", help="Random seed (stored; default: random).")] = None,
    queue: Annotated[str | None, typer.Option("--queue", help="Queue name (default: the only one).")] = None,
    output_format: Annotated[ListFormat, typer.Option("--format")] = ListFormat.table,
    db: DbOption = None,
) -> None:
    """Draw documents without replacement from FRAME and print them for review. Judge them through any door
    (`reviewdepth judge`, `judge --file`, `import csv` of a review platform's export, the API): a drawn document's
    judgment after the draw is its sample coding, whatever its role. `--format csv` writes them for a platform."""
    from reviewdepth.services.review.samples import draw_sample

    engine = open_engine(db)
    with handled_errors():
        record = draw_sample(engine, topic, size, frame=frame, queue=queue, seed=seed)
    if output_format is ListFormat.json:
        sys.stdout.write(json.dumps(record.as_dict(), indent=2) + "\n")
        return
    if output_format is ListFormat.csv:
        sys.stdout.write("doc_id,rank\n" + "".join(f"{d},{r}\n" for d, r in zip(record.doc_ids, record.ranks,
                                                                                 strict=True)))
        return
    typer.echo(f"sample {record.id}: {record.size:,} of {counted(record.frame_size, 'document')} "
               f"({record.frame_definition}), seed {record.seed}")
    if record.coded_at_draw_note:
        typer.echo(record.coded_at_draw_note)
    for doc, rank in zip(record.doc_ids, record.ranks, strict=True):
        typer.echo(f"{doc}\t{rank}")


def sample_show(
    topic: Annotated[str, typer.Argument(help="Topic name.")],
    sample_id: Annotated[int, typer.Argument(help="Sample id.")],
    queue: Annotated[str | None, typer.Option("--queue", help="Queue name (default: the only one).")] = None,
    policy: Annotated[Policy, typer.Option("--policy", help="Label policy.")] = Policy.latest,
    output_format: Annotated[ListFormat, typer.Option("--format")] = ListFormat.table,
    db: DbOption = None,
) -> None:
    """A sample's frame, seed, and which drawn documents are judged, relevant or still missing."""
    from reviewdepth.services.review.samples import load_samples

    engine = open_engine(db)
    with handled_errors():
        record = load_samples(engine, topic, queue, policy=policy, sample_id=sample_id)[0]
    data = record.as_dict()
    if output_format is ListFormat.csv:
        # the drawn documents, one a line, as `sample draw --format csv` writes them, and whether each is coded
        import csv

        from reviewdepth.formats.cells import safe_row

        missing = set(record.missing)
        writer = csv.writer(sys.stdout, lineterminator="\n")
        writer.writerow(["doc_id", "rank", "coded"])
        writer.writerows(safe_row([doc, rank, "no" if doc in missing else "yes"])
                         for doc, rank in zip(record.doc_ids, record.ranks, strict=True))
        return
    if output_format is not ListFormat.table:
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
        return
    state = "complete" if record.complete else f"{len(record.missing):,} of {record.size:,} not judged yet"
    typer.echo(f"sample {record.id} ({record.frame_definition}, seed {record.seed}): {state}; "
               f"{record.relevant} relevant")
    if record.voided:
        typer.echo(f"voided: {record.void_reason} (used by no estimate)")
    for doc in record.missing:
        typer.echo(f"missing\t{doc}")


def sample_void(
    topic: Annotated[str, typer.Argument(help="Topic name.")],
    sample_id: Annotated[int, typer.Argument(help="Sample id.")],
    reason: Annotated[str, typer.Option("--reason", help="Why the sample is voided (required; logged).")],
    reviewer: Annotated[str | None, typer.Option("--reviewer", help="Who voids it (default: login).")] = None,
    output_format: Annotated[ListFormat, typer.Option("--format")] = ListFormat.table,
    db: DbOption = None,
) -> None:
    """Void a sample drawn by mistake: kept for the record and in the judgment log (role void), used by no
    estimate from then on. Cannot be undone; voiding twice is refused."""
    from reviewdepth.services.review.sample_void import void_sample

    engine = open_engine(db)
    with handled_errors():
        record = void_sample(engine, topic, sample_id, reason=reason, reviewer=reviewer or default_reviewer())
    if output_format is not ListFormat.table:
        sys.stdout.write(json.dumps(record.as_dict(), indent=2) + "\n")
        return
    typer.echo(f"sample {record.id} of {topic} voided: {record.void_reason}")


# the option and argument every `sample stream` subcommand takes
StreamTopic = Annotated[str, typer.Argument(help="Topic name.")]
# `start --every auto` and `pace auto` let the plan choose K for this target and confidence
AutoTarget = Annotated[Target, target_option("auto: the target recall the plan chooses K for.")]
AutoConfidence = Annotated[float, typer.Option("--confidence", help="auto: the confidence.")]
ReviewerOption = Annotated[str | None, typer.Option("--reviewer", help="Who acts (default: login).")]


def _audit_every(engine: Any, topic: str, text: str, given_as: str, *, queue: str | None, target: Target,
                 confidence: float) -> int:
    """K from ``--every K`` or ``pace K``; ``auto``: the K the stop plan chooses from the topic's evidence now
    (its reason on stderr)."""
    if text.strip().lower() == "auto":
        from reviewdepth.services.answers.stop_plan import chosen_audit_rate

        with handled_errors():
            k, why = chosen_audit_rate(engine, topic, queue=queue, target=target, confidence=confidence)
        typer.echo(f"{given_as} auto: {why}", err=True)
        return k
    if not text.strip().isdigit():
        fail(f"{given_as}: a whole number K >= 1 or auto, not {text!r}")
    return int(text)


def _print_stream(record: Any, topic: str, output_format: ListFormat, *, serving: bool) -> None:
    """The stream as every ``sample stream`` subcommand prints it; ``serving``: after a start or a new pace, the
    line saying how its documents are served and judged."""
    if output_format is not ListFormat.table:
        from reviewdepth.report.model import json_safe

        sys.stdout.write(json.dumps(json_safe(record.as_dict()), indent=2, ensure_ascii=False) + "\n")
        return
    state = "voided" if record.voided else "active"
    typer.echo(f"audit stream {record.id} of {topic} ({state}): {record.description}, seed {record.seed}")
    if record.voided:
        typer.echo(f"voided by {record.voided_by}: {record.void_reason}")
    elif serving:
        typer.echo(f"serve it with `reviewdepth next {topic}`; judge its documents with --role audit")
    typer.echo(f"position {record.position:,} of {record.population_size:,}, served {record.served:,}")
    if record.judged is not None:
        typer.echo(f"judged prefix (the evidence): {counted(record.judged, 'document')}, {record.relevant:,} relevant; "
                   f"{len(record.pending):,} waiting for a judgment")
        for doc in record.pending:
            typer.echo(f"pending\t{doc}")


def stream_start(
    topic: StreamTopic,
    every: Annotated[str | None, typer.Option(
        "--every", help="One audit document after every K ranked documents reviewed; auto: the K the plan "
                        "chooses from the expected cost (see --target, --confidence).")] = None,
    rate: Annotated[float | None, typer.Option(
        "--rate", help="Audit documents as a share R of all documents served (0 < R < 1).")] = None,
    seed: Annotated[int | None, typer.Option("--seed", help="Random seed (stored; default: random).")] = None,
    queue: Annotated[str | None, typer.Option(
        "--queue", help="The queue whose documents make the population (default: the topic's newest).")] = None,
    target: AutoTarget = DEFAULT_TARGET,
    confidence: AutoConfidence = 0.95,
    reviewer: ReviewerOption = None,
    output_format: Annotated[ListFormat, typer.Option("--format")] = ListFormat.table,
    db: DbOption = None,
) -> None:
    """Start the topic's audit stream: a seeded random permutation of the queue's documents, served by
    `reviewdepth next` between the ranked documents at the pace given (--every K or --rate R) and judged
    with --role audit. At most one active stream per topic."""
    from reviewdepth.services.review.audit_stream import create_stream

    engine = open_engine(db)
    k = None if every is None else _audit_every(engine, topic, every, "--every", queue=queue, target=target,
                                                 confidence=confidence)
    with handled_errors():
        record = create_stream(engine, topic, every=k, rate=rate, seed=seed, queue=queue,
                               reviewer=reviewer or default_reviewer())
    _print_stream(record, topic, output_format, serving=True)


def stream_show(
    topic: StreamTopic,
    policy: Annotated[Policy, typer.Option("--policy", help="Label policy for the judged prefix.")] = Policy.latest,
    output_format: Annotated[ListFormat, typer.Option("--format")] = ListFormat.table,
    db: DbOption = None,
) -> None:
    """Print the topic's newest audit stream: its pace, position and the evidence its judged prefix gives."""
    from reviewdepth.services.review.audit_stream import show_stream

    engine = open_engine(db)
    with handled_errors():
        record = show_stream(engine, topic, policy=policy)
    _print_stream(record, topic, output_format, serving=False)


def stream_pace(
    topic: StreamTopic,
    every: Annotated[str, typer.Argument(
        metavar="K", help="One audit document per K reviewed from now on, or auto (the K the plan chooses now). "
                          "The guarantee holds at any pace.")],
    queue: Annotated[str | None, typer.Option(
        "--queue", help="auto: the queue the plan reads (default: the topic's newest).")] = None,
    target: AutoTarget = DEFAULT_TARGET,
    confidence: AutoConfidence = 0.95,
    output_format: Annotated[ListFormat, typer.Option("--format")] = ListFormat.table,
    db: DbOption = None,
) -> None:
    """Change the active stream's pace from now on."""
    from reviewdepth.services.review.audit_stream import change_pace

    engine = open_engine(db)
    k = _audit_every(engine, topic, every, "K", queue=queue, target=target, confidence=confidence)
    with handled_errors():
        record = change_pace(engine, topic, every=k)
    _print_stream(record, topic, output_format, serving=True)


def stream_void(
    topic: StreamTopic,
    reason: Annotated[str, typer.Option("--reason", help="Why the stream is stopped.")],
    reviewer: ReviewerOption = None,
    output_format: Annotated[ListFormat, typer.Option("--format")] = ListFormat.table,
    db: DbOption = None,
) -> None:
    """Stop the topic's active stream: kept for the record, never served or used as evidence again."""
    from reviewdepth.services.review.audit_stream import void_stream

    engine = open_engine(db)
    with handled_errors():
        record = void_stream(engine, topic, reason=reason, reviewer=reviewer or default_reviewer())
    _print_stream(record, topic, output_format, serving=False)


def next_command(
    topic: Annotated[str, typer.Argument(help="Topic name.")],
    queue: Annotated[str | None, typer.Option(
        "--queue", help="The ranked queue to serve (default: the topic's newest).")] = None,
    count: Annotated[int, typer.Option("--count", help="How many documents (1 to 10,000).")] = 10,
    output_format: Annotated[ListFormat, typer.Option("--format")] = ListFormat.table,
    db: DbOption = None,
) -> None:
    """The next documents to judge: the queue's next unjudged documents in rank order (judge with --role
    review) and, when the topic has an audit stream, its documents due at its pace (--role audit). An
    audit document served before and still unjudged comes first again."""
    from reviewdepth.services.review.audit_stream import next_documents

    engine = open_engine(db)
    with handled_errors():
        batch = next_documents(engine, topic, queue=queue, count=count)
    if output_format is ListFormat.json:
        sys.stdout.write(json.dumps(batch.as_dict(), indent=2, ensure_ascii=False) + "\n")
        return
    if output_format is ListFormat.csv:
        sys.stdout.write("doc_id,role,rank\n" + "".join(
            f"{d.doc_id},{d.role},{'' if d.rank is None else d.rank}\n" for d in batch.documents))
        return
    audit = sum(d.role == "audit" for d in batch.documents)
    stream = "no audit stream" if batch.stream_id is None else (
        f"audit stream {batch.stream_id}: {batch.served:,} served, position {batch.position:,} of "
        f"{batch.population_size:,}")
    typer.echo(f"{topic}, queue {batch.queue}: {batch.reviewed:,} reviewed in rank order; {stream}")
    if not batch.documents:
        typer.echo("nothing to serve: every document of the queue is judged")
        return
    typer.echo(f"{counted(len(batch.documents), 'document')} ({audit} audit); record each with `reviewdepth "
               f"judge {topic} DOC LABEL --role ROLE --queue {batch.queue}`")
    typer.echo("doc_id\trole\trank")
    for d in batch.documents:
        again = "\t(again)" if d.again else ""
        typer.echo(f"{d.doc_id}\t{d.role}\t{'-' if d.rank is None else d.rank}{again}")


def sample_plan(
    topic: Annotated[str, typer.Argument(help="Topic name.")],
    target: Annotated[Target, target_option("Target recall to certify, in (0, 1).")] = DEFAULT_TARGET,
    confidence: ConfidenceOption = 0.95,
    frame: Annotated[PlanFrame, typer.Option(
        "--frame", help="unreviewed (elusion test at the current cutoff) or all (QBCB / direct rule).")
    ] = PlanFrame.unreviewed,
    power: Annotated[float, typer.Option(
        "--power", help="Wanted chance of certifying if the estimate is right.")] = 0.8,
    elusion: Annotated[float | None, typer.Option(
        "--elusion-rate", help="Assumed share of relevant documents in the unreviewed rest (default: from the "
        "best sample, else the recent yield).")] = None,
    queue: Annotated[str | None, typer.Option("--queue", help="Queue name (default: the only one).")] = None,
    output_format: Annotated[ListFormat, typer.Option("--format")] = ListFormat.table,
    db: DbOption = None,
) -> None:
    """How many documents a random sample needs to certify TARGET recall at the current depth, which outcome
    certifies it, and the chance of that outcome if the current estimate is right."""
    from reviewdepth.report.model import json_safe
    from reviewdepth.services.answers.sample_plan import plan_sample

    engine = open_engine(db)
    with handled_errors():
        result = plan_sample(engine, topic, queue=queue, target=target, confidence=confidence, frame=frame,
                             power=power, rate=elusion)
    if output_format is not ListFormat.table:
        sys.stdout.write(json.dumps(json_safe(result), indent=2, ensure_ascii=False) + "\n")
        return
    typer.echo(f"topic {topic}, queue {result['queue']}: {result['reviewed']:,} of {result['queue_size']:,} "
               f"reviewed, {result['relevant_found_in_reviewed']:,} relevant found there")
    if result.get("min_size"):
        typer.echo(f"smallest sample that can certify: {result['min_size']:,} (with no relevant document in it); "
                   f"at this depth no random-sample design certifies with fewer (reviewdepth plan "
                   f"{shlex.quote(topic)}: every path)")
    if not result.get("feasible"):
        typer.echo(f"cannot certify {percent(float(target))} recall now: {result.get('reason')}")
        return
    typer.echo(result["summary"])
    if result.get("size") == result.get("min_size") and result.get("chance") is not None \
            and result["chance"] > power:
        typer.echo(f"--power {power:g} does not change the size: the smallest certifying sample already has a "
                   f"{percent(result['chance'])} chance at the assumed rate")


def register_samples(app: typer.Typer) -> None:
    sample_app = typer.Typer(
        help="Random samples for estimating |R| and recall.", no_args_is_help=True, rich_markup_mode=None
    )
    app.add_typer(sample_app, name="sample")

    sample_app.command("draw")(sample_draw)
    sample_app.command("show")(sample_show)
    sample_app.command("void")(sample_void)
    stream_app = typer.Typer(
        help="The topic's audit stream: start, show, pace and void.", no_args_is_help=True, rich_markup_mode=None
    )
    sample_app.add_typer(stream_app, name="stream")
    stream_app.command("start")(stream_start)
    stream_app.command("show")(stream_show)
    stream_app.command("pace")(stream_pace)
    stream_app.command("void")(stream_void)
    app.command("next")(next_command)
    sample_app.command("plan")(sample_plan)


def stop_plan(
    topic: Annotated[str, typer.Argument(help="Topic name.")],
    target: Annotated[Target, target_option("Target recall to certify, in (0, 1).")] = DEFAULT_TARGET,
    confidence: Annotated[float, typer.Option("--confidence", help="Confidence level, in [0.5, 1).")] = 0.95,
    power: Annotated[float, typer.Option(
        "--power", help="Least chance a one-look sample path must have of certifying to be recommended.")] = 0.8,
    cost: Annotated[str, typer.Option(
        "--cost", help="Cost of a document by role: judged in review, judged in a sample, produced unreviewed, "
        "e.g. review=1,sample=3,produce=0.2 (review and sample 1 when left out). Giving produce= offers the "
        "production-cutoff (TAR 1.0) path: produce the top of the ranking unreviewed, certified by the two-phase "
        "recall bound; without it no path produces an unreviewed document.")
    ] = "review=1,sample=1",
    queue: Annotated[str | None, typer.Option("--queue", help="Queue name (default: the only one).")] = None,
    output_format: Annotated[PlanFormat, typer.Option("--format", help="table, json or html.")] = PlanFormat.table,
    previous: Annotated[str | None, typer.Option(
        "--previous", help="The path the last plan recommended (planned, audit_stream, sample_now, "
        "review_then_sample, produce_cutoff): kept while still open and within 10 % of the cheapest, else the "
        "plan says what changed.")] = None,
    missed_at_most: Annotated[int | None, typer.Option(
        "--missed-at-most", help="Plan for a count bound instead of the target: \"at most M relevant documents "
        "remain unreviewed\" at --confidence: the bound certified now, what M costs (a random sample of the "
        "unreviewed), and what each lower bound costs.", metavar="M", min=0)] = None,
    db: DbOption = None,
) -> None:
    """The cheapest defensible stop: the floor no random-sample design can beat, the certified paths open now
    (sample now; review on, then sample; an audit stream; the plan followed look by look; with --cost produce=P,
    a production cutoff) with expected cost, range and chance, the recommended one, and the target × confidence
    table. With --missed-at-most M, the count bound instead: the least m certified now and what lowering it to M
    (and below) costs."""
    if missed_at_most is not None:
        _count_plan(topic, target, confidence, queue, missed_at_most, output_format, db)
        return
    from reviewdepth.report.model import json_safe
    from reviewdepth.report.stop_plan_render import as_data, render_html, render_text
    from reviewdepth.services.answers.stop_plan import topic_stop_plan
    from reviewdepth.services.simulation.costs import parse_costs

    engine = open_engine(db)
    with handled_errors():
        costs = parse_costs(cost)
        result = topic_stop_plan(engine, topic, queue=queue, target=target, confidence=confidence, power=power,
                                 review_cost=costs.review, sample_cost=costs.sample, produce_cost=costs.produce,
                                 previous=previous)
    if output_format == "json":
        sys.stdout.write(json.dumps(json_safe(as_data(result)), indent=2, ensure_ascii=False) + "\n")
    elif output_format == "html":
        sys.stdout.write(render_html(result))
    else:
        sys.stdout.write(render_text(result))


def _count_plan(topic: str, target: Target, confidence: float, queue: str | None, at_most: int, output_format: str,
                db: str | None) -> None:
    from reviewdepth.report.count_bound_render import as_data, plan_lines
    from reviewdepth.services.answers.count_bound import topic_count_bound
    from reviewdepth.services.answers.report import ReportOptions

    if output_format == "html":
        fail("--missed-at-most: choose --format table or json")
    engine = open_engine(db)
    with handled_errors():
        bound = topic_count_bound(engine, topic, ReportOptions(queue=queue, targets=[target], confidence=confidence))
    if output_format == "json":
        sys.stdout.write(json.dumps(as_data(bound, at_most), indent=2) + "\n")
    else:
        sys.stdout.write("\n".join(plan_lines(bound, topic, at_most)) + "\n")


def register_plan(app: typer.Typer) -> None:
    app.command("plan")(stop_plan)
