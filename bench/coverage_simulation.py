"""Coverage simulation on synthetic collections with known R (tests/estimation, bench/coverage_bench.py; not shipped).

Pure numpy + scipy, vectorised over replicates, deterministic given the ``numpy.random.Generator`` passed in.
A synthetic queue ranks N documents, R = round(prevalence·N) of them relevant, by score = quality·rel + ε with
ε ~ Normal(0, 1): quality 3 is a good ranking, 0.5 a poor one, 0 a random one.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from reviewdepth.estimation.intervals import INTERVAL_METHODS, hypergeometric_interval, proportion_interval
from reviewdepth.estimation.relevant import Stratum, estimate_stratified
from reviewdepth.estimation.stopping import hypergeometric_p_value, qbcb_threshold, target_sample_size

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
R_METHODS: tuple[str, ...] = ("hypergeometric", *INTERVAL_METHODS)


def synthetic_queue(population: int, prevalence: float, quality: float, rng: np.random.Generator) -> IntArray:
    """Sorted 1-based queue ranks of the R = max(1, round(prevalence·N)) relevant documents of a synthetic queue."""
    relevant = max(1, round(prevalence * population))
    rel = np.zeros(population, dtype=bool)
    rel[:relevant] = True
    scores = quality * rel + rng.standard_normal(population)
    order = np.argsort(-scores, kind="stable")
    out: IntArray = (np.flatnonzero(rel[order]) + 1).astype(np.int64)
    return out


def _bounds_by_count(counts: IntArray, draws: int, population: int, method: str,
                     confidence: float) -> tuple[FloatArray, FloatArray]:
    """Two-sided bounds on the number of relevant in ``population`` for each sample count, computed once per
    distinct count."""
    values, inverse = np.unique(counts, return_inverse=True)
    lower = np.empty(len(values))
    upper = np.empty(len(values))
    for i, y in enumerate(values):
        if method == "hypergeometric":
            lo, up = hypergeometric_interval(int(y), draws, population, confidence)
            lower[i], upper[i] = lo, up
        else:
            p_lo, p_up = proportion_interval(int(y), draws, confidence, method)
            lower[i], upper[i] = population * p_lo, population * p_up
    return lower[inverse], upper[inverse]


def srs_coverage(population: int, relevant: int, sample_size: int, reps: int, rng: np.random.Generator,
                 confidence: float = 0.95) -> dict[str, tuple[float, float]]:
    """SRS prevalence estimate of R: per interval method, (two-sided coverage P(L ≤ R ≤ U), upper-bound coverage
    P(U ≥ R)) over ``reps`` simple random samples of ``sample_size`` from the population."""
    counts = rng.hypergeometric(relevant, population - relevant, sample_size, size=reps).astype(np.int64)
    out: dict[str, tuple[float, float]] = {}
    for method in R_METHODS:
        lower, upper = _bounds_by_count(counts, sample_size, population, method, confidence)
        out[method] = (float(np.mean((lower <= relevant) & (relevant <= upper))), float(np.mean(upper >= relevant)))
    return out


def elusion_coverage(relevant_ranks: IntArray, population: int, cutoff: int, sample_size: int, reps: int,
                     rng: np.random.Generator, confidence: float = 0.95) -> dict[str, tuple[float, float]]:
    """Elusion estimate after reviewing the first ``cutoff`` documents: per method, (two-sided coverage of R, which
    equals that of recall, and upper-bound coverage P(F + D_U ≥ R))."""
    relevant = len(relevant_ranks)
    found = int(np.count_nonzero(relevant_ranks <= cutoff))
    missed = relevant - found
    unreviewed = population - cutoff
    counts = rng.hypergeometric(missed, unreviewed - missed, sample_size, size=reps).astype(np.int64)
    out: dict[str, tuple[float, float]] = {}
    for method in R_METHODS:
        lower, upper = _bounds_by_count(counts, sample_size, unreviewed, method, confidence)
        out[method] = (float(np.mean((lower <= missed) & (missed <= upper))), float(np.mean(upper >= missed)))
    return out


def stratified_coverage(relevant_ranks: IntArray, population: int, cutoff: int, sample_sizes: tuple[int, int],
                        reps: int, rng: np.random.Generator, confidence: float = 0.95,
                        draws: int = 2000) -> tuple[float, float, float]:
    """Stratified estimate: reviewed prefix [1, cutoff] exact (found), the rest split in two equal rank bands each
    sampled at random. Returns (two-sided coverage of R, upper-bound coverage of R, two-sided coverage of recall)."""
    relevant = len(relevant_ranks)
    found = int(np.count_nonzero(relevant_ranks <= cutoff))
    middle = cutoff + (population - cutoff) // 2
    sizes = (middle - cutoff, population - middle)
    in_band = (int(np.count_nonzero((relevant_ranks > cutoff) & (relevant_ranks <= middle))),
               int(np.count_nonzero(relevant_ranks > middle)))
    ys = [rng.hypergeometric(in_band[h], sizes[h] - in_band[h], sample_sizes[h], size=reps) for h in range(2)]
    true_recall = found / relevant
    covered = upper_ok = recall_ok = 0
    for rep in range(reps):
        strata = [
            Stratum("reviewed", cutoff, cutoff, found, reviewed=True, found=True),
            Stratum("band1", sizes[0], sample_sizes[0], int(ys[0][rep]), reviewed=False, found=False),
            Stratum("band2", sizes[1], sample_sizes[1], int(ys[1][rep]), reviewed=False, found=False),
        ]
        est = estimate_stratified(strata, confidence=confidence, draws=draws, seed=rep)
        upper = est.upper if est.upper is not None else math.inf
        covered += est.lower <= relevant <= upper
        upper_ok += upper >= relevant
        rl, ru = est.recall_lower or 0.0, est.recall_upper or 1.0
        recall_ok += rl <= true_recall <= ru
    return covered / reps, upper_ok / reps, recall_ok / reps


def _subset_stop_recall(relevant: int, picks: IntArray, which: IntArray, rng: np.random.Generator) -> FloatArray:
    """For each replicate, choose ``picks[i]`` of the R relevant documents uniformly at random (the sample
    positives); return the recall at the rank of the ``which[i]``-th chosen one in queue order (NaN where
    which[i] ≤ 0)."""
    reps = len(picks)
    keys = rng.random((reps, relevant))
    kth = np.sort(keys, axis=1)[np.arange(reps), np.clip(picks, 1, relevant) - 1]
    chosen = keys <= kth[:, None]
    position = np.argmax(np.cumsum(chosen, axis=1) >= np.maximum(which, 1)[:, None], axis=1)
    recall = (position + 1) / relevant
    return np.where(which > 0, recall, np.nan)


def qbcb_recall(relevant: int, positives: int | IntArray, tau: float, alpha: float, reps: int,
                rng: np.random.Generator) -> FloatArray:
    """Recall reached when QBCB stops, with ``positives`` sample positives (fixed, or one count per replicate);
    NaN where QBCB cannot certify (τ^r > α). Recall at the stop depth only depends on which relevant documents
    the sample hits, so no queue is needed: the j-th sample positive in queue order is the i-th relevant."""
    picks = np.broadcast_to(np.asarray(positives, dtype=np.int64), (reps,)).copy()
    table = {int(r): qbcb_threshold(int(r), tau, alpha) or 0 for r in np.unique(picks)}
    which = np.array([table[int(r)] for r in picks], dtype=np.int64)
    return _subset_stop_recall(relevant, picks, which, rng)


def target_recall(relevant: int, tau: float, alpha: float, reps: int, rng: np.random.Generator,
                  form: str = "exact") -> FloatArray:
    """Recall reached by the target method: K random relevant documents (the target set), stop at the deepest."""
    k = target_sample_size(tau, alpha, form)
    picks = np.full(reps, k, dtype=np.int64)
    return _subset_stop_recall(relevant, picks, picks, rng)


def hypergeometric_false_stop_rate(relevant_ranks: IntArray, population: int, cutoff: int, urn_size: int,
                                   tau: float, reps: int, rng: np.random.Generator) -> tuple[float, float]:
    """Random-mode hypergeometric test at a cutoff followed by a random urn: returns (true recall of the screened
    prefix, share of replicates that stop although the recall of everything seen, (F + k)/R, is < τ). The test
    (α = 0.05) promises that share is ≤ α."""
    relevant = len(relevant_ranks)
    found = int(np.count_nonzero(relevant_ranks <= cutoff))
    unseen = population - cutoff
    missed = relevant - found
    ks = rng.hypergeometric(missed, unseen - missed, urn_size, size=reps)
    values, inverse = np.unique(ks, return_inverse=True)
    p = np.array([hypergeometric_p_value(population, cutoff + urn_size, found, urn_size, int(k), tau)[0]
                  for k in values])
    wrong = (p[inverse] < 0.05) & ((found + ks) < tau * relevant)
    return found / relevant, float(np.mean(wrong))
