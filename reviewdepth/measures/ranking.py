"""trec_eval's ranking rule and the run-qrels join, on columnar arrays.

Ranking (trec_eval 9.0.8): scores compared as 32-bit floats (10.0: doubles), descending; equal scores broken
by docno descending in byte order (strcmp); the rank column and line order are ignored; ``-M k`` keeps the
first k of that order. Each ranked document gets its qrels value, ``NOT_IN_QRELS`` (-1) when the qrels do not
list it, or ``UNJUDGED`` (-2) when the qrels give it a negative value.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from types import ModuleType
from typing import Any, TypedDict

import numpy as np
import numpy.typing as npt

from reviewdepth.measures.extension import optional_extension
from reviewdepth.measures.segments import IntArray, positions_in_segment, segment_ids, segmented_cumsum

NOT_IN_QRELS = -1
PURE_PYTHON_JOIN_ENV = "REVIEWDEPTH_PURE_PYTHON_JOIN"
_SMALL_TIE_GROUP = 16
UNJUDGED = -2

BytesArray = npt.NDArray[np.bytes_]
HashArray = npt.NDArray[np.uint64]
CodeArray = npt.NDArray[np.integer[Any]]  # query codes: int32 from `factorize_queries`, any integer accepted
# qrels values: int64, or narrower as `reviewdepth eval` reads them (`parse_qrels(narrow_rel=True)`)
RelArray = npt.NDArray[np.signedinteger[Any]]

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX = np.uint64(0xBF58476D1CE4E5B9)


class DuplicateDocumentError(ValueError):
    """The same docno appears twice for one query; ``index`` is the row of the second occurrence."""

    def __init__(self, source: str, index: int, qid: str, docno: str) -> None:
        self.source = source
        self.index = index
        self.qid = qid
        self.docno = docno
        super().__init__(f"duplicate docno {docno!r} for query {qid!r} in the {source}")


@dataclass(frozen=True)
class QueryCodes:
    """Query ids (strcmp order) and the code of every run and qrels row."""

    qids: list[bytes]
    run: npt.NDArray[np.int32]
    qrels: npt.NDArray[np.int32]


def factorize_queries(run_qids: BytesArray, qrels_qids: BytesArray) -> QueryCodes:
    """Codes for query ids, numbered in byte order so code order equals trec_eval's strcmp order."""

    def segments(values: BytesArray) -> tuple[IntArray, list[bytes]]:
        if len(values) == 0:
            return np.zeros(1, dtype=np.int64), []
        # compared as raw bytes (void view: memcmp), twice as fast as numpy's string comparison and the same
        # answer: within one array every value is NUL-padded to the same width
        raw = values.view(f"V{values.dtype.itemsize}")
        change = np.flatnonzero(raw[1:] != raw[:-1]) + 1
        starts = np.concatenate(([0], change)).astype(np.int64)
        return starts, values[starts].tolist()

    run_starts, run_vals = segments(run_qids)
    qrels_starts, qrels_vals = segments(qrels_qids)
    qids = sorted(set(run_vals) | set(qrels_vals))
    lookup = {q: i for i, q in enumerate(qids)}

    # 32-bit codes: one per row of both files, so half the memory of int64 on large runs
    def codes(values: BytesArray, starts: IntArray, vals: list[bytes]) -> npt.NDArray[np.int32]:
        if len(values) == 0:
            return np.zeros(0, dtype=np.int32)
        seg_codes = np.fromiter((lookup[v] for v in vals), dtype=np.int32, count=len(vals))
        return np.repeat(seg_codes, np.diff(np.concatenate((starts, [len(values)]))))

    return QueryCodes(qids, codes(run_qids, run_starts, run_vals), codes(qrels_qids, qrels_starts, qrels_vals))


_FNV_OFFSET = np.uint64(1469598103934665603)
_FNV_PRIME = np.uint64(1099511628211)


