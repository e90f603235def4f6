"""CI-sized live-review simulation (issue 11, "Show": the short version of bench/live_review_bench.py).

A real CLEF TAR 2019 topic copied into tests/data/clef2019 (CD012551, Sheffield's baseline ranking, abstract-level
qrels: 591 documents, 68 relevant, 95 % recall at rank 458). The review goes on after a sample is drawn; every
figure is the report's own (``assess``, through ``bench/live_review_simulation.simulate_cell``). Thresholds: a
coverage of at least 0.95 − 3σ and a failure rate of at most 0.05 + 3σ, σ = √(0.05·0.95/N) for N replicates. With the
report's confidence lowered to 0.8 the one-sided and two-sided failure rates of these cells are 0.12–0.18 (measured with
``simulate_cell(..., confidence=0.8)``, 600 replicates), about 3σ above the threshold or more, so such a change
fails these tests with high probability.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest
from live_review_simulation import TARGET, CellResult, Count, Truth, needed_for, rates, simulate_cell

from reviewdepth.formats.clef import read_clef_run
from reviewdepth.formats.trec import read_qrels

DATA = Path(__file__).resolve().parents[1] / "data"
TOPIC = "CD012551"
ALPHA = 0.05


def queue() -> npt.NDArray[np.int8]:
    qrels = read_qrels(DATA / "clef2019" / f"{TOPIC}.abs.qrels")
    relevant = {doc for doc, rel in zip(qrels.docno.values.tolist(), qrels.rel.tolist(), strict=True) if rel > 0}
    run = read_clef_run(DATA / "clef2019" / f"{TOPIC}.sheffield-baseline.run")
    return np.array([1 if doc in relevant else 0 for doc in run.docno.values.tolist()], dtype=np.int8)


def slack(trials: int) -> float:
    return 3 * math.sqrt(ALPHA * (1 - ALPHA) / trials)


def assert_coverage(count: Count, what: str) -> None:
    assert count.trials > 0, what
    assert count.rate >= 1 - ALPHA - slack(count.trials), f"{what}: {count.hits}/{count.trials}"


def assert_failure(count: Count, what: str) -> None:
    assert count.rate <= ALPHA + slack(count.trials), f"{what}: {count.hits}/{count.trials}"


@pytest.fixture(scope="module")
def labels() -> npt.NDArray[np.int8]:
    rel = queue()
    truth = Truth.of(rel)
    # the copied files are the topic as documented above (guards against a wrong copy)
    assert (truth.size, truth.relevant, truth.true_depth) == (591, 68, 458)
    return rel


@pytest.fixture(scope="module")
def rest_cell(labels: npt.NDArray[np.int8]) -> CellResult:
    """Rest sample of 150 drawn at 30 % recall (c0 = 114), review continued half-way and to just below 95 %."""
    truth = Truth.of(labels)
    c0 = int(truth.ranks[math.ceil(0.3 * truth.relevant) - 1])
    return simulate_cell(labels, c0, 150, [c0, (c0 + truth.true_depth) // 2, truth.true_depth - 1], "rest", 500,
                         [2019, 12551])


@pytest.fixture(scope="module")
def population_cell(labels: npt.NDArray[np.int8]) -> CellResult:
    truth = Truth.of(labels)
    c0 = int(truth.ranks[math.ceil(0.3 * truth.relevant) - 1])
    return simulate_cell(labels, c0, 150, [(c0 + truth.true_depth) // 2], "population", 400, [2019, 12552])


def test_rest_sample_rolled_forward_keeps_coverage(rest_cell: CellResult) -> None:
    for c1 in rest_cell.c1s:
        r = rates(rest_cell, c1)
        assert_coverage(r.cover_r, f"two-sided R interval at c1={c1}")
        assert_coverage(r.cover_recall, f"two-sided recall interval at c1={c1}")
        assert_coverage(r.cover_recall_one, f"one-sided recall lower bound at c1={c1}")
        assert r.incoherent.hits == 0


def test_false_reached_at_most_alpha_for_one_look(rest_cell: CellResult) -> None:
    looked = 0
    for c1 in rest_cell.c1s:
        r = rates(rest_cell, c1)
        if r.true_recall < float(TARGET):
            looked += 1
            assert_failure(r.false_reached, f"reached while recall {r.true_recall:.3f} < 0.95 at c1={c1}")
    assert looked == 3
    just_below = rest_cell.c1s[-1]
    assert rest_cell.truth.found(just_below) == needed_for(TARGET, rest_cell.truth.relevant) - 1


def test_forward_answer_is_given_and_usually_brackets_the_depth(rest_cell: CellResult) -> None:
    """Not a certified interval (its range comes from the two-sided R interval), so only a loose check."""
    r = rates(rest_cell, rest_cell.c0)
    assert r.forward_given.rate == 1.0  # a rest sample exists and the target is not reached at 30 % recall
    assert r.forward_contains.rate >= 0.9


def test_whole_queue_sample_direct_and_elusion_coverage(population_cell: CellResult) -> None:
    [c1] = population_cell.c1s
    r = rates(population_cell, c1)
    assert_coverage(r.cover_r, "R interval from the rolled-forward whole-queue sample")
    assert_coverage(r.cover_recall_one, "one-sided recall lower bound")
    assert_coverage(r.cover_direct, "direct recall two-sided")
    assert_coverage(r.cover_direct_one, "direct recall one-sided")
    assert r.incoherent.hits == 0


def test_old_report_was_incoherent_on_a_stale_sample(rest_cell: CellResult) -> None:
    """The deac6fe behaviour on the same replicates: once the review moved past the draw cutoff, recall above 1
    or an R lower bound below the relevant judged in most replicates; the current report never."""
    c1 = rest_cell.c1s[-1]
    assert rates(rest_cell, c1, "old").incoherent.rate > 0.5
    assert rates(rest_cell, c1, "new").incoherent.hits == 0
