"""The replay engine's per-queue decision tables (issue 44): the elusion test's threshold y_max per look, the other
rest-sample rules' tables of (look, sample count) decisions, and the per-queue caches that keep them (and the
monitor's decisions) across chunks. Each table is compared with the rule's own scalar evaluation, and the rest
design's replay with a reference that asks the scalar rule for every sample count and draws one look at a time
(the engine as it was before the tables), so the figures for a seed are unchanged."""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from reviewdepth.estimation import replay as replay_module
from reviewdepth.estimation import stopping
from reviewdepth.estimation.monitor_simulation import Decisions, Queue, look_ranks
from reviewdepth.estimation.replay import (
    CHUNK,
    RULES,
    Design,
    ReplayPlan,
    RestDecisions,
    RuleRuns,
    chunk_count,
    replay_chunk,
)
from reviewdepth.estimation.rules import OnRestSample

IntArray = npt.NDArray[np.int64]
Labels = npt.NDArray[np.int8]
REST_RULES = ("elusion", "hypergeometric")


def rest_how(rule: str) -> OnRestSample:
    how = RULES[rule].replay_under("rest")
    assert isinstance(how, OnRestSample)
    return how


# ---- the elusion threshold against the rule -------------------------------------------------------------------------

GRID_FOUND = (0, 1, 2, 19, 20, 21, 100)
GRID_UNREVIEWED = (1, 2, 5, 40, 300)


