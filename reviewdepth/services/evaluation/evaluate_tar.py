"""``reviewdepth eval --suite tar``: recall-oriented evaluation of completed reviews (CLEF TAR, ASReview).

Reads the qrels and the run, joins them, applies the line rules of the chosen compatibility mode and hands each
topic's ranking to `reviewdepth.measures.tar_suite`.

Line rules. CLEF modes (``clef2017``, ``clef2019``), as the official scripts: file order is the ranking; a
docno repeated within a topic is skipped (reported as ``TOPIC Duplicate DOCNO``); a line whose qrels value is
≥ 3 ("relevant, not retrieved by the Boolean query") is skipped; relevant = qrels value 1 or 2; N = qrels lines
of the topic minus those with value −1 or > 2; a topic with R = 0 or absent from the qrels is skipped
("Skipping topic: X"). Clean (``none``) and ``asreview``: CLEF-format runs (2017 actions or 0/1 flags) are in
file order, other runs (``Q0``) are ranked by trec_eval's rule (score descending, docno descending);
relevant = qrels value ≥ level; N = judged qrels lines (value ≥ 0); a repeated docno is an input error;
topics with R = 0 are skipped. ``num_docs`` overrides N for every topic.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal, get_args

import numpy as np
import numpy.typing as npt

from reviewdepth.formats import runs
from reviewdepth.formats.errors import InputError
from reviewdepth.formats.runs import CLEF_FIELDS, parse_run
from reviewdepth.formats.source import read_bytes
from reviewdepth.formats.trec import QrelsColumns, read_qrels
from reviewdepth.measures.ranking import DuplicateDocumentError, join_and_rank
from reviewdepth.measures.tar_suite import (
    COMPAT_MODES,
    SUITES,
    TopicRun,
    TopicValues,
    Value,
    summarize,
    topic_values,
)
from reviewdepth.report.tar_model import TarEvaluation

RunFormat = Literal["auto", "clef", "trec"]
RUN_FORMATS: tuple[str, ...] = get_args(RunFormat)


@dataclass
class TarOptions:
    """``--compat``, ``--num-docs``, ``--run-format`` and ``-l`` (clean and asreview modes only)."""

    compat: str = "none"
    num_docs: int | None = None
    run_format: str = "auto"
    relevance_level: int = 1

    def validate(self) -> None:
        if self.compat not in COMPAT_MODES:
            raise ValueError(f"--compat must be one of {', '.join(COMPAT_MODES)}")
        if self.run_format not in RUN_FORMATS:
            raise ValueError(f"--run-format must be one of {', '.join(RUN_FORMATS)}")
        if self.num_docs is not None and self.num_docs < 1:
            raise ValueError("--num-docs must be >= 1")
        if self.compat.startswith("clef") and self.run_format == "trec":
            raise ValueError(f"--compat {self.compat} reads runs in file order; --run-format trec is not allowed")
        if self.relevance_level < 1:
            raise ValueError("relevance level (-l) must be >= 1 for the tar suite")


def _decode(value: bytes) -> str:
    return value.decode("utf-8", "surrogateescape")


def _topic_counts(qrels: QrelsColumns, qids: list[bytes], qrels_codes: npt.NDArray[np.int32], clef: bool,
                  level: int) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """N and R of every query code."""
    size = len(qids)
    rel = qrels.rel
    if clef:
        in_set = ~((rel == -1) | (rel > 2))
        relevant = (rel == 1) | (rel == 2)
    else:
        in_set = rel >= 0
        relevant = rel >= level
    n_docs = np.bincount(qrels_codes[in_set], minlength=size).astype(np.int64)
    n_rels = np.bincount(qrels_codes[relevant], minlength=size).astype(np.int64)
    return n_docs, n_rels


def evaluate_tar_columns(qrels: QrelsColumns, run_data: bytes, run_path: str, options: TarOptions) -> TarEvaluation:
    """Evaluate run text against parsed qrels with the tar suite."""
    options.validate()
    compat = options.compat
    clef_mode = compat.startswith("clef")
    clef_run = parse_run(run_data, run_path, actions=True, scores=False, exact_fields=clef_mode, names=CLEF_FIELDS)
    kind = clef_run.kind()
    file_order = clef_mode or options.run_format == "clef" or (options.run_format == "auto" and kind != "other")

    events: list[tuple[str, str]] = []
    duplicates: dict[bytes, list[str]] = {}
    if file_order:
        _, block_topics = clef_run.topic_blocks()
        run = clef_run
        if clef_mode:
            keep = ~clef_run.repeated()  # the CLEF scripts skip a docno's later lines
            if not keep.all():
                for row in np.flatnonzero(~keep).tolist():
                    topic = bytes(clef_run.topic[row])
                    duplicates.setdefault(topic, []).append(
                        f"{_decode(topic)} Duplicate {_decode(bytes(clef_run.docno.values[row]))}")
                run = clef_run.subset(np.flatnonzero(keep).astype(np.int64))
        scores = -np.arange(len(run), dtype=np.float64)
        ranked_input = (run.qid, run.docno, scores, 10, run.line)
    else:
        trec_run = parse_run(run_data, run_path)
        run = clef_run
        ranked_input = (trec_run.qid, trec_run.docno, trec_run.scores(), 9, trec_run.line)
        block_topics = []

    qids_in, docnos_in, scores_in, version, lines_in = ranked_input
    try:
        ranked, codes = join_and_rank(
            run_qids=qids_in, run_docnos=docnos_in.values, run_hashes=docnos_in.hashes, run_scores=scores_in,
            qrels_qids=qrels.qid, qrels_docnos=qrels.docno.values, qrels_hashes=qrels.docno.hashes,
            qrels_rels=qrels.rel, level=1, version=version,
        )
    except DuplicateDocumentError as exc:
        if exc.source == "qrels":
            raise InputError(qrels.path, int(qrels.line[exc.index]), "docno",
                             f"duplicate docno {exc.docno!r} for topic {exc.qid!r}") from None
        raise InputError(run_path, int(lines_in[exc.index]), "docno",
                         f"duplicate docno {exc.docno!r} for topic {exc.qid!r}") from None

    n_docs, n_rels = _topic_counts(qrels, codes.qids, codes.qrels, clef_mode, options.relevance_level)
    code_of = {q: i for i, q in enumerate(codes.qids)}
    position = {q.encode("utf-8", "surrogateescape"): i for i, q in enumerate(ranked.qids)}
    if not file_order:
        block_topics = [q.encode("utf-8", "surrogateescape") for q in ranked.qids]

    # per-line action information, in the (deduplicated) run's row order (unused for TREC-ranked runs)
    shown_all = feedback_all = cost_shown_all = cost_feedback_all = flags_all = np.zeros(len(run), dtype=bool)
    if file_order:
        actions = run.actions()
        shown_all = runs.shown(actions)
        feedback_all = runs.feedback(actions)
        cost_action = runs.cost_actions(actions)
        cost_shown_all = runs.shown(cost_action)
        cost_feedback_all = runs.feedback(cost_action)
        if compat == "clef2019":
            flags_all = run.flags()
        elif compat == "clef2017" or kind != "flags":
            flags_all = np.zeros(len(run), dtype=bool)
        else:
            flags_all = actions == runs.THRESHOLD_FLAG
    suite = SUITES[compat]
    per_query: dict[str, dict[str, Value]] = {}
    review_order: dict[str, tuple[list[int], int]] = {}
    topics: list[TopicValues] = []
    for topic in block_topics:
        qid = _decode(topic)
        code = code_of.get(topic)
        index = position.get(topic)
        r_count = int(n_rels[code]) if code is not None else 0
        if index is None or r_count == 0:
            events.append(("skip", f"Skipping topic: {qid}"))
            continue
        start, stop = int(ranked.offsets[index]), int(ranked.offsets[index + 1])
        values = ranked.rel[start:stop]
        rows = ranked.source_rows[start:stop]
        keep_lines = values <= 2 if clef_mode else np.ones(len(values), dtype=bool)
        if not keep_lines.all():
            values, rows = values[keep_lines], rows[keep_lines]
        rel = ((values == 1) | (values == 2)) if clef_mode else (values >= options.relevance_level)
        num_docs = options.num_docs if options.num_docs is not None else int(n_docs[code])  # type: ignore[index]
        if file_order:
            flags = flags_all[rows]
            if compat in ("none", "asreview") and np.count_nonzero(flags) > 1:
                second = int(rows[np.flatnonzero(flags)[1]])
                raise InputError(run_path, int(run.line[second]), "action",
                                 f"topic {qid!r} has more than one threshold flag (1); the clean definitions need "
                                 "one (use --compat clef2019 to reproduce the official script)")
            t = TopicRun(qid, rel.astype(np.int64), shown_all[rows], feedback_all[rows], cost_shown_all[rows],
                         cost_feedback_all[rows], flags, num_docs, r_count)
        else:
            t = TopicRun.plain(qid, rel, num_docs, r_count)
        if compat == "clef2017" and num_docs < 10:
            raise InputError(qrels.path, None, None,
                             f"topic {qid!r} has N = {num_docs} < 10 documents: the official CLEF 2017 script "
                             "crashes on it (ZeroDivisionError in NCG); use --compat none")
        events.extend(("duplicate", text) for text in duplicates.get(topic, []))
        tv = topic_values(compat, t)
        topics.append(tv)
        per_query[qid] = tv.values
        review_order[qid] = ((t.rel[t.shown] > 0).astype(int).tolist(), r_count)
        events.append(("topic", qid))
    if not topics:
        raise InputError(run_path, None, None,
                         f"no topic with both run lines and relevant documents in {qrels.path}")
    return TarEvaluation(compat, suite.layout, per_query, summarize(compat, topics), events, run.run_id,
                         review_order)


def evaluate_tar_files(qrels_path: str | Path, run_path: str | Path, options: TarOptions) -> TarEvaluation:
    """Read both files (gzip ok, ``-`` for stdin) and evaluate with the tar suite."""
    qrels = read_qrels(qrels_path)
    return evaluate_tar_columns(qrels, read_bytes(run_path), str(run_path), options)