def docno_hashes(docnos: BytesArray) -> HashArray:
    """64-bit FNV-1a of each fixed-width byte string as numpy holds it (trailing NUL bytes dropped), vectorised
    over the byte positions: the scanner's hash of any token that does not end in a NUL byte. The sort-based join
    hashes columns scanned without hashes with it (`scan(..., hashes=False)`)."""
    n = len(docnos)
    out = np.full(n, _FNV_OFFSET, dtype=np.uint64)
    if n == 0:
        return out
    lengths = np.char.str_len(docnos)
    matrix = np.ascontiguousarray(docnos).view(np.uint8).reshape(n, docnos.dtype.itemsize)
    with np.errstate(over="ignore"):
        for k in range(int(lengths.max())):
            mixed = (out ^ matrix[:, k].astype(np.uint64)) * _FNV_PRIME  # uint64 arithmetic wraps modulo 2**64
            out = np.where(lengths > k, mixed, out)
    return out


def _keys(qcodes: CodeArray, hashes: HashArray) -> HashArray:
    with np.errstate(over="ignore"):
        mixed = (qcodes.astype(np.uint64) + np.uint64(1)) * _GOLDEN
        return (hashes ^ mixed) * _MIX


@dataclass(frozen=True)
class KeyedRows:
    """Rows keyed by (query code, docno hash) and sorted by key: the join's index and the one duplicate check.

    ``first[i]`` is the row of the first occurrence (lowest row) of row i's (code, docno) pair, i itself when the
    pair is new; ``exact`` is False when two different pairs share a 64-bit key (the join must then compare
    docnos itself)."""

    keys: HashArray
    order: IntArray
    sorted_keys: HashArray
    first: IntArray
    exact: bool

    def repeated(self) -> npt.NDArray[np.bool_]:
        """True for every row whose (code, docno) pair is on a lower row."""
        out: npt.NDArray[np.bool_] = self.first != np.arange(len(self.first), dtype=np.int64)
        return out


def keyed_rows(codes: CodeArray, hashes: HashArray, docnos: BytesArray) -> KeyedRows:
    """Sort the rows by key and find the repeated (code, docno) pairs: equal pairs are neighbours in key order,
    so only neighbours with equal keys are compared; a key shared by different pairs falls back to an exact
    dictionary pass."""
    n = len(codes)
    keys = _keys(codes, hashes)
    order = np.argsort(keys)
    sorted_keys = keys[order]
    first = np.arange(n, dtype=np.int64)
    tied = np.flatnonzero(sorted_keys[1:] == sorted_keys[:-1])
    if len(tied) == 0:
        return KeyedRows(keys, order, sorted_keys, first, True)
    a, b = order[tied], order[tied + 1]
    if bool(np.all((codes[a] == codes[b]) & (docnos[a] == docnos[b]))):
        # every tie is a true repeat: each run of equal keys is one pair, first seen on its lowest row
        boundary = np.concatenate(([True], sorted_keys[1:] != sorted_keys[:-1]))
        lowest = np.minimum.reduceat(order, np.flatnonzero(boundary))
        first[order] = lowest[np.cumsum(boundary) - 1]
        return KeyedRows(keys, order, sorted_keys, first, True)
    seen: dict[tuple[int, bytes], int] = {}
    for row, pair in enumerate(zip(codes.tolist(), docnos.tolist(), strict=True)):
        first[row] = seen.setdefault(pair, row)
    return KeyedRows(keys, order, sorted_keys, first, False)


def repeated_rows(codes: CodeArray, hashes: HashArray, docnos: BytesArray) -> npt.NDArray[np.bool_]:
    """True for every row whose (code, docno) pair is on a lower row: the duplicates of a run or qrels file (rows
    in file order) or of a ranking (rows in rank order)."""
    return keyed_rows(codes, hashes, docnos).repeated()


def score_sort_key(scores: npt.NDArray[np.float64],
                   version: int) -> npt.NDArray[np.uint64] | npt.NDArray[np.uint32]:
    """Unsigned key whose ascending order is descending score (float32 for 9.0.8, double for 10.0): 32 bits for
    9.0.8's float32 scores, 64 for 10.0's doubles."""
    if version >= 10:
        s64 = scores + 0.0  # -0.0 == 0.0 must tie
        bits = s64.view(np.uint64)
        neg = (bits >> np.uint64(63)).astype(bool)
        ordered = np.where(neg, ~bits, bits | np.uint64(1 << 63))
        return ~ordered
    s32 = scores.astype(np.float32)
    s32 += np.float32(0.0)
    bits32 = s32.view(np.uint32)
    neg32 = (bits32 >> np.uint32(31)).astype(bool)
    ordered32 = np.where(neg32, ~bits32, bits32 | np.uint32(1 << 31))
    np.invert(ordered32, out=ordered32)
    return ordered32


