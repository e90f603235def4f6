"""Defensible reviews: ``conflicts``, ``agreement``, ``prisma`` and ``audit verify``."""

from __future__ import annotations

import io
import json
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, Literal

import typer

from reviewdepth.estimation.plural import counted, noun

from .common import ConfidenceOption, DbOption, ListFormat, Policy, default_reviewer, fail, handled_errors, open_engine

AsOfOption = Annotated[str | None, typer.Option("--as-of", help="Judgment id: the log up to and including it.")]


def _fmt(value: Any) -> str:
    """A value as a table prints it: yes/no, counts with separators, never a Python literal."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return "nan" if value != value else f"{value:.4f}"
    return str(value)


def _write_json(data: Any) -> None:
    from reviewdepth.report.model import json_safe

    sys.stdout.write(json.dumps(json_safe(data), indent=2, ensure_ascii=False, allow_nan=False) + "\n")


def _shown(name: str) -> str:
    """A stored name on one line of output: as is when printable, else escaped (names stored before the
    validation vocabulary may hold tabs or newlines, which would split the line)."""
    return name if name.isprintable() else ascii(name)


class ConflictStatus(StrEnum):
    """Which conflicts ``conflicts`` lists (`reviewdepth.services.answers.conflicts.ConflictStatus`)."""

    open = "open"
    resolved = "resolved"
    all = "all"


def conflicts(
    topic: Annotated[str, typer.Argument(help="Topic name.")],
    status: Annotated[ConflictStatus, typer.Option("--status", help="open, resolved or all.")] = ConflictStatus.all,
    as_of: AsOfOption = None,
    output_format: Annotated[ListFormat, typer.Option("--format")] = ListFormat.table,
    db: DbOption = None,
) -> None:
    """Documents whose reviewers disagree (each reviewer's latest decision is their vote), with who said
    what; an adjudication recorded after the last vote resolves one (`judge … --role adjudication`)."""
    from reviewdepth.services.answers.conflicts import list_conflicts

    engine = open_engine(db)
    with handled_errors():
        found = list_conflicts(engine, topic, status=status, as_of=as_of)
    if output_format is ListFormat.json:
        _write_json([c.as_dict() for c in found])
        return
    if output_format is ListFormat.csv:
        buffer = io.StringIO()
        from reviewdepth.formats.cells import CsvRows, safe_row

        writer = CsvRows(buffer)
        writer.writerow(["doc_id", "status", "reviewer", "label", "relevant", "role", "judgment_id"])
        for c in found:
            for v in c.votes + ([c.adjudication] if c.adjudication else []):
                writer.writerow(safe_row([c.doc_id, c.status, v.reviewer, v.label,
                                          "" if v.relevant is None else int(v.relevant), v.role, v.judgment_id]))
        sys.stdout.write(buffer.getvalue())
        return
    open_count = sum(c.status == "open" for c in found)
    if status == "all":
        typer.echo(f"{len(found)} conflicts in topic {topic} ({open_count} open, "
                   f"{len(found) - open_count} resolved)")
    else:
        typer.echo(f"{len(found)} {status} conflicts in topic {topic}")
    for c in found:
        votes = ", ".join(f"{v.reviewer}={v.label}" for v in c.votes)
        settled = f"; adjudicated {c.adjudication.label} by {c.adjudication.reviewer}" if c.adjudication else ""
        typer.echo(f"{c.status}\t{c.doc_id}\t{votes}{settled}")


def agreement(
    topic: Annotated[str, typer.Argument(help="Topic name.")],
    confidence: ConfidenceOption = 0.95,
    as_of: AsOfOption = None,
    output_format: Annotated[ListFormat, typer.Option("--format")] = ListFormat.table,
    db: DbOption = None,
) -> None:
    """Agreement between reviewers on the documents several of them judged: percent agreement, Cohen's kappa
    per pair and Krippendorff's alpha overall, with intervals."""
    from reviewdepth.services.answers.agreement import topic_agreement

    engine = open_engine(db)
    with handled_errors():
        summary = topic_agreement(engine, topic, as_of=as_of, confidence=confidence)
    if output_format is not ListFormat.table:
        _write_json(summary.as_dict())
        return
    if not summary.documents:
        typer.echo(f"topic {topic}: no document was judged by two or more reviewers")
        return
    a, alpha = summary.agreement, summary.alpha
    typer.echo(f"topic {topic}: {counted(summary.documents, 'document')} judged by 2+ of "
               f"{counted(len(summary.reviewers), 'reviewer')}")
    typer.echo(f"all votes agree on {_fmt(a.point)} of them [{_fmt(a.lower)}, {_fmt(a.upper)}] ({a.method})")
    typer.echo(f"Krippendorff's alpha {_fmt(alpha.alpha)} [{_fmt(alpha.lower)}, {_fmt(alpha.upper)}] "
               f"({alpha.method})")
    typer.echo("reviewer A\treviewer B\tdocuments\tagreement\tkappa\tlower\tupper")
    for p in summary.pairs:
        typer.echo(f"{p.reviewer_a}\t{p.reviewer_b}\t{p.kappa.n}\t{_fmt(p.agreement.point)}\t"
                   f"{_fmt(p.kappa.kappa)}\t{_fmt(p.kappa.lower)}\t{_fmt(p.kappa.upper)}")


class PrismaFormat(StrEnum):
    """``prisma``'s formats: the listing ones (`ListFormat`: table, json, csv) and the flow diagram's."""

    table = "table"
    json = "json"
    csv = "csv"
    svg = "svg"
    png = "png"
    html = "html"


def prisma(
    topic: Annotated[str, typer.Argument(help="Topic name.")],
    queue: Annotated[str | None, typer.Option("--queue", help="Queue name (default: the only one).")] = None,
    # the report's default too, so `prisma` and the report's PRISMA section agree (docs/review-quality.md says why)
    policy: Annotated[Policy, typer.Option("--policy", help="Label policy for included/excluded (the report's "
                                           "default, latest: each record's final decision).")] = Policy.latest,
    independent: Annotated[bool | None, typer.Option(
        "--independent/--not-independent", help="State whether reviewers screened independently (blind).")] = None,
    as_of: AsOfOption = None,
    output_format: Annotated[PrismaFormat, typer.Option(
        "--format", help="table, json or csv (the counts; csv prints the JSON), or the PRISMA 2020 flow diagram "
        "as svg, png or html.")] = PrismaFormat.table,
    output: Annotated[Path | None, typer.Option(
        "-o", "--output", help="Write the diagram (svg, png, html) to this file rather than to stdout.")] = None,
    db: DbOption = None,
) -> None:
    """PRISMA 2020 screening counts: identified, screened, excluded by reviewers, not screened because the
    review stopped, included; reviewers per record and conflicts. --format svg, png or html draws the flow
    diagram from the same counts."""
    from reviewdepth.services.answers.prisma import topic_prisma, topic_prisma_diagram

    diagram = output_format in (PrismaFormat.svg, PrismaFormat.png, PrismaFormat.html)
    if output is not None and not diagram:
        fail("-o/--output: only the diagram formats (svg, png, html) are written to a file")
    if output_format is PrismaFormat.png and output is None and sys.stdout.isatty():
        fail("--format png: the image is binary; give -o FILE.png or redirect stdout")
    engine = open_engine(db)
    if diagram:
        fmt: Literal["svg", "png", "html"] = output_format.value  # type: ignore[assignment]
        with handled_errors():
            figure = topic_prisma_diagram(engine, topic, fmt, queue=queue, policy=policy, as_of=as_of,
                                          independent=independent)
        if output is None:
            sys.stdout.flush()
            sys.stdout.buffer.write(figure.content)
            sys.stdout.buffer.flush()
            return
        try:
            output.write_bytes(figure.content)
        except OSError as exc:
            fail(f"{output}: {exc.strerror or exc}")
        typer.echo(f"wrote {output}", err=True)
        return
    with handled_errors():
        counts = topic_prisma(engine, topic, queue=queue, policy=policy, as_of=as_of, independent=independent)
    data = counts.as_dict()
    if output_format is not PrismaFormat.table:
        _write_json(data)
        return
    for key, value in data.items():
        if isinstance(value, dict):  # records per number of reviewers, or per "<stage>: <reason>"
            value = ", ".join(f"{counted(int(n), 'reviewer')}: {c}" if key == "reviewers_per_record"
                              else f"{n}: {c}" for n, c in value.items()) or "-"
        elif isinstance(value, list):  # the flow identities the counts break: none when every box adds up
            value = "; ".join(map(str, value)) or "none"
        typer.echo(f"{key.replace('_', ' ')}\t{_fmt(value)}")


def audit_head(
    topic: Annotated[str, typer.Argument(help="Topic name.")],
    output_format: Annotated[ListFormat, typer.Option("--format", help="table (one anchor line) or json.")]
    = ListFormat.table,
    db: DbOption = None,
) -> None:
    """Print the topic's current chain head (seq, hash, time) as one line to keep outside the database (a
    file, a ticket, an e-mail); `audit verify TOPIC --head FILE` later proves the log still extends it."""
    from reviewdepth.services.review.audit import anchor_dict, format_anchor, topic_head

    engine = open_engine(db)
    with handled_errors():
        anchor = topic_head(engine, topic)
    if output_format is ListFormat.table:
        typer.echo(format_anchor(anchor))
    else:
        _write_json(anchor_dict(anchor))


def audit_acknowledge(
    topic: Annotated[str, typer.Argument(help="Topic name.")],
    reason: Annotated[str, typer.Option("--reason", help="Why the broken chain is accepted (kept in the chain).")],
    reviewer: Annotated[str | None, typer.Option("--reviewer", help="Who acknowledges (default: login).")] = None,
    db: DbOption = None,
) -> None:
    """Accept a broken judgment chain as it is now, so that writes are accepted again: the breaks found are
    listed in an acknowledgement linked into the chain (it becomes the head). An admin's act: it needs
    write access to the database."""
    from reviewdepth.services.review.audit import acknowledge_chain, format_anchor, topic_head


    engine = open_engine(db)
    with handled_errors():
        check, seq, _ = acknowledge_chain(engine, topic, reason=reason, reviewer=reviewer or default_reviewer())
        anchor = topic_head(engine, topic)
    typer.echo(f"acknowledged {counted(len(check.breaks), 'break')} of topic {_shown(topic)}'s chain up to seq {seq}; "
               "new head:")
    typer.echo(format_anchor(anchor))


def audit_verify(
    topic: Annotated[str | None, typer.Argument(help="Topic name (default: every topic).")] = None,
    anchored: Annotated[str | None, typer.Option(
        "--head", help="An anchored head (from `audit head`): its hash, or a file holding it.")] = None,
    output_format: Annotated[ListFormat, typer.Option("--format")] = ListFormat.table,
    db: DbOption = None,
) -> None:
    """Recompute each topic's judgment hash chain; name the first broken row. Recompute the evidence chain and
    compare every chained topic, queue (ranking), sample (draw) and audit stream (seed, pace) with its live rows;
    name each one altered, missing or stored behind the application's back. Exit 1 when anything is (a broken
    judgment chain also refuses the topic's writes until `audit acknowledge`). With --head, also prove that the
    log and the evidence chain still extend that anchored head (exit 1 when they do not)."""
    from reviewdepth.services.errors import NotFound
    from reviewdepth.services.review.audit import parse_anchor, verify_against, verify_chains, verify_store_evidence

    engine = open_engine(db)
    if anchored is not None:
        if topic is None:
            fail("--head needs the TOPIC the head was taken of")
        with handled_errors():
            result = verify_against(engine, topic, parse_anchor(anchored))
            if result.check is not None:
                verify_chains(engine, topic)  # flags the topic when broken
        if output_format is not ListFormat.table:
            _write_json(result.as_dict())
        elif result.extends:
            typer.echo(f"{_shown(topic)}\textends the anchored head\tseq {result.seq}\t{result.anchor.hash}")
        else:
            typer.echo(f"{_shown(topic)}\tDOES NOT extend the anchored head\tseq {result.seq}\t"
                       f"{result.anchor.hash}")
        if not result.extends:
            sys.stderr.write(f"reviewdepth: topic {_shown(topic)}: {result.reason}\n")
            for line in result.evidence:
                if line != result.reason:
                    sys.stderr.write(f"reviewdepth: evidence: {line}\n")
            fail("the store does not extend the anchored head", code=1)
        return
    with handled_errors():
        evidence = verify_store_evidence(engine)
        try:
            checks = verify_chains(engine, topic)
        except NotFound:
            if topic is None or topic not in evidence.chained_topics:
                raise
            checks = []
    problems = evidence.for_topic(topic)
    if output_format is not ListFormat.table:
        _write_json([c.as_dict() for c in checks])
    else:
        for c in checks:
            state = "intact" if c.intact else "BROKEN"
            accepted = f" ({len(c.acknowledged)} acknowledged)" if c.acknowledged else ""
            typer.echo(f"{_shown(c.topic)}\t{state}{accepted}\t{counted(c.judgments, 'judgment')}\thead {c.head}")
        typer.echo(f"evidence chain\t{'intact' if not problems else 'ALTERED'}\t{counted(evidence.events, 'event')}\t"
                   f"head {evidence.head}")
        if topic is None and not checks:
            recorded = "" if evidence.events == 0 else \
                f" (the evidence chain records {counted(evidence.events, 'event')})"
            typer.echo("no topics in the store" + recorded)
    broken = [c for c in checks if not c.intact]
    for c in broken:
        assert c.broken is not None
        sys.stderr.write(f"reviewdepth: topic {_shown(c.topic)}: {c.broken.reason}\n")
    for problem in problems:
        sys.stderr.write(f"reviewdepth: evidence: {problem.message}\n")
    if broken or problems:
        what = ([f"{len(broken)} of {counted(len(checks), 'judgment chain')} {noun(len(broken), 'is', 'are')} broken"]
                if broken else [])
        what += [counted(len(problems), "evidence problem")] if problems else []
        fail("; ".join(what), code=1)
    if topic is None and not checks and evidence.events:
        fail("no topics in the store, but the evidence chain records some: they were deleted", code=1)


def register_review(app: typer.Typer) -> None:
    app.command("conflicts")(conflicts)
    app.command("agreement")(agreement)
    app.command("prisma")(prisma)

    audit_app = typer.Typer(help="The tamper-evident judgment log.", no_args_is_help=True, rich_markup_mode=None)
    app.add_typer(audit_app, name="audit")

    audit_app.command("head")(audit_head)
    audit_app.command("acknowledge")(audit_acknowledge)
    audit_app.command("verify")(audit_verify)
