"""``reviewdepth simulate``: replay completed reviews to show how each stopping rule would have done (issue 17)."""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from reviewdepth.estimation.target import DEFAULT_TARGET, Target

from .common import ConfidenceOption, DbOption, Policy, fail, handled_errors, open_engine, target_option, write_result

INTERRUPTED_EXIT_CODE = 130  # the shell's code for a run ended by Ctrl-C (128 + SIGINT)


class SimulateFormat(StrEnum):
    table = "table"
    json = "json"
    csv = "csv"
    html = "html"


class Design(StrEnum):
    none = "none"
    rest = "rest"
    population = "population"
    audit = "audit"
    planned = "planned"


class Order(StrEnum):
    given = "given"
    trec_eval = "trec_eval"


class _Progress:
    """Finished jobs on stderr: a Rich bar on a terminal, else (``--progress``) a plain line at each tenth."""

    def __init__(self, bar: bool) -> None:
        self.bar: Any = None
        self.task: Any = None
        self.shown = -1
        if bar:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

            self.bar = Progress(TextColumn("simulate"), BarColumn(), MofNCompleteColumn(), TextColumn("jobs"),
                                TimeRemainingColumn(), console=Console(stderr=True), transient=True)
            self.bar.start()

    def __call__(self, done: int, total: int) -> None:
        if self.bar is not None:
            if self.task is None:
                self.task = self.bar.add_task("simulate", total=total)
            self.bar.update(self.task, completed=done)
            return
        tenth = done * 10 // total
        if tenth != self.shown:
            self.shown = tenth
            sys.stderr.write(f"reviewdepth: simulate: {done:,} of {total:,} jobs done\n")
            sys.stderr.flush()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()


def simulate(
    topics: Annotated[list[str] | None, typer.Argument(
        help="Topics to replay (default: every fully judged topic of the store; with --qrels/--run, every "
             "topic of the run).", show_default=False)] = None,
    qrels: Annotated[Path | None, typer.Option(
        "--qrels", help="Qrels file (TREC/CLEF): replay a run's topics with these labels instead of the "
                        "store's; no qrels line = non-relevant.")] = None,
    run: Annotated[Path | None, typer.Option("--run", help="Run file (TREC or CLEF TAR), with --qrels.")] = None,
    order: Annotated[Order, typer.Option(
        "--order", help="--run ranking: file order (given, CLEF's rule) or trec_eval's (score).")] = Order.given,
    design: Annotated[Design, typer.Option(
        "--design", help="What the team judges besides the ranked prefix: none, rest (a fresh sample of the "
                         "rest at every look), population (one sample of the queue), audit (the audit "
                         "stream), planned (the cheapest-stop plan reviews or audits as it decides; rule "
                         "planned).")] = Design.none,
    sample_size: Annotated[int, typer.Option(
        "--sample-size", help="rest/population: documents in the sample.")] = 0,
    every: Annotated[int, typer.Option(
        "--every", help="audit: one audit document per K ranked documents.")] = 0,
    rules: Annotated[list[str] | None, typer.Option(
        "--rule", help="A rule to replay (repeatable; default: every rule of the design).",
        show_default=False)] = None,
    target: Annotated[Target, target_option("Target recall, strictly between 0 and 1.")] = DEFAULT_TARGET,
    confidence: ConfidenceOption = 0.95,
    looks: Annotated[str, typer.Option(
        "--looks", help="When the team looks: every:K (after every K ranked documents).")] = "every:100",
    replicates: Annotated[int, typer.Option("--replicates", help="Seeded replicates per topic.")] = 100,
    cost: Annotated[str, typer.Option(
        "--cost", help="Cost of a document judged in first-pass review, in a sample or audit (a senior "
        "reviewer's), and produced unreviewed, e.g. review=1,sample=3,produce=0.2 (each optional, 1): the planned "
        "policy weighs them and the cost column reads them; a replayed review produces nothing unreviewed.")
    ] = "review=1,sample=1",
    seed: Annotated[int, typer.Option("--seed", help="Seed (the same seed gives the same figures).")] = 0,
    workers: Annotated[int, typer.Option(
        "--workers", help="Worker processes on this machine (the figures do not depend on it).")] = 1,
    dask: Annotated[str | None, typer.Option(
        "--dask", help="Run the replicates on the Dask scheduler at ADDRESS (pip install "
                       "'reviewdepth[dask]').", metavar="ADDRESS")] = None,
    queue: Annotated[str | None, typer.Option(
        "--queue", help="Store topics: the queue of this name (default: each topic's newest).")] = None,
    policy: Annotated[Policy, typer.Option("--policy", help="Store topics: label policy.")] = Policy.latest,
    output_format: Annotated[SimulateFormat, typer.Option("--format", help="Output format.")] =
        SimulateFormat.table,
    output: Annotated[Path | None, typer.Option("-o", "--output", help="Write to this file.")] = None,
    progress: Annotated[bool, typer.Option(
        "--progress", help="Report progress on stderr even when it is not a terminal.")] = False,
    db: DbOption = None,
) -> None:
    """Replay fully judged topics (from the store, or a run with its qrels) under a sampling design and show,
    per stopping rule, how often it stopped short of the target recall (failure rate with a Clopper-Pearson
    interval), recall at stop and cost relative to the oracle depth. Ctrl-C prints what is done and exits
    130. Bad input exits 2 and changes nothing in the database."""
    if (qrels is None) != (run is None):
        fail("--qrels and --run: give both (a run and its qrels), or neither (topics of the store)")
    if workers < 1:
        fail(f"--workers: must be a whole number >= 1, not {workers}")
    if dask is not None and workers != 1:
        fail("--workers and --dask: give one of them (--dask runs the replicates on the cluster's workers)")
    from reviewdepth.services.simulation.costs import parse_costs
    from reviewdepth.services.simulation.simulate import (
        build_plan,
        file_source,
        parse_looks,
        run_simulation,
        store_source,
    )

    try:
        with handled_errors():
            costs = parse_costs(cost)
            plan = build_plan(design=design.value, rules=rules or (), target=target, confidence=confidence,
                              look_every=parse_looks(looks), replicates=replicates, seed=seed,
                              sample_size=sample_size, every=every, review_cost=costs.review,
                              sample_cost=costs.sample, produce_cost=costs.produce_recorded)
            if qrels is not None and run is not None:
                source = file_source(str(qrels), str(run), topics or (), order=order.value)
            else:
                source = store_source(open_engine(db), topics or (), queue=queue, policy=policy)
        shown = _Progress(sys.stderr.isatty()) if progress or sys.stderr.isatty() else None
        try:
            with handled_errors():
                report = run_simulation(source, plan, workers=workers, dask_address=dask, progress=shown)
        finally:
            if shown is not None:
                shown.close()
    except KeyboardInterrupt:
        fail("simulate interrupted before any replicate was done", INTERRUPTED_EXIT_CODE)
    if report.partial and not report.settings.replicates_done:
        fail("simulate interrupted before any replicate was done", INTERRUPTED_EXIT_CODE)
    if report.partial:
        sys.stderr.write(f"reviewdepth: simulate interrupted: the figures cover "
                         f"{report.settings.replicates_done:,} of {plan.replicates:,} replicates per topic\n")
    write_result(report, output_format.value, output=output)
    if report.partial:
        raise typer.Exit(INTERRUPTED_EXIT_CODE)


def register_simulate(app: typer.Typer) -> None:
    app.command("simulate")(simulate)