def _presorted_order(qcodes: CodeArray, score_key: npt.NDArray[np.unsignedinteger[Any]]
                     ) -> tuple[IntArray, npt.NDArray[np.bool_] | None] | None:
    """Runs usually arrive with each query in one block, sorted by score: then only the blocks move, and the few
    blocks that are not sorted (a handful of topics in some CLEF runs) are sorted on their own. With the order,
    the ties of its neighbours (`rank_order`'s ``tie``) when no block was sorted here: a block's rows stay
    neighbours, so they are found in file order, without gathering the keys in the new order."""
    n = len(qcodes)
    if n < 2:
        return np.arange(n, dtype=np.int64), np.zeros(max(0, n - 1), dtype=bool)
    within = qcodes[1:] == qcodes[:-1]
    unsorted = np.flatnonzero((score_key[1:] < score_key[:-1]) & within)
    starts = np.concatenate(([0], np.flatnonzero(~within) + 1)).astype(np.int64)
    block_codes = qcodes[starts]
    by_code = np.argsort(block_codes, kind="stable")
    if np.any(block_codes[by_code][1:] == block_codes[by_code][:-1]):
        return None  # a query split over several blocks
    ends = np.concatenate((starts[1:], [n]))
    # the blocks holding an unsorted pair (increasing, as `unsorted` is); not np.unique, whose first call loads
    # numpy.ma (15 ms of every start)
    in_block = np.searchsorted(starts, unsorted, side="right") - 1
    bad_blocks = in_block[np.concatenate(([True], in_block[1:] != in_block[:-1]))] if len(in_block) else in_block
    if len(bad_blocks) > 64 or int(np.sum(ends[bad_blocks] - starts[bad_blocks])) > n // 2:
        return None  # mostly unsorted: one sort of everything is cheaper than many small ones
    lengths = (ends - starts)[by_code]
    moved_from = starts[by_code]
    moved_to = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    # the moved rows as a running sum of steps: +1 inside a block, a jump at each block's first row (one n-long
    # array; the block offsets repeated plus a row count took three, at the peak of a small evaluation's memory)
    out: IntArray = np.ones(n, dtype=np.int64)
    out[0] = moved_from[0]
    out[moved_to[1:]] = moved_from[1:] - (moved_from[:-1] + lengths[:-1] - 1)
    np.cumsum(out, out=out)
    tie: npt.NDArray[np.bool_] | None = None
    if len(bad_blocks) == 0:
        # file rows r and r + 1 of one block tie; in the new order row out[i] is followed by out[i] + 1 except
        # where a block ends
        file_tie = np.zeros(n, dtype=bool)
        np.logical_and(within, score_key[1:] == score_key[:-1], out=file_tie[:-1])
        tie = file_tie[out[:-1]]
        tie[moved_to[1:] - 1] = False
    else:
        destination = np.empty(len(starts), dtype=np.int64)
        destination[by_code] = moved_to
        for block in bad_blocks.tolist():
            lo, hi = int(starts[block]), int(ends[block])
            at = int(destination[block])
            # ties are re-ordered by docno afterwards (rank_order), so any sort of the keys will do
            out[at:at + hi - lo] = lo + np.argsort(score_key[lo:hi])
    return out, tie


