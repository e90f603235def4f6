"""trec_eval's ranking order from the block shortcut (queries in blocks, mostly sorted by score) equals the order
from one sort of everything, whatever mix of sorted and unsorted blocks, block order and ties."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from reviewdepth.measures import ranking


def _reference(codes: np.ndarray, scores: np.ndarray, docnos: np.ndarray, version: int) -> list[int]:
    """Query code ascending, score descending (float32 for 9), docno descending: a plain Python sort."""
    keyed = scores.astype(np.float32).astype(np.float64) if version < 10 else scores
    rows = sorted(range(len(codes)), key=lambda i: (int(codes[i]), -float(keyed[i]), bytes(docnos[i])),
                  reverse=False)
    # docno descending within equal (code, score): sort again, stable, by the inverted docno order
    out: list[int] = []
    i = 0
    while i < len(rows):
        j = i
        key = (int(codes[rows[i]]), float(keyed[rows[i]]))
        while j < len(rows) and (int(codes[rows[j]]), float(keyed[rows[j]])) == key:
            j += 1
        out += sorted(rows[i:j], key=lambda r: bytes(docnos[r]), reverse=True)
        i = j
    return out


@st.composite
def blocked_runs(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    blocks = draw(st.lists(st.tuples(st.integers(1, 12), st.booleans()), min_size=1, max_size=8))
    order = draw(st.permutations(range(len(blocks))))
    codes, scores, docnos = [], [], []
    for code in order:
        size, is_sorted = blocks[code]
        values = draw(st.lists(st.sampled_from([0.5, 1.0, 1.0000001, 2.0, -3.0, 7.25]), min_size=size,
                               max_size=size))
        if is_sorted:
            values.sort(reverse=True)
        codes += [code] * size
        scores += values
        docnos += [f"d{code}-{k:02d}".encode() for k in draw(st.permutations(range(size)))]
    return np.array(codes, dtype=np.int32), np.array(scores), np.array(docnos)


@settings(max_examples=300, deadline=None)
@given(blocked_runs(), st.sampled_from([9, 10]))
def test_block_shortcut_equals_a_full_sort(run: tuple[np.ndarray, np.ndarray, np.ndarray], version: int) -> None:
    codes, scores, docnos = run
    got = ranking.rank_order(codes, scores, docnos, version).tolist()
    assert got == _reference(codes, scores, docnos, version)
