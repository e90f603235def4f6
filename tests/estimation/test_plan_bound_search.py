"""The searches behind a matter-scale plan (issue 44, item 1) find what the plain searches they replace find.

- `monitor.least_audited_within` (the least stream length m with U*(m, x) ≤ K, placed by Newton's step on the
  margin and reusing the lengths other K computed) against bisecting m over `upper_missed_at_most`, as the plan
  did before, on populations up to 2,000,000;
- `monitor._cs_upper` (its window ends found by `_window_end`) against the same bound with the window found by
  plain bisection, written out here;
- the premise of both: U(m, x) never rises in m (every m, small populations, four levels);
- `stop_plan.SortedRanks` and `stop_plan._audit_until_found` against a sorted array and a scan of the whole
  allowance."""

from __future__ import annotations

import itertools
import math
import random

import numpy as np
import pytest

from reviewdepth.estimation import monitor
from reviewdepth.estimation.distributions import _log_comb
from reviewdepth.estimation.stop_plan import SortedRanks, _audit_until_found, _bisect_first


def _bisected_least(population: int, missed: int, confidence: float, bound: int) -> int | None:
    return _bisect_first(lambda m: monitor.upper_missed_at_most(population, m, missed, confidence, bound), missed,
                         population)


@pytest.mark.parametrize("seed", range(4))
def test_the_least_stream_length_is_the_bisections(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(60):
        population = rng.choice([40, 300, 5_000, 120_000, 2_000_000])
        confidence = rng.choice([0.8, 0.9, 0.95, 0.99])
        missed = min(rng.choice([0, 0, 1, 3, 12, 60]), population // 4)
        bound = rng.randint(missed, max(missed, min(population, 2_500)))
        settled, least = monitor.least_audited_within(population, missed, confidence, bound)
        assert settled
        assert least == _bisected_least(population, missed, confidence, bound), (population, missed, confidence,
                                                                                 bound)


def test_neighbouring_bounds_of_one_staircase_agree_with_the_bisection() -> None:
    # many K of one (N, x): the later searches start from brackets the earlier ones left
    population, confidence = 1_000_000, 0.95
    for missed in (0, 7):
        for bound in [*range(230, 262), 43, 44, 1_290, 900, 901]:
            if bound < missed:
                continue
            assert monitor.least_audited_within(population, missed, confidence, bound) == (
                True, _bisected_least(population, missed, confidence, bound))


def test_no_length_is_enough_when_the_audit_has_missed_more_than_allowed() -> None:
    assert monitor.least_audited_within(10_000, 5, 0.95, 4) == (True, None)


def _bisected_window_upper(population: int, audited: int, missed: int, alpha: float) -> int:
    """`_cs_upper` with its window ends found by plain bisection of ln L ≥ max − WINDOW (the code before)."""
    low, high = missed, population - (audited - missed)
    mode = min(max((missed * (population + 1)) // audited, low), high)
    floor = monitor._log_like(population, audited, missed, mode) - monitor.WINDOW

    def within(r: int) -> bool:
        return monitor._log_like(population, audited, missed, r) >= floor

    start = _bisect_first(within, low, mode)  # ln L rises up to the mode
    beyond = _bisect_first(lambda r: r > high or not within(r), mode, high + 1)  # and falls after it
    assert start is not None and beyond is not None
    end = beyond - 1
    r = np.arange(start, end + 1, dtype=np.float64)
    log_like = np.add(_log_comb(r, missed), _log_comb(population - r, audited - missed))
    joint = monitor._log_prior(population)[start:end + 1] + log_like
    peak = float(joint.max())
    log_evidence = peak + math.log(float(np.exp(joint - peak).sum()))
    return int(r[np.flatnonzero(log_like > math.log(alpha) + log_evidence)[-1]])


@pytest.mark.parametrize("population", [25, 1_000, 80_000, 3_000_000])
def test_the_bound_is_the_one_with_a_bisected_window(population: int) -> None:
    rng = random.Random(population)
    for _ in range(150):
        audited = rng.randint(1, population)
        missed = rng.randint(0, min(audited, rng.choice([0, 2, 20, audited])))
        alpha = rng.choice([0.01, 0.05, 0.1, 0.2])
        assert monitor._cs_upper(population, audited, missed, alpha) == _bisected_window_upper(
            population, audited, missed, alpha), (population, audited, missed, alpha)


@pytest.mark.parametrize("population", [30, 250, 600])
def test_the_bound_never_rises_as_the_audit_grows(population: int) -> None:
    for alpha in (0.01, 0.05, 0.1, 0.2):
        for missed in range(0, min(population, 25)):
            uppers = [monitor._raw_upper(population, m, missed, alpha) for m in range(max(missed, 1), population + 1)]
            assert all(a >= b for a, b in itertools.pairwise(uppers)), (population, alpha, missed)


def test_a_staircase_that_sees_the_bound_rise_leaves_the_search_to_the_bisection() -> None:
    staircase = monitor._Staircase(1_000, 0, 0.05)
    staircase.lengths, staircase.negated = [10, 20], [-50, -60]
    staircase.evidence, staircase.windows = [(0.0, 1.0), (0.0, 1.0)], [(0, 400), (0, 300)]
    staircase.at(15)  # computed between two made-up values that rise: out of order
    assert staircase.least_within(40)[0] is False


def test_sorted_ranks_count_as_one_sorted_array() -> None:
    rng = np.random.default_rng(3)
    ranks = SortedRanks(rng.permutation(50)[:7])
    every = list(ranks._runs[0])
    for _ in range(60):
        batch = rng.integers(0, 10_000, size=int(rng.integers(0, 40)))
        ranks.insert(batch)
        every.extend(batch.tolist())
        probes = rng.integers(-5, 10_010, size=25)
        assert ranks.count_below(probes).tolist() == np.searchsorted(np.sort(every), probes).tolist()
        assert ranks.count_below_one(int(probes[0])) == int(np.searchsorted(np.sort(every), probes[0]))
        assert len(ranks) == len(every)
    assert len(ranks._runs) <= 2 + math.log2(len(every))


@pytest.mark.parametrize("seed", range(5))
def test_the_audit_step_takes_what_a_scan_of_its_whole_allowance_takes(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 20_000
    labels = (rng.random(n) < rng.choice([0.0, 0.0005, 0.01, 0.2])).astype(np.int8)
    permutation = rng.permutation(n).astype(np.int64)
    for _ in range(30):
        start = int(rng.integers(0, n - 1))
        stop = int(rng.integers(start + 1, n + 1))
        reviewed = int(rng.integers(0, n))
        chunk = permutation[start:stop]
        hits = np.flatnonzero((chunk >= reviewed) & (labels[chunk] == 1))
        expected = chunk[: int(hits[0]) + 1] if len(hits) else chunk
        taken, hit = _audit_until_found(permutation, labels, start, stop, reviewed)
        assert taken.tolist() == expected.tolist()
        assert hit == bool(len(hits))


@pytest.mark.parametrize("population", [60, 50_000, 2_000_000])
def test_a_window_hint_moves_where_the_search_starts_not_what_it_finds(population: int) -> None:
    rng = random.Random(population + 1)
    for _ in range(120):
        audited = rng.randint(1, population)
        missed = rng.randint(0, min(audited, rng.choice([0, 3, 40])))
        alpha = rng.choice([0.05, 0.1])
        plain = monitor._cs_bound(population, audited, missed, alpha)
        start, end = plain[3]
        for hint in ((start, end), (start - 1, end + 1), (start + 3, end - 7), (0, population),
                     (rng.randint(0, population), rng.randint(0, population))):
            assert monitor._cs_bound(population, audited, missed, alpha, hint) == plain, (population, audited,
                                                                                         missed, alpha, hint)


def _window(population: int, audited: int, missed: int) -> tuple[int, int, int]:
    """(start, end, mode) of the window `_cs_bound` sums."""
    low, high = missed, population - (audited - missed)
    mode = min(max((missed * (population + 1)) // audited, low), high)
    top = monitor._log_like(population, audited, missed, mode)
    start = monitor._window_end(population, audited, missed, top, top - monitor.WINDOW, mode, low)
    end = monitor._window_end(population, audited, missed, top, top - monitor.WINDOW, mode, high)
    return start, end, mode


@pytest.mark.parametrize("population", [2_000, 300_000, 10_000_000])
def test_the_ratio_sum_finds_the_summed_upper_end(population: int) -> None:
    rng = random.Random(population + 7)
    checked = left_to_the_sum = 0
    while checked < 120:
        audited = rng.randint(1, max(1, population // rng.choice([1, 20, 400])))
        missed = min(audited, rng.choice([0, 0, 1, 4, 30, 300, audited]))
        alpha = rng.choice([0.01, 0.05, 0.1, 0.2])
        start, end, mode = _window(population, audited, missed)
        if end - start < 64:
            continue
        checked += 1
        by_ratios = monitor._ratio_bound(population, audited, missed, alpha, start, end, mode)
        summed = monitor._summed_bound(population, audited, missed, alpha, start, end)
        if by_ratios is None:
            left_to_the_sum += 1
            continue
        assert by_ratios[0] == summed[0], (population, audited, missed, alpha)
        assert by_ratios[3] == summed[3]
        assert abs(by_ratios[1] - summed[1]) < 1e-6 * max(1.0, abs(summed[1]))
    # the ratios decide nearly every bound themselves (else the sum would do all the work unseen)
    assert left_to_the_sum <= 3


def test_a_crossing_within_the_margin_is_left_to_the_sum() -> None:
    # ln L(r* + 1) sits 8.6e-7 below the threshold here: inside the ratio sum's margin
    population, audited, missed, alpha = 10_000_000, 36_202, 60, 0.01
    start, end, mode = _window(population, audited, missed)
    assert monitor._ratio_bound(population, audited, missed, alpha, start, end, mode) is None
    assert monitor._cs_bound(population, audited, missed, alpha) == monitor._summed_bound(
        population, audited, missed, alpha, start, end)


@pytest.mark.parametrize("population", [500, 200_000, 5_000_000])
def test_the_grid_floors_of_the_evidence_never_exceed_it(population: int) -> None:
    rng = random.Random(population + 11)
    gaps = []
    for _ in range(40):
        audited = rng.randint(1, population)
        missed = np.array(sorted(rng.sample(range(0, min(audited, 400) + 1), min(audited, 400) // 4 + 1)),
                          dtype=np.int64)
        centre = np.minimum(np.maximum((missed * (population + 1)) // audited, missed),
                            population - (audited - missed))
        floors = monitor._evidence_floors(population, audited, missed, centre)
        for x, floor in zip(missed.tolist(), floors.tolist(), strict=True):
            start, end, _ = _window(population, audited, x)
            evidence = monitor._summed_bound(population, audited, x, 0.05, start, end)[1]
            assert floor <= evidence + 1e-9, (population, audited, x)
            gaps.append(evidence - floor)
    assert float(np.median(gaps)) < 2.0  # and close enough to settle most bounds
