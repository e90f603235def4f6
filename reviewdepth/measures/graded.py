"""trec_eval 9.0.8's graded-gain measures (ndcg, ndcg_cut, ndcg_rel, Rndcg, G) and binG, vectorised over queries.

Notation for one query: ranking d_1..d_n, v_i = the qrels value of d_i (−1 absent from the qrels, −2 negative in
the qrels), gain g(v) = v for v >= 0 and 0 for v < 0 unless ``-m ndcg.v=gain,...`` sets it, discount
log2(i + 1) at rank i (C's ``log2``, which ``numpy.log2`` does not always equal to the last bit). The ideal
ranking I_1..I_P lists the positive gains of the query's judged qrels lines (retrieved or not) in decreasing
gain order; IDCG(k) = Σ_{j<=min(k,P)} I_j / log2(j + 1), DCG(k) = Σ_{i<=min(k,n), g(v_i) != 0}
g(v_i) / log2(i + 1). Sums run in rank order in a double, as the C loops do; ``-l`` changes none of these
except binG and Rndcg's R = 0 rule.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from reviewdepth.measures.ranking import RankedQueries
from reviewdepth.measures.segments import (
    FloatArray,
    IntArray,
    positions_in_segment,
    running_sums,
    segment_ids,
    sequential_sums,
)
from reviewdepth.measures.trec import C_NAN

# (rel_level, gain) pairs of ``-m ndcg.1=3,2=1``; empty: every level's gain is the level itself
Gains = tuple[tuple[int, float], ...]

_TABLE_SIZE = 1 << 16
_LOG2_TABLE: list[FloatArray] = []


def _log2_table(size: int) -> FloatArray:
    """C's log2 of 0 .. at least ``size`` − 1 (at most `_TABLE_SIZE`), extended as larger values are asked for:
    the whole table costs ~15 ms of CPU, and a ranking of 1,000 documents needs its first 2,048 entries."""
    table = _LOG2_TABLE[0] if _LOG2_TABLE else np.zeros(0)
    if len(table) < size:
        have, grown = len(table), min(max(1024, 1 << (size - 1).bit_length()), _TABLE_SIZE)
        more = np.fromiter((math.log2(x) if x else -math.inf for x in range(have, grown)), dtype=np.float64,
                           count=grown - have)
        table = np.concatenate((table, more))
        _LOG2_TABLE[:] = [table]
    return table


def log2_int(m: IntArray) -> FloatArray:
    """C's log2 (``math.log2``; ``numpy.log2`` differs in the last bit for about 1 in 20,000 integers) of
    positive integers: a table up to 65,535, beyond it once per distinct value."""
    top = int(m.max()) if len(m) else 0
    if top < _TABLE_SIZE:
        out: FloatArray = _log2_table(top + 1)[m]
        return out
    unique, inverse = np.unique(m, return_inverse=True)
    values = np.fromiter((math.log2(x) for x in unique.tolist()), dtype=np.float64, count=len(unique))
    out = values[inverse.reshape(-1)]
    return out


def _c_log2(x: float) -> float:
    """C's log2 outside math.log2's domain: −inf at 0, NaN below (G with large gains reaches both)."""
    if x > 0.0:
        return math.log2(x)
    return -math.inf if x == 0.0 else C_NAN


def _c_log2_array(x: FloatArray) -> FloatArray:
    """`_c_log2` of every element; whole numbers (G with integer gains) through `log2_int`."""
    whole = (x >= 1.0) & (x < 2.0**53) & (x == np.floor(x))
    out = np.empty(len(x))
    out[whole] = log2_int(x[whole].astype(np.int64))
    out[~whole] = [_c_log2(v) for v in x[~whole].tolist()]
    return out


def _msort(items: list[tuple[int, float, int]]) -> list[tuple[int, float, int]]:
    """glibc 2.36's qsort (a top-down stable merge sort) with trec_eval's comparator ``(int)(gain1 − gain2)``,
    which truncates: gains less than 1 apart compare equal and keep their input order."""
    if len(items) <= 1:
        return items
    half = len(items) // 2
    left, right = _msort(items[:half]), _msort(items[half:])
    out: list[tuple[int, float, int]] = []
    i = j = 0
    while i < len(left) and j < len(right):
        if int(left[i][1] - right[j][1]) <= 0:
            out.append(left[i])
            i += 1
        else:
            out.append(right[j])
            j += 1
    return out + left[i:] + right[j:]


def _sorted_levels(num_rel_levels: int, gains: Gains) -> list[tuple[int, float, int]]:
    """trec_eval's ``setup_gains`` without the counts: (level, gain, index into the count lookup) for the
    parameter pairs first, then every level 0 .. num_rel_levels−1 not among them, sorted by gain increasing."""
    entries = [(level, gain, level) for level, gain in gains]
    named = {level for level, _ in gains}
    entries += [(v, float(v), v) for v in range(num_rel_levels) if v not in named]
    return _msort(entries)


def gain_of(rel: IntArray, gains: Gains) -> FloatArray:
    """g(v) of every ranked document: v for v >= 0, 0 for the absent (−1) and unjudged (−2), parameters first."""
    out = np.where(rel >= 0, rel, 0).astype(np.float64)
    for level, gain in gains:
        out[rel == level] = gain
    return out


def judged_levels(ranked: RankedQueries) -> tuple[IntArray, IntArray, IntArray]:
    """The qrels values and their counts per query; a ranking built without them (a stored queue, labels 0/1)
    has two levels: 0 for its num_nonrel judged non-relevant and its relevance level for its num_rel relevant."""
    if ranked.judged_levels is not None:
        return ranked.judged_levels
    counts = np.stack([ranked.num_nonrel, ranked.num_rel], axis=1)
    values = np.tile(np.array([0, max(ranked.level, 1)], dtype=np.int64), (ranked.num_queries, 1))
    present = counts > 0
    per_query = present.sum(axis=1)
    offsets = np.concatenate(([0], np.cumsum(per_query))).astype(np.int64)
    return offsets, values[present].astype(np.int64), counts[present].astype(np.int64)


def ideal_gains(ranked: RankedQueries, gains: Gains) -> tuple[FloatArray, IntArray]:
    """The ideal gains I_1..I_P of every query concatenated, and per-query offsets into them.

    Built as trec_eval walks its sorted levels from the highest gain down: levels with no qrels line are
    skipped, and the walk stops at the first level whose gain is <= 0 (or at once when the top level's is).
    """
    level_offsets, values, counts = judged_levels(ranked)
    if not gains:  # default gains: the positive levels, highest first
        pieces_v: list[FloatArray] = []
        sizes = np.zeros(ranked.num_queries, dtype=np.int64)
        for q in range(ranked.num_queries):
            lo, hi = int(level_offsets[q]), int(level_offsets[q + 1])
            v, c = values[lo:hi][::-1], counts[lo:hi][::-1]
            positive = v > 0
            pieces_v.append(np.repeat(v[positive].astype(np.float64), c[positive]))
            sizes[q] = int(c[positive].sum())
        flat = np.concatenate(pieces_v) if pieces_v else np.zeros(0)
        return flat, np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    cache: dict[int, list[tuple[int, float, int]]] = {}
    pieces: list[FloatArray] = []
    sizes = np.zeros(ranked.num_queries, dtype=np.int64)
    for q in range(ranked.num_queries):
        lo, hi = int(level_offsets[q]), int(level_offsets[q + 1])
        count_of = dict(zip(values[lo:hi].tolist(), counts[lo:hi].tolist(), strict=True))
        num_levels = int(values[hi - 1]) + 1 if hi > lo else 0
        order = cache.get(num_levels)
        if order is None:
            order = cache[num_levels] = _sorted_levels(num_levels, gains)
        ideal: list[float] = []
        if order and order[-1][1] > 0.0:
            for _, gain, level in reversed(order):
                # a parameter level outside 0 .. num_levels−1 has no qrels line here (C: num_at_level 0)
                n = count_of.get(level, 0) if 0 <= level < num_levels else 0
                if n == 0:
                    continue
                if gain <= 0.0:
                    break
                ideal += [gain] * n
        pieces.append(np.asarray(ideal, dtype=np.float64))
        sizes[q] = len(ideal)
    flat = np.concatenate(pieces) if pieces else np.zeros(0)
    return flat, np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)


def _dcg_terms(values: FloatArray, offsets: IntArray) -> FloatArray:
    pos = positions_in_segment(offsets)
    terms = np.zeros(len(values))
    nz = values != 0
    terms[nz] = values[nz] / log2_int(pos[nz] + 2)
    return terms


def _at(prefix: FloatArray, offsets: IntArray, k: IntArray) -> FloatArray:
    """prefix[offsets[q] + min(k_q, length_q) − 1] per query, 0 where that is no element."""
    lengths = np.diff(offsets)
    kk = np.minimum(k, lengths)
    out = np.zeros(len(lengths))
    has = kk > 0
    out[has] = prefix[offsets[:-1][has] + kk[has] - 1]
    return out


class _Prepared(NamedTuple):  # not a dataclass: defining one costs ~1 ms at every start of `eval`
    """What the DCG measures share for one ranking and one gain setting: gains per ranked document, running DCG
    (rank order), the ideal gains with their offsets and running IDCG."""

    gain: FloatArray
    dcg_prefix: FloatArray
    ideal: FloatArray
    ioff: IntArray
    idcg_prefix: FloatArray


# one evaluation computes ndcg, ndcg_rel, Rndcg and ndcg_cut on the same ranking: prepare it once (held weakly)
_PREPARED: dict[Gains, tuple[weakref.ref[RankedQueries], _Prepared]] = {}


def _prepared(ranked: RankedQueries, gains: Gains) -> _Prepared:
    held = _PREPARED.get(gains)
    if held is not None and held[0]() is ranked:
        return held[1]
    if (held is not None and held[0]() is None) or len(_PREPARED) > 8:
        _PREPARED.clear()
    gain = gain_of(ranked.rel, gains)
    ideal, ioff = ideal_gains(ranked, gains)
    prepared = _Prepared(gain, running_sums(_dcg_terms(gain, ranked.offsets), ranked.offsets), ideal, ioff,
                         running_sums(_dcg_terms(ideal, ioff), ioff))
    _PREPARED[gains] = (weakref.ref(ranked), prepared)
    return prepared


def ndcg(ranked: RankedQueries, gains: Gains = ()) -> FloatArray:
    """ndcg = DCG(n) / IDCG(P) (Järvelin & Kekäläinen 2002), the whole ranking against the whole ideal ranking;
    0 when IDCG is 0. Gains g(v) = v unless ``-m ndcg.v=gain,...``; negative gains count in DCG only.

    trec_eval sorts the levels by the truncated difference of their gains, so parameter gains less than 1
    apart may be taken in parameter order; that order is reproduced.
    """
    prep = _prepared(ranked, gains)
    dcg = _at(prep.dcg_prefix, ranked.offsets, np.diff(ranked.offsets))
    idcg = _at(prep.idcg_prefix, prep.ioff, np.diff(prep.ioff))
    out = np.zeros(ranked.num_queries)
    ok = idcg > 0.0
    out[ok] = dcg[ok] / idcg[ok]
    return out


def ndcg_cut(ranked: RankedQueries, cutoffs: Sequence[int]) -> list[FloatArray]:
    """ndcg_cut_k = DCG(k) / IDCG(k) with gain g(v) = v (the qrels value; no gain parameters, documents with
    v <= 0 add nothing); DCG(k) when IDCG(k) is 0."""
    # the default gains (v for v >= 0, 0 below) add exactly the terms of v > 0: ndcg's prepared sums serve
    prep = _prepared(ranked, ())
    dcg_prefix, ioff, idcg_prefix = prep.dcg_prefix, prep.ioff, prep.idcg_prefix
    out = []
    for k in cutoffs:
        kk = np.full(ranked.num_queries, int(k), dtype=np.int64)
        dcg = _at(dcg_prefix, ranked.offsets, kk)
        idcg = _at(idcg_prefix, ioff, kk)
        ok = idcg > 0.0
        dcg[ok] = dcg[ok] / idcg[ok]
        out.append(dcg)
    return out


def ndcg_rel(ranked: RankedQueries, gains: Gains = ()) -> FloatArray:
    """ndcg_rel = (1/P) · [Σ_{i: g(v_i) > 0} DCG(i)/IDCG(min(i, P)) + (P − F) · DCG(n)/IDCG(P)], F = documents
    retrieved with positive gain: nDCG averaged over the P positive-gain documents, an unretrieved one counting
    the final nDCG; 0 when the bracket is not > 0. Gain parameters as ndcg."""
    prep = _prepared(ranked, gains)
    gain, dcg_prefix, ioff, idcg_prefix = prep.gain, prep.dcg_prefix, prep.ioff, prep.idcg_prefix
    offsets = ranked.offsets
    size = np.diff(ioff)
    pos = positions_in_segment(offsets)
    q = segment_ids(offsets)
    hit = np.flatnonzero(gain > 0)
    kk = np.minimum(pos[hit] + 1, size[q[hit]])
    idcg_at = np.zeros(len(hit))
    has = kk > 0
    idcg_at[has] = idcg_prefix[ioff[:-1][q[hit]][has] + kk[has] - 1]
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = dcg_prefix[hit] / idcg_at
        hit_offsets = np.concatenate(([0], np.cumsum(np.bincount(q[hit], minlength=ranked.num_queries))))
        total = sequential_sums(terms, hit_offsets.astype(np.int64))
        found = np.diff(hit_offsets)
        dcg = _at(dcg_prefix, offsets, np.diff(offsets))
        idcg = _at(idcg_prefix, ioff, size)
        total = total + (size - found).astype(np.float64) * dcg / idcg
        out = np.zeros(ranked.num_queries)
        ok = total > 0.0
        out[ok] = total[ok] / size[ok].astype(np.float64)
    return out


def r_ndcg(ranked: RankedQueries, gains: Gains = ()) -> FloatArray:
    """Rndcg = mean of DCG(min(r, n)) / IDCG(r) over the R-levels r: each rank r in 1..P where the ideal gain
    changes (I_{r+1} != I_r, I_{P+1} taken as 0), and r = n when n > P + 1 (trec_eval's final point at the end
    of the ranking, with IDCG(P)); 0 when R = 0 (``-l``). Gain parameters as ndcg.

    trec_eval leaves out the final point when n = P + 1; so does this function.
    """
    prep = _prepared(ranked, gains)
    ideal, ioff, idcg_prefix = prep.ideal, prep.ioff, prep.idcg_prefix
    lengths, size = np.diff(ranked.offsets), np.diff(ioff)
    # R-level points inside the ideal ranking: its last rank and every rank whose successor's gain differs
    change = np.ones(len(ideal), dtype=bool)
    change[:-1] = ideal[1:] != ideal[:-1]
    change[ioff[1:][size > 0] - 1] = True
    at = np.flatnonzero(change)
    q_at = segment_ids(ioff)[at]
    r_at = positions_in_segment(ioff)[at] + 1
    # trec_eval's point at the end of a ranking longer than P + 1, after the others
    extra = np.flatnonzero((lengths > size + 1) & (size > 0))
    q_all = np.concatenate((q_at, extra))
    order = np.argsort(q_all, kind="stable")
    k = np.concatenate((np.minimum(r_at, lengths[q_at]), lengths[extra]))[order]
    idcg = np.concatenate((idcg_prefix[at], idcg_prefix[ioff[1:][extra] - 1]))[order]
    q_all = q_all[order]
    dcg = np.zeros(len(k))
    has = k > 0
    dcg[has] = prep.dcg_prefix[ranked.offsets[:-1][q_all[has]] + k[has] - 1]
    points = np.bincount(q_all, minlength=ranked.num_queries)
    total = sequential_sums(dcg / idcg, np.concatenate(([0], np.cumsum(points))).astype(np.int64))
    out = np.full(ranked.num_queries, C_NAN)
    ok = points > 0
    out[ok] = total[ok] / points[ok].astype(np.float64)
    out[ranked.num_rel == 0] = 0.0
    return out


def bin_g(ranked: RankedQueries) -> FloatArray:
    """binG = (1/R) Σ_{i: rel_i = 1} 1 / log2(2 + non-relevant ranked above d_i), binary gains (``-l``); 0 when
    nothing relevant is retrieved."""
    ranks, k, rel_offsets = ranked.relevant_positions
    terms = 1.0 / log2_int(ranks - k + 2)
    total = sequential_sums(terms, rel_offsets)
    out = np.zeros(ranked.num_queries)
    ok = (np.diff(rel_offsets) > 0) & (ranked.num_rel > 0)
    out[ok] = total[ok] / ranked.num_rel[ok].astype(np.float64)
    return out


def g_measure(ranked: RankedQueries, gains: Gains = ()) -> FloatArray:
    """G = [Σ_{i: g_i != 0} g_i / log2(2 + C(i) − S(i))] / Σ_j I_j, with S(i) = Σ_{m<=i} g_m the gain so far and
    C(i) = Σ_{m<=i} c_m the ideal cost, c_m = I_m when m <= P and I_m >= 1, else 1; 0 when Σ I_j is 0. Gain
    parameters as ndcg."""
    prep = _prepared(ranked, gains)
    gain, ideal, ioff = prep.gain, prep.ideal, prep.ioff
    offsets = ranked.offsets
    size = np.diff(ioff)
    pos = positions_in_segment(offsets)
    q = segment_ids(offsets)
    inside = pos < size[q]
    ideal_here = np.zeros(len(gain))
    ideal_here[inside] = ideal[ioff[:-1][q[inside]] + pos[inside]]
    cost = np.where(inside & (ideal_here >= 1.0), ideal_here, 1.0)
    sum_results = running_sums(gain, offsets)
    sum_cost = running_sums(cost, offsets)
    terms = np.zeros(len(gain))
    nz = gain != 0
    with np.errstate(divide="ignore", invalid="ignore"):
        terms[nz] = gain[nz] / _c_log2_array((2.0 + sum_cost[nz]) - sum_results[nz])
    results_g = sequential_sums(terms, offsets)
    sum_ideal = sequential_sums(ideal, ioff)
    out = np.zeros(ranked.num_queries)
    ok = sum_ideal > 0.0
    out[ok] = results_g[ok] / sum_ideal[ok]
    return out
