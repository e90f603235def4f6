"""Recall-oriented measures for completed reviews (CLEF TAR, Cohen's WSS, ASReview / asreview-insights).

Pure numpy, no I/O. Every function takes one topic's ranking as a 0/1 relevance array ``rel`` in review order
(position 1 first), the collection size ``num_docs`` (N) and the number of relevant documents ``num_rels`` (R),
so the depth report of a stored queue can call them on a fully judged topic directly. Depth to a target
recall, k(τ) and its rounding rules, and WSS live in `reviewdepth.measures.depth`.

Notation: n = len(rel); CG(k) = Σ_{i≤k} rel_i (CG(0) = 0); τ = target recall. Definitions and the official
scripts' quirks: docs/tar-measures.md. Functions named ``clef2017_*`` / ``clef2019_*`` reproduce the official
CLEF TAR scripts' arithmetic (quirks included); the unprefixed ones are the clean definitions.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
RelArray = npt.NDArray[np.integer] | npt.NDArray[np.bool_]

# CLEF 2017 cost constants (tar_eval.py): assessing a shown document, feedback, penalty per unseen document.
COST_ASSESS = 1.0
COST_FEEDBACK = 2.0
COST_PENALTY = 2.0
# CLEF 2018/2019 utility (tar_eval_2018.py): seen non-relevant, unseen relevant, seen relevant = 1 - 20.
UTILITY_SEEN = 1.0
UTILITY_MISSED = 20.0
# loss_e's constant b (Cormack & Grossman 2016).
LOSS_B = 100.0


def _as_int(rel: RelArray) -> IntArray:
    return np.asarray(rel, dtype=np.int64)


def gain_curve(rel: RelArray) -> IntArray:
    """CG(0), CG(1), …, CG(n): cumulative gain with a leading 0, so ``gain_curve(rel)[k] == CG(k)``."""
    out = np.zeros(len(rel) + 1, dtype=np.int64)
    np.cumsum(_as_int(rel), out=out[1:])
    return out


def num_shown(rel: RelArray) -> int:
    """num_shown = n, the number of documents read (the length of the ranking passed in)."""
    return len(rel)


def rels_found(rel: RelArray) -> int:
    """rels_found = CG(n), relevant documents among those read."""
    return int(np.count_nonzero(rel))


def last_rel(rel: RelArray) -> int:
    """last_rel = max{i : rel_i = 1}, the 1-based position of the last relevant document; 0 when there is none."""
    hits = np.flatnonzero(rel)
    return int(hits[-1]) + 1 if len(hits) else 0


def norm_last_rel(rel: RelArray, num_docs: int) -> float:
    """norm_last_rel = last_rel / N (CLEF 2018/2019)."""
    return last_rel(rel) / num_docs


def _half_even_div(a: int, b: int) -> int:
    """round-half-even(a / b) for non-negative integers, exactly."""
    q, r = divmod(a, b)
    if 2 * r > b or (2 * r == b and q % 2 == 1):
        q += 1
    return q


def percent_positions(num_docs: int, percents: Sequence[int]) -> IntArray:
    """Cut-off positions for recall at x % of the collection: round-half-even(N·x/100) (CLEF 2019's rule,
    exact integer arithmetic; equal to Python's ``round(N*x/100)`` for every N < 2**50)."""
    return np.array([_half_even_div(num_docs * int(x), 100) for x in percents], dtype=np.int64)


def recall_at_percent(rel: RelArray, num_docs: int, num_rels: int, percents: Sequence[int]) -> FloatArray:
    """NCG@x% (clean) = CG(min(p_x, n))/R with p_x = round-half-even(N·x/100): recall after reviewing x % of
    the collection. A ranking shorter than p_x keeps its final CG (it has nothing more to show)."""
    cg = gain_curve(rel)
    if num_rels <= 0:
        return np.zeros(len(percents))
    pos = np.minimum(percent_positions(num_docs, percents), len(rel))
    return cg[pos] / num_rels


def clef2019_recall_at_percent(rel: RelArray, num_docs: int, num_rels: int,
                               percents: Sequence[int] = tuple(range(1, 101))) -> tuple[FloatArray, FloatArray]:
    """tar_eval_2018.py's recall@x% (Task 2): the CG kept at checkpoint x is CG(m_x) with m_x the largest
    checkpoint p_j = round(N·j/100), j ≤ x, that the ranking reaches (p_j ≤ n); 0 when none. A short ranking
    therefore keeps the CG of its last checkpoint, not its final CG (quirk 5). Returns (CG values, recall)."""
    cg = gain_curve(rel)
    pos = percent_positions(num_docs, percents)
    reached = np.where((pos <= len(rel)) & (pos >= 1), pos, 0)
    kept = np.maximum.accumulate(reached) if len(reached) else reached
    values = cg[kept].astype(np.float64)
    return values, (values / num_rels if num_rels > 0 else np.zeros(len(values)))


def clef2017_ncg(rel_all: RelArray, counted: npt.NDArray[np.bool_], num_docs: int,
                 num_rels: int) -> tuple[FloatArray, FloatArray]:
    """tar_eval.py's NCG@10…NCG@100: checkpoints every t = ⌊N/10⌋ lines (NS lines count as lines, but add no
    gain); the value printed as NCG@k is CG at the last checkpoint r with int((r/N)·10) ≤ k/10 − 1, i.e. r <
    k·N/100 — one decile late when N is a multiple of 10 (quirk 2). ``rel_all``/``counted``: every processed
    line and whether its gain counts (not NS). Raises ZeroDivisionError for N < 10, as the script does.
    Returns (CG at the 10 checkpoints, NCG values)."""
    t = int(num_docs / 10)
    if t == 0:
        raise ZeroDivisionError("integer modulo by zero (N < 10: tar_eval.py's NCG step ⌊N/10⌋ is 0)")
    gains = _as_int(rel_all) * np.asarray(counted, dtype=np.int64)
    cg = gain_curve(gains)
    ranks = np.arange(t, len(rel_all) + 1, t, dtype=np.int64)
    pos = np.floor((ranks.astype(np.float64) / float(num_docs)) * 10.0).astype(np.int64)
    idx = np.searchsorted(pos, np.arange(10), side="right") - 1
    values = np.where(idx >= 0, cg[ranks[np.maximum(idx, 0)]] if len(ranks) else 0, 0).astype(np.float64)
    return values, (values / float(num_rels) if num_rels > 0 else np.zeros(10))


def average_precision(rel: RelArray, num_rels: int) -> float:
    """AP = (1/R)·Σ_{i: rel_i = 1} CG(i)/i, summed sequentially in rank order (as the CLEF scripts); 0 if R = 0."""
    if num_rels <= 0:
        return 0.0
    hits = np.flatnonzero(rel)
    if len(hits) == 0:
        return 0.0
    terms = np.arange(1, len(hits) + 1, dtype=np.float64) / (hits + 1).astype(np.float64)
    return float(np.cumsum(terms)[-1]) / float(num_rels)


def gain_area(rel: RelArray, num_docs: int) -> float:
    """A = Σ_{i≤n} (CG(i−1) + ½·rel_i) + max(N − n, 0)·CG(n): trapezoid area under the gain curve over N
    positions (exact: every term is a multiple of ½)."""
    cg = gain_curve(rel)
    n = len(rel)
    twice = 2 * int(cg[:-1].sum()) + int(cg[-1])
    return twice / 2 + max(num_docs - n, 0) * float(cg[-1])


def norm_area(rel: RelArray, num_docs: int, num_rels: int) -> float:
    """norm_area = A / (R·N' − R²/2) with N' = max(N, n): area under the gain curve over the optimal area
    (every relevant document first); 0.0 when the optimal area is 0. Rounded to 3 decimals per topic by the
    CLEF scripts (done in the compat suite, not here)."""
    n_eff = max(num_docs, len(rel))
    best = num_rels * n_eff - (num_rels * num_rels) / 2.0
    if best <= 0.0:
        return 0.0
    return gain_area(rel, num_docs) / best


def recall(rel: RelArray, num_rels: int) -> float:
    """r = CG(n)/R (recall of what was read); 0.0 when R = 0."""
    return rels_found(rel) / num_rels if num_rels > 0 else 0.0


def loss_r(recall_value: float) -> float:
    """loss_r = (1 − r)² (Cormack & Grossman 2016)."""
    return float((1 - recall_value) ** 2.0)


def loss_e(shown: int, num_docs: int, num_rels: int) -> float:
    """loss_e = (b/N')²·(n/(R + b))², b = 100, N' = max(N, n): the effort part of loss_er."""
    n_eff = max(num_docs, shown)
    return float((LOSS_B / n_eff) ** 2.0) * float((shown / (num_rels + LOSS_B)) ** 2.0)


def loss_er(recall_value: float, shown: int, num_docs: int, num_rels: int) -> float:
    """loss_er = loss_r + loss_e ("reliability" in the CLEF overviews)."""
    return loss_r(recall_value) + loss_e(shown, num_docs, num_rels)


def assessment_cost(shown: npt.NDArray[np.bool_], feedback: npt.NDArray[np.bool_]) -> float:
    """total_cost (CLEF 2017) = Σ_lines [C_A if shown] + [C_F if feedback asked], C_A = 1, C_F = 2."""
    return COST_ASSESS * float(np.count_nonzero(shown)) + COST_FEEDBACK * float(np.count_nonzero(feedback))


def cost_uniform(total_cost: float, unseen: int, missed: int, num_rels: int) -> float:
    """total_cost_uniform = total_cost + (N_u·C_P)·M_r/R, C_P = 2, N_u = unseen documents, M_r = missed relevant
    ones: the reviewer re-reads a share M_r/R of the rest. Clean callers pass N_u = max(N − n, 0); the CLEF
    2017 script uses N − n even when it is negative (quirk 7)."""
    if num_rels <= 0:
        return total_cost
    return total_cost + ((unseen * COST_PENALTY) * missed) / float(num_rels)


def cost_weighted(total_cost: float, unseen: int, missed: int) -> float:
    """total_cost_weighted = total_cost + Σ_{i=1}^{M_r−1} N_u·C_P/2^i = total_cost + N_u·C_P·(1 − 2^(1−M_r)):
    half of the unseen documents are read to find the first missed relevant one, a quarter for the next, …
    (tar_eval.py's Python 3 loop runs i = 1 … M_r − 1, so one missed document costs nothing)."""
    if missed <= 1:
        return total_cost
    return total_cost + unseen * COST_PENALTY * (1.0 - 0.5 ** (missed - 1))


def clef2017_cost_weighted(total_cost: float, unseen: int, missed: int) -> float:
    """cost_weighted summed term by term as tar_eval.py does (same value up to the last bits)."""
    penalty = 0.0
    for i in range(1, missed):
        penalty = penalty + (unseen * COST_PENALTY) / 2.0**i
    return total_cost + penalty


def utility_cost(seen: int, found: int, num_rels: int) -> float:
    """total_cost (CLEF 2018/2019 utility, clean) = Σ over the collection: seen non-relevant +1, seen relevant
    1 − 20 = −19, unseen relevant (below the threshold or never ranked) +20, unseen non-relevant 0, with
    ``seen`` documents read of which ``found`` relevant: (seen − F) − 19·F + 20·(R − F)."""
    return UTILITY_SEEN * (seen - found) + (UTILITY_SEEN - UTILITY_MISSED) * found + UTILITY_MISSED * (num_rels - found)


def clef2019_utility_cost(rel: RelArray, seen: int, num_rels: int) -> float:
    """tar_eval_2018.py's total_cost: the per-line utility over every ranked line (relevant lines below the
    threshold already +20) **plus** 20·(R − F) again: relevant documents below the threshold are charged twice
    (quirk 3). Seed A, N = 12, threshold 3: 43 instead of 3."""
    rel_i = _as_int(rel)
    found = int(rel_i[:seen].sum())
    below = int(rel_i[seen:].sum())
    per_line = UTILITY_SEEN * (seen - found) + (UTILITY_SEEN - UTILITY_MISSED) * found + UTILITY_MISSED * below
    return per_line + UTILITY_MISSED * (num_rels - found)


# --- ASReview / asreview-insights -------------------------------------------------------------------------


def asreview_labels(rel: RelArray, num_docs: int) -> IntArray:
    """insights' padded labels: the screened labels in order, then 0 for every unscreened record up to N."""
    labels = np.zeros(max(num_docs, len(rel)), dtype=np.int64)
    labels[: len(rel)] = _as_int(rel)
    return labels


def asreview_recall_curve(labels: RelArray) -> tuple[FloatArray, FloatArray]:
    """Recall curve points (i/N_x, found_i/N_y), i = 1…N_x (N_x = len(labels), N_y = Σ labels)."""
    lab = _as_int(labels)
    nx, ny = len(lab), int(lab.sum())
    x = np.arange(1, nx + 1) / nx
    found = np.cumsum(lab)
    return x, (found / ny if ny else np.zeros(nx))


def _slice(x: FloatArray, y: FloatArray, v: float) -> float:
    """Value at the largest x ≤ v (insights' searchsorted(side="right") − 1; index −1 wraps to the last)."""
    return float(y[int(np.searchsorted(x, v, side="right")) - 1])


def asreview_rrf(labels: RelArray, v: float) -> float:
    """RRF@v: recall after screening the fraction v of the records (value at the largest i/N_x ≤ v); 0 when
    v < 1/N_x."""
    x, y = asreview_recall_curve(labels)
    if len(x) == 0 or v < x[0]:
        return 0.0
    return _slice(x, y, v)


def _random_found(nx: int, ny: int) -> FloatArray:
    return np.round(np.linspace(0, ny, nx))


def asreview_wss(labels: RelArray, r: float) -> float:
    """insights' WSS@r: points x_j = j/N_y, y_j = (rand_j − model_j)/N_x, model_j = 0-based index where found
    reaches j, rand_j = the same on round(linspace(0, N_y, N_x)) (half-even); read at the largest j/N_y ≤ r
    (no guard: r < 1/N_y wraps to the last point)."""
    lab = _as_int(labels)
    nx, ny = len(lab), int(lab.sum())
    targets = np.arange(1, ny + 1)
    model = np.searchsorted(np.cumsum(lab), targets)
    rand = np.searchsorted(_random_found(nx, ny), targets)
    return _slice(targets / ny, (rand - model) / nx, r)


def asreview_erf(labels: RelArray, v: float) -> float:
    """ERF@v = (found_i − round(linspace(0, N_y, N_x))_i)/N_y at the largest i/N_x ≤ v (no guard)."""
    lab = _as_int(labels)
    nx, ny = len(lab), int(lab.sum())
    x = np.arange(1, nx + 1) / nx
    return _slice(x, (np.cumsum(lab) - _random_found(nx, ny)) / ny, v)


def time_to_discovery(rel: RelArray) -> IntArray:
    """TD: the 1-based screening position of each relevant record."""
    return np.flatnonzero(rel).astype(np.int64) + 1


def average_time_to_discovery(rel: RelArray) -> float:
    """ATD: mean of TD; 0.0 when nothing relevant was found."""
    td = time_to_discovery(rel)
    return float(np.mean(td)) if len(td) else 0.0


def asreview_loss(labels: RelArray) -> float:
    """insights' loss = [N_y·(N_x − (N_y − 1)/2) − Σ_{i≤N_x} found_i] / [N_y·(N_x − N_y)]: 0 for the best
    ranking, 1 for the worst. insights raises for N_y = 0 or N_y = N_x; here those give 0.0."""
    lab = _as_int(labels)
    nx, ny = len(lab), int(lab.sum())
    if ny == 0 or ny == nx:
        return 0.0
    best = ny * (nx - (ny - 1) / 2)
    return (best - float(np.cumsum(lab).sum())) / (ny * (nx - ny))


def asreview_ndcg(labels: RelArray) -> float:
    """nDCG (ASReview core) = Σ_i label_i/log2(i+1) ÷ Σ_{i≤N_y} 1/log2(i+1)."""
    lab = _as_int(labels)
    ny = int(lab.sum())
    if ny == 0:
        return 0.0
    discounts = 1.0 / np.log2(np.arange(2, len(lab) + 2))
    return float((lab * discounts).sum() / discounts[:ny].sum())
