"""``reviewdepth report``, ``plot`` and ``demo``."""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Literal

import typer

from reviewdepth.estimation.target import DEFAULT_TARGET, Target

from .common import (
    ConfidenceOption,
    DbOption,
    Policy,
    ReportInterval,
    fail,
    handled_errors,
    one_shot,
    open_engine,
    target_option,
    write_result,
)


class ReportFormat(StrEnum):
    table = "table"
    json = "json"
    csv = "csv"
    html = "html"


class DocumentFormat(StrEnum):
    pdf = "pdf"
    html = "html"
    json = "json"


class TargetRuleChoice(StrEnum):
    """How a target's count of relevant documents is rounded (`reviewdepth.measures.depth.TargetRule`)."""

    ceil = "ceil"
    tar_eval = "tar_eval"
    asreview = "asreview"


class PlotKind(StrEnum):
    gain = "gain"
    pr = "pr"


def report(
    topic: Annotated[str, typer.Argument(help="Topic name.")],
    queue: Annotated[str | None, typer.Option("--queue", help="Queue name (default: the only one).")] = None,
    target: Annotated[list[Target] | None, target_option(
        "Target recall, repeatable (default 0.80 0.90 0.95 0.99).")] = None,
    confidence: ConfidenceOption = 0.95,
    interval: Annotated[ReportInterval, typer.Option(
        "--interval", help="hypergeometric (exact, default) or clopper-pearson (binomial exact, wider): "
        "both keep their nominal coverage.")] = ReportInterval.hypergeometric,
    policy: Annotated[
        Policy, typer.Option("--policy", help="latest, adjudicated, majority, any_relevant.")
    ] = Policy.latest,
    as_of: Annotated[int | None, typer.Option("--as-of", help="Judgment id: the report as of that point.")] = None,
    rule: Annotated[TargetRuleChoice, typer.Option(
        "--target-rule", help="ceil (default), tar_eval or asreview.")] = TargetRuleChoice.ceil,
    known_relevant: Annotated[int | None, typer.Option("--relevant", help="|R| when you know it.")] = None,
    scores_are_probabilities: Annotated[bool, typer.Option(
        "--scores-are-probabilities", help="Declare the queue's scores the current model's probabilities of "
        "relevance: the report then shows the Quant and QuantCI rows (heuristics).")] = False,
    independent: Annotated[bool | None, typer.Option(
        "--independent/--not-independent", help="State whether reviewers screened independently (PRISMA).")
    ] = None,
    output_format: Annotated[ReportFormat, typer.Option("--format")] = ReportFormat.table,
    output: Annotated[Path | None, typer.Option("-o", "--output", help="Write to FILE.")] = None,
    produce_to: Annotated[int | None, typer.Option(
        "--produce-to", help="Add the two-phase (TAR 1.0) section: documents ranked 1..RANK are produced whether "
        "reviewed or not (unless coded not relevant); recall and production precision from samples drawn with "
        "--frame ranks:1-RANK and below-rank:RANK, with their assumptions (as `reviewdepth validation`).",
        metavar="RANK")] = None,
    with_plan: Annotated[bool, typer.Option(
        "--plan", help="Replay the stop plan for the answer's 'to certify' (its recommended path and expected "
        "cost, as `reviewdepth plan` gives it); without it the answer gives the floor and a sample now.")] = False,
    db: DbOption = None,
) -> None:
    """How deep to review to reach the target recall, how sure that is, and whether the evidence says stop."""
    with one_shot():
        from reviewdepth.services.answers.report import DEFAULT_TARGETS, ReportOptions, build_report

        engine = open_engine(db)
        with handled_errors():
            result = build_report(engine, topic, ReportOptions(
                queue=queue, targets=target or DEFAULT_TARGETS, confidence=confidence, interval=interval,
                policy=policy, as_of=as_of, target_rule=rule, known_relevant=known_relevant,
                scores_are_probabilities=scores_are_probabilities, independent=independent, produce_to=produce_to,
                with_plan=with_plan))
        write_result(result, output_format.value, output=output)


