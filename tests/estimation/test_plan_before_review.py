"""Issue 38, item 6: the plan before review. With nothing reviewed and no random sample no projection rests on
evidence, so no path is priced and the plan asks for a richness sample of the collection; with one judged, where its
relevant documents sit along the ranking shapes the projection and prices TAR 1.0 (a cutoff chosen now, one test
of the rest) against TAR 2.0 (review in ranked order until the monitor certifies)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from reviewdepth.estimation.stop_plan import (
    ReviewEvidence,
    _synthetic,
    plan_stop,
    project_from_sample,
    richness_sample_size,
)


def _richness_by_hand(population: int, confidence: float, margin: float = 0.05) -> int:
    z = stats.norm.ppf(1 - (1 - confidence) / 2)
    first = z * z * 0.25 / (margin * margin)
    return min(population, math.ceil(first / (1 + (first - 1) / population)))


@pytest.mark.parametrize("population", [50, 400, 6_455, 100_000, 2_000_000])
@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99])
def test_richness_sample_size_is_the_margin_sizing(population: int, confidence: float) -> None:
    assert richness_sample_size(population, confidence) == _richness_by_hand(population, confidence)


def test_richness_sizing_figures() -> None:
    # the usual e-discovery figures: 385 for a very large collection at 95 % (±5 points), 664 at 99 %
    assert richness_sample_size(10**9, 0.95) == 385
    assert richness_sample_size(10**9, 0.99) == 664
    assert richness_sample_size(6_455, 0.95) == 363


def test_nothing_reviewed_and_no_sample_prices_no_path() -> None:
    plan = plan_stop(ReviewEvidence(np.zeros(0, dtype=np.int8), 6_455), Fraction("0.95"), 0.95, replicates=4)
    assert plan.paths == ()
    assert plan.recommended is None
    assert plan.richness_size == 363
    assert plan.before_review
    assert plan.projected_rest_relevant == 0.0


def _front_loaded(population: int, relevant: int, seed: int) -> np.ndarray:
    """A ranking whose relevant documents lie mostly near the top (the first tenth holds about 80 % of them)."""
    rng = np.random.default_rng(seed)
    labels = np.zeros(population, dtype=np.int8)
    top = rng.choice(population // 10, size=int(relevant * 0.8), replace=False)
    rest = rng.choice(np.arange(population // 10, population), size=relevant - len(top), replace=False)
    labels[top] = 1
    labels[rest] = 1
    return labels


def test_the_sample_shapes_the_projection_along_the_ranking() -> None:
    labels = _front_loaded(10_000, 600, seed=1)
    rng = np.random.default_rng(2)
    sample = np.sort(rng.choice(10_000, size=1_000, replace=False))
    projection = project_from_sample(sample, labels[sample], 10_000)
    y, n = int(labels[sample].sum()), len(sample)
    # the total is the whole sample's Jeffreys estimate
    assert projection.rest_estimate == pytest.approx(10_000 * (y + 0.5) / (n + 1))
    assert len(projection.bands) == 8
    # the first band (where the sample's relevant documents sit) projects a higher rate than the last
    assert projection.rate[0] > 5 * projection.rate[-1]
    # each band's rate is its own Jeffreys mean, scaled to the total
    first_start, _, a, m = projection.bands[0]
    scale = projection.rest_estimate / sum((e - s) * (aa + 0.5) / (mm + 1) for s, e, aa, mm in projection.bands)
    assert projection.rate[first_start] == pytest.approx(scale * (a + 0.5) / (m + 1))
    # bands cover the rest exactly once, in order
    assert projection.bands[0][0] == 0 and projection.bands[-1][1] == 10_000
    assert all(projection.bands[i][1] == projection.bands[i + 1][0] for i in range(len(projection.bands) - 1))


def test_a_sample_with_few_relevant_spreads_them_evenly() -> None:
    offsets = np.arange(0, 4_000, 10)
    relevant = np.zeros(len(offsets), dtype=np.int64)
    relevant[[0, 1]] = 1  # two relevant, both at the top: too few to place
    projection = project_from_sample(offsets, relevant, 4_000)
    assert len(projection.bands) == 1
    assert np.all(projection.rate == projection.rate[0])
    assert "evenly" in projection.source


def test_replays_draw_each_bands_rate_from_its_posterior() -> None:
    offsets = np.arange(0, 3_000, 3)
    relevant = np.zeros(len(offsets), dtype=np.int64)
    relevant[:60] = 1  # 60 relevant, all in the first sixth of the ranking
    projection = project_from_sample(offsets, relevant, 3_000)
    evidence = ReviewEvidence(np.zeros(0, dtype=np.int8), 3_000)
    rng = np.random.default_rng(0)
    top_end = projection.bands[0][1]
    draws = np.array([_synthetic(evidence, projection, rng)[:top_end].mean() for _ in range(400)])
    _, _, a, m = projection.bands[0]
    # the top band's simulated richness follows Beta(a + ½, m − a + ½) (plus binomial noise): its mean and spread
    assert draws.mean() == pytest.approx((a + 0.5) / (m + 1), abs=0.02)
    assert draws.std() > 0.5 * stats.beta(a + 0.5, m - a + 0.5).std()


def test_a_richness_sample_prices_tar_1_and_tar_2() -> None:
    labels = _front_loaded(5_000, 250, seed=3)
    rng = np.random.default_rng(4)
    sample = np.sort(rng.choice(5_000, size=richness_sample_size(5_000, 0.95), replace=False))
    positive = sample[labels[sample] == 1]
    evidence = ReviewEvidence(np.zeros(0, dtype=np.int8), 5_000, rest_sample_size=len(sample),
                              rest_sample_relevant=len(positive), rest_sample_offsets=tuple(map(int, sample)),
                              rest_sample_positive_offsets=tuple(map(int, positive)))
    plan = plan_stop(evidence, Fraction("0.8"), 0.95, replicates=8, table=False)
    assert plan.before_review and plan.richness_size is None
    kinds = {p.kind for p in plan.paths if p.feasible}
    assert "planned" in kinds  # TAR 2.0
    assert "review_then_sample" in kinds  # TAR 1.0: a cutoff chosen now, one test of the rest
    cutoff = next(p for p in plan.paths if p.kind == "review_then_sample")
    # the cutoff lies where the sample puts most relevant documents above it, not at the queue's end
    assert cutoff.review_more < 5_000 * 0.8
    assert "bands along the ranking" in plan.projection_source


def test_the_stated_cost_range_is_the_replays_5_to_95_percent(monkeypatch: pytest.MonkeyPatch) -> None:
    """The planned path's range is the 5 % and 95 % quantiles of its replayed costs, as every page names it
    (the 10–90 % range held the realised mean cost in 0.667 of 270 calibration states, 5–95 % in 0.822)."""
    from reviewdepth.estimation import stop_plan
    from reviewdepth.report.wording import cost_range_words

    replayed = iter(np.arange(1.0, 41.0) * 100)

    class Run:
        def __init__(self, cost: float) -> None:
            self.cost = cost

        def cost_at(self, review_cost: float, sample_cost: float) -> float:
            return self.cost

    monkeypatch.setattr(stop_plan, "run_planned", lambda *args, **kwargs: Run(float(next(replayed))))
    labels = np.zeros(300, dtype=np.int8)
    labels[:40:3] = 1
    plan = plan_stop(ReviewEvidence(labels, 3_000), Fraction("0.8"), 0.95, replicates=40, table=False)
    planned = next(p for p in plan.paths if p.kind == "planned")
    costs = np.arange(1.0, 41.0) * 100 - 300  # the reviewed prefix is paid before the plan
    assert planned.cost_range == pytest.approx((np.quantile(costs, 0.05), np.quantile(costs, 0.95)))
    assert planned.expected_cost == pytest.approx(costs.mean())
    assert cost_range_words() == "5–95 %"
