"""trec_eval 9.0.8 binary-relevance measures, vectorised over all queries at once.

Notation for one query: ranking d_1..d_n (after sorting and ``-M``), level L, rel_i = 1 if the qrels value of
d_i is >= L, R = number of qrels values >= L, CG(k) = sum_{i<=min(k,n)} rel_i. Every function takes a
`RankedQueries` and returns one value per query (numpy array, strcmp(qid) order). Floating-point operations
follow the C code's order so results agree with trec_eval to the last bit where it matters for printing.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from reviewdepth.measures.ranking import NOT_IN_QRELS, UNJUDGED, RankedQueries
from reviewdepth.measures.segments import (
    FloatArray,
    IntArray,
    positions_in_segment,
    running_sums,
    segment_ids,
    segmented_cumsum,
    sequential_sums,
    suffix_max,
)

DEFAULT_CUTOFFS: tuple[int, ...] = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
DEFAULT_RECALL_LEVELS: tuple[float, ...] = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
MIN_GEO_MEAN = 0.00001
# 0.0/0.0 in C on x86-64 is the default NaN, sign bit set; printf shows it as "-nan"
C_NAN = -math.nan


def _relevant(ranked: RankedQueries) -> np.ndarray:
    return ranked.relevant


def _safe_div(num: FloatArray, den: IntArray) -> FloatArray:
    out = np.zeros(len(num))
    nz = den > 0
    out[nz] = num[nz] / den[nz].astype(np.float64)
    return out


def num_ret(ranked: RankedQueries) -> IntArray:
    """num_ret = n, the number of ranked documents (after ``-M``). Summary: sum."""
    return np.diff(ranked.offsets)


def num_rel(ranked: RankedQueries) -> IntArray:
    """num_rel = R, qrels entries with value >= L. Summary: sum (with ``-c``: qrels lines with value > 0)."""
    return ranked.num_rel.copy()


def num_rel_ret(ranked: RankedQueries) -> IntArray:
    """num_rel_ret = CG(n), relevant documents retrieved. Summary: sum."""
    return gain_at(ranked, np.diff(ranked.offsets))


def gain_at(ranked: RankedQueries, k: int | IntArray) -> IntArray:
    """CG(k) per query: relevant documents in the top k (flat beyond n)."""
    cg = ranked.cumulative_gain
    starts = ranked.offsets[:-1]
    kk = np.minimum(ranked.offsets[1:] - starts, k)
    out = np.zeros(len(starts), dtype=np.int64)
    has = kk > 0
    out[has] = cg[starts[has] + kk[has] - 1]
    return out


def _relevant_positions(ranked: RankedQueries) -> tuple[IntArray, IntArray, IntArray]:
    """Ranks (1-based) of relevant documents, their running count k, and per-query offsets into them."""
    return ranked.relevant_positions


def average_precision(ranked: RankedQueries) -> FloatArray:
    """map (AP) = (1/R) * sum_{i: rel_i = 1} CG(i)/i, summed in rank order; 0 when R = 0 or nothing found.

    Divides by R (all relevant, retrieved or not), not by the relevant retrieved.
    """
    ranks, k, offsets = _relevant_positions(ranked)
    terms = k.astype(np.float64) / ranks.astype(np.float64)
    sums = sequential_sums(terms, offsets)
    return _safe_div(sums, ranked.num_rel)


def log_average_precision(ap: FloatArray) -> FloatArray:
    """gm_map per-query term ln(max(AP, 1e-5)); the summary is exp(mean of the terms)."""
    return np.log(np.maximum(ap, MIN_GEO_MEAN))


def r_precision(ranked: RankedQueries) -> FloatArray:
    """Rprec = CG(min(R, n)) / R; a short ranking counts as padded with non-relevant; 0 when R = 0."""
    return _safe_div(gain_at(ranked, ranked.num_rel).astype(np.float64), ranked.num_rel)


def reciprocal_rank(ranked: RankedQueries) -> FloatArray:
    """recip_rank = 1 / (rank of the first relevant document); 0 when none is retrieved (no cutoff)."""
    ranks, k, _ = _relevant_positions(ranked)
    out = np.zeros(ranked.num_queries)
    first = k == 1
    qs = segment_ids(ranked.offsets)[np.flatnonzero(_relevant(ranked))][first]
    out[qs] = 1.0 / ranks[first].astype(np.float64)
    return out


def precision_at(ranked: RankedQueries, k: int) -> FloatArray:
    """P_k = CG(k) / k; divides by k even when fewer than k documents are ranked."""
    return gain_at(ranked, k).astype(np.float64) / float(k)


def recall_at(ranked: RankedQueries, k: int) -> FloatArray:
    """recall_k = CG(k) / R; 0 when R = 0."""
    return _safe_div(gain_at(ranked, k).astype(np.float64), ranked.num_rel)


def recall_level_count(level: float, num_relevant: IntArray, version: int = 9) -> IntArray:
    """Relevant-document count for recall level p: 9.0.8 ``(long)(p*R + 0.9)``; 10.0 ``lround(p*R)``."""
    product = level * num_relevant.astype(np.float64)
    if version >= 10:
        floor = np.floor(product)
        return (floor + ((product - floor) >= 0.5)).astype(np.int64)
    return (product + 0.9).astype(np.int64)


def interpolated_precision_at_recall(ranked: RankedQueries, levels: Sequence[float] = DEFAULT_RECALL_LEVELS,
                                     version: int = 9) -> FloatArray:
    """iprec_at_recall_p = max over ranks i >= the rank of the max(c, 1)-th relevant document of CG(i)/i, with
    c = recall_level_count(p, R); 0 when c > CG(n) or nothing relevant is retrieved.

    Shape (queries, levels). The maximum is always reached at a relevant document. A query with no ranked
    document (only with ``-J``, when none is judged) gets trec_eval's 0/0, a NaN, at every level with c = 0.
    """
    ranks, k, offsets = _relevant_positions(ranked)
    prec = k.astype(np.float64) / ranks.astype(np.float64)
    best_from = suffix_max(prec, offsets)
    found = np.diff(offsets)
    out = np.zeros((ranked.num_queries, len(levels)))
    for j, p in enumerate(levels):
        c = recall_level_count(p, ranked.num_rel, version)
        ok = (c <= found) & (found > 0)
        idx = offsets[:-1][ok] + np.maximum(c[ok], 1) - 1
        out[ok, j] = best_from[idx]
        # C: precision num_rel_ret/num_ret = 0/0 is the interpolated precision of the levels reached at once
        out[(np.diff(ranked.offsets) == 0) & (c == 0), j] = C_NAN
    return out


def eleven_point_average(iprec: FloatArray) -> FloatArray:
    """11pt_avg = mean of iprec_at_recall over the levels (default 0.0, 0.1, …, 1.0), summed from the highest
    level down as trec_eval."""
    total = np.zeros(iprec.shape[0])
    for j in range(iprec.shape[1] - 1, -1, -1):
        total = total + iprec[:, j]
    return total / float(iprec.shape[1])


def set_precision(ranked: RankedQueries) -> FloatArray:
    """set_P = CG(n) / n."""
    n = num_ret(ranked)
    return _safe_div(num_rel_ret(ranked).astype(np.float64), n)


def set_recall(ranked: RankedQueries) -> FloatArray:
    """set_recall = CG(n) / R; 0 when R = 0."""
    return _safe_div(num_rel_ret(ranked).astype(np.float64), ranked.num_rel)


def set_f(ranked: RankedQueries, beta2: float = 1.0) -> FloatArray:
    """set_F = (x+1)·P·Rc / (x·P + Rc) with P = set_P, Rc = set_recall, x = beta² (trec_eval's parameter is β²).

    0 when nothing relevant is retrieved.
    """
    found = num_rel_ret(ranked)
    out = np.zeros(ranked.num_queries)
    ok = (found > 0) & (ranked.num_rel > 0)
    p = found[ok].astype(np.float64) / num_ret(ranked)[ok].astype(np.float64)
    r = found[ok].astype(np.float64) / ranked.num_rel[ok].astype(np.float64)
    out[ok] = (beta2 + 1.0) * p * r / (beta2 * p + r)
    return out


def bpref(ranked: RankedQueries) -> FloatArray:
    """bpref = (1/R) Σ over judged relevant retrieved d of (1 if n_d = 0 else 1 − min(n_d, R)/min(N, R)), with
    N = judged non-relevant (0 <= value < L) in the qrels and n_d = judged non-relevant ranked above d.

    Documents not in the qrels or with a negative value are skipped. 0 when R = 0; never 0/0.
    """
    judged_nonrel = (ranked.rel >= 0) & (ranked.rel < ranked.level)
    seen = segmented_cumsum(judged_nonrel, ranked.offsets)
    rel_idx = np.flatnonzero(_relevant(ranked))
    q = segment_ids(ranked.offsets)[rel_idx]
    n_d = seen[rel_idx]
    big_r = ranked.num_rel[q]
    denom = np.minimum(ranked.num_nonrel[q], big_r).astype(np.float64)
    terms = np.ones(len(rel_idx))
    has = n_d > 0
    terms[has] = 1.0 - (np.minimum(n_d[has], big_r[has]).astype(np.float64) / denom[has])
    counts = np.bincount(q, minlength=ranked.num_queries)
    offsets = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    return _safe_div(sequential_sums(terms, offsets), ranked.num_rel)


def rank_biased_precision(ranked: RankedQueries, persistence: float = 0.9) -> FloatArray:
    """rbp = (1 − p) · Σ_{i<=n} g_i · p^(i−1) (Moffat & Zobel 2008), g_i the qrels value of d_i (0 when absent or
    negative) divided by the query's highest qrels value M when M > 1 (trec_eval 10.0's gains, which ignore
    ``-l``); p^(i−1) by repeated multiplication.

    trec_eval 10.0 reads uninitialised min/max there; the rule above is what its own expected outputs show.
    """
    pos = positions_in_segment(ranked.offsets)
    lengths = np.diff(ranked.offsets)
    weights = _powers(persistence, int(lengths.max(initial=0)))[pos]
    top = _highest_value(ranked)
    scale = np.where(top > 1, top, 1).astype(np.float64)[segment_ids(ranked.offsets)]
    gains = np.maximum(ranked.rel, 0).astype(np.float64)
    gains = np.where(scale > 1.0, gains / scale, gains)
    return (1.0 - persistence) * sequential_sums(gains * weights, ranked.offsets)


def _highest_value(ranked: RankedQueries) -> IntArray:
    """Highest non-negative qrels value of each query (retrieved or not; trec_eval's num_rel_levels − 1)."""
    levels = getattr(ranked, "judged_levels", None)
    if levels is None:  # rankings built without the qrels (queues): their values are 0/1
        out: IntArray = np.ones(ranked.num_queries, dtype=np.int64)
        return out
    offsets, values, _ = levels
    top = np.zeros(ranked.num_queries, dtype=np.int64)
    has = np.diff(offsets) > 0
    top[has] = values[offsets[1:][has] - 1]
    return top


def rbp_residual(ranked: RankedQueries, persistence: float = 0.9, trec_eval_10_quirk: bool = False) -> FloatArray:
    """rbp_resid = p^n + (1 − p) · Σ_{i: d_i unjudged or not in qrels} p^(i−1): the most rbp can still grow.

    trec_eval 10.0 returns 0 when every retrieved document is judged (it drops the p^n tail); that quirk is
    reproduced only when ``trec_eval_10_quirk`` is set.
    """
    pos = positions_in_segment(ranked.offsets)
    lengths = np.diff(ranked.offsets)
    powers = _powers(persistence, int(lengths.max(initial=0)))
    unjudged = ranked.rel < 0
    sums = (1.0 - persistence) * sequential_sums(np.where(unjudged, powers[pos], 0.0), ranked.offsets)
    out = powers[lengths] + sums
    if trec_eval_10_quirk:
        counts = np.bincount(segment_ids(ranked.offsets)[unjudged], minlength=ranked.num_queries)
        any_unjudged = counts > 0
        out = np.where(any_unjudged, out, 0.0)
    return out


INFAP_EPSILON = 0.00001
DEFAULT_SUCCESS_CUTOFFS: tuple[int, ...] = (1, 5, 10)
DEFAULT_UNJUDGED_CUTOFFS: tuple[int, ...] = (5, 10, 20)
DEFAULT_R_MULTIPLES: tuple[float, ...] = (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)
DEFAULT_UTILITY: tuple[float, ...] = (1.0, -1.0, 0.0, 0.0)


def _powers(persistence: float, count: int) -> FloatArray:
    """p^0 … p^count by repeated multiplication (trec_eval's ``cur_p = cur_p * p``, not ``pow``)."""
    steps = np.full(count + 1, persistence)
    steps[0] = 1.0
    out: FloatArray = np.multiply.accumulate(steps)
    return out


def relevance_string(ranked: RankedQueries, length: int = 10) -> npt.NDArray[np.object_]:
    """relstring = one character per document of the top min(N, n) (N default 10): the qrels value 0–9, ``>``
    above 9, ``-`` not in the qrels, ``.`` in the qrels with a negative value; quoted as trec_eval prints it.

    Per query only (no ``all`` value).
    """
    out = np.empty(ranked.num_queries, dtype=object)
    starts = ranked.offsets[:-1]
    shown = np.clip(np.minimum(ranked.offsets[1:] - starts, int(length)), 0, None)
    within = positions_in_segment(np.concatenate(([0], np.cumsum(shown))).astype(np.int64))
    values = ranked.rel[np.repeat(starts, shown) + within]
    chars = np.full(len(values), "<", dtype="U1")
    chars[values > 9] = ">"
    digits = (values >= 0) & (values <= 9)
    chars[digits] = values[digits].astype("U1")
    chars[values == NOT_IN_QRELS] = "-"
    chars[values == UNJUDGED] = "."
    text = chars.tolist()
    lo = 0
    for q, count in enumerate(shown.tolist()):
        out[q] = "'" + "".join(text[lo:lo + count]) + "'"
        lo += count
    return out


def inferred_average_precision(ranked: RankedQueries) -> FloatArray:
    """infAP (Yilmaz & Aslam 2006) = (1/R) Σ over judged relevant d_j of (1 if j = 1 else 1/j + ((j−1)/j) ·
    ((r + n + u)/(j−1)) · ((r + ε)/(r + n + 2ε))), with r, n, u the judged relevant, judged non-relevant and
    pooled-unjudged (negative qrels value) documents above rank j, ε = 0.00001; documents not in the qrels count
    only in j. 0 when R = 0.
    """
    rel = ranked.rel
    ranks, found, offsets = _relevant_positions(ranked)
    idx = np.flatnonzero(_relevant(ranked))
    q = np.repeat(np.arange(ranked.num_queries), np.diff(offsets))
    rel_so_far = found
    nonrel = _count_before(((rel >= 0) & (rel < ranked.level)), ranked.offsets, idx, q)
    unjudged = _count_before(rel == UNJUDGED, ranked.offsets, idx, q)
    j = (ranks - 1).astype(np.float64)
    terms = np.ones(len(idx))
    later = j > 0
    fj = j[later]
    above = rel_so_far[later] - 1
    with np.errstate(divide="ignore", invalid="ignore"):
        terms[later] = (1.0 / (fj + 1.0) + (fj / (fj + 1.0))
                        * ((above + nonrel[later] + unjudged[later]).astype(np.float64) / fj)
                        * ((above + INFAP_EPSILON) / ((above + nonrel[later]) + 2 * INFAP_EPSILON)))
    return _safe_div(sequential_sums(terms, offsets), ranked.num_rel)


def _count_before(flags: npt.NDArray[np.bool_], offsets: IntArray, idx: IntArray, query: IntArray) -> IntArray:
    """For each element ``idx`` (of query ``query``), how many flagged elements of its query come before it."""
    running = np.concatenate(([0], np.cumsum(flags, dtype=np.int64)))
    out: IntArray = running[idx] - running[offsets[:-1][query]]
    return out


def log_bpref(bpref_values: FloatArray) -> FloatArray:
    """gm_bpref per-query term ln(max(bpref, 1e-5)); the summary is exp(Σ terms / num_q), ``-c`` missing queries
    adding ln(1e-5). Summary line only."""
    return np.log(np.maximum(bpref_values, MIN_GEO_MEAN))


def precision_at_r_multiple(ranked: RankedQueries, multiple: float) -> FloatArray:
    """Rprec_mult_m = CG(c)/c with c = (long)(m·R + 0.9) (padded with non-relevant beyond n); 0 when c = 0."""
    c = (multiple * ranked.num_rel.astype(np.float64) + 0.9).astype(np.int64)
    out = np.zeros(ranked.num_queries)
    ok = c > 0
    out[ok] = gain_at(ranked, c)[ok].astype(np.float64) / c[ok].astype(np.float64)
    return out


def utility(ranked: RankedQueries, coefficients: Sequence[float] = DEFAULT_UTILITY,
            num_docs: int = 0) -> FloatArray:
    """utility = p1·a + p2·b + p3·c + p4·d over the contingency table: a relevant retrieved, b non-relevant
    retrieved (n − a), c relevant not retrieved (R − a), d non-relevant not retrieved (N_coll + a − n − R, with
    N_coll the ``-N`` collection size, 0 when not given). Default coefficients 1, −1, 0, 0."""
    p1, p2, p3, p4 = (float(x) for x in coefficients)
    a = num_rel_ret(ranked).astype(np.float64)
    n = num_ret(ranked)
    big_r = ranked.num_rel
    found = num_rel_ret(ranked)
    b = (n - found).astype(np.float64)
    c = (big_r - found).astype(np.float64)
    d = (num_docs + found - n - big_r).astype(np.float64)
    out: FloatArray = p1 * a + p2 * b + p3 * c + p4 * d
    return out


def average_precision_at(ranked: RankedQueries, k: int) -> FloatArray:
    """map_cut_k = (1/R) Σ_{i<=k: rel_i = 1} CG(i)/i, summed in rank order; 0 when R = 0."""
    return average_precision_at_cutoffs(ranked, [k])[0]


def average_precision_at_cutoffs(ranked: RankedQueries, cutoffs: Sequence[int]) -> list[FloatArray]:
    """`average_precision_at` for several cutoffs, the running sums computed once."""
    ranks, found, offsets = _relevant_positions(ranked)
    running = running_sums(found.astype(np.float64) / ranks.astype(np.float64), offsets)
    out = []
    for k in cutoffs:
        within = gain_at(ranked, k)
        sums = np.zeros(ranked.num_queries)
        has = within > 0
        sums[has] = running[offsets[:-1][has] + within[has] - 1]
        out.append(_safe_div(sums, ranked.num_rel))
    return out


def relative_precision_at(ranked: RankedQueries, k: int) -> FloatArray:
    """relative_P_k = CG(k) / min(k, R): precision up to R, recall beyond; 0 when R = 0."""
    return _safe_div(gain_at(ranked, k).astype(np.float64), np.minimum(ranked.num_rel, k))


def success_at(ranked: RankedQueries, k: int) -> FloatArray:
    """success_k = 1 if CG(k) > 0 else 0: a relevant document in the top k."""
    return (gain_at(ranked, k) > 0).astype(np.float64)


def set_relative_precision(ranked: RankedQueries) -> FloatArray:
    """set_relative_P = CG(n) / min(n, R); 0 when n = 0 or R = 0."""
    n = num_ret(ranked)
    den = np.where((n > 0) & (ranked.num_rel > 0), np.minimum(n, ranked.num_rel), 0)
    return _safe_div(num_rel_ret(ranked).astype(np.float64), den)


def set_map(ranked: RankedQueries) -> FloatArray:
    """set_map = CG(n)² / (n · R) (set precision times set recall); 0 when n = 0 or R = 0."""
    n = num_ret(ranked).astype(np.float64)
    found = num_rel_ret(ranked).astype(np.float64)
    big_r = ranked.num_rel.astype(np.float64)
    out = np.zeros(ranked.num_queries)
    ok = (n > 0) & (big_r > 0)
    out[ok] = (found[ok] * found[ok]) / (n[ok] * big_r[ok])
    return out


def num_nonrel_judged_ret(ranked: RankedQueries) -> IntArray:
    """num_nonrel_judged_ret = retrieved documents with a qrels value in [0, L). Summary: sum."""
    judged_nonrel = (ranked.rel >= 0) & (ranked.rel < ranked.level)
    running = np.concatenate(([0], np.cumsum(judged_nonrel, dtype=np.int64)))
    out: IntArray = np.diff(running[ranked.offsets])
    return out


def unjudged_at(ranked: RankedQueries, k: int) -> FloatArray:
    """unj_k = (documents in the top min(k, n) not in the qrels or with a negative value) / k (trec_eval 10.0)."""
    unjudged = segmented_cumsum(ranked.rel < 0, ranked.offsets)
    lengths = np.diff(ranked.offsets)
    kk = np.minimum(lengths, k)
    out = np.zeros(ranked.num_queries)
    has = kk > 0
    out[has] = unjudged[ranked.offsets[:-1][has] + kk[has] - 1].astype(np.float64) / float(k)
    return out


def precision_recall_points(relevant: npt.NDArray[np.bool_], num_relevant: float) -> dict[str, FloatArray]:
    """Raw (sawtooth) and interpolated precision-recall points of one ranking given as its relevance flags.

    Raw: one point per rank i: recall CG(i)/R, precision CG(i)/i. Interpolated: at each point, the maximum
    precision at that rank or deeper (trec_eval's Int_Prec(X) = max Prec(Y), Y >= X). R = ``num_relevant`` may
    be an estimate (the depth report's); recall is 0 everywhere when it is 0.
    """
    n = len(relevant)
    cg = np.cumsum(relevant)
    ranks = np.arange(1, n + 1, dtype=np.float64)
    recall = cg / num_relevant if num_relevant else np.zeros(n)
    precision = cg / ranks
    interpolated = np.maximum.accumulate(precision[::-1])[::-1] if n else precision
    return {"rank": ranks, "recall": recall, "precision": precision, "interpolated_precision": interpolated}


def precision_recall_curve(ranked: RankedQueries, query: int) -> dict[str, FloatArray]:
    """`precision_recall_points` of one query of ``ranked`` (R = its num_rel)."""
    lo, hi = int(ranked.offsets[query]), int(ranked.offsets[query + 1])
    return precision_recall_points(ranked.rel[lo:hi] >= ranked.level, int(ranked.num_rel[query]))


def geometric_mean_summary(log_terms: FloatArray, num_queries: int) -> float:
    """gm_map summary: exp(Σ ln(max(AP, 1e-5)) / num_q); queries counted but not evaluated (``-c``) add ln(1e-5)."""
    total = 0.0
    for value in log_terms.tolist():
        total += value
    missing = num_queries - len(log_terms)
    if missing:
        total += missing * math.log(MIN_GEO_MEAN)
    return math.exp(total / num_queries) if num_queries else 0.0