def rank_order(qcodes: CodeArray, scores: npt.NDArray[np.float64], docnos: BytesArray, version: int) -> IntArray:
    """Row order: query code ascending, then score descending, then docno descending (bytes)."""
    score_key = score_sort_key(scores, version)
    del scores  # freed here when the caller handed them over (`join_and_rank_columns`)
    presorted = _presorted_order(qcodes, score_key)
    order, tie = presorted if presorted is not None else (None, None)
    if order is None:
        if version >= 10:
            order = np.lexsort((score_key, qcodes))
        else:
            # ties are re-ordered below, so stability is not needed
            order = np.argsort((qcodes.astype(np.uint64) << np.uint64(32)) | score_key)
    if tie is None:
        sorted_q = qcodes[order]
        tie = sorted_q[1:] == sorted_q[:-1]
        del sorted_q  # one gathered copy at a time: these are the peak of an evaluation's memory
        sorted_s = score_key[order]
        tie &= sorted_s[1:] == sorted_s[:-1]
        del sorted_s
    del score_key
    if not tie.any():
        return order.astype(np.int64, copy=False)
    # Resolve ties by docno descending, only inside the tied groups.
    order = order.astype(np.int64, copy=True)
    in_group = np.zeros(len(order), dtype=bool)
    in_group[1:] |= tie
    in_group[:-1] |= tie
    positions = np.flatnonzero(in_group)
    starts_group = np.ones(len(positions), dtype=bool)
    starts_group[1:] = ~tie[positions[1:] - 1]
    group_starts = np.flatnonzero(starts_group)
    sizes = np.diff(np.concatenate((group_starts, [len(positions)])))
    # Small groups (the common case): odd-even transposition sort, one vectorised compare-and-swap per pass;
    # a group of k members is sorted after k passes.
    small = sizes <= _SMALL_TIE_GROUP
    member_small = np.repeat(small, sizes)
    within = np.arange(len(positions)) - np.repeat(group_starts, sizes)
    member_size = np.repeat(sizes, sizes)
    has_next = member_small & (within + 1 < member_size)
    for step in range(int(sizes[small].max()) if small.any() else 0):
        active = has_next & (within % 2 == step % 2) & (member_size > step)
        at = positions[active]
        if len(at) == 0:
            continue
        a, b = order[at], order[at + 1]
        swap = docnos[a] < docnos[b]
        order[at[swap]], order[at[swap] + 1] = b[swap], a[swap]
    # large groups: sort their members by (group, docno descending)
    big = ~member_small
    if big.any():
        pos_big = positions[big]
        group = np.cumsum(starts_group)[big]
        members = order[pos_big]
        sub = np.lexsort((docnos[members], -group))[::-1]
        order[pos_big] = members[sub]
    return order


@dataclass(frozen=True)
class RankedQueries:
    """Ranked qrels values of the evaluated queries, concatenated in strcmp(qid) order.

    ``rel[offsets[q]:offsets[q+1]]`` is query ``q``'s ranking (after ``-M``); ``num_rel`` counts qrels values
    >= ``level``; ``num_nonrel`` counts qrels values in [0, level). ``judged_levels`` (offsets, values, counts)
    lists, per query, each distinct qrels value >= 0 (increasing) and how many qrels lines carry it, retrieved
    or not: trec_eval's ``rel_levels``, from which the graded measures build the ideal ranking.
    """

    qids: list[str]
    offsets: IntArray
    rel: IntArray
    num_rel: IntArray
    num_nonrel: IntArray
    level: int
    source_rows: IntArray
    judged_levels: tuple[IntArray, IntArray, IntArray] | None = None

    @property
    def num_queries(self) -> int:
        return len(self.qids)

    def queries(self, first: int, stop: int) -> RankedQueries:
        """Queries ``first`` to ``stop - 1`` alone, as a ranking of their own: views of this one's arrays, the
        offsets rebased to 0."""
        lo, hi = int(self.offsets[first]), int(self.offsets[stop])
        levels = None
        if self.judged_levels is not None:
            level_offsets, values, counts = self.judged_levels
            a, b = int(level_offsets[first]), int(level_offsets[stop])
            levels = (level_offsets[first:stop + 1] - a, values[a:b], counts[a:b])
        return RankedQueries(
            qids=self.qids[first:stop], offsets=self.offsets[first:stop + 1] - lo, rel=self.rel[lo:hi],
            num_rel=self.num_rel[first:stop], num_nonrel=self.num_nonrel[first:stop], level=self.level,
            source_rows=self.source_rows[lo:hi], judged_levels=levels)

    @cached_property
    def relevant(self) -> npt.NDArray[np.bool_]:
        """rel_i = 1 when the qrels value is >= ``level``, in ranking order."""
        out: npt.NDArray[np.bool_] = self.rel >= self.level
        return out

    @cached_property
    def cumulative_gain(self) -> IntArray:
        """CG at every rank of every query (the segmented running count of ``relevant``), computed once: the
        cutoff measures (P, recall, Rprec, num_rel_ret, …) read their values from it instead of re-summing."""
        return segmented_cumsum(self.relevant, self.offsets)

    @cached_property
    def relevant_positions(self) -> tuple[IntArray, IntArray, IntArray]:
        """Ranks (1-based) of the relevant documents, their running count k within the query, and per-query
        offsets into them; computed once for AP, reciprocal rank and the interpolated precisions."""
        idx = np.flatnonzero(self.relevant)
        ranks = positions_in_segment(self.offsets)[idx] + 1
        per_query = np.bincount(segment_ids(self.offsets)[idx], minlength=self.num_queries)
        offsets = np.concatenate(([0], np.cumsum(per_query))).astype(np.int64)
        k = positions_in_segment(offsets) + 1
        return ranks.astype(np.int64), k, offsets


