"""The cheapest-stop planner (issue 24): the floor against scipy, the certifier against the monitor, the planned
policy's false stops, the plan's one-look chances against a direct computation, the replayed rule."""

from __future__ import annotations

import functools
import math
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from scipy import stats

from reviewdepth.estimation.monitor import certifies, upper_missed
from reviewdepth.estimation.replay import Design, ReplayPlan, replay
from reviewdepth.estimation.stop_plan import (
    Certifier,
    PlannedPolicy,
    ReviewEvidence,
    certification_floor,
    plan_stop,
    project_yield,
    run_planned,
)
from reviewdepth.estimation.stopping import elusion_rule


def allowed(found: int, tau: Fraction) -> int:
    return math.floor(found * (1 - tau) / tau)


@pytest.mark.parametrize(("found", "unreviewed", "tau", "confidence"), [
    (133, 5955, "0.95", 0.95), (133, 5955, "0.9", 0.95), (133, 5955, "0.8", 0.95), (98, 4220, "0.95", 0.95),
    (98, 4220, "0.8", 0.95), (20, 800, "0.9", 0.9), (7, 300, "0.8", 0.99), (380, 10000, "0.95", 0.95)])
def test_floor_is_the_least_size_whose_zero_outcome_certifies(found: int, unreviewed: int, tau: str,
                                                             confidence: float) -> None:
    frac = Fraction(tau)
    n = certification_floor(found, unreviewed, frac, confidence)
    k = allowed(found, frac)
    alpha = 1 - confidence
    # one-sided: the chance that a sample of n misses all of k + 1 relevant documents is at most alpha ...
    assert stats.hypergeom.pmf(0, unreviewed, k + 1, n) <= alpha
    # ... and one document fewer is not enough
    assert stats.hypergeom.pmf(0, unreviewed, k + 1, n - 1) > alpha
    # the elusion rule (the product's one-look test) certifies exactly from that size with no positive
    assert elusion_rule(found, unreviewed, n, 0, frac, alpha).stop_now
    assert not elusion_rule(found, unreviewed, n - 1, 0, frac, alpha).stop_now


def test_floor_matches_the_worked_figures() -> None:
    # shared/reference/certification-cost.md §2 (CLEF 2017 CD009579 after 500 reviewed; the demo topic CD008803)
    assert [certification_floor(133, 5955, Fraction(t), 0.95) for t in ("0.95", "0.9", "0.8")] == [1859, 1077, 501]
    assert [certification_floor(98, 4220, Fraction(t), 0.95) for t in ("0.95", "0.8")] == [1658, 476]


def test_floor_edges() -> None:
    assert certification_floor(10, 0, Fraction("0.95"), 0.95) == 0
    # even an all-relevant rest keeps recall at least 0.5
    assert certification_floor(10, 5, Fraction("0.5"), 0.95) == 0


def test_certifier_is_the_monitors_condition_and_its_needed_size_is_tight() -> None:
    n, tau = 2000, Fraction("0.9")
    certifier = Certifier(n, tau, 0.95)
    for found, missed in ((60, 0), (60, 1), (200, 2)):
        need = certifier.elements_needed(found, missed)
        assert need is not None
        assert certifies(tau, found, found + missed, max(upper_missed(n, need, missed, 0.95), missed))
        assert not certifies(tau, found, found + missed, max(upper_missed(n, need - 1, missed, 0.95), missed))