def validation(
    topic: Annotated[str, typer.Argument(help="Topic name.")],
    output_format: Annotated[DocumentFormat, typer.Option("--format", help="pdf (default), html or json.")
                             ] = DocumentFormat.pdf,
    output: Annotated[Path | None, typer.Option(
        "-o", "--output", help="Write to FILE (needed for pdf; html and json go to stdout without it).")] = None,
    queue: Annotated[str | None, typer.Option("--queue", help="Queue name (default: the only one).")] = None,
    target: Annotated[Target, target_option("The protocol's target recall (default 0.95).")] = DEFAULT_TARGET,
    confidence: ConfidenceOption = 0.95,
    interval: Annotated[ReportInterval, typer.Option(
        "--interval", help="hypergeometric (exact, default) or clopper-pearson.")] = ReportInterval.hypergeometric,
    policy: Annotated[
        Policy, typer.Option("--policy", help="latest, adjudicated, majority, any_relevant.")
    ] = Policy.latest,
    as_of: Annotated[int | None, typer.Option("--as-of", help="Judgment id: the document as of that point.")] = None,
    produce_to: Annotated[int | None, typer.Option(
        "--produce-to", help="Two-phase (TAR 1.0) validation: documents ranked 1..RANK are produced whether "
        "reviewed or not (unless coded not relevant); adds recall and production precision from samples drawn "
        "with --frame ranks:1-RANK and below-rank:RANK.", metavar="RANK")] = None,
    db: DbOption = None,
) -> None:
    """The validation document of a topic's stop decision: protocol settings, samples (seeds, sizes, coders,
    times), recall, elusion and precision with their intervals, cutoff and discard pile, the rule that certified
    the stop, the chain head and caveats; as PDF, HTML or JSON. The same judgment log gives the same bytes."""
    if output_format is DocumentFormat.pdf and output is None:
        fail("--format pdf needs -o FILE")
    with one_shot():
        from reviewdepth.report.validation_render import render_document
        from reviewdepth.services.answers.report import ReportOptions
        from reviewdepth.services.answers.validation import build_validation

        engine = open_engine(db)
        with handled_errors():
            document = build_validation(engine, topic, ReportOptions(
                queue=queue, targets=[target], confidence=confidence, interval=interval, policy=policy,
                as_of=as_of), produce_to=produce_to)
        content = render_document(document, output_format.value)
    if output is None:
        sys.stdout.write(content.decode("utf-8"))
        return
    output.write_bytes(content)
    typer.echo(f"wrote {output}", err=True)


class MethodsStyle(StrEnum):
    prisma = "prisma"
    raise_ = "raise"
    protocol = "protocol"


class MethodsFormat(StrEnum):
    text = "text"
    markdown = "markdown"
    json = "json"


def methods(
    topic: Annotated[str, typer.Argument(help="Topic name.")],
    style: Annotated[MethodsStyle, typer.Option(
        "--style", help="prisma (PRISMA 2020 item 8 and the flow diagram's footnote), raise (RAISE's headings) "
        "or protocol (a TAR disclosure with the topic's protocol fields).")] = MethodsStyle.prisma,
    output_format: Annotated[MethodsFormat, typer.Option("--format", help="text, markdown or json.")
                             ] = MethodsFormat.text,
    queue: Annotated[str | None, typer.Option("--queue", help="Queue name (default: the only one).")] = None,
    target: Annotated[Target, target_option("The stopping target recall (default 0.95).")] = DEFAULT_TARGET,
    confidence: ConfidenceOption = 0.95,
    as_of: Annotated[int | None, typer.Option("--as-of", help="Judgment id: the text as of that point.")] = None,
    db: DbOption = None,
) -> None:
    """The methods text of TOPIC from its own evidence: tool and version, dates, the ranking's source, the
    stopping rule with its parameters and kind (certified with its guarantee, or heuristic with no guarantee),
    records screened by reviewers against those left by the stop, the validation evidence with its interval and
    the limitations. --format json lists every figure with the field of `report --format json` (or of `topic
    protocol --format json`, `sample stream show`) it was read from."""
    with one_shot():
        from reviewdepth.report.methods_text import render_methods
        from reviewdepth.services.answers.methods import methods_of
        from reviewdepth.services.answers.report import ReportOptions

        engine = open_engine(db)
        with handled_errors():
            text = methods_of(engine, topic, ReportOptions(queue=queue, targets=[target], confidence=confidence,
                                                           as_of=as_of), style.value)
        sys.stdout.write(render_methods(text, output_format.value))