def join_and_rank(
    *,
    run_qids: BytesArray,
    run_docnos: BytesArray,
    run_hashes: HashArray | None,
    run_scores: npt.NDArray[np.float64],
    qrels_qids: BytesArray,
    qrels_docnos: BytesArray,
    qrels_hashes: HashArray | None,
    qrels_rels: RelArray,
    level: int = 1,
    max_docs: int | None = None,
    version: int = 9,
    use_compiled: bool | None = None,
) -> tuple[RankedQueries, QueryCodes]:
    """Rank the run by trec_eval's rule and attach each document's qrels value, for queries in both inputs.

    Raises `DuplicateDocumentError` for a docno listed twice for one query in the qrels, or twice among the
    first ``max_docs`` ranked documents of a query in the run (trec_eval checks only those); the run error
    names the earliest file line that completes a pair, the qrels error the first repeated line. The join is
    the compiled hash join when it was built (``use_compiled`` None), else the sort-based one; True requires
    the compiled one, False takes the sort-based one (the tests compare the two). The compiled join compares the
    docnos themselves and never reads the hashes; the sort-based one hashes both sides itself (`docno_hashes`)
    when either is None (files scanned without hashes).
    """
    columns: JoinColumns = {
        "run_qids": run_qids, "run_docnos": run_docnos, "run_hashes": run_hashes, "run_scores": run_scores,
        "qrels_qids": qrels_qids, "qrels_docnos": qrels_docnos, "qrels_hashes": qrels_hashes,
        "qrels_rels": qrels_rels}
    return join_and_rank_columns(columns, level=level, max_docs=max_docs, version=version,
                                 use_compiled=use_compiled)


class JoinColumns(TypedDict, total=False):
    """`join_and_rank`'s columns, handed over to `join_and_rank_columns`."""

    run_qids: BytesArray
    run_docnos: BytesArray
    run_hashes: HashArray | None
    run_scores: npt.NDArray[np.float64]
    qrels_qids: BytesArray
    qrels_docnos: BytesArray
    qrels_hashes: HashArray | None
    qrels_rels: RelArray