def adversarial_queue(size: int, relevant: int, head_share: float) -> np.ndarray:
    """A ranking whose first relevant documents come early and whose last ones sit at the very end, where a plan
    that stops reviewing early and audits must catch them."""
    labels = np.zeros(size, dtype=np.int8)
    head = int(relevant * head_share)
    labels[np.linspace(0, size // 10, head, dtype=int)] = 1
    labels[size - (relevant - head):] = 1
    return labels


@pytest.mark.parametrize(("tau", "confidence"), [("0.8", 0.95), ("0.8", 0.9)])
def test_planned_policy_false_stops_stay_within_alpha(tau: str, confidence: float) -> None:
    # 75 % of the relevant documents early, the rest at the end: recall stays at 0.75 < 0.8 until the very end,
    # so every stop before the end is a false stop; the monitor's guarantee bounds their share by alpha
    labels = adversarial_queue(600, 40, 0.75)
    frac = Fraction(tau)
    policy = PlannedPolicy(len(labels), Certifier(len(labels), frac, confidence), batch=10)
    rng = np.random.default_rng(7)
    replicates = 600
    false = sum(run_planned(labels, rng.permutation(len(labels)), policy).found < math.ceil(frac * 40)
                for _ in range(replicates))
    # one-sided exact binomial test at 1 %: a true rate of alpha would rarely give this many
    assert stats.binom.sf(false - 1, replicates, 1 - confidence) > 0.01, (false, replicates)


def test_planned_policy_stops_only_when_the_monitor_certifies() -> None:
    rng = np.random.default_rng(3)
    labels = (rng.random(1500) < 0.3 * np.exp(-np.arange(1500) / 200) + 0.002).astype(np.int8)
    tau = Fraction("0.9")
    certifier = Certifier(1500, tau, 0.95)
    policy = PlannedPolicy(1500, certifier, batch=15)
    for _ in range(30):
        perm = rng.permutation(1500)
        run = run_planned(labels, perm, policy)
        stream = perm[:run.audited]
        missed = int(np.count_nonzero(labels[stream[stream >= run.depth]] == 1))
        assert run.depth == 1500 or certifier.certified(run.found, missed, run.audited, run.depth)
        assert run.certified
        # cost counts every judged document once: the prefix and the stream's documents beyond it
        assert run.cost == run.depth + int(np.count_nonzero(stream >= run.depth))


def test_projection_is_capped_by_a_rest_sample() -> None:
    prefix = np.zeros(500, dtype=np.int8)
    prefix[::10] = 1
    free = project_yield(prefix, 4000)
    capped = project_yield(prefix, 4000, rest_sample_size=400, rest_sample_relevant=0)
    assert capped.rest_estimate == pytest.approx(4000 * 0.5 / 401)
    assert capped.rest_estimate < free.rest_estimate
    assert (np.diff(capped.rate) <= 1e-15).all()  # never rising


def _one_look_model(found: int, rest: int, review_more: int, projection: Any) -> tuple[int, float]:
    """The relevant found after D more and the rate after them, as a one-look path plans them: the projection's
    decaying placement, or its total spread evenly over the rest when that leaves more after D (issue 38)."""
    cum = projection.cumulative
    left = rest - review_more
    projected = float(cum[-1] - cum[review_more]) / left
    even = projection.rest_estimate / rest
    if even > projected:
        return found + math.floor(even * review_more + 1e-9), even
    return found + math.floor(float(cum[review_more]) + 1e-9), projected


def test_plan_one_look_chances_and_recommendation() -> None:
    rng = np.random.default_rng(11)
    size = 3000
    labels = (rng.random(size) < 0.4 * np.exp(-np.arange(size) / 150) + 0.001).astype(np.int8)
    evidence = ReviewEvidence(labels[:600], size, rest_sample_size=300, rest_sample_relevant=1)
    tau, confidence = Fraction("0.8"), 0.95
    plan = plan_stop(evidence, tau, confidence, replicates=20)
    assert plan.floor == certification_floor(evidence.found, size - 600, tau, confidence)
    one_look = [p for p in plan.paths if p.kind in ("sample_now", "review_then_sample") and p.feasible]
    assert one_look
    projection = project_yield(evidence.prefix_labels, size - 600, rest_sample_size=300, rest_sample_relevant=1)
    for path in one_look:
        left = size - 600 - path.review_more
        found, rate = _one_look_model(evidence.found, size - 600, path.review_more, projection)
        assert path.sample_size is not None and path.max_positives is not None
        # the certifying outcome is the elusion rule's: at most max_positives certify, one more does not
        assert elusion_rule(found, left, path.sample_size, path.max_positives, tau, 1 - confidence).stop_now
        assert not elusion_rule(found, left, path.sample_size, path.max_positives + 1, tau, 1 - confidence).stop_now
        # the stated chance is the probability of that outcome with the rate uncertain: the rest sample's
        # Beta(y + ½, n − y + ½) posterior, its mean moved to the rate after D (scipy, at 200 quantiles) ...
        a, b = 1.5, 299.5
        quantiles = (np.arange(200) + 0.5) / 200
        multipliers = stats.beta.ppf(quantiles, a, b) / (a / (a + b))
        exact = np.mean(stats.binom.cdf(path.max_positives, path.sample_size, np.minimum(1, rate * multipliers)))
        assert path.chance == pytest.approx(exact, abs=1e-7)
        # ... and Monte Carlo (a rate drawn, then the sample's positives) agrees within its error
        rates = np.minimum(1.0, rng.beta(a, b, size=8000) * rate / (a / (a + b)))
        draws = rng.binomial(path.sample_size, rates)
        assert abs(np.mean(draws <= path.max_positives) - path.chance) < 4 * math.sqrt(0.25 / 8000) + 1e-3
        # never stated as certain: the rate is an estimate
        assert path.chance < 1.0
    eligible = [p for p in plan.paths if p.feasible and (p.kind in ("planned", "audit_stream")
                                                         or p.chance >= plan.power)]
    best = next(p for p in plan.paths if p.kind == plan.recommended)
    assert all(best.expected_cost <= p.expected_cost for p in eligible)
    assert len(plan.table) == 12
    for cell in plan.table:
        assert cell.floor == certification_floor(evidence.found, size - 600, Fraction(str(cell.target)),
                                                 cell.confidence)


def test_replayed_planned_rule_is_certified_and_reproducible() -> None:
    rng = np.random.default_rng(5)
    labels = (rng.random(1200) < 0.3 * np.exp(-np.arange(1200) / 150) + 0.002).astype(np.int8)
    plan = ReplayPlan(Design("planned"), ("planned",), Fraction("0.9"), 0.95, 12, 60, 4)
    first, second = replay(labels, plan)["planned"], replay(labels, plan)["planned"]
    assert first == second
    assert first.kind == "certified"
    assert (first.reviewed_total <= 1200).all()
    assert first.failed.mean() <= 0.2


@functools.cache
def clef2017_waterloo(topic: str) -> np.ndarray:
    """The topic in waterloo.A-rank-normal's order (NS lines and repeats skipped), 1 = relevant in the abstract
    qrels (the orders the issue's figures were measured on)."""
    from reviewdepth.formats.clef import read_clef_run
    from reviewdepth.formats.trec import read_qrels
    from tests.conftest import shared_data

    qrels = read_qrels(shared_data("clef-tar-2017", "qrels", "qrel_abs_test.txt.gz"))
    relevant = {doc for qid, doc, rel in zip(qrels.qid.tolist(), qrels.docno.values.tolist(), qrels.rel.tolist(),
                                              strict=True) if rel > 0 and qid == topic.encode()}
    run = read_clef_run(shared_data("clef-tar-2017", "runs", "waterloo.A-rank-normal.gz"))
    rows = np.flatnonzero(run.topic == topic.encode())
    seen: set[bytes] = set()
    labels: list[int] = []
    for doc, action in zip(run.docno.values[rows].tolist(), run.action[rows].tolist(), strict=True):
        if action != b"NS" and doc not in seen:
            seen.add(doc)
            labels.append(1 if doc in relevant else 0)
    return np.array(labels, dtype=np.int8)


@pytest.mark.parametrize("topic", ["CD009579", "CD008803", "CD009647"])
@pytest.mark.parametrize("share", [0.05, 0.15, 0.3])
def test_plan_on_clef_states_against_a_direct_computation(topic: str, share: float) -> None:
    labels = clef2017_waterloo(topic)
    size = len(labels)
    reviewed = int(share * size)
    tau, confidence = Fraction("0.9"), 0.95
    rng = np.random.default_rng(reviewed)
    # a rest sample of 200, drawn from the truth, as a team would have judged it
    rest_sample = rng.choice(np.arange(reviewed, size), size=200, replace=False)
    evidence = ReviewEvidence(labels[:reviewed], size, rest_sample_size=200,
                              rest_sample_relevant=int(labels[rest_sample].sum()))
    plan = plan_stop(evidence, tau, confidence, replicates=10, table=False)
    found, rest = int(labels[:reviewed].sum()), size - reviewed
    k = allowed(found, tau)
    # the floor, exact: scipy's hypergeometric at n and n - 1
    if plan.floor:
        assert stats.hypergeom.pmf(0, rest, k + 1, plan.floor) <= 1 - confidence
        assert stats.hypergeom.pmf(0, rest, k + 1, plan.floor - 1) > 1 - confidence
    projection = project_yield(evidence.prefix_labels, rest, rest_sample_size=200,
                               rest_sample_relevant=evidence.rest_sample_relevant)
    for path in plan.paths:
        if path.kind not in ("sample_now", "review_then_sample") or not path.feasible:
            continue
        left = rest - path.review_more
        f, rate = _one_look_model(found, rest, path.review_more, projection)
        assert path.sample_size is not None and path.max_positives is not None
        # Monte Carlo through the certifying rule itself: draw a rate from the rest sample's posterior (scaled
        # to the rate after D), the sample's positives from it, and ask the elusion rule
        a, b = evidence.rest_sample_relevant + 0.5, 200 - evidence.rest_sample_relevant + 0.5
        rates = np.minimum(1.0, rng.beta(a, b, size=2000) * rate / (a / (a + b)))
        draws = rng.binomial(path.sample_size, rates)
        outcomes = {y: elusion_rule(f, left, path.sample_size, y, tau, 1 - confidence).stop_now for y in set(draws)}
        certified = np.mean([outcomes[y] for y in draws])
        assert abs(certified - path.chance) <= 4 * math.sqrt(path.chance * (1 - path.chance) / 2000) + 0.01
    eligible = [p for p in plan.paths if p.feasible and (p.kind in ("planned", "audit_stream")
                                                         or p.chance >= plan.power)]
    if plan.recommended is not None:
        best = next(p for p in plan.paths if p.kind == plan.recommended)
        assert all(best.expected_cost <= p.expected_cost + 1e-9 for p in eligible)
