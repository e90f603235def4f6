"""The queue-sized arithmetic of the report computed in place gives the values of the plain expressions, bit for bit:
the projection's rate recent·decay^(j/W) (then scaled to a rest sample's cap), and the reviewed prefix found as the
first unjudged position."""

from __future__ import annotations

import numpy as np
import pytest

from reviewdepth.estimation.assessment import reviewed_prefix
from reviewdepth.estimation.stop_plan import project_yield
from reviewdepth.store.labels import UNJUDGED


@pytest.mark.parametrize("seed", range(6))
def test_projection_rate_is_the_plain_expression(seed: int) -> None:
    rng = np.random.default_rng(seed)
    reviewed = int(rng.integers(200, 5_000))
    labels = (rng.random(reviewed) < 0.3 * np.exp(-np.arange(reviewed) / (reviewed / 3))).astype(np.int8)
    unreviewed = int(rng.integers(1, 200_000))
    for sample in ((0, 0), (400, 0), (400, 30)):
        got = project_yield(labels, unreviewed, rest_sample_size=sample[0], rest_sample_relevant=sample[1])
        w = got.window
        rate = (got.recent_rate * np.power(got.decay_per_window, np.arange(unreviewed, dtype=np.float64) / w)
                if got.decay_per_window < 1.0 else np.full(unreviewed, got.recent_rate))
        total = float(rate.sum())
        cap = unreviewed * (sample[1] + 0.5) / (sample[0] + 1)
        if sample[0] and total > cap:
            rate = rate * (cap / total)
        assert got.rate.tobytes() == rate.tobytes()


def plain_prefix(labels: np.ndarray, sample_ranks: np.ndarray | None) -> int:
    unjudged = np.flatnonzero(labels == UNJUDGED)
    c = int(unjudged[0]) if len(unjudged) else len(labels)
    if sample_ranks is not None and len(sample_ranks) and c:
        drawn = np.zeros(c + 1, dtype=bool)
        drawn[sample_ranks[(sample_ranks >= 1) & (sample_ranks <= c)]] = True
        while c > 0 and drawn[c]:
            c -= 1
    return c


def test_reviewed_prefix_is_the_first_unjudged_position() -> None:
    rng = np.random.default_rng(5)
    cases = [np.zeros(0, dtype=np.int8), np.full(7, UNJUDGED, dtype=np.int8), np.ones(9, dtype=np.int8),
             np.array([1, 0, UNJUDGED], dtype=np.int8), np.array([UNJUDGED, 1, 0], dtype=np.int8)]
    cases += [rng.choice(np.array([1, 0, UNJUDGED], dtype=np.int8), size=50, p=[0.3, 0.65, 0.05]) for _ in range(40)]
    for labels in cases:
        for ranks in (None, np.array([], dtype=np.int64), np.arange(1, len(labels) + 1, 3, dtype=np.int64)):
            assert reviewed_prefix(labels, ranks) == plain_prefix(labels, ranks)
