"""`reviewdepth eval`: trec_eval-exact evaluation (``--suite trec``) or recall-oriented review measures
(``--suite tar``: CLEF TAR / ASReview) of a run file against a qrels file.

Its parameters are declared once, in `PARAMS`: `register_eval` gives the Typer command (`eval_command`) its
signature from it, and `parse_args` reads the ordinary command lines from it without Typer (`app.main` runs those
so: importing Typer and building the command took more time than evaluating a small file). Whatever
`parse_args` does not take for certain (``--help``, a mistake, ``--``) goes to Typer, which gives the help and
the usage errors.
`tests/cli/test_eval_fast_path.py` checks both readings against each other."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from enum import StrEnum
from typing import TYPE_CHECKING, Any, NamedTuple

from .output import fail, write_result

if TYPE_CHECKING:
    import typer


class EvalFormat(StrEnum):
    trec = "trec"
    tar = "tar"
    json = "json"
    table = "table"
    csv = "csv"
    html = "html"


class Suite(StrEnum):
    trec = "trec"
    tar = "tar"


class Compat(StrEnum):
    none = "none"
    clef2017 = "clef2017"
    clef2019 = "clef2019"
    asreview = "asreview"


class RunFormat(StrEnum):
    auto = "auto"
    clef = "clef"
    trec = "trec"


class Param(NamedTuple):  # a NamedTuple: a frozen dataclass costs ~1 ms more to define, at every start
    """One parameter of ``eval``: ``name`` is its keyword in `run_eval`; ``flags`` its option names (none: a
    required positional argument); ``kind`` ``str``, ``int``, ``bool`` (a flag, ``True`` when given) or a
    ``StrEnum`` (its values are the choices). An option whose ``default`` is ``None`` is optional (``kind | None``);
    a ``multiple`` one is repeatable and gives a list, or ``None`` when not given."""

    name: str
    kind: type
    help: str
    flags: tuple[str, ...] = ()
    default: Any = None
    multiple: bool = False


PARAMS: tuple[Param, ...] = (
    Param("qrels", str, "TREC qrels file (gzip ok, '-' for stdin)."),
    Param("run", str, "TREC or CLEF TAR run file (gzip ok, '-' for stdin)."),
    Param("measure", str, "Measure or group (map, P_10, P.5,10, official, all). Repeatable.", ("-m", "--measure"),
          multiple=True),
    Param("per_query", bool, "Print per-query values too.", ("-q",), False),
    Param("complete", bool, "Average over all qrels queries; missing ones score 0.", ("-c",), False),
    Param("level", int, "Relevance level: qrels value >= N is relevant.", ("-l",), 1),
    Param("max_docs", int, "Evaluate only the first N ranked documents per query.", ("-M",)),
    Param("judged_only", bool, "Evaluate only the judged documents: unjudged ones leave the ranking (after -M), as "
                               "trec_eval -J.", ("-J",), False),
    Param("output_format", EvalFormat, "Output format (default: trec for --suite trec, tar for --suite tar).",
          ("--format",)),
    Param("trec_eval_version", int, "Reproduce trec_eval 9 (9.0.8) or 10 (10.0).", ("--trec-eval-version",), 9),
    Param("suite", Suite, "trec: trec_eval measures; tar: recall-oriented review measures.", ("--suite",),
          Suite.trec),
    Param("compat", Compat, "tar suite: clean definitions (none), or reproduce the CLEF 2017 / 2018-2019 scripts or "
                            "asreview-insights.", ("--compat",), Compat.none),
    Param("num_docs", int, "Documents in the collection: trec suite, trec_eval's -N (utility); tar suite, the "
                           "collection size of every topic (default: from the qrels, as CLEF).", ("-N", "--num-docs")),
    Param("run_format", RunFormat, "tar suite: clef = file order is the ranking; trec = rank by score; auto = clef "
                                   "when column 2 holds CLEF actions or 0/1 flags.", ("--run-format",),
          RunFormat.auto),
)


def run_eval(
    *,
    qrels: str,
    run: str,
    measure: list[str] | None,
    per_query: bool,
    complete: bool,
    level: int,
    max_docs: int | None,
    judged_only: bool,
    output_format: EvalFormat | None,
    trec_eval_version: int,
    suite: Suite,
    compat: Compat,
    num_docs: int | None,
    run_format: RunFormat,
) -> None:
    """Evaluate RUN against QRELS: exactly as trec_eval (--suite trec) or with the CLEF TAR / ASReview
    recall-oriented measures (--suite tar)."""
    from reviewdepth.formats import prescan

    # the scans of both files start now, on other threads, and run while numpy and the rest are imported
    early = (prescan.start(qrels, prescan.QRELS_LAYOUT, trec_eval_version >= 10, prescan.EVAL_SCAN_HASHES),
             prescan.start(run, prescan.RUN_LAYOUT, trec_eval_version >= 10, prescan.EVAL_SCAN_HASHES)
             ) if suite is Suite.trec else (None, None)
    from reviewdepth.formats.errors import InputError
    from reviewdepth.measures.suite import MeasureError
    from reviewdepth.services.evaluation.evaluate import EvalInput, EvalRequest, SuiteMismatch, evaluate

    from .allocator import prefer_heap_for_large_inputs

    if suite is Suite.trec and output_format is EvalFormat.tar:
        fail("--format tar needs --suite tar")
    request = EvalRequest(suite=suite.value, relevance_level=level, measures=list(measure or []),
                          complete=complete, max_docs=max_docs, version=trec_eval_version, compat=compat.value,
                          num_docs=num_docs, run_format=run_format.value, judged_only=judged_only)
    prefer_heap_for_large_inputs(qrels, run)
    try:
        result = evaluate(EvalInput(qrels, mapped=early[0]), EvalInput(run, mapped=early[1]), request)
    except SuiteMismatch as exc:
        fail("-m, -c, -M, -J and --trec-eval-version apply to --suite trec only" if exc.suite == "tar"
             else "--compat and --run-format apply to --suite tar only")
    except InputError as exc:
        fail(exc.describe())
    except (MeasureError, ValueError) as exc:
        fail(str(exc))
    chosen = output_format or (EvalFormat.tar if suite is Suite.tar else EvalFormat.trec)
    if suite is Suite.tar and chosen is not EvalFormat.tar:
        from reviewdepth.report.tar_model import TarEvaluation  # the trec suite's output needs no tar types

        if isinstance(result, TarEvaluation):
            # notices (skipped topics, duplicates) go to stderr unless the output is the CLEF line format,
            # which prints them where the official scripts do
            for notice in result.notices:
                sys.stderr.write(f"reviewdepth: note: {notice}\n")
    write_result(result, chosen.value, per_query=per_query)


def eval_command(**values: Any) -> None:
    run_eval(**values)


# Typer reads a command's help from its docstring, and its parameters from the signature `register_eval` gives it
eval_command.__doc__ = run_eval.__doc__


def register_eval(app: typer.Typer) -> None:
    """Add the ``eval`` command to ``app``: `eval_command`, its parameters from `PARAMS` (built here, where Typer
    is imported; ``reviewdepth eval`` on an ordinary command line runs without it)."""
    import inspect
    from typing import Annotated

    import typer

    def annotation(param: Param) -> Any:
        kind: Any = param.kind
        if not param.flags:
            return Annotated[kind, typer.Argument(help=param.help)]
        if param.multiple:
            kind = list[kind] | None  # type: ignore[valid-type]
        elif param.default is None:
            kind = kind | None
        return Annotated[kind, typer.Option(*param.flags, help=param.help)]

    # the same signature at every call (from the same table): setting it again changes nothing Typer reads
    eval_command.__signature__ = inspect.Signature([  # type: ignore[attr-defined]
        inspect.Parameter(param.name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation(param),
                          default=param.default if param.flags else inspect.Parameter.empty)
        for param in PARAMS
    ])
    app.command("eval")(eval_command)


def parse_args(args: Sequence[str]) -> dict[str, Any] | None:
    """``eval``'s arguments (after the word ``eval``) as the Typer command passes them to `run_eval`, read with
    Click's rules (options anywhere among the two files, ``-qc``, ``-l2``, ``-mmap``, ``--format=json``, the last
    of a repeated option, ``-`` a file); ``None`` for anything else — ``--help``, an unknown option, a missing or
    bad value, not two files, ``--`` — which Typer then reads and answers as it always has."""
    by_flag = {flag: param for param in PARAMS for flag in param.flags}
    values: dict[str, Any] = {}
    files: list[str] = []
    rest = list(args)
    while rest:
        token = rest.pop(0)
        if token == "--":
            return None
        if not token.startswith("-") or token == "-":
            files.append(token)
            continue
        if token.startswith("--"):
            flag, eq, attached = token.partition("=")
            found = by_flag.get(flag)
            if found is None or (eq and found.kind is bool):
                return None
            if eq:
                rest.insert(0, attached)
        else:  # short options, as Click reads them: flags until one that takes a value, which takes the rest
            found = None
            for i, letter in enumerate(token[1:], start=2):
                found = by_flag.get("-" + letter)
                if found is None:
                    return None
                if found.kind is not bool:
                    if i < len(token):
                        rest.insert(0, token[i:])
                    break
                values[found.name] = True
                found = None
            if found is None:
                continue
        param = found
        if param.kind is bool:
            values[param.name] = True
            continue
        if not rest:
            return None
        value = _convert(param, rest.pop(0))
        if value is None:
            return None
        if param.multiple:
            values.setdefault(param.name, []).append(value)
        else:
            values[param.name] = value
    positionals = [param for param in PARAMS if not param.flags]
    if len(files) != len(positionals):
        return None
    values.update((param.name, text) for param, text in zip(positionals, files, strict=True))
    return {param.name: values.get(param.name, param.default) for param in PARAMS}


def _convert(param: Param, text: str) -> Any:
    """``text`` as a value of ``param`` (as Click's INT and Typer's enum choices convert it), ``None`` when it is
    not one."""
    if param.kind is str:
        return text
    if param.kind is int:
        try:
            return int(text)
        except ValueError:
            return None
    try:
        return param.kind(text)
    except ValueError:
        return None
