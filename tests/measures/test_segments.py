"""The segment sums (`reviewdepth.measures.segments`) against plain Python loops, bit for bit: trec_eval adds a
query's terms one by one in a C double, so every path (one accumulate per segment for long segments, padded
matrices of segments of similar length for short ones, one matrix without copies when every segment is as long)
must give exactly the loop's running sums, totals and suffix maxima, on ragged lengths, empty segments and
NaNs."""

from __future__ import annotations

import math

import numpy as np
import pytest

from reviewdepth.measures import segments
from reviewdepth.measures.segments import running_sums, sequential_sums, suffix_max


def _cases() -> list[tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(20240531)
    cases = []
    for trial in range(120):
        lengths = rng.integers(0, 300, size=int(rng.integers(1, 40)))
        if trial % 3 == 0:  # one long segment beside short ones
            lengths[rng.integers(len(lengths))] = rng.integers(1000, 6000)
        if trial % 10 == 0:
            lengths[:] = 0
        if trial % 10 == 1:  # every segment as long (a run of 1,000 documents a query)
            lengths[:] = lengths[0]
        offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
        values = rng.random(int(offsets[-1])) * float(rng.choice([1.0, 1e-3, 1e8]))
        if trial % 7 == 0 and len(values):
            values[rng.integers(len(values))] = math.nan
        cases.append((values, offsets))
    return cases


@pytest.mark.parametrize("loop_length", [0, 128, 10**9], ids=["loops", "by-average-length", "matrices"])
def test_segment_sums_are_the_c_loops(monkeypatch: pytest.MonkeyPatch, loop_length: int) -> None:
    monkeypatch.setattr(segments, "_LOOP_LENGTH", loop_length)
    for values, offsets in _cases():
        got_running, got_total, got_max = (running_sums(values, offsets), sequential_sums(values, offsets),
                                           suffix_max(values, offsets))
        want_running, want_total, want_max = [], [], []
        for lo, hi in zip(offsets[:-1].tolist(), offsets[1:].tolist(), strict=True):
            total = 0.0
            for value in values[lo:hi].tolist():
                total += value
                want_running.append(total)
            want_total.append(total)
            best = -math.inf
            maxima = []
            for value in reversed(values[lo:hi].tolist()):
                if not math.isnan(best) and (math.isnan(value) or value > best):  # numpy's maximum keeps NaNs
                    best = value
                maxima.append(best)
            want_max += maxima[::-1]
        assert np.array_equal(got_running, np.array(want_running, dtype=np.float64), equal_nan=True)
        assert np.array_equal(got_total, np.array(want_total, dtype=np.float64), equal_nan=True)
        assert np.array_equal(got_max, np.array(want_max, dtype=np.float64), equal_nan=True)


def test_log2_table_grows_as_asked_and_is_c_log2(monkeypatch: pytest.MonkeyPatch) -> None:
    """`graded.log2_int` is C's log2 (math.log2) of every integer, the table built in steps as larger values come
    (the DCG discounts of a short ranking need only its first entries), and beyond the table per value."""
    from reviewdepth.measures import graded

    monkeypatch.setattr(graded, "_LOG2_TABLE", [])
    asked = [np.array([1, 2, 3, 7]), np.array([1500, 2]), np.arange(1, 40_000), np.array([65_535, 65_536, 10**7])]
    for values in asked:
        assert graded.log2_int(values).tolist() == [math.log2(v) for v in values.tolist()]
    assert len(graded._LOG2_TABLE[0]) == graded._TABLE_SIZE
