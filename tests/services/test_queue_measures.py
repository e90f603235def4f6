"""`queue_measures` evaluates a long queue cut after its deepest judged rank, plus the length measures on the whole
queue: it must equal evaluating the whole queue, every measure of "all", to the last bit and in the same order."""

from __future__ import annotations

import numpy as np
import pytest

from reviewdepth.measures.suite import MeasureSpec, evaluate_ranked
from reviewdepth.services.answers.queues import LENGTH_MEASURES, queue_measures, ranked_from_labels
from reviewdepth.store.loaders import QueueLabels


def _labels(values: np.ndarray, relevant: int, nonrelevant: int) -> QueueLabels:
    return QueueLabels(len(values), values.astype(np.int8), relevant, nonrelevant, relevant + nonrelevant,
                       "latest", None)


@pytest.mark.parametrize("seed", range(60))
def test_the_cut_queue_gives_every_measure_of_the_whole_queue(seed: int) -> None:
    rng = np.random.default_rng(seed)
    size = int(rng.integers(1, 2500))
    deepest = int(rng.integers(0, size))
    values = np.full(size, -1)
    judged = rng.choice(deepest + 1, size=int(rng.integers(0, deepest + 2)), replace=False)
    values[judged] = rng.integers(0, 2, size=len(judged))
    labels = _labels(values, int((values == 1).sum()) + int(rng.integers(0, 40)),
                     int((values == 0).sum()) + int(rng.integers(0, 40)))
    whole = evaluate_ranked(ranked_from_labels(labels, "t"), MeasureSpec.parse(["all"]), run_id="r").summary
    expected = {k: v for k, v in whole.items() if k not in ("runid", "num_q")}
    got = queue_measures(labels, "t", "r")
    assert list(got) == list(expected)
    assert got == expected


def test_the_length_measures_do_depend_on_the_unjudged_tail() -> None:
    # were the tail ignored, these would differ: the test above would catch a measure left out of LENGTH_MEASURES
    values = np.array([1, 0, -1, -1, -1, -1])
    long, short = _labels(values, 5, 3), _labels(values[:2], 5, 3)
    spec = MeasureSpec.parse(list(LENGTH_MEASURES))
    a = evaluate_ranked(ranked_from_labels(long, "t"), spec, run_id="r").summary
    b = evaluate_ranked(ranked_from_labels(short, "t"), spec, run_id="r").summary
    assert all(a[k] != b[k] for k in LENGTH_MEASURES if k in a)
