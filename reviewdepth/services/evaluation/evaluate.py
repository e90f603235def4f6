"""Evaluate a run against qrels: the use case behind ``reviewdepth eval`` and ``POST /evaluate`` (`evaluate`,
which checks the options and picks the suite; both doors call it)."""

from __future__ import annotations

import mmap
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, TypeVar, get_args

import numpy as np

from reviewdepth.formats.errors import InputError
from reviewdepth.formats.prescan import EVAL_SCAN_HASHES
from reviewdepth.formats.scan import IntColumn, LineNumbers
from reviewdepth.formats.source import map_file, read_bytes
from reviewdepth.formats.trec import QrelsColumns, RunColumns, parse_qrels, parse_run, read_qrels, read_run
from reviewdepth.measures.ranking import (
    DuplicateDocumentError,
    JoinColumns,
    RankedQueries,
    join_and_rank_columns,
    judged_only,
    placeholder_rankings,
)
from reviewdepth.measures.suite import Evaluation, MeasureSpec, evaluate_ranked

ParsedColumns = TypeVar("ParsedColumns")

if TYPE_CHECKING:  # the tar suite loads when asked for: ``eval --suite trec`` starts without it
    from reviewdepth.report.tar_model import TarEvaluation

Suite = Literal["trec", "tar"]
SUITES: tuple[str, ...] = get_args(Suite)


@dataclass
class EvalOptions:
    """trec_eval's options: ``-l`` level, ``-c`` complete, ``-M`` max docs per query, ``-J`` judged documents
    only, ``-N`` documents in the collection, and the version rules."""

    relevance_level: int = 1
    complete: bool = False
    max_docs: int | None = None
    version: int = 9
    measures: list[str] = field(default_factory=list)
    judged_only: bool = False
    num_docs: int | None = None

    def validate(self) -> None:
        if self.relevance_level < 0:
            raise ValueError("relevance level (-l) must be >= 0")
        if self.max_docs is not None and self.max_docs < 1:
            raise ValueError("max docs per query (-M) must be >= 1")
        if self.num_docs is not None and self.num_docs < 0:
            raise ValueError("documents in the collection (-N) must be >= 0")
        if self.version not in (9, 10):
            raise ValueError("trec_eval version must be 9 or 10")


@dataclass
class RankedRun:
    """What the measures need once the run and qrels are joined: the ranking and the few facts of the files that
    the summary uses. The columns themselves can then be freed (on a large run they are most of the memory)."""

    ranked: RankedQueries
    spec: MeasureSpec
    run_id: str
    qrels_only: list[str]
    placeholders: RankedQueries | None
    complete_num_rel: int | None
    options: EvalOptions


class _RunFacts(NamedTuple):
    path: str
    lines: LineNumbers
    run_id: str


class _QrelsFacts(NamedTuple):
    path: str
    lines: LineNumbers
    rel: IntColumn


