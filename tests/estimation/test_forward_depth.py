"""Forward depth from a rest sample's positive ranks, and the recent-yield heuristic (issue 11, item 4)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from reviewdepth.estimation.depth_unknown import default_window, forward_depth, recent_yield_projection

# c = 100 reviewed with F = 40 relevant; the rest is ranks 101…1000 (N_u = 900); a sample of m = 90 of it holds
# 7 positives. Each stands for N_u/m = 10 relevant documents of the rest.
V = np.array([700, 105, 150, 230, 300, 480, 950])


@pytest.mark.parametrize(("relevant", "tau", "needed", "j", "depth", "beyond"), [
    (60, 0.9, 14, 2, 150, False),       # ⌈54⌉ − 40 = 14; j = ⌈14·90/900⌉ = ⌈1.4⌉ = 2 → v(2) = 150
    (100, 0.95, 55, 6, 700, False),     # 95 − 40 = 55; j = ⌈5.5⌉ = 6 → v(6) = 700
    (110, "0.9", 59, 6, 700, False),    # 99 − 40 = 59; j = ⌈5.9⌉ = 6
    (200, 0.95, 150, 15, 1000, True),   # j = 15 > 7 positives: the sample cannot locate it → end of the rest
    (52.6, 0.95, 10, 1, 105, False),    # ⌈49.97⌉ = 50 − 40 = 10; j = 1
])
def test_forward_depth_hand_examples(relevant: float, tau: float | str, needed: int, j: int, depth: int,
                                     beyond: bool) -> None:
    fd = forward_depth(40, 100, 900, 90, V, relevant, tau)
    assert (fd.needed, fd.j, fd.depth, fd.beyond_sample, fd.reached) == (needed, j, depth, beyond, False)
    assert fd.more_documents == depth - 100


def test_forward_depth_reached_and_exact_arithmetic() -> None:
    fd = forward_depth(40, 100, 900, 90, V, 44, 0.9)  # ⌈39.6⌉ = 40 ≤ F: already reached
    assert (fd.depth, fd.more_documents, fd.needed, fd.j, fd.reached) == (100, 0, 0, 0, True)
    assert forward_depth(50, 100, 900, 90, V, 44, 0.9).depth == 100
    # τ = 0.55, R = 100: k = 55 exactly (0.55·100 is 55.000000000000007 in floats → 56); m = N_u so j = k.
    ranks = np.arange(1, 101) + 10
    fd = forward_depth(0, 10, 100, 100, ranks, 100, 0.55)
    assert fd.needed == 55 and fd.j == 55 and fd.depth == 65
    # j = ⌈k·m/N_u⌉ exactly at an integer: k = 7, m = 30, N_u = 210 → 1 (not 2).
    assert forward_depth(0, 0, 210, 30, [5, 9], 7, 1).j == 1
    # Nothing left to review: the target cannot be reached by reviewing on.
    fd = forward_depth(3, 10, 0, 0, [], 10, 0.9)
    assert fd.depth == 10 and fd.beyond_sample and not fd.reached


def test_forward_depth_rejects_bad_input() -> None:
    with pytest.raises(ValueError):
        forward_depth(40, 100, 900, 90, [100], 60, 0.9)  # a positive inside the reviewed prefix
    with pytest.raises(ValueError):
        forward_depth(40, 100, 900, 90, [1001], 60, 0.9)  # past the rest
    with pytest.raises(ValueError):
        forward_depth(40, 100, 900, 0, [], 60, 0.9)
    with pytest.raises(ValueError):
        forward_depth(40, 100, 900, 2, [150, 160, 170], 60, 0.9)
    with pytest.raises(ValueError):
        forward_depth(40, 100, 900, 90, V, 60, 1.5)


def brute_force_depth(found: int, c: int, n_u: int, m: int, v: list[int], relevant: Fraction, tau: Fraction) -> int:
    """Scan d = c, c+1, …: the first d where F + N_u·y_d/m ≥ τ·R (exact fractions); c + N_u if none."""
    need = math.ceil(tau * relevant)
    for d in range(c, c + n_u + 1):
        y_d = sum(1 for x in v if x <= d)
        if found + Fraction(n_u * y_d, m) >= need:
            return d
    return c + n_u


@st.composite
def reviews(draw: st.DrawFn) -> tuple[int, int, int, int, list[int]]:
    c = draw(st.integers(0, 60))
    found = draw(st.integers(0, c))
    n_u = draw(st.integers(1, 80))
    m = draw(st.integers(1, n_u))
    chosen = draw(st.lists(st.integers(c + 1, c + n_u), unique=True, max_size=m))
    return found, c, n_u, m, chosen


@given(reviews(), st.integers(0, 400), st.integers(0, 400), st.sampled_from(["0.5", "0.8", "0.9", "0.95", "1"]),
       st.sampled_from(["0.55", "0.9", "0.99"]))
def test_forward_depth_properties(review: tuple[int, int, int, int, list[int]], r10a: int, r10b: int, tau_a: str,
                                  tau_b: str) -> None:
    found, c, n_u, m, v = review
    r_a, r_b = sorted((Fraction(r10a, 4), Fraction(r10b, 4)))
    t_a, t_b = sorted((Fraction(tau_a), Fraction(tau_b)))
    fd = forward_depth(found, c, n_u, m, np.array(v, dtype=np.int64), float(r_a), t_a)
    assert c <= fd.depth <= c + n_u and fd.more_documents == fd.depth - c
    assert fd.depth == brute_force_depth(found, c, n_u, m, v, r_a, t_a)
    if math.ceil(t_a * r_a) - found <= 0:
        assert fd.depth == c and fd.reached
    # Monotone in R and in τ.
    assert forward_depth(found, c, n_u, m, v, float(r_b), t_a).depth >= fd.depth
    assert forward_depth(found, c, n_u, m, v, float(r_a), t_b).depth >= fd.depth


def test_recent_yield_window() -> None:
    assert [default_window(c) for c in (0, 50, 300, 1000, 2000, 2001)] == [0, 50, 100, 100, 200, 201]


def test_recent_yield_projection_hand_example() -> None:
    # 2,000 reviewed, F = 150; the last W = 200 hold 10 relevant: w = 0.05. N_u = 3,000 → R_h = 150 + 150 = 300.
    labels = np.zeros(2000, dtype=np.int8)
    labels[:140] = 1
    labels[1800:2000:20] = 1
    assert labels.sum() == 150
    p = recent_yield_projection(labels, 3000, 150, 0.9)
    assert (p.window, p.window_relevant, p.yield_rate, p.relevant_estimate) == (200, 10, 0.05, 300.0)
    assert p.needed == 120 and p.more_documents == 2400  # ⌈270⌉ − 150 = 120; 120/0.05
    assert p.basis.startswith("heuristic")
    assert recent_yield_projection(labels, 3000, 150, "0.95").more_documents == 2700
    assert recent_yield_projection(labels, 3000, 150, 0.5).more_documents == 0  # ⌈150⌉ − 150 = 0: met
    # Capped at the rest: w = 1/3 over the last 3 of 3 reviewed, N_u = 10, τ = 1 → k = ⌈10/3⌉ = 4, 4/w = 12 > 10.
    p = recent_yield_projection([0, 1, 0], 10, 1, 1, window=3)
    assert p.needed == 4 and p.more_documents == 10


def test_recent_yield_projection_without_yield() -> None:
    labels = np.r_[np.ones(20), np.zeros(300)]
    p = recent_yield_projection(labels, 500, 20, 0.95)
    assert p.window == 100 and p.more_documents is None and p.needed is None
    assert "no relevant document in the last 100" in p.basis and "heuristic" in p.basis
    nothing = recent_yield_projection([], 500, 0, 0.95)
    assert nothing.more_documents is None and "nothing is reviewed" in nothing.basis


def test_recent_yield_projection_decays_as_the_window_before_did() -> None:
    # 1,000 reviewed, F = 100: 20 relevant in ranks 800-899 and 5 in the last 100 (900-999) -> q = 0.25 per 100
    labels = np.zeros(1000, dtype=np.int8)
    labels[:75] = 1
    labels[800:900:5] = 1
    labels[900:1000:20] = 1
    assert labels.sum() == 100
    p = recent_yield_projection(labels, 4000, 100, 0.99)
    step = 0.25 ** (1 / 100)
    rest = 0.05 * (1 - step ** 4000) / (1 - step)  # the geometric sum of the decaying rate over the rest
    assert p.relevant_estimate == pytest.approx(100 + rest)
    assert p.needed == math.ceil(0.99 * (100 + rest)) - 100 > 0
    assert recent_yield_projection(labels, 4000, 100, 0.95).more_documents == 0  # ⌈0.95 · 103.6⌉ ≤ 100: met
    # the constant recent rate would have said R = 300 and 4,000 more documents
    assert p.relevant_estimate < 110 and "decaying" in p.basis
    more = p.more_documents
    assert more is not None
    yielded = 0.05 * (1 - step ** np.array([more - 1, more])) / (1 - step)
    assert yielded[0] < p.needed <= yielded[1] + 1e-9