def plot(
    topic: Annotated[str, typer.Argument(help="Topic name.")],
    kind: Annotated[PlotKind, typer.Option("--kind", help="gain (recall vs depth) or pr.")] = PlotKind.gain,
    output: Annotated[Path, typer.Option("-o", "--output", help="FILE.svg or FILE.png")] = Path("plot.svg"),
    queue: Annotated[list[str] | None, typer.Option(
        "--queue", help="Queue name (default: the only one); repeat it to draw several queues on one chart.")
    ] = None,
    policy: Annotated[Policy, typer.Option("--policy", help="Label policy.")] = Policy.latest,
    as_of: Annotated[int | None, typer.Option("--as-of", help="Judgment id.")] = None,
    qrels: Annotated[str | None, typer.Option(
        "--qrels", help="With --run: plot run files (no database); R from this qrels file.")] = None,
    run: Annotated[list[str] | None, typer.Option(
        "--run", help="A run file to draw for TOPIC (repeatable; needs --qrels).")] = None,
    db: DbOption = None,
) -> None:
    """Write the recall-against-depth or precision-recall chart as SVG or PNG (by the file name); several
    --queue options draw those queues of the topic on one chart, --qrels with --run options draw run files."""
    suffix = output.suffix.lower()
    if suffix not in (".svg", ".png"):
        fail(f"{output}: the file name must end in .svg or .png")
    if (qrels is None) != (not run):
        fail("--qrels and --run go together")
    if qrels is not None and run:
        if queue or as_of is not None or db is not None or policy != "latest":
            fail("--queue, --policy, --as-of and --db apply to stored queues, not to --run files")
        from reviewdepth.services.evaluation.evaluate import EvalInput
        from reviewdepth.services.evaluation.run_plots import build_runs_plot

        with handled_errors():
            try:
                chart = build_runs_plot(EvalInput(qrels), [EvalInput(r) for r in run], topic, kind.value,
                                        "svg" if suffix == ".svg" else "png")
            except ImportError as exc:
                fail(str(exc))
        output.write_bytes(chart.content)
        typer.echo(f"wrote {output}", err=True)
        return
    with one_shot():  # matplotlib's import alone adds ~6·10⁴ objects to the cycle collector's passes
        from reviewdepth.services.answers.plots import build_plot, build_queues_plot

        engine = open_engine(db)
        fmt: Literal["svg", "png"] = "svg" if suffix == ".svg" else "png"
        with handled_errors():
            try:
                if queue and len(queue) > 1:
                    chart = build_queues_plot(engine, topic, kind.value, fmt, queue, policy=policy,
                                              as_of=as_of)
                else:
                    chart = build_plot(engine, topic, kind.value, fmt, queue=queue[0] if queue else None,
                                       policy=policy, as_of=as_of)
            except ImportError as exc:
                fail(str(exc))
    output.write_bytes(chart.content)
    typer.echo(f"wrote {output}", err=True)


def demo(
    reviewed: Annotated[int, typer.Option("--reviewed", help="Documents reviewed in rank order.")] = 1000,
    sample: Annotated[int, typer.Option("--sample", help="Random sample size from the unreviewed rest.")] = 400,
    seed: Annotated[int, typer.Option("--seed", help="Sample seed.")] = 2017,
    output_format: Annotated[ReportFormat, typer.Option("--format")] = ReportFormat.table,
    output: Annotated[Path | None, typer.Option("-o", "--output", help="Write to FILE.")] = None,
    db: DbOption = None,
) -> None:
    """Review a real CLEF TAR 2017 topic (CD008803, Waterloo's ranking) in rank order with a random sample,
    and print the depth report. Uses a fresh demo database beside the embedded one unless --db is given."""
    from reviewdepth.services.demo import DEMO_TOPIC, fresh_demo_database, run_demo

    fresh = db is None
    if db is None:
        db, path = fresh_demo_database()
        typer.echo(f"reviewdepth: demo database {path} (fresh each run)", err=True)
    # a new, empty database named with --db gets the schema here: the demo is a first command
    engine = open_engine(db, create_empty=True)
    with handled_errors():
        result = run_demo(engine, reviewed=reviewed, sample_size=sample, seed=seed)
    write_result(result, output_format.value, output=output)
    # the commands the report names run against the database the demo wrote: say how to reach it
    target = f"--db {db}"
    typer.echo(f"reviewdepth: to go on with {DEMO_TOPIC}, run the commands above with {target} (or export "
               f"REVIEWDEPTH_DATABASE_URL={db}), e.g. reviewdepth plan {DEMO_TOPIC} {target}"
               + ("; the demo database is replaced on the next `reviewdepth demo`" if fresh else ""), err=True)


def register_reports(app: typer.Typer) -> None:
    app.command("report")(report)
    app.command("validation")(validation)
    app.command("methods")(methods)
    app.command("plot")(plot)
    app.command("demo")(demo)