def rank_columns(qrels: QrelsColumns, run: RunColumns, options: EvalOptions) -> RankedRun:
    """Rank and join; errors name the offending file and line. The columns the join alone reads are freed as it
    goes when the caller keeps no reference to ``qrels`` and ``run`` (`evaluate` passes them as arguments only)."""
    options.validate()
    spec = MeasureSpec.parse(options.measures, options.version)
    columns: JoinColumns = {
        "run_qids": run.qid, "run_docnos": run.docno.values, "run_hashes": run.docno.hashes,
        "run_scores": run.scores(), "qrels_qids": qrels.qid, "qrels_docnos": qrels.docno.values,
        "qrels_hashes": qrels.docno.hashes, "qrels_rels": qrels.rel}
    # what is read after the join; the rest of both files leaves with `columns`, each column once the join is
    # done with it (the caller passes the files' columns as arguments only)
    run_facts = _RunFacts(run.path, run.lines, run.run_id)
    qrels_facts = _QrelsFacts(qrels.path, qrels.lines, qrels.rel)
    del run, qrels
    try:
        ranked, codes = join_and_rank_columns(columns, level=options.relevance_level, max_docs=options.max_docs,
                                              version=options.version)
    except DuplicateDocumentError as exc:
        source = qrels_facts if exc.source == "qrels" else run_facts
        raise InputError(source.path, source.lines.of(exc.index), "docno",
                         f"duplicate docno {exc.docno!r} for query {exc.qid!r}") from None

    nq = len(codes.qids)
    in_run = np.bincount(codes.run, minlength=nq) > 0
    in_qrels = np.bincount(codes.qrels, minlength=nq) > 0
    # the codes of judged rows, not a weighted count: weights are read as doubles, 8 bytes per qrels line at the
    # peak of the evaluation's memory
    judged = np.bincount(codes.qrels[qrels_facts.rel >= 0], minlength=nq) > 0
    bad = np.flatnonzero(in_run & in_qrels & ~judged)
    if len(bad):
        qid = codes.qids[bad[0]].decode("utf-8", "replace")
        first = qrels_facts.lines.of(int(np.flatnonzero(codes.qrels == bad[0])[0]))
        raise InputError(qrels_facts.path, first, "rel",
                         f"query {qid!r} has only negative (unjudged) values; trec_eval cannot score it")
    qrels_only = [codes.qids[c].decode("utf-8", "surrogateescape") for c in np.flatnonzero(in_qrels & ~in_run)]
    if options.version >= 10 and qrels_only and not options.complete:
        qid = qrels_only[0]
        code = codes.qids.index(qid.encode("utf-8", "surrogateescape"))
        first = qrels_facts.lines.of(int(np.flatnonzero(codes.qrels == code)[0]))
        raise InputError(qrels_facts.path, first, "qid",
                         f"query {qid!r} is in the qrels but not in the run {run_facts.path}; trec_eval 10.0 "
                         "stops here (use -c to score missing queries as 0)")
    if options.judged_only:
        ranked = judged_only(ranked)
    if ranked.num_queries == 0 and not (options.complete and qrels_only):
        raise InputError(run_facts.path, None, None,
                         f"no queries with both results and relevance information in {qrels_facts.path}")
    placeholders = None
    if options.version >= 10 and options.complete and qrels_only:
        placeholders = placeholder_rankings(qrels_only, np.flatnonzero(in_qrels & ~in_run), codes.qrels,
                                            qrels_facts.rel, options.relevance_level)
        if options.judged_only:
            placeholders = judged_only(placeholders)
    return RankedRun(ranked=ranked, spec=spec, run_id=run_facts.run_id, qrels_only=qrels_only,
                     placeholders=placeholders,
                     complete_num_rel=int(np.count_nonzero(qrels_facts.rel > 0)) if options.complete else None,
                     options=options)


def measure_ranked(ranked_run: RankedRun) -> Evaluation:
    """The selected measures of a joined run (`rank_columns`)."""
    options = ranked_run.options
    return evaluate_ranked(
        ranked_run.ranked, ranked_run.spec, run_id=ranked_run.run_id, version=options.version,
        complete_qids=ranked_run.qrels_only if options.complete and ranked_run.placeholders is None else None,
        complete_num_rel=ranked_run.complete_num_rel, placeholders=ranked_run.placeholders,
        num_docs=options.num_docs or 0,
    )


def evaluate_columns(qrels: QrelsColumns, run: RunColumns, options: EvalOptions) -> Evaluation:
    """Rank, join and measure; errors name the offending file and line."""
    return measure_ranked(rank_columns(qrels, run, options))


def evaluate_files(qrels_path: str | Path, run_path: str | Path, options: EvalOptions) -> Evaluation:
    """Read both files (gzip or ``-`` for stdin) and evaluate."""
    comments = options.version >= 10
    qrels = read_qrels(qrels_path, allow_comments=comments)
    run = read_run(run_path, allow_comments=comments)
    return evaluate_columns(qrels, run, options)


