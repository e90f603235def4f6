"""Each way a sample can be used (or not) at a cutoff, as `assess` codes it and the report's wording says it."""

from __future__ import annotations

import numpy as np

from reviewdepth.estimation.assessment import ReviewState, SampleDraw, SampleStatus, assess
from reviewdepth.report.wording import sample_status


def _draw(sample_id: int, start: int, ranks: list[int], truth: np.ndarray, *, end: int | None = None,
          origin: str = "") -> SampleDraw:
    index = np.asarray(ranks, dtype=np.int64)
    return SampleDraw(sample_id, start, index, truth[index - 1].astype(np.int64), len(ranks), end, origin)


def test_every_sample_status_is_coded_and_said() -> None:
    rng = np.random.default_rng(5)
    truth = (rng.random(1000) < 0.05).astype(np.int8)
    truth[:30] = 1
    labels = np.where(np.arange(1000) < 400, truth, -1).astype(np.int8)
    samples = [
        _draw(1, 400, list(range(401, 1001, 6)), truth, origin="queue old"),  # the rest sample: 100 in the rest
        _draw(2, 400, list(range(402, 1001, 20)), truth),  # smaller: not the largest
        _draw(3, 100, list(range(101, 400, 3)), truth),  # a rest frame wholly passed by the review since
        _draw(4, 600, list(range(601, 1001, 10)), truth),  # frame past the reviewed prefix: not covered
        _draw(5, 100, list(range(101, 201, 2)), truth, end=200),  # a rank band: a stratum
    ]
    result = assess(ReviewState(labels, 400), samples, ["0.95"])
    uses = {u.sample_id: u for u in result.samples}
    assert [uses[i].status for i in range(1, 6)] == [
        SampleStatus.USED, SampleStatus.NOT_LARGEST, SampleStatus.SUPERSEDED, SampleStatus.NOT_COVERED,
        SampleStatus.STRATUM]
    words = {i: sample_status(uses[i]) for i in range(1, 6)}
    assert words[1] == ("queue old: 100 of its 100 documents are in the unreviewed rest (ranks > 400): used as a "
                        "random sample of it")
    assert words[2] == ("not used: another sample has more documents in the unreviewed rest (30 here); the largest "
                        "is used")
    assert words[3] == "superseded: the review has passed every document it drew"
    assert words[4] == ("not used: its frame starts after rank 600 but the review has reached only 400, so it says "
                        "nothing about ranks 401–600")
    assert words[5] == "rank band 101–200: a stratum of the stratified estimate"


def test_a_fully_reviewed_queue_leaves_every_sample_unused() -> None:
    truth = np.zeros(200, dtype=np.int8)
    truth[:10] = 1
    result = assess(ReviewState(truth.copy(), 200), [_draw(1, 100, list(range(101, 201, 4)), truth)], ["0.95"])
    (use,) = result.samples
    assert use.status == SampleStatus.NOTHING_LEFT
    assert sample_status(use) == "not used: nothing is left unreviewed"
