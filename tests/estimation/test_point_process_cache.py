"""The point-process heuristic fits each checkpoint once a process (issue 30: the monitor looks after every
judgment, and a fit costs several ms): the same stop and details as fitting afresh, and a review that goes on
fits only the checkpoints it adds."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from reviewdepth.estimation import stopping


def labels(size: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (rng.random(size) < 0.5 * np.exp(-np.arange(size) / (size / 8)) + 0.01).astype(np.int64)


def test_cached_fits_give_what_fresh_fits_give() -> None:
    for seed in range(6):
        y = labels(2000, seed)
        for reviewed in (400, 900, 2000):
            stopping._FITS.clear()
            fresh = stopping.hyperbolic_point_process(y[:reviewed], 2000)
            cached = stopping.hyperbolic_point_process(y[:reviewed], 2000)  # every checkpoint from the cache
            assert cached == fresh


def test_a_review_that_goes_on_fits_only_its_new_checkpoints(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    real = stopping._point_process_compute

    def counted(y: Any, n: int, *args: Any) -> Any:
        calls.append(n)
        return real(y, n, *args)

    monkeypatch.setattr(stopping, "_point_process_compute", counted)
    stopping._FITS.clear()
    y = np.zeros(4000, dtype=np.int64)
    y[:: 7] = 1  # relevant all along: the rule never stops, every checkpoint is read
    stopping.hyperbolic_point_process(y[:1000], 4000)
    first = list(calls)
    assert first == [int(n) for n in stopping.point_process_checkpoints(4000) if n <= 1000]
    calls.clear()
    stopping.hyperbolic_point_process(y[:1200], 4000)
    assert calls == [int(n) for n in stopping.point_process_checkpoints(4000) if 1000 < n <= 1200]
    changed = y.copy()
    changed[5] = 1 - changed[5]  # an earlier label changed: every checkpoint after it is fitted again
    calls.clear()
    stopping.hyperbolic_point_process(changed[:1200], 4000)
    assert calls == first + [n for n in stopping.point_process_checkpoints(4000).tolist() if 1000 < n <= 1200]