@dataclass(frozen=True)
class EvalInput:
    """A file to evaluate: its path (gzip ok, ``-`` for standard input), or its bytes already read (an upload,
    decompressed), with ``name`` the name its errors give."""

    name: str
    data: bytes | None = None
    mapped: mmap.mmap | None = None  # the file already mapped, its scan started (`reviewdepth.formats.prescan`)

    def read(self) -> bytes:
        return read_bytes(self.name) if self.data is None else self.data

    def map(self) -> bytes | mmap.mmap:
        """`read`, but a plain file comes as a read-only map (`map_file`): the scanner reads it without a copy."""
        if self.mapped is not None:
            return self.mapped
        return map_file(self.name) if self.data is None else self.data

    def parse(self, parser: Callable[..., ParsedColumns], **options: Any) -> ParsedColumns:
        """``parser(self.map(), self.name, **options)``, the map closed once the columns are made: the pages the
        scanner has not yet released (its last few MiB, the end of a run read for its tag) would otherwise stay
        resident beside the columns through the join, 9 MiB of a 0.6 M-line evaluation's peak."""
        data = self.map()
        try:
            return parser(data, self.name, **options)
        finally:
            if isinstance(data, mmap.mmap):
                data.close()


class SuiteMismatch(ValueError):
    """Options of the other suite were given; ``options`` names them as `EvalRequest` does (each door spells
    them its own way: ``-m`` for the CLI, ``measure`` for the API)."""

    def __init__(self, suite: str, options: tuple[str, ...]) -> None:
        super().__init__(f"{', '.join(options)} do not apply to suite {suite}")
        self.suite = suite
        self.options = options


@dataclass
class EvalRequest:
    """Everything ``reviewdepth eval`` and ``POST /evaluate`` take besides the two files: the suite, ``-l``, the
    trec suite's options (`EvalOptions`) and the tar suite's (`TarOptions`)."""

    suite: str = "trec"
    relevance_level: int = 1
    measures: list[str] = field(default_factory=list)
    complete: bool = False
    max_docs: int | None = None
    version: int = 9
    compat: str = "none"
    num_docs: int | None = None
    run_format: str = "auto"
    judged_only: bool = False

    def misplaced(self) -> tuple[str, ...]:
        """The options set away from their defaults that the chosen suite does not take."""
        if self.suite == "tar":
            given = {"measures": bool(self.measures), "complete": self.complete,
                     "max_docs": self.max_docs is not None, "version": self.version != 9,
                     "judged_only": self.judged_only}
        else:  # num_docs is trec_eval's -N in the trec suite
            given = {"compat": self.compat != "none", "run_format": self.run_format != "auto"}
        return tuple(name for name, present in given.items() if present)


def evaluate(qrels: EvalInput, run: EvalInput, request: EvalRequest) -> Evaluation | TarEvaluation:
    """Check the options (before any file is read), read both files and evaluate with the request's suite:
    `Evaluation` (trec) or `TarEvaluation` (tar). Bad options raise `SuiteMismatch` or `ValueError`, bad files
    `InputError`, bad measure names `MeasureError`."""
    if request.suite not in SUITES:
        raise ValueError(f"suite must be one of {', '.join(SUITES)}, not {request.suite!r}")
    misplaced = request.misplaced()
    if misplaced:
        raise SuiteMismatch(request.suite, misplaced)
    if request.suite == "tar":
        from reviewdepth.services.evaluation.evaluate_tar import TarOptions, evaluate_tar_columns

        tar_options = TarOptions(compat=request.compat, num_docs=request.num_docs, run_format=request.run_format,
                                 relevance_level=request.relevance_level)
        tar_options.validate()
        qrels_columns = parse_qrels(qrels.read(), qrels.name)
        return evaluate_tar_columns(qrels_columns, run.read(), run.name, tar_options)
    options = EvalOptions(relevance_level=request.relevance_level, complete=request.complete,
                          max_docs=request.max_docs, version=request.version, measures=list(request.measures),
                          judged_only=request.judged_only, num_docs=request.num_docs)
    options.validate()
    comments = options.version >= 10
    # the columns are arguments only: they are freed when the join returns, before the measures' arrays exist
    # the relevance values in their narrowest type (int8 for the usual ones): the join widens the ranked ones
    ranked_run = rank_columns(qrels.parse(parse_qrels, allow_comments=comments, hashes=EVAL_SCAN_HASHES,
                                          narrow_rel=True),
                              run.parse(parse_run, allow_comments=comments, hashes=EVAL_SCAN_HASHES), options)
    return measure_ranked(ranked_run)
