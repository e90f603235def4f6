"""``reviewdepth sample``: draw random samples and follow their judging."""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer

from .common import DbOption, handled_errors, open_engine
from .store_cmds import ListFormat, default_reviewer


def register_samples(app: typer.Typer) -> None:
    sample_app = typer.Typer(
        help="Random samples for estimating |R| and recall.", no_args_is_help=True, rich_markup_mode=None
    )
    app.add_typer(sample_app, name="sample")

    @sample_app.command("draw")
    def draw(
        topic: Annotated[str, typer.Argument(help="Topic name.")],
        size: Annotated[int, typer.Option("--size", help="Number of documents to draw.")],
        frame: Annotated[str, typer.Option(
            "--frame", help="all, unreviewed, judged, below-rank:K or ranks:A-B.")] = "all",
        seed: Annotated[int | None, typer.Option("--seed", help="Random seed (stored; default: random).")] = None,
        queue: Annotated[str | None, typer.Option("--queue", help="Queue name (default: the only one).")] = None,
        output_format: Annotated[ListFormat, typer.Option("--format")] = ListFormat.table,
        db: DbOption = None,
    ) -> None:
        """Draw documents without replacement from FRAME and print them for review (judge them with
        `reviewdepth judge TOPIC DOC LABEL --role sample`)."""
        from reviewdepth.services.samples import draw_sample

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
        typer.echo(f"sample {record.id}: {record.size} of {record.frame_size} documents "
                   f"({record.frame_definition}), seed {record.seed}")
        for doc, rank in zip(record.doc_ids, record.ranks, strict=True):
            typer.echo(f"{doc}\t{rank}")

    @sample_app.command("show")
    def show(
        topic: Annotated[str, typer.Argument(help="Topic name.")],
        sample_id: Annotated[int, typer.Argument(help="Sample id.")],
        queue: Annotated[str | None, typer.Option("--queue", help="Queue name (default: the only one).")] = None,
        policy: Annotated[str, typer.Option("--policy", help="Label policy.")] = "latest",
        output_format: Annotated[ListFormat, typer.Option("--format")] = ListFormat.table,
        db: DbOption = None,
    ) -> None:
        """A sample's frame, seed, and which drawn documents are judged, relevant or still missing."""
        from reviewdepth.services.samples import load_samples

        engine = open_engine(db)
        with handled_errors():
            record = load_samples(engine, topic, queue, policy=policy, sample_id=sample_id)[0]
        data = record.as_dict()
        if output_format is not ListFormat.table:
            sys.stdout.write(json.dumps(data, indent=2) + "\n")
            return
        state = "complete" if record.complete else f"{len(record.missing)} of {record.size} not judged yet"
        typer.echo(f"sample {record.id} ({record.frame_definition}, seed {record.seed}): {state}; "
                   f"{record.relevant} relevant")
        if record.voided:
            typer.echo(f"voided: {record.void_reason} (used by no estimate)")
        for doc in record.missing:
            typer.echo(f"missing\t{doc}")

    @sample_app.command("void")
    def void(
        topic: Annotated[str, typer.Argument(help="Topic name.")],
        sample_id: Annotated[int, typer.Argument(help="Sample id.")],
        reason: Annotated[str, typer.Option("--reason", help="Why the sample is voided (required; logged).")],
        reviewer: Annotated[str | None, typer.Option("--reviewer", help="Who voids it (default: login).")] = None,
        output_format: Annotated[ListFormat, typer.Option("--format")] = ListFormat.table,
        db: DbOption = None,
    ) -> None:
        """Void a sample drawn by mistake: kept for the record and in the judgment log (role void), used by no
        estimate from then on. Cannot be undone; voiding twice is refused."""
        from reviewdepth.services.sample_void import void_sample

        engine = open_engine(db)
        with handled_errors():
            record = void_sample(engine, topic, sample_id, reason=reason, reviewer=reviewer or default_reviewer())
        if output_format is not ListFormat.table:
            sys.stdout.write(json.dumps(record.as_dict(), indent=2) + "\n")
            return
        typer.echo(f"sample {record.id} of {topic} voided: {record.void_reason}")

    @sample_app.command("plan")
    def plan(
        topic: Annotated[str, typer.Argument(help="Topic name.")],
        target: Annotated[str, typer.Option("--target", help="Target recall to certify, in (0, 1).")] = "0.95",
        confidence: Annotated[float, typer.Option("--confidence", help="Confidence level.")] = 0.95,
        frame: Annotated[str, typer.Option(
            "--frame", help="unreviewed (elusion test at the current cutoff) or all (QBCB / direct rule).")
        ] = "unreviewed",
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
        from reviewdepth.services.sample_plan import plan_sample

        engine = open_engine(db)
        with handled_errors():
            result = plan_sample(engine, topic, queue=queue, target=target, confidence=confidence, frame=frame,
                                 power=power, rate=elusion)
        if output_format is not ListFormat.table:
            sys.stdout.write(json.dumps(json_safe(result), indent=2, ensure_ascii=False) + "\n")
            return
        typer.echo(f"topic {topic}, queue {result['queue']}: {result['reviewed']:,} of {result['queue_size']:,} "
                   f"reviewed, {result['relevant_found_in_reviewed']:,} relevant found there")
        if not result.get("feasible"):
            typer.echo(f"cannot certify {float(target):.0%} recall now: {result.get('reason')}")
            return
        typer.echo(result["summary"])
