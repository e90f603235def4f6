"""Helpers for arrays cut into per-query segments (``offsets[q]:offsets[q+1]``).

trec_eval sums per-document terms one by one in a C double; to reproduce its last digit the sums here are
sequential too (``np.add.accumulate`` along rows of a zero-padded matrix: adding 0.0 is exact), never the
pairwise summation of ``np.sum``.
"""

from __future__ import annotations

from itertools import pairwise

import numpy as np
import numpy.typing as npt

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]

# A group of segments summed along the rows of one zero-padded matrix pads at most this many cells beyond twice
# its elements (`_length_groups`): the matrices stay about the size of the values, however ragged the lengths.
_GROUP_PAD = 1 << 16
# Segments this long on average are summed one accumulate call each (a few microseconds a call), shorter ones in
# padded matrices (gathered and scattered at some tens of nanoseconds an element).
_LOOP_LENGTH = 128


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


def _length_groups(lengths: IntArray) -> list[IntArray]:
    """The segments in groups, by decreasing length, each as large as its zero-padded matrix (rows of its longest
    segment's length) holds at most twice its elements plus `_GROUP_PAD` cells: one group when the lengths are
    alike, a few more when they are ragged (a single long query beside short ones no longer pads them all)."""
    order = np.argsort(-lengths, kind="stable")
    ordered = lengths[order]
    total = np.cumsum(ordered)
    groups: list[IntArray] = []
    start, count = 0, len(order)
    while start < count:
        width = int(ordered[start])
        if width == 0:  # the empty segments, whose results are the empty sums
            break
        before = int(total[start - 1]) if start else 0
        rows = np.arange(1, count - start + 1)
        fits = rows * width <= 2 * (total[start:] - before) + _GROUP_PAD
        stop = start + (count - start if bool(fits.all()) else max(int(np.argmin(fits)), 1))
        groups.append(order[start:stop])
        start = stop
    return groups


def _group_cells(offsets: IntArray, group: IntArray) -> tuple[IntArray, IntArray, int]:
    """Where a group's elements are: their indices in the values and in its matrix flattened (row i is segment
    ``group[i]``); and the matrix's width."""
    lengths = offsets[group + 1] - offsets[group]
    width = int(lengths.max())
    inner = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    cols = positions_in_segment(inner)
    rows = segment_ids(inner)
    return offsets[group][rows] + cols, rows * width + cols, width


def _equal_rows(values: FloatArray, offsets: IntArray) -> FloatArray | None:
    """``values`` as a matrix of one segment a row when every segment has the same length (a run of 1,000
    documents for every query), else None."""
    lengths = np.diff(offsets)
    width = int(lengths[0])
    if width == 0 or int(lengths.min()) != int(lengths.max()):
        return None
    return values.reshape(len(lengths), width)


def _long_segments(offsets: IntArray) -> bool:
    """Whether the segments are long enough on average (`_LOOP_LENGTH`) that one accumulate per segment costs
    less than gathering them into padded matrices and back."""
    return int(offsets[-1]) >= _LOOP_LENGTH * (len(offsets) - 1)


def running_sums(values: FloatArray, offsets: IntArray) -> FloatArray:
    """Per-element running sum inside each segment, added left to right as a C loop ``sum += v`` (exact order):
    one accumulate per segment, or along the rows of zero-padded matrices of segments of similar length (the
    padding follows each row's values, so it changes none of them)."""
    out = np.zeros(len(values))
    if len(values) == 0:
        return out
    rows = _equal_rows(values, offsets)
    if rows is not None:
        np.add.accumulate(rows, axis=1, out=out.reshape(rows.shape))
        return out
    if _long_segments(offsets):
        for lo, hi in pairwise(offsets.tolist()):
            if hi > lo:
                np.add.accumulate(values[lo:hi], out=out[lo:hi])
        return out
    for group in _length_groups(np.diff(offsets)):
        where, cells, width = _group_cells(offsets, group)
        matrix = np.zeros(len(group) * width)
        matrix[cells] = values[where]
        np.add.accumulate(matrix.reshape(len(group), width), axis=1, out=matrix.reshape(len(group), width))
        out[where] = matrix[cells]
    return out


def sequential_sums(values: FloatArray, offsets: IntArray) -> FloatArray:
    """Per-segment sum of ``values`` added left to right, exactly as a C loop ``sum += v`` would."""
    out = np.zeros(len(offsets) - 1)
    if len(values) == 0:
        return out
    rows = _equal_rows(values, offsets)
    if rows is not None:
        out[:] = np.add.accumulate(rows, axis=1)[:, -1]
        return out
    if _long_segments(offsets):
        for q, (lo, hi) in enumerate(pairwise(offsets.tolist())):
            if hi > lo:
                out[q] = np.add.accumulate(values[lo:hi])[-1]
        return out
    for group in _length_groups(np.diff(offsets)):
        where, cells, width = _group_cells(offsets, group)
        matrix = np.zeros(len(group) * width)
        matrix[cells] = values[where]
        rows = matrix.reshape(len(group), width)
        np.add.accumulate(rows, axis=1, out=rows)
        out[group] = rows[:, -1]
    return out


def suffix_max(values: FloatArray, offsets: IntArray) -> FloatArray:
    """For every element, the maximum of its segment from that element to the segment's end."""
    out = np.empty_like(values)
    if len(values) == 0:
        return out
    rows = _equal_rows(values, offsets)
    if rows is not None:
        out.reshape(rows.shape)[:, ::-1] = np.maximum.accumulate(rows[:, ::-1], axis=1)
        return out
    if _long_segments(offsets):
        for lo, hi in pairwise(offsets.tolist()):
            if hi > lo:
                out[lo:hi] = np.maximum.accumulate(values[lo:hi][::-1])[::-1]
        return out
    for group in _length_groups(np.diff(offsets)):
        where, cells, width = _group_cells(offsets, group)
        # each row reversed: the maxima accumulate from its end (the -inf padding comes first)
        reversed_cells = (cells // width) * width + (width - 1 - cells % width)
        matrix = np.full(len(group) * width, -np.inf)
        matrix[reversed_cells] = values[where]
        rows = matrix.reshape(len(group), width)
        np.maximum.accumulate(rows, axis=1, out=rows)
        out[where] = matrix[reversed_cells]
    return out


def sequential_total(values: FloatArray) -> float:
    """Left-to-right sum of a 1-d array (trec_eval's summary accumulation)."""
    if len(values) == 0:
        return 0.0
    return float(np.add.accumulate(values)[-1])