def join_and_rank_columns(columns: JoinColumns, *, level: int = 1, max_docs: int | None = None, version: int = 9,
                          use_compiled: bool | None = None) -> tuple[RankedQueries, QueryCodes]:
    """`join_and_rank`, taking its columns over: each leaves ``columns`` as soon as it has served (the query ids
    once coded, the scores once ranked, the hashes at once when the compiled join, which does not read them,
    runs), so a caller that keeps no other reference to them frees them there. On a 1 M-line run they are 22 MiB
    that the hash join, the peak of the join's memory, no longer has beside it."""
    if use_compiled is None:
        use_compiled = compiled_join is not None
    elif use_compiled and compiled_join is None:
        raise RuntimeError("the compiled hash join reviewdepth.measures._hashjoin is not available")
    if use_compiled:
        columns.pop("run_hashes", None)
        columns.pop("qrels_hashes", None)
    codes = factorize_queries(columns.pop("run_qids"), columns.pop("qrels_qids"))
    nq_all = len(codes.qids)
    qrels_rels, run_docnos = columns["qrels_rels"], columns["run_docnos"]

    # count R and judged non-relevant per query (weighted counts: no masked copies of the qrels columns)
    num_rel_all = np.bincount(codes.qrels, weights=qrels_rels >= level, minlength=nq_all).astype(np.int64)
    nonrel = (qrels_rels >= 0) & (qrels_rels < level)
    num_nonrel_all = np.bincount(codes.qrels, weights=nonrel, minlength=nq_all).astype(np.int64)
    del nonrel

    # run: keep queries that have qrels, rank, cut at -M (the scores are not kept: `rank_order` frees them)
    has_qrels = np.bincount(codes.qrels, minlength=nq_all) > 0
    counts = np.bincount(codes.run, minlength=nq_all).astype(np.int64)
    counts[~has_qrels] = 0
    if int(counts.sum()) == len(codes.run):
        order = rank_order(codes.run, columns.pop("run_scores"), run_docnos, version)
    else:
        rows = np.flatnonzero(has_qrels[codes.run])
        order = rows[rank_order(codes.run[rows], columns.pop("run_scores")[rows], run_docnos[rows], version)]
        del rows
    if max_docs is not None:
        starts = np.concatenate(([0], np.cumsum(counts)))[:-1]
        within = np.arange(len(order), dtype=np.int64) - np.repeat(starts, counts)
        order = order[within < max_docs]
        counts = np.minimum(counts, max_docs)
        del starts, within

    all_kept = max_docs is None and len(order) == len(codes.run)  # every run row is ranked: no keep mask
    if use_compiled:
        rel = _rel_by_hash_join(codes, order, all_kept, run_docnos, columns["qrels_docnos"], qrels_rels)
    else:
        run_hashes, qrels_hashes = columns.pop("run_hashes", None), columns.pop("qrels_hashes", None)
        if run_hashes is None or qrels_hashes is None:
            # scanned without hashes: both sides hashed alike here, from the docnos as numpy holds them
            run_hashes, qrels_hashes = docno_hashes(run_docnos), docno_hashes(columns["qrels_docnos"])
        rel = _rel_by_sorted_keys(codes, order, all_kept, run_hashes, run_docnos, qrels_hashes,
                                  columns["qrels_docnos"], qrels_rels)
        del run_hashes, qrels_hashes
    del run_docnos
    columns.pop("run_docnos")
    columns.pop("qrels_docnos")

    evaluated = np.flatnonzero((counts > 0) & has_qrels)
    seg_offsets = np.concatenate(([0], np.cumsum(counts)))
    # ranked rows are grouped by code ascending; keep only evaluated codes (all non-empty ones are)
    ranked = RankedQueries(
        qids=[codes.qids[c].decode("utf-8", "surrogateescape") for c in evaluated],
        offsets=np.concatenate(([0], np.cumsum(counts[evaluated]))).astype(np.int64),
        rel=rel,
        num_rel=num_rel_all[evaluated],
        num_nonrel=num_nonrel_all[evaluated],
        level=level,
        source_rows=order,
        judged_levels=_judged_levels(codes.qrels, qrels_rels, evaluated),
    )
    assert int(seg_offsets[-1]) == len(rel)
    return ranked, codes


compiled_join: ModuleType | None = optional_extension("reviewdepth.measures._hashjoin", PURE_PYTHON_JOIN_ENV)


def _rel_by_hash_join(codes: QueryCodes, order: IntArray, all_kept: bool, run_docnos: BytesArray,
                      qrels_docnos: BytesArray, qrels_rels: RelArray) -> IntArray:
    """Qrels value of each ranked row (``order``), by the compiled hash join: linear in both files."""
    assert compiled_join is not None
    keep = None
    if not all_kept:
        keep = np.zeros(len(codes.run), dtype=np.uint8)
        keep[order] = 1
    q_docnos = np.ascontiguousarray(qrels_docnos)
    r_docnos = np.ascontiguousarray(run_docnos)
    q_dup, r_dup, _, qrow_bytes = compiled_join.join(
        len(codes.qids), np.ascontiguousarray(codes.qrels, dtype=np.int32), q_docnos, q_docnos.dtype.itemsize,
        np.ascontiguousarray(codes.run, dtype=np.int32), r_docnos, r_docnos.dtype.itemsize, keep)
    if q_dup >= 0:
        raise DuplicateDocumentError("qrels", q_dup, codes.qids[codes.qrels[q_dup]].decode(errors="replace"),
                                     qrels_docnos[q_dup].decode(errors="replace"))
    if r_dup >= 0:
        raise DuplicateDocumentError("run", r_dup, codes.qids[codes.run[r_dup]].decode(errors="replace"),
                                     run_docnos[r_dup].decode(errors="replace"))
    qrow = np.frombuffer(qrow_bytes, dtype=np.int32)[order]
    del qrow_bytes  # the join's own row table, freed before the values array is made
    # -1 (absent) reads the last row, replaced below; int64 whatever the qrels' type (`parse_qrels(narrow_rel=)`):
    # the measures add and compare the ranked values
    rel: IntArray = qrels_rels[qrow].astype(np.int64)
    rel[rel < 0] = UNJUDGED
    rel[qrow < 0] = NOT_IN_QRELS
    return rel


