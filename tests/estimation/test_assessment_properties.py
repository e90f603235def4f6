"""Property tests of ``assess`` over random reviews (issue 11, item 2 and "Show": the invariants hold in every
output).

A random queue (labels drawn at a random prevalence, sometimes none relevant), a reviewed prefix, a few random
samples drawn at earlier cutoffs (rest frames starting at or before the prefix, so they are rolled forward, some
starting after it, and whole-queue ones), optionally other judged documents, a population larger than the queue,
a known R, targets including 1.0 and a confidence level. ``assess`` must never raise on such input and:

- every lower bound on R ≥ the relevant documents judged in its scope; every point and upper bound ≥ its lower
  bound; every recall (estimates and recall figures) in [0, 1];
- a target is "reached" only when conservative.reached or R is known; a target of 1.0 only when R is known; never
  "reached" with neither a sample nor a known R;
- forward depths lie in [reviewed, queue size] and "more documents" is the distance to them;
- the rest sample is the usable one with the most documents in the rest (a 3-document sample never displaces a
  400-document one).
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reviewdepth.estimation.assessment import Assessment, ReviewState, SampleDraw, assess

TARGETS = ("0.5", "0.8", "0.9", "0.95", "0.99", "1")


@st.composite
def reviews(draw: st.DrawFn) -> tuple[ReviewState, list[SampleDraw], list[str], float, npt.NDArray[np.int8]]:
    size = draw(st.integers(1, 400))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    prevalence = draw(st.sampled_from([0.0, 0.01, 0.05, 0.2, 0.6, 1.0]))
    truth = (rng.random(size) < prevalence).astype(np.int8)
    reviewed = draw(st.integers(0, size))
    labels = np.full(size, -1, dtype=np.int8)
    labels[:reviewed] = truth[:reviewed]
    samples: list[SampleDraw] = []
    for sample_id in range(1, draw(st.integers(0, 4)) + 1):
        kind = draw(st.sampled_from(["rest-earlier", "rest-later", "population"]))
        if kind == "population":
            start = 0
        elif kind == "rest-earlier":
            start = draw(st.integers(0, reviewed))
        else:
            start = draw(st.integers(0, size))
        frame = np.arange(start, size)
        if len(frame) == 0:
            continue
        n = draw(st.integers(1, len(frame)))
        index = rng.choice(frame, size=n, replace=False)
        labels[index] = truth[index]
        # a sample may lose documents (e.g. no longer in the queue): ``drawn`` stays what was drawn
        samples.append(SampleDraw(sample_id, start, (index + 1).astype(np.int64), truth[index].astype(np.int64),
                                  n + draw(st.integers(0, 2))))
    extra = draw(st.integers(0, 5))
    if extra and size > reviewed:
        others = rng.choice(np.arange(reviewed, size), size=min(extra, size - reviewed), replace=False)
        labels[others] = truth[others]
    judged_in_queue = int(np.count_nonzero(labels == 1))
    outside = draw(st.integers(0, 3))
    population = draw(st.one_of(st.none(), st.integers(size, size + 500)))
    known = draw(st.sampled_from(["none", "true", "fully judged"]))
    fully = known == "fully judged"
    if fully:
        labels = truth.copy()
        outside = 0
        population = None
    state = ReviewState(labels, reviewed, population=population,
                        relevant_judged=judged_in_queue + outside if outside else None,
                        known_relevant=int(truth.sum()) + outside if known == "true" else None,
                        fully_judged=fully)
    targets = draw(st.lists(st.sampled_from(TARGETS), min_size=1, max_size=4, unique=True))
    confidence = draw(st.sampled_from([0.8, 0.9, 0.95, 0.99]))
    return state, samples, targets, confidence, truth


def judged_floor(state: ReviewState, result: Assessment) -> int:
    in_queue = int(np.count_nonzero(np.asarray(state.labels) == 1))
    if result.scope == "queue":
        return in_queue
    return max(in_queue, state.relevant_judged or 0)


def in_unit(value: float | None) -> bool:
    return value is None or (not math.isnan(value) and 0.0 <= value <= 1.0)


def check_invariants(state: ReviewState, samples: list[SampleDraw], result: Assessment) -> None:
    size = len(state.labels)
    floor = judged_floor(state, result)
    for e in result.estimates:
        if math.isnan(e.point):
            continue
        assert e.lower >= floor, (e.method, e.lower, floor)
        assert e.point >= e.lower, (e.method, e.point, e.lower)
        assert e.upper is None or e.upper >= e.lower, (e.method, e.upper, e.lower)
        for value in (e.recall_point, e.recall_lower, e.recall_upper):
            assert in_unit(value), (e.method, value)
    assert result.conservative_upper is None or result.conservative_upper >= result.basis.lower
    for f in result.recall:
        for value in (f.point, f.lower, f.upper, f.lower_one_sided):
            assert in_unit(value), (f.basis, value)
        if f.lower is not None and f.upper is not None:
            assert f.lower <= f.upper + 1e-12
        if f.lower_one_sided is not None and f.upper is not None:
            assert f.lower_one_sided <= f.upper + 1e-12
    # with the whole queue reviewed (nothing left unreviewed) R of the queue is known exactly as well
    known = result.basis.method == "known" or result.reviewed == size
    usable_sample = result.rest_sample is not None or result.population_sample is not None
    for t in result.targets:
        assert t.status in ("reached", "not reached", "unknown")
        if t.status == "reached":
            assert known or t.conservative.reached, t
            if t.target == 1.0:
                assert known, t
            assert known or usable_sample, t
        to_rank, more_documents = t.forward.to_rank, t.forward.more
        for depth in (to_rank.depth, to_rank.low, to_rank.high):
            assert depth is None or result.reviewed <= depth <= size, t
        for depth, more in ((to_rank.depth, more_documents.documents), (to_rank.low, more_documents.low),
                            (to_rank.high, more_documents.high)):
            if depth is not None and more is not None:
                assert more == depth - result.reviewed, t
        if to_rank.low is not None and to_rank.high is not None:
            assert to_rank.low <= to_rank.high, t
    assert result.headline.status in ("reached", "not reached", "unknown")
    # the rest sample: the covering sample with the most documents in the rest
    c = result.reviewed
    covering = {s.sample_id: int(np.count_nonzero(s.ranks > c)) for s in samples
                if s.frame_end is None and s.frame_start <= c}
    if result.rest_sample is not None:
        assert covering[result.rest_sample] == max(covering.values())
        assert covering[result.rest_sample] > 0
    elif c < size:
        assert all(v == 0 for v in covering.values())


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(reviews())
def test_invariants_hold_on_random_reviews(case: tuple[ReviewState, list[SampleDraw], list[str], float,
                                                       npt.NDArray[np.int8]]) -> None:
    state, samples, targets, confidence, _ = case
    result = assess(state, samples, targets, confidence=confidence)
    check_invariants(state, samples, result)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 3))
def test_no_sample_and_no_known_r_is_never_reached(seed: int, judged_beyond: int) -> None:
    rng = np.random.default_rng(seed)
    size = int(rng.integers(1, 300))
    truth = (rng.random(size) < 0.3).astype(np.int8)
    reviewed = int(rng.integers(0, size + 1))
    labels = np.full(size, -1, dtype=np.int8)
    labels[:reviewed] = truth[:reviewed]
    if reviewed < size:
        others = rng.choice(np.arange(reviewed, size), size=min(judged_beyond, size - reviewed), replace=False)
        labels[others] = truth[others]
    result = assess(ReviewState(labels, reviewed), [], list(TARGETS))
    if reviewed == size and judged_beyond == 0:
        return  # everything judged: the elusion basis says R = F exactly
    for t in result.targets:
        if reviewed < size:
            assert t.status == "unknown", t
    check_invariants(ReviewState(labels, reviewed), [], result)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1001, 3000), st.integers(0, 1))
def test_a_tiny_late_sample_never_displaces_a_large_one(seed: int, late_cutoff: int, late_first: int) -> None:
    """400 of ranks > 1000 drawn at c0 = 1000, review on to c ∈ (1000, 3000], then 3 of ranks > c: the 400-sample
    keeps the rest role while it has more than 3 documents there, whatever the order or ids."""
    rng = np.random.default_rng(seed)
    size = 4000
    truth = (rng.random(size) < 0.05).astype(np.int8)
    big = rng.choice(np.arange(1000, size), size=400, replace=False)
    tiny = rng.choice(np.arange(late_cutoff, size), size=3, replace=False)
    labels = np.full(size, -1, dtype=np.int8)
    labels[:late_cutoff] = truth[:late_cutoff]
    labels[big] = truth[big]
    labels[tiny] = truth[tiny]
    big_id, tiny_id = (2, 1) if late_first else (1, 2)
    samples = [SampleDraw(big_id, 1000, (big + 1).astype(np.int64), truth[big].astype(np.int64), 400),
               SampleDraw(tiny_id, late_cutoff, (tiny + 1).astype(np.int64), truth[tiny].astype(np.int64), 3)]
    if late_first:
        samples.reverse()
    result = assess(ReviewState(labels, late_cutoff), samples, ["0.95"])
    in_rest = int(np.count_nonzero(big >= late_cutoff))
    if in_rest > 3:
        assert result.rest_sample == big_id
    check_invariants(ReviewState(labels, late_cutoff), samples, result)


@pytest.mark.parametrize("case", ["no relevant anywhere", "R = 0 known", "everything judged", "empty rest",
                                  "empty queue prefix", "all relevant", "sample all negative, nothing found"])
def test_edge_cases_do_not_raise(case: str) -> None:
    size = 50
    truth = np.zeros(size, dtype=np.int8)
    reviewed = 20
    samples: list[SampleDraw] = []
    known = None
    fully = False
    if case == "all relevant":
        truth[:] = 1
    labels = np.full(size, -1, dtype=np.int8)
    labels[:reviewed] = truth[:reviewed]
    if case in ("no relevant anywhere", "all relevant", "sample all negative, nothing found"):
        index = np.arange(30, 40)
        labels[index] = truth[index]
        samples.append(SampleDraw(1, reviewed, (index + 1).astype(np.int64), truth[index].astype(np.int64), 10))
    if case == "R = 0 known":
        known = 0
    if case in ("everything judged", "empty rest"):
        labels = truth.copy()
        reviewed = size
        fully = case == "everything judged"
    if case == "empty queue prefix":
        reviewed = 0
        labels[:] = -1
        index = np.arange(0, 50, 5)
        labels[index] = truth[index]
        samples.append(SampleDraw(1, 0, (index + 1).astype(np.int64), truth[index].astype(np.int64), 10))
    state = ReviewState(labels, reviewed, known_relevant=known, fully_judged=fully)
    result = assess(state, samples, list(TARGETS))
    check_invariants(state, samples, result)
    if case in ("R = 0 known", "everything judged"):
        assert all(t.status == "reached" for t in result.targets)


def test_a_wholly_reviewed_queue_is_known_not_certified_by_a_missing_sample() -> None:
    import numpy as np

    from reviewdepth.estimation.assessment import Basis, ReachedBy, ReviewState, assess

    result = assess(ReviewState(np.array([1] * 5 + [0] * 45, dtype=np.int8), 50), [], ["0.95", "1"])
    assert result.basis.method == "known"
    assert [t.status for t in result.targets] == ["reached", "reached"]
    assert all(t.reached_by == ReachedBy(Basis.KNOWN) for t in result.targets)
