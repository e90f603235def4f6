"""CI-sized version of bench/monitor_bench.py (issue 12, item 5): teams that look after every batch and stop at the
first "stop", on the real CLEF TAR 2019 topic in tests/data/clef2019 (CD012551, Sheffield's baseline ranking: 591
documents, 68 relevant).

At the bench's 95 %/95 % every rule on this small topic reviews (nearly) the whole queue — certifying at most 3
missed relevant documents of 591 takes a sample of most of them — so the point is shown at target 0.8 and
confidence 0.9 (13 may be missed), where rules stop inside the queue and a false stop is possible: the monitor's
failure rate stays at most α + 3σ while the elusion test repeated with a fresh sample at every look fails far more
often than α (measured: 0.30 with n = 100 and a look after every 2 documents, 4,000 replicates), and costs more.

The simulation's decisions are also replayed against the functions the product calls (`monitor.monitor`,
`stopping.qbcb`, `stopping.target_method`, `stopping.elusion_rule`) and its audit stream against a literal
replay of the serving rule of `services.review.audit_stream.next_documents`.
"""

from __future__ import annotations

import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from reviewdepth.estimation import stopping
from reviewdepth.estimation.monitor import MonitorInput, monitor
from reviewdepth.estimation.monitor_simulation import (
    Queue,
    audit_permutations,
    elusion_thresholds,
    look_ranks,
    simulate_audit_rules,
    simulate_fresh_elusion,
    simulate_queue,
    stream_positions,
)
from reviewdepth.formats.clef import read_clef_run
from reviewdepth.formats.trec import read_qrels

DATA = Path(__file__).resolve().parents[1] / "data" / "clef2019"
TOPIC = "CD012551"
TAU = Fraction(4, 5)
CONFIDENCE = 0.9
ALPHA = 1 - CONFIDENCE
REPLICATES = 200


@pytest.fixture(scope="module")
def labels() -> npt.NDArray[np.int8]:
    qrels = read_qrels(DATA / f"{TOPIC}.abs.qrels")
    relevant = {doc for doc, rel in zip(qrels.docno.values.tolist(), qrels.rel.tolist(), strict=True) if rel > 0}
    run = read_clef_run(DATA / f"{TOPIC}.sheffield-baseline.run")
    out = np.array([1 if doc in relevant else 0 for doc in run.docno.values.tolist()], dtype=np.int8)
    queue = Queue.of(out, TAU)
    assert (queue.size, queue.relevant, queue.needed, queue.oracle_depth) == (591, 68, 55, 416)
    return out


def slack(trials: int) -> float:
    return 3 * math.sqrt(ALPHA * (1 - ALPHA) / trials)