def _rel_by_sorted_keys(codes: QueryCodes, order: IntArray, all_kept: bool, run_hashes: HashArray,
                        run_docnos: BytesArray, qrels_hashes: HashArray, qrels_docnos: BytesArray,
                        qrels_rels: RelArray) -> IntArray:
    """The same as `_rel_by_hash_join` from sorted 64-bit keys (the fallback without the C extension)."""
    q_index = keyed_rows(codes.qrels, qrels_hashes, qrels_docnos)
    again = np.flatnonzero(q_index.repeated())
    if len(again):
        second = int(again[0])
        raise DuplicateDocumentError("qrels", second, codes.qids[codes.qrels[second]].decode(errors="replace"),
                                     qrels_docnos[second].decode(errors="replace"))
    q_order, q_sorted = q_index.order, q_index.sorted_keys
    exact = q_index.exact

    # run duplicates among the kept rows (keys in file order when every evaluated row is kept: no gathers)
    if all_kept:
        key_rows = np.arange(len(codes.run), dtype=np.int64)
        r_index = keyed_rows(codes.run, run_hashes, run_docnos)
    else:
        key_rows = order
        r_index = keyed_rows(codes.run[order], run_hashes[order], run_docnos[order])
    again = np.flatnonzero(r_index.repeated())
    if len(again):
        # the file line that completes a duplicate pair, the earliest such line
        second = int(np.min(np.maximum(key_rows[again], key_rows[r_index.first[again]])))
        raise DuplicateDocumentError("run", second, codes.qids[codes.run[second]].decode(errors="replace"),
                                     run_docnos[second].decode(errors="replace"))
    r_keys, rk_order, rk_sorted = r_index.keys, r_index.order, r_index.sorted_keys
    exact = exact and r_index.exact

    # qrels value of each row (keyed rows), then in ranked order
    rel = np.full(len(r_keys), NOT_IN_QRELS, dtype=np.int64)
    if len(q_sorted):
        # sorted needles make the binary searches cache-friendly
        pos_sorted = np.searchsorted(q_sorted, rk_sorted)
        pos = np.empty_like(pos_sorted)
        pos[rk_order] = pos_sorted
        pos_c = np.minimum(pos, len(q_sorted) - 1)
        hit_rows = np.flatnonzero(q_sorted[pos_c] == r_keys)
        q_rows = q_order[pos_c[hit_rows]]
        file_rows = key_rows[hit_rows]
        same = (codes.qrels[q_rows] == codes.run[file_rows]) & (qrels_docnos[q_rows] == run_docnos[file_rows])
        if not same.all():
            exact = False
        if exact:
            values = qrels_rels[q_rows]
            rel[hit_rows] = np.where(values < 0, UNJUDGED, values)
    if all_kept:
        rel = rel[order]
    if not exact:
        rel = _exact_lookup(codes, order, run_docnos, qrels_docnos, qrels_rels)
    return rel


