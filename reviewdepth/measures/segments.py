"""Helpers for arrays cut into per-query segments (``offsets[q]:offsets[q+1]``).

trec_eval sums per-document terms one by one in a C double; to reproduce its last digit the sums here are
sequential too (``np.add.accumulate`` along rows of a zero-padded matrix: adding 0.0 is exact), never the
pairwise summation of ``np.sum``.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]

# Above this many padded cells (and 4x the real ones) the padded matrix is replaced by a loop per segment.
_PAD_LIMIT = 20_000_000


def segment_ids(offsets: IntArray) -> IntArray:
    """Segment index of every element."""
    lengths = np.diff(offsets)
    return np.repeat(np.arange(len(lengths), dtype=np.int64), lengths)


def positions_in_segment(offsets: IntArray) -> IntArray:
    """0-based position of every element inside its segment."""
    total = int(offsets[-1])
    lengths = np.diff(offsets)
    return np.arange(total, dtype=np.int64) - np.repeat(offsets[:-1], lengths)


def segmented_cumsum(flags: npt.NDArray[np.bool_] | IntArray, offsets: IntArray) -> IntArray:
    """Inclusive running count of ``flags`` restarting at every segment (integers, so exact)."""
    running = np.cumsum(flags, dtype=np.int64)
    before = np.concatenate(([0], running))[offsets[:-1]]
    out: IntArray = running - np.repeat(before, np.diff(offsets))
    return out


def segment_blocks(offsets: IntArray, limit: int) -> list[tuple[int, int]]:
    """Consecutive segments grouped into blocks of at most ``limit`` elements (a longer segment is a block of its
    own), as ``(first, stop)`` segment ranges covering every segment in order."""
    blocks: list[tuple[int, int]] = []
    first, count = 0, len(offsets) - 1
    while first < count:
        stop = int(np.searchsorted(offsets, offsets[first] + limit, side="right")) - 1
        stop = min(max(stop, first + 1), count)
        blocks.append((first, stop))
        first = stop
    return blocks


def _padded(values: FloatArray, offsets: IntArray, fill: float) -> FloatArray | None:
    lengths = np.diff(offsets)
    nseg = len(lengths)
    width = int(lengths.max()) if nseg else 0
    cells = nseg * width
    if cells > _PAD_LIMIT and cells > 4 * len(values):
        return None
    matrix = np.full((nseg, max(width, 1)), fill, dtype=np.float64)
    if len(values):
        rows = segment_ids(offsets)
        cols = positions_in_segment(offsets)
        matrix[rows, cols] = values
    return matrix


def sequential_sums(values: FloatArray, offsets: IntArray) -> FloatArray:
    """Per-segment sum of ``values`` added left to right, exactly as a C loop ``sum += v`` would."""
    matrix = _padded(values, offsets, 0.0)
    if matrix is not None:
        if matrix.shape[1] == 0:
            return np.zeros(matrix.shape[0])
        return np.add.accumulate(matrix, axis=1)[:, -1].copy()
    out = np.zeros(len(offsets) - 1)
    for q in range(len(offsets) - 1):
        seg = values[offsets[q]:offsets[q + 1]]
        if len(seg):
            out[q] = np.add.accumulate(seg)[-1]
    return out


def suffix_max(values: FloatArray, offsets: IntArray) -> FloatArray:
    """For every element, the maximum of its segment from that element to the segment's end."""
    if len(values) == 0:
        return values.copy()
    matrix = _padded(values, offsets, -np.inf)
    if matrix is not None:
        acc = np.maximum.accumulate(matrix[:, ::-1], axis=1)[:, ::-1]
        return acc[segment_ids(offsets), positions_in_segment(offsets)]
    out = np.empty_like(values)
    for q in range(len(offsets) - 1):
        seg = values[offsets[q]:offsets[q + 1]]
        out[offsets[q]:offsets[q + 1]] = np.maximum.accumulate(seg[::-1])[::-1]
    return out


def sequential_total(values: FloatArray) -> float:
    """Left-to-right sum of a 1-d array (trec_eval's summary accumulation)."""
    if len(values) == 0:
        return 0.0
    return float(np.add.accumulate(values)[-1])