@pytest.mark.parametrize(("tau", "alpha"), [(Fraction(19, 20), 0.05), (Fraction(4, 5), 0.1), (0.5, 0.01)])
def test_the_elusion_threshold_is_the_rules_edge_on_a_grid(tau: Fraction | float, alpha: float) -> None:
    """For every F, N_u, n (one document, all of them, a third) and every y = 0 … n: the rule stops exactly when
    y ≤ the threshold (F = 0, the whole rest sampled and a threshold of −1 included)."""
    seen_none = seen_all = seen_some = False
    for found in GRID_FOUND:
        for unreviewed in GRID_UNREVIEWED:
            for n in sorted({1, max(1, unreviewed // 3), min(unreviewed, 60)}):
                threshold = stopping.elusion_threshold(found, unreviewed, n, tau, alpha)
                says = [bool(stopping.elusion_rule(found, unreviewed, n, y, tau, alpha).stop_now)
                        for y in range(n + 1)]
                assert says == [y <= threshold for y in range(n + 1)], (found, unreviewed, n, threshold)
                seen_none |= threshold == -1
                seen_all |= threshold >= n
                seen_some |= 0 <= threshold < n
    assert seen_none and seen_all and seen_some  # the grid reaches each kind of edge


def test_the_elusion_threshold_refuses_a_sample_the_rest_cannot_hold() -> None:
    with pytest.raises(ValueError, match="sample_size"):
        stopping.elusion_threshold(5, 10, 11)
    with pytest.raises(ValueError, match="sample_size"):
        stopping.elusion_threshold(5, 10, 0)


# ---- the rest tables against the rules ------------------------------------------------------------------------------


def synthetic_labels(seed: int, size: int = 400, share: float = 0.12) -> Labels:
    """A ranking whose relevant documents thin out with the rank (as a real one's do), at least one relevant."""
    rng = np.random.default_rng(seed)
    p = share * 3 * np.exp(-3 * np.arange(size) / size)
    labels = (rng.random(size) < p).astype(np.int8)
    labels[0] = 1
    return labels


@pytest.mark.parametrize("rule", REST_RULES)
@pytest.mark.parametrize("sample_size", [1, 30, 100, 1000])
def test_rest_tables_are_the_rules_decisions(cd012551_labels: Labels, rule: str, sample_size: int) -> None:
    """Every look and every sample count a sample can hold (0 … min(n_t, R − F(k_t))), on the CLEF queue and a
    synthetic one, at two targets: the table's decision is the rule's `stops` (a sample as large as the queue
    takes the whole rest at every look)."""
    how = rest_how(rule)
    for labels in (cd012551_labels, synthetic_labels(1)):
        for tau, alpha in ((Fraction(4, 5), 0.1), (Fraction(19, 20), 0.05)):
            queue = Queue.of(labels, tau)
            looks = look_ranks(queue.size, 20)
            sizes = np.minimum(sample_size, queue.size - looks).astype(np.int64)
            table = RestDecisions(queue, looks, sizes, how, tau, alpha)
            most = np.minimum(sizes, queue.relevant - queue.found[looks])
            grid = np.arange(int(most.max()) + 1)
            ys = np.minimum(grid[:, None], most[None, :]).astype(np.int64)  # one row per count, capped per look
            got = table.stops(ys)
            for t, k in enumerate(looks.tolist()):
                for y in range(int(most[t]) + 1):
                    want = how.stops(queue.size, k, int(queue.found[k]), int(sizes[t]), y, tau, alpha)
                    assert got[y, t] == want, (rule, sample_size, k, y)


# ---- the rest design's replay against the scalar reference ----------------------------------------------------------


def reference_counts(queue: Queue, looks: IntArray, sizes: IntArray, reps: int, rng: np.random.Generator) -> IntArray:
    left = queue.size - looks
    missed = queue.relevant - queue.found[looks]
    ys = np.zeros((reps, len(looks)), dtype=np.int64)
    for t in range(len(looks)):
        ys[:, t] = rng.hypergeometric(missed[t], left[t] - missed[t], sizes[t], size=reps)
    return ys


def reference_union(queue: Queue, looks: IntArray, sizes: IntArray, ys: IntArray, stop_look: IntArray,
                    rng: np.random.Generator) -> IntArray:
    """Documents judged at the stop, four draws per look (after the stop depth: relevant, non-relevant; new to the
    union: relevant, non-relevant)."""
    left = queue.size - looks
    missed = queue.relevant - queue.found[looks]
    cost = np.full(len(stop_look), queue.size, dtype=np.int64)
    rows = np.flatnonzero(stop_look >= 0)
    if not len(rows):
        return cost
    k_stop = looks[stop_look[rows]]
    rel_after = queue.relevant - queue.found[k_stop]
    non_after = (queue.size - k_stop) - rel_after
    union_rel = np.zeros(len(rows), dtype=np.int64)
    union_non = np.zeros(len(rows), dtype=np.int64)
    last = stop_look[rows]
    for t in range(int(last.max()) + 1):
        sub = np.flatnonzero(last >= t)
        y = ys[rows[sub], t]
        rel_pool, non_pool = missed[t], left[t] - missed[t]
        c_rel = rng.hypergeometric(rel_after[sub], rel_pool - rel_after[sub], y)
        c_non = rng.hypergeometric(non_after[sub], non_pool - non_after[sub], sizes[t] - y)
        union_rel[sub] += rng.hypergeometric(rel_after[sub] - union_rel[sub], union_rel[sub], c_rel)
        union_non[sub] += rng.hypergeometric(non_after[sub] - union_non[sub], union_non[sub], c_non)
    cost[rows] = k_stop + union_rel + union_non
    return cost


def reference_rest_chunk(labels: Labels, plan: ReplayPlan, chunk: int, key: tuple[int, ...]) -> dict[str, RuleRuns]:
    """The rest design's rest-sample rules on one chunk: every (look, count) asked of the rule's scalar `stops`."""
    tau = Fraction(plan.target)
    alpha = 1 - plan.confidence
    queue = Queue.of(labels, tau)
    looks = look_ranks(queue.size, plan.look_every)
    reps = min((chunk + 1) * CHUNK, plan.replicates) - chunk * CHUNK
    seq = np.random.SeedSequence(plan.seed, spawn_key=(*key, chunk))
    rng = np.random.default_rng(seq)
    sizes = np.minimum(plan.design.sample_size, queue.size - looks).astype(np.int64)
    ys = reference_counts(queue, looks, sizes, reps, rng)
    out: dict[str, RuleRuns] = {}
    for rule in plan.rules:
        how = rest_how(rule)
        asked: dict[tuple[int, int], bool] = {}
        stop_look = np.full(reps, -1, dtype=np.int64)
        for r in range(reps):
            for t, k in enumerate(looks.tolist()):
                y = int(ys[r, t])
                if (t, y) not in asked:
                    asked[(t, y)] = how.stops(queue.size, k, int(queue.found[k]), int(sizes[t]), y, tau, alpha)
                if asked[(t, y)]:
                    stop_look[r] = t
                    break
        gen = rng if how.chunk_stream else np.random.default_rng(
            np.random.SeedSequence(seq.entropy, spawn_key=(*seq.spawn_key, 1 + (RULES[rule].stream or 0))))
        cost = reference_union(queue, looks, sizes, ys, stop_look, gen)
        stopped = stop_look >= 0
        depth = np.full(reps, queue.size, dtype=np.int64)
        depth[stopped] = looks[stop_look[stopped]]
        urn = np.zeros(reps, dtype=np.int64)
        if how.urn_found:
            urn[stopped] = ys[np.flatnonzero(stopped), stop_look[stopped]]
        out[rule] = RuleRuns(rule, RULES[rule].kind_under("rest"), stopped, depth, queue.found[depth] + urn,
                             np.where(stopped, cost - depth, 0).astype(np.int64), queue.size, queue.relevant,
                             queue.needed, queue.oracle_depth)
    return out


def counting(monkeypatch: pytest.MonkeyPatch, owner: Any, name: str) -> list[int]:
    """Replace ``owner.name`` with a wrapper that counts its calls (the count is the list's length)."""
    calls: list[int] = []
    original: Callable[..., Any] = getattr(owner, name)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, wrapper)
    return calls


@pytest.mark.parametrize(("target", "confidence", "sample_size", "look_every", "rules"), [
    (Fraction(4, 5), 0.9, 100, 25, REST_RULES),
    (Fraction(19, 20), 0.95, 30, 20, REST_RULES),
    (Fraction(4, 5), 0.9, 10, 50, ("hypergeometric", "elusion")),
    (Fraction(9, 10), 0.8, 1000, 25, ("elusion",)),
])
def test_the_rest_replay_is_the_scalar_reference_for_a_seed(
        cd012551_labels: Labels, monkeypatch: pytest.MonkeyPatch, target: Fraction, confidence: float,
        sample_size: int, look_every: int, rules: tuple[str, ...]) -> None:
    """Every chunk (the last one short) of the rest design, on the CLEF queue and a synthetic one: the same stops,
    depths, found and sampled documents as the reference, and the elusion test is never asked about one sample
    count (its threshold decides)."""
    asked = counting(monkeypatch, stopping, "elusion_rule")
    for index, labels in enumerate((cd012551_labels, synthetic_labels(2))):
        plan = ReplayPlan(Design("rest", sample_size=sample_size), rules, target, confidence, look_every,
                          2 * CHUNK + 7, 44)
        for chunk in range(chunk_count(plan)):
            got = replay_chunk(labels, plan, chunk, (index, 3))
            calls = len(asked)
            want = reference_rest_chunk(labels, plan, chunk, (index, 3))
            del asked[calls:]  # the reference's own calls
            assert got == want, (index, chunk)
    assert not asked


# ---- the caches outlive the replayers' ------------------------------------------------------------------------------


def test_per_queue_decisions_are_made_once_across_more_topics_than_replayers(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A run goes chunk by chunk across its topics; with more topics than the 16 replayers kept, the elusion
    thresholds, the prefix rules' stops and the monitor's decisions are still made once per topic."""
    queues = [synthetic_labels(1000 + i, size=300) for i in range(20)]
    thresholds = counting(monkeypatch, stopping, "elusion_threshold")
    knee = counting(monkeypatch, stopping, "knee_method")
    made: list[int] = []

    class CountedDecisions(Decisions):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            made.append(1)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(replay_module, "Decisions", CountedDecisions)
    rest = ReplayPlan(Design("rest", sample_size=40), ("elusion", "knee"), Fraction(4, 5), 0.9, 25, 3 * CHUNK, 5)
    audit = ReplayPlan(Design("audit", every=5), ("monitor",), Fraction(4, 5), 0.9, 25, 3 * CHUNK, 5)
    for chunk in range(3):
        for i, labels in enumerate(queues):
            replay_chunk(labels, rest, chunk, (i,))
            replay_chunk(labels, audit, chunk, (i,))
    assert len(thresholds) == sum(len(look_ranks(len(q), 25)) for q in queues)  # one per look of each topic
    assert len(knee) == len(queues)
    assert len(made) == len(queues)


# ---- the monitor's decisions by stream length -----------------------------------------------------------------------


@pytest.mark.parametrize("rule", ["monitor", "fixed"])
@pytest.mark.parametrize(("target", "confidence"), [(Fraction(4, 5), 0.9), (Fraction(19, 20), 0.95)])
def test_decisions_by_stream_length_are_the_rules_at_every_length(rule: str, target: Fraction,
                                                                  confidence: float) -> None:
    """For F found and x audit positives outside, every stream length m = x … N (asked in shuffled batches, so the
    edges are learnt piecemeal as a replay learns them, then all at once): `Decisions.stops` is `decide`."""
    queue = Queue.of(synthetic_labels(7, size=240), target)
    rng = np.random.default_rng(3)
    edges_inside = 0
    for found in (0, 1, 4, 12, 30, 60, 120):
        for missed in range(4):
            reference = Decisions(queue, target, confidence)
            lengths = np.arange(missed, queue.size + 1, dtype=np.int64)
            want = np.array([reference.decide(rule, found, int(m), missed) for m in lengths])
            table = Decisions(queue, target, confidence)
            for batch in np.array_split(rng.permutation(lengths), 6):
                assert (table.stops(rule, found, batch, missed) == want[batch - missed]).all(), (found, missed)
            assert (table.stops(rule, found, lengths, missed) == want).all()
            edges_inside += bool(want.any() and not want.all())
    assert edges_inside >= 5  # the grid reaches the edge, not only lengths that all stop or all go on