def _served_positions(perm: npt.NDArray[np.int32], every: int) -> list[int]:
    """The serving rule, literally: after the prefix reaches jK, pass elements already judged (rank < jK; audit
    documents already served are behind the position) and serve the first one that is not."""
    size = len(perm)
    out, p = [0], 0
    for j in range(1, size // every + 1):
        while p < size and perm[p] < j * every:
            p += 1
        p = min(p + 1, size)
        out.append(p)
    return out


@pytest.mark.parametrize(("size", "every"), [(40, 3), (40, 5), (37, 2), (60, 1)])
def test_stream_positions_follow_the_serving_rule(size: int, every: int) -> None:
    perms = audit_permutations(size, 30, np.random.default_rng(size * every))
    positions = stream_positions(perms, every)
    for r in range(len(perms)):
        assert positions[r].tolist() == _served_positions(perms[r], every), r


def test_audit_rules_agree_with_the_product_functions_at_every_look(labels: npt.NDArray[np.int8]) -> None:
    queue = Queue.of(labels, TAU)
    batch, every = 25, 5
    perms = audit_permutations(queue.size, 6, np.random.default_rng(7))
    results = simulate_audit_rules(queue, perms, batch, every, target=TAU, confidence=CONFIDENCE)
    positions = stream_positions(perms, every)
    stops = 0
    for r, perm in enumerate(perms):
        first: dict[str, int | None] = {"monitor": None, "fixed": None, "qbcb": None, "target": None}
        for k in look_ranks(queue.size, batch).tolist():
            m = int(positions[r, k // every])
            audited = perm[:m]
            outside = audited[audited >= k]
            out_rel = labels[outside] == 1
            found = int(queue.found[k])
            inp = MonitorInput(
                population=queue.size, reviewed=k, found=found, audited=m,
                known_relevant=found + int(out_rel.sum()), queue_reviewed=k, queue_size=queue.size,
                audit_outside_ranks=(outside + 1).astype(np.int64), audit_outside_relevant=out_rel,
                known_outside_relevant_ranks=(outside[out_rel] + 1).astype(np.int64))
            result = monitor(inp, TAU, CONFIDENCE)
            positives = audited[labels[audited] == 1] + 1  # 1-based ranks, in draw order
            qbcb = stopping.qbcb(positives, k, TAU, ALPHA).stop_now
            target = stopping.target_method(positives, k, TAU, ALPHA, in_draw_order=True).stop_now
            for rule, says in (("monitor", result.certified), ("fixed", result.fixed_look.certified),
                               ("qbcb", qbcb), ("target", target)):
                if says and first[rule] is None:
                    first[rule] = k
        for rule, depth in first.items():
            outcome = results[rule]
            assert bool(outcome.stopped[r]) == (depth is not None), (rule, r)
            expected = queue.size if depth is None else depth
            assert int(outcome.depth[r]) == expected, (rule, r)
            assert int(outcome.found[r]) == int(queue.found[expected])
            judged = set(range(expected)) | set(perm[:positions[r, expected // every]].tolist()) \
                if depth is not None else set(range(queue.size))
            assert int(outcome.cost[r]) == len(judged), (rule, r)
            stops += depth is not None
    assert stops > 0  # the comparison covers stops, not only replicates that run to the end


def test_elusion_threshold_is_the_elusion_rule(labels: npt.NDArray[np.int8]) -> None:
    queue = Queue.of(labels, TAU)
    looks = look_ranks(queue.size, 50)
    sizes, ymax = elusion_thresholds(queue, looks, 100, TAU, CONFIDENCE)
    assert (ymax >= 0).any() and (ymax < 0).any()
    for k, n, top in zip(looks.tolist(), sizes.tolist(), ymax.tolist(), strict=True):
        found = int(queue.found[k])
        for y in range(min(n, queue.relevant - found) + 1):
            says = stopping.elusion_rule(found, queue.size - k, n, y, TAU, ALPHA).stop_now
            assert says == (y <= top), (k, y)


def test_fresh_sample_cost_counts_each_document_once(labels: npt.NDArray[np.int8]) -> None:
    queue = Queue.of(labels, TAU)
    out = simulate_fresh_elusion(queue, 25, 100, 300, np.random.default_rng(3), target=TAU, confidence=CONFIDENCE)
    stopped = out.stopped
    assert stopped.any()
    # reviewed plus at least the last look's sample (all of the rest when it is smaller), at most the queue
    last = np.minimum(100, queue.size - out.depth)
    assert (out.cost[stopped] >= out.depth[stopped] + last[stopped]).all()
    assert (out.cost <= queue.size).all() and (out.cost[~stopped] == queue.size).all()
    # many looks with fresh samples cover more of the rest than one look does
    assert float(np.mean(out.cost[stopped] - out.depth[stopped])) > 100


def test_monitor_stays_valid_while_repeated_fresh_sample_testing_fails_and_costs_more(
        labels: npt.NDArray[np.int8]) -> None:
    queue = Queue.of(labels, TAU)
    out = simulate_queue(labels, batches=[2, 25], every=[5], sample_sizes=[100], replicates=REPLICATES, seed=12,
                         target=TAU, confidence=CONFIDENCE, audit_rules=("monitor",))
    for batch in (2, 25):
        monitor_out = out[(batch, "monitor K=5")]
        failures = int(np.count_nonzero(monitor_out.failed(queue.needed)))
        assert failures / REPLICATES <= ALPHA + slack(REPLICATES), (batch, failures)
        assert monitor_out.stopped.mean() > 0.5  # it stops inside the queue, so a false stop was possible
    naive = out[(2, "elusion n=100")]
    naive_failures = int(np.count_nonzero(naive.failed(queue.needed)))
    assert naive_failures / REPLICATES > ALPHA + slack(REPLICATES), naive_failures
    for batch in (2, 25):
        assert np.median(out[(batch, "elusion n=100")].cost) > np.median(out[(batch, "monitor K=5")].cost), batch


def test_simulation_is_deterministic_given_the_seed(labels: npt.NDArray[np.int8]) -> None:
    def run(seed: int) -> list[int]:
        out = simulate_queue(labels, batches=[25], every=[5], sample_sizes=[100], replicates=20, seed=seed,
                             target=TAU, confidence=CONFIDENCE)
        return [int(v) for o in out.values() for v in np.concatenate([o.depth, o.cost])]

    assert run(4) == run(4)
    assert run(4) != run(5)