def _judged_levels(qrels_codes: CodeArray, qrels_rels: RelArray,
                   evaluated: IntArray) -> tuple[IntArray, IntArray, IntArray]:
    """Distinct qrels values >= 0 and their counts for each evaluated query code (``evaluated`` is increasing)."""
    size = int(max(qrels_codes.max(initial=-1), evaluated.max(initial=-1))) + 1
    # 32-bit positions and no copy of a column not needed: this runs at the peak of an evaluation's memory
    position_of = np.full(size, -1, dtype=np.int32)
    position_of[evaluated] = np.arange(len(evaluated), dtype=np.int32)
    position = position_of[qrels_codes]
    keep = (qrels_rels >= 0) & (position >= 0)
    kept_all = bool(keep.all())
    values = qrels_rels if kept_all else qrels_rels[keep]
    levels = int(values.max(initial=0)) + 1
    if len(evaluated) * levels <= 4 * len(values) + 4096:
        # few distinct values (binary or graded qrels): count (query, value) pairs in one table, no sort
        pair = (position if kept_all else position[keep]).astype(np.int64)
        del position, keep
        pair *= levels
        pair += values
        table = np.bincount(pair, minlength=len(evaluated) * levels)
        del pair
        present = table.reshape(len(evaluated), levels) > 0
        per_query = np.count_nonzero(present, axis=1)
        offsets = np.concatenate(([0], np.cumsum(per_query))).astype(np.int64)
        rows, level_values = np.nonzero(present)
        return offsets, level_values.astype(np.int64), table[rows * levels + level_values].astype(np.int64)
    codes = qrels_codes if kept_all else qrels_codes[keep]
    order = np.lexsort((values, codes))
    codes, values = codes[order], values[order]
    new = np.ones(len(codes), dtype=bool)
    new[1:] = (codes[1:] != codes[:-1]) | (values[1:] != values[:-1])
    starts = np.flatnonzero(new)
    counts = np.diff(np.concatenate((starts, [len(codes)]))).astype(np.int64)
    pair_codes = codes[starts]
    per_query = np.searchsorted(pair_codes, evaluated, side="right") - np.searchsorted(pair_codes, evaluated)
    offsets = np.concatenate(([0], np.cumsum(per_query))).astype(np.int64)
    return offsets, values[starts].astype(np.int64), counts


def placeholder_rankings(qids: list[str], query_codes: IntArray, qrels_codes: CodeArray, qrels_rels: RelArray,
                         level: int) -> RankedQueries:
    """trec_eval 10.0's ranking for qrels queries missing from the run under ``-c``: one document absent from the
    qrels (its ``ceci_nest_pas_un_docno``), with each query's own R, judged non-relevant count and qrels levels.
    ``query_codes`` (increasing) are the queries' codes in ``qrels_codes``."""
    count = len(query_codes)
    wanted = np.isin(qrels_codes, query_codes)
    position = np.searchsorted(query_codes, qrels_codes[wanted])
    rels = qrels_rels[wanted]
    return RankedQueries(
        qids=qids, offsets=np.arange(count + 1, dtype=np.int64), rel=np.full(count, NOT_IN_QRELS, dtype=np.int64),
        num_rel=np.bincount(position[rels >= level], minlength=count).astype(np.int64),
        num_nonrel=np.bincount(position[(rels >= 0) & (rels < level)], minlength=count).astype(np.int64),
        level=level, source_rows=np.full(count, -1, dtype=np.int64),
        judged_levels=_judged_levels(qrels_codes, qrels_rels, query_codes))


def judged_only(ranked: RankedQueries) -> RankedQueries:
    """trec_eval's ``-J``: drop the ranked documents that are not judged (absent from the qrels or with a
    negative value), keeping the order of the rest; applied after ``-M``. A query keeps its place (num_ret 0)
    when none of its documents is judged."""
    keep = ranked.rel >= 0
    counts = np.bincount(segment_ids(ranked.offsets)[keep], minlength=ranked.num_queries)
    return RankedQueries(
        qids=ranked.qids, offsets=np.concatenate(([0], np.cumsum(counts))).astype(np.int64), rel=ranked.rel[keep],
        num_rel=ranked.num_rel, num_nonrel=ranked.num_nonrel, level=ranked.level,
        source_rows=ranked.source_rows[keep], judged_levels=ranked.judged_levels)


def _exact_lookup(codes: QueryCodes, order: IntArray, run_docnos: BytesArray, qrels_docnos: BytesArray,
                  qrels_rels: RelArray) -> IntArray:
    """Dictionary join, used only when two different docnos share a 64-bit hash."""
    table = {(int(c), bytes(d)): int(r) for c, d, r in zip(codes.qrels, qrels_docnos, qrels_rels, strict=True)}
    out = np.empty(len(order), dtype=np.int64)
    for i, row in enumerate(order):
        value = table.get((int(codes.run[row]), bytes(run_docnos[row])))
        out[i] = NOT_IN_QRELS if value is None else (UNJUDGED if value < 0 else value)
    return out
