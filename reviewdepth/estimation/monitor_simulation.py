"""Teams that look after every batch: replaying one fixed ranking with a look after every B ranked documents and
stopping at the first look where a rule says stop (issue 12, item 5). The replay engine
(`reviewdepth.estimation.replay`, which ``bench/monitor_bench.py`` and ``reviewdepth simulate`` run) replays its
audit and rest designs with these functions; `simulate_queue` keeps the multi-frequency form its tests use. Pure:
numpy and the estimation core, no I/O.

A *queue* is a real ranking with known labels (population = queue, N documents, R relevant); the review reads it in
rank order and the team looks at ranks k = B, 2B, … < N (at k = N the queue is exhausted: recall 1, no decision).
Per replicate and rule the outcome is whether the rule stopped before the end, the depth k at the stop (N when it
never stopped), the recall F(k)/R there and the cost: documents judged, counted once each.

Audit-stream rules (the evidence of `reviewdepth.estimation.monitor`). The audit stream is a seeded uniformly random
permutation of the population, served as `reviewdepth.services.review.audit_stream.next_documents` serves it: one audit
document is due after every K ranked documents (after the review's prefix reaches jK, the j-th is served), and
advancing the stream *passes* permutation elements already judged (ranks inside the prefix) at no cost and serves
the first one that still needs a judgment. At a look at k the evidence is the first m elements of the permutation
(m = the stream's position after the (k // K)-th served document), x of them relevant and ranked after k,
``known_relevant`` = F(k) + x. Cost = |S ∪ audited| = k + audited documents ranked after k.

- ``monitor``: stop when ``certifies(τ, F, F + x, max(upper_missed(N, m, x), x))`` — the anytime-valid rule;
- ``fixed``: the same with ``fixed_look_upper`` (the one-look exact bound) repeated at every look;
- ``qbcb``: QBCB (`stopping.qbcb_threshold`) repeated at every look with the audit positives as its sample (r
  grows as the stream goes on; not applicable while r < 59 for 95 %/95 %);
- ``target``: the target method (`stopping.target_sample_size`): the first K_t audit positives in permutation order
  (59 for 95 %/95 %) are the target set; stop when all of them are reviewed.

Fresh-sample elusion (the naive practice, ``elusion``): at every look a fresh simple random sample of n documents
(all of them when fewer are left) is drawn from ranks k+1 … N and judged, and the review stops when
`stopping.elusion_rule` (one-sided exact hypergeometric bound, one fixed cutoff) says stop. Samples at different
looks are independent, so the sample's positive count y at each look is drawn as Hypergeometric(N − k, R − F(k), n)
and the rule reduces to y ≤ y_max(k) (the bound on the missed documents is nondecreasing in y). Cost = k + the
distinct sample documents of all looks so far that lie after k; it is drawn exactly from its conditional law given
the y's: the y_j relevant (n_j − y_j non-relevant) documents of sample j are uniform among the relevant
(non-relevant) documents after k_j, so the number of them after the stop depth and the number new to the union are
successive hypergeometric draws.

Deterministic given the seed (``numpy.random.default_rng``). Every audit rule of one replicate reads the same
permutation at every look frequency (common random numbers: the comparison between rules is paired).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import numpy.typing as npt

from reviewdepth.estimation import stopping
from reviewdepth.estimation.monitor import certifies, fixed_look_upper, upper_missed

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

AUDIT_RULES: tuple[str, ...] = ("monitor", "fixed", "qbcb", "target")


@dataclass(frozen=True)
class Queue:
    """One ranking with known labels: ``labels`` (0/1 in rank order), N, R, ``found[k]`` = relevant among the first
    k, ``relevant_ranks`` (0-based, sorted) and the oracle depth d* (the smallest k with F(k) ≥ ⌈τ·R⌉)."""

    labels: npt.NDArray[np.int8]
    size: int
    relevant: int
    found: IntArray
    relevant_ranks: IntArray
    needed: int
    oracle_depth: int

    @classmethod
    def of(cls, labels: npt.ArrayLike, target: Fraction) -> Queue:
        lab = (np.asarray(labels).reshape(-1) != 0).astype(np.int8)
        ranks = np.flatnonzero(lab == 1).astype(np.int64)
        r = len(ranks)
        if r == 0:
            raise ValueError("a simulated queue needs at least one relevant document")
        needed = math.ceil(target * r)
        found = np.concatenate([[0], np.cumsum(lab, dtype=np.int64)]).astype(np.int64)
        return cls(lab, len(lab), r, found, ranks, needed, int(ranks[needed - 1]) + 1)


@dataclass(frozen=True)
class Outcome:
    """Per replicate: ``stopped`` before the queue's end, ``depth`` k at the stop (N when never stopped), ``found``
    F(k) (the recall is found / R) and ``cost`` (documents judged)."""

    stopped: BoolArray
    depth: IntArray
    found: IntArray
    cost: IntArray

    def failed(self, needed: int) -> BoolArray:
        """Stops whose recall is below the target (fewer than ⌈τ·R⌉ relevant found)."""
        out: BoolArray = self.found < needed
        return out


def look_ranks(size: int, batch: int) -> IntArray:
    """k = B, 2B, … < N: the looks a team makes before the queue runs out."""
    if batch < 1:
        raise ValueError(f"batch must be positive, got {batch}")
    return np.arange(batch, size, batch, dtype=np.int64)


def audit_permutations(size: int, replicates: int, rng: np.random.Generator) -> npt.NDArray[np.int32]:
    """One uniformly random permutation of the ranks 0 … N−1 per replicate (row)."""
    return np.stack([rng.permutation(size).astype(np.int32) for _ in range(replicates)]) if replicates else \
        np.zeros((0, size), dtype=np.int32)


def stream_positions(perms: npt.NDArray[np.int32], every: int) -> IntArray:
    """pos[r, j]: the stream's position (elements consumed) once the j-th audit document is served, j = 0 … N // K.

    Element p is passed (already judged, free) when its rank is inside the prefix at the moment the stream reaches
    it, i.e. rank < (s + 1)·K with s documents served before it; otherwise it is served. Vectorised over
    replicates, one step per permutation position."""
    reps, size = perms.shape
    due = size // every
    pos = np.zeros((reps, due + 1), dtype=np.int64)
    served = np.zeros(reps, dtype=np.int64)
    rows = np.arange(reps)
    for p in range(size):
        serve = perms[:, p] >= (served + 1) * every
        serve &= served < due
        if not serve.any():
            if (served >= due).all():
                break
            continue
        hit = rows[serve]
        served[hit] += 1
        pos[hit, served[hit]] = p + 1
    # an audit document that cannot be served finds every document left after the prefix already audited: the
    # whole permutation is judged (passed or served)
    for r in np.flatnonzero(served < due):
        pos[r, served[r] + 1:] = size
    return pos


class Decisions:
    """Cached stop decisions of the monitor and the repeated fixed-look rule for (F, m, x).

    For one F and x both rules stop from some stream length m on (their bound on the missed documents only
    tightens as the audit grows with no new relevant document; `stop_plan.Certifier.elements_needed` bisects on the
    same edge): `stops` keeps, per (rule, F, x), the longest m seen going on and the shortest seen stopping, and
    decides the lengths between them by bisecting over the ones asked (a few bounds for a whole look's replicates,
    not one per distinct m). tests/estimation/test_replay_tables.py compares it with `decide` at every m on a
    grid."""

    def __init__(self, queue: Queue, target: Fraction, confidence: float) -> None:
        self.queue = queue
        self.target = target
        self.confidence = confidence
        self.cache: dict[tuple[str, int, int, int], bool] = {}
        self.fixed_upper: dict[tuple[int, int], int] = {}
        self.edges: dict[tuple[str, int, int], tuple[int, int]] = {}

    def stops(self, rule: str, found: int, audited: IntArray, missed: int) -> BoolArray:
        """`decide` for each stream length of ``audited``, with F = ``found`` and x = ``missed``."""
        key = (rule, found, missed)
        goes_on, stops_from = self.edges.get(key, (-1, self.queue.size + 1))
        lengths = np.unique(audited)
        open_ = lengths[(lengths > goes_on) & (lengths < stops_from)].tolist()
        low, high = 0, len(open_)  # the first of open_ that stops lies in [low, high]
        while low < high:
            mid = (low + high) // 2
            if self.decide(rule, found, open_[mid], missed):
                high, stops_from = mid, open_[mid]
            else:
                low, goes_on = mid + 1, open_[mid]
        self.edges[key] = (goes_on, stops_from)
        out: BoolArray = audited >= stops_from
        return out

    def decide(self, rule: str, found: int, audited: int, missed: int) -> bool:
        key = (rule, found, audited, missed)
        hit = self.cache.get(key)
        if hit is not None:
            return hit
        n = self.queue.size
        if rule == "monitor":
            upper = upper_missed(n, audited, missed, self.confidence)
        else:
            pair = (audited, missed)
            if pair not in self.fixed_upper:
                self.fixed_upper[pair] = fixed_look_upper(n, audited, missed, self.confidence)
            upper = self.fixed_upper[pair]
        # as `monitor.monitor` does: the bound is never below the relevant documents known to lie outside
        result = certifies(self.target, found, found + missed, max(upper, missed))
        self.cache[key] = result
        return result


def _finish(queue: Queue, stop_look: IntArray, looks: IntArray, cost_at: Callable[[int, int], int]) -> Outcome:
    """Outcome from the index of the first stopping look per replicate (−1: never stopped)."""
    reps = len(stop_look)
    stopped = stop_look >= 0
    depth = np.full(reps, queue.size, dtype=np.int64)
    depth[stopped] = looks[stop_look[stopped]]
    cost = np.full(reps, queue.size, dtype=np.int64)
    for r in np.flatnonzero(stopped):
        cost[r] = cost_at(int(r), int(depth[r]))
    return Outcome(stopped, depth, queue.found[depth], cost)


def simulate_audit_rules(queue: Queue, perms: npt.NDArray[np.int32], batch: int, every: int, *,
                         target: Fraction, confidence: float, rules: Sequence[str] = AUDIT_RULES,
                         decisions: Decisions | None = None,
                         positions: IntArray | None = None) -> dict[str, Outcome]:
    """The audit-stream rules (module docstring) on ``perms`` (one permutation per replicate) with a look after
    every ``batch`` ranked documents and one audit document due after every ``every``."""
    unknown = set(rules) - set(AUDIT_RULES)
    if unknown:
        raise ValueError(f"unknown audit rules {sorted(unknown)}; choose from {AUDIT_RULES}")
    if every < 1:
        raise ValueError(f"every must be positive, got {every}")
    reps, size = perms.shape
    if size != queue.size:
        raise ValueError("permutations and queue differ in size")
    memo = decisions if decisions is not None else Decisions(queue, target, confidence)
    pos = positions if positions is not None else stream_positions(perms, every)
    looks = look_ranks(size, batch)
    rel_ranks = queue.relevant_ranks
    # P[r, i]: where relevant document i sits in replicate r's permutation
    inverse = np.empty_like(perms)
    inverse[np.arange(reps)[:, None], perms] = np.arange(size, dtype=np.int32)[None, :]
    where = inverse[:, rel_ranks].astype(np.int64)
    del inverse
    t_size = stopping.target_sample_size(target, 1 - confidence)
    qbcb_j = np.zeros(queue.relevant + 1, dtype=np.int64)  # 0 = not applicable with that many positives
    for a in range(1, queue.relevant + 1):
        j = stopping.qbcb_threshold(a, target, 1 - confidence)
        qbcb_j[a] = 0 if j is None else j
    if queue.relevant >= t_size:
        order = np.argsort(where, axis=1, kind="stable")[:, :t_size]
        target_complete = np.take_along_axis(where, order, axis=1).max(axis=1)  # position of the K_t-th positive
        target_depth = rel_ranks[order].max(axis=1)  # deepest (0-based) rank of the target set
    else:
        target_complete = np.full(reps, size, dtype=np.int64)
        target_depth = np.full(reps, size, dtype=np.int64)

    stop_look = {rule: np.full(reps, -1, dtype=np.int64) for rule in rules}
    alive = {rule: np.ones(reps, dtype=bool) for rule in rules}
    for t, k in enumerate(looks.tolist()):
        any_alive = np.zeros(reps, dtype=bool)
        for live_rows in alive.values():
            any_alive |= live_rows
        if not any_alive.any():
            break
        rows = np.flatnonzero(any_alive)
        m = pos[rows, k // every]
        drawn = where[rows] < m[:, None]
        outside = drawn & (rel_ranks >= k)[None, :]
        x = outside.sum(axis=1)
        positives = drawn.sum(axis=1)
        found = int(queue.found[k])
        for rule in rules:
            live = alive[rule][rows]
            if not live.any():
                continue
            idx = np.flatnonzero(live)
            if rule in ("monitor", "fixed"):
                stop = np.zeros(len(idx), dtype=bool)
                for missed in np.unique(x[idx]).tolist():
                    same = np.flatnonzero(x[idx] == missed)
                    stop[same] = memo.stops(rule, found, m[idx[same]], missed)
            elif rule == "qbcb":
                j = qbcb_j[positives[idx]]
                stop = (j > 0) & (positives[idx] - x[idx] >= j)
            else:
                r_idx = rows[idx]
                stop = (m[idx] > target_complete[r_idx]) & (target_depth[r_idx] < k)
            hit = rows[idx[stop]]
            stop_look[rule][hit] = t
            alive[rule][hit] = False

    def cost_at(r: int, k: int) -> int:
        m = int(pos[r, k // every])
        return k + int(np.count_nonzero(perms[r, :m] >= k))

    return {rule: _finish(queue, stop_look[rule], looks, cost_at) for rule in rules}


def elusion_thresholds(queue: Queue, looks: IntArray, sample_size: int, target: Fraction,
                       confidence: float) -> tuple[IntArray, IntArray]:
    """Per look: the sample size n_k = min(n, N − k) and y_max, the largest sample positive count at which
    `stopping.elusion_rule` stops (−1: it cannot stop at that look)."""
    sizes = np.minimum(sample_size, queue.size - looks).astype(np.int64)
    ymax = np.full(len(looks), -1, dtype=np.int64)
    alpha = 1 - confidence
    for t, (k, n) in enumerate(zip(looks.tolist(), sizes.tolist(), strict=True)):
        found = int(queue.found[k])
        most = min(n, queue.relevant - found)  # more positives than remain cannot be drawn
        ymax[t] = min(stopping.elusion_threshold(found, queue.size - k, n, target, alpha), most)
    return sizes, ymax


def fresh_sample_counts(queue: Queue, looks: IntArray, sizes: IntArray, replicates: int,
                        rng: np.random.Generator) -> IntArray:
    """ys[r, t]: the relevant documents in replicate r's fresh simple random sample of ``sizes[t]`` from the ranks
    after ``looks[t]``, Hypergeometric(N − k, R − F(k), n_k), one independent draw per look (every look is drawn,
    so a rule's draws do not depend on when other rules stop)."""
    left = queue.size - looks
    missed = queue.relevant - queue.found[looks]
    # one call for every look: numpy fills a (look, replicate) array in C order, look after look, so the stream
    # gives the same counts as one call per look did
    drawn = rng.hypergeometric(missed[:, None], (left - missed)[:, None], sizes[:, None],
                               size=(len(looks), replicates))
    ys: IntArray = np.ascontiguousarray(drawn.T, dtype=np.int64)
    return ys


def fresh_sample_union(queue: Queue, looks: IntArray, sizes: IntArray, ys: IntArray, stop_look: IntArray,
                       rng: np.random.Generator) -> IntArray:
    """Documents judged at the stop, k + |⋃_{j ≤ stop} sample_j ∩ ranks after k|, for the replicates that stopped
    at look index ``stop_look`` (N for those that never stopped, −1). Drawn exactly from its conditional law given
    the sample counts ``ys`` (module docstring)."""
    left = queue.size - looks
    missed = queue.relevant - queue.found[looks]
    cost = np.full(len(stop_look), queue.size, dtype=np.int64)
    rows = np.flatnonzero(stop_look >= 0)
    if not len(rows):
        return cost
    k_stop = looks[stop_look[rows]]
    rel_after = queue.relevant - queue.found[k_stop]  # relevant documents after the stop depth
    non_after = (queue.size - k_stop) - rel_after
    union_rel = np.zeros(len(rows), dtype=np.int64)
    union_non = np.zeros(len(rows), dtype=np.int64)
    last = stop_look[rows]
    # Per look t, for the replicates still sampling: of sample t's relevant (non-relevant) documents, how many lie
    # after the stop depth (the "after" draws), then how many of those are new to the union (the "new" draws), in
    # that order on the stream. The after draws of look t + 1 do not depend on the new draws of look t, which come
    # just before them, so one call draws both (numpy fills a call's draws in order, as separate calls would):
    # one call per look and a last one, instead of four per look.
    final = int(last.max())
    # the previous look's new draws: its replicates (rows of ``rows``), then their arguments
    new_draws: tuple[IntArray, IntArray, IntArray, IntArray] | None = None
    for t in range(final + 2):
        good: list[IntArray] = []
        bad: list[IntArray] = []
        count: list[IntArray] = []
        if new_draws is not None:
            good.append(new_draws[1])
            bad.append(new_draws[2])
            count.append(new_draws[3])
        sub = np.flatnonzero(last >= t)  # empty after the last stop
        if t <= final:
            y = ys[rows[sub], t]
            rel_pool = int(missed[t])
            non_pool = int(left[t]) - rel_pool
            good += [rel_after[sub], non_after[sub]]
            bad += [rel_pool - rel_after[sub], non_pool - non_after[sub]]
            count += [y, int(sizes[t]) - y]
        drawn = rng.hypergeometric(np.concatenate(good), np.concatenate(bad), np.concatenate(count))
        if new_draws is not None:
            before = new_draws[0]
            union_rel[before] += drawn[:len(before)]
            union_non[before] += drawn[len(before):2 * len(before)]
            drawn = drawn[2 * len(before):]
        if t <= final:
            c_rel, c_non = drawn[:len(sub)], drawn[len(sub):]
            new_draws = (sub, np.concatenate([rel_after[sub] - union_rel[sub], non_after[sub] - union_non[sub]]),
                         np.concatenate([union_rel[sub], union_non[sub]]), np.concatenate([c_rel, c_non]))
    cost[rows] = k_stop + union_rel + union_non
    return cost


def first_look(stops: BoolArray) -> IntArray:
    """Per row of ``stops[r, t]`` (rule says stop at look t): the first look index that says stop, −1 if none."""
    if stops.shape[1] == 0:  # no look before the queue's end
        return np.full(stops.shape[0], -1, dtype=np.int64)
    out: IntArray = np.where(stops.any(axis=1), np.argmax(stops, axis=1), -1).astype(np.int64)
    return out


def simulate_fresh_elusion(queue: Queue, batch: int, sample_size: int, replicates: int, rng: np.random.Generator,
                           *, target: Fraction, confidence: float) -> Outcome:
    """The elusion test repeated at every look with a fresh sample of ``sample_size`` (module docstring): the
    sample counts of every look (`fresh_sample_counts`), then the union cost (`fresh_sample_union`), both from
    ``rng``."""
    if sample_size < 1:
        raise ValueError(f"sample_size must be positive, got {sample_size}")
    looks = look_ranks(queue.size, batch)
    sizes, ymax = elusion_thresholds(queue, looks, sample_size, target, confidence)
    ys = fresh_sample_counts(queue, looks, sizes, replicates, rng)
    stop_look = first_look(ys <= ymax[None, :])
    cost = fresh_sample_union(queue, looks, sizes, ys, stop_look, rng)
    stopped = stop_look >= 0
    depth = np.full(replicates, queue.size, dtype=np.int64)
    depth[stopped] = looks[stop_look[stopped]]
    return Outcome(stopped, depth, queue.found[depth], cost)


def simulate_queue(labels: npt.ArrayLike, *, batches: Sequence[int], every: Sequence[int],
                   sample_sizes: Sequence[int], replicates: int, seed: int | Sequence[int],
                   target: Fraction = Fraction(19, 20), confidence: float = 0.95,
                   audit_rules: Sequence[str] = AUDIT_RULES) -> dict[tuple[int, str], Outcome]:
    """Every rule at every look frequency on one queue: keys (B, name) with names ``monitor K=10``, ``fixed K=10``,
    ``qbcb K=10``, ``target K=10``, …, ``elusion n=400``, …. Deterministic given ``seed``."""
    if replicates < 1:
        raise ValueError(f"replicates must be positive, got {replicates}")
    queue = Queue.of(labels, target)
    root = np.random.SeedSequence(seed)
    audit_seed, elusion_seed = root.spawn(2)
    perms = audit_permutations(queue.size, replicates, np.random.default_rng(audit_seed))
    out: dict[tuple[int, str], Outcome] = {}
    memo = Decisions(queue, target, confidence)
    for k_every in every:
        positions = stream_positions(perms, k_every)
        for batch in batches:
            results = simulate_audit_rules(queue, perms, batch, k_every, target=target, confidence=confidence,
                                           rules=audit_rules, decisions=memo, positions=positions)
            for rule, outcome in results.items():
                out[(batch, f"{rule} K={k_every}")] = outcome
    streams = elusion_seed.spawn(len(batches) * len(sample_sizes))
    for i, (batch, n) in enumerate((b, n) for b in batches for n in sample_sizes):
        out[(batch, f"elusion n={n}")] = simulate_fresh_elusion(
            queue, batch, n, replicates, np.random.default_rng(streams[i]), target=target, confidence=confidence)
    return out
