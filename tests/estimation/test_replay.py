"""The replay engine (issue 17, reviewdepth/estimation/replay.py) on the real CLEF TAR 2019 topic CD012551 (591
documents, 68 relevant; tests/estimation/conftest.py).

As in tests/estimation/test_monitor_simulation.py the statistical checks run at target 0.8 and confidence 0.9, where
the rules stop inside this small queue and a false stop is possible. Each statistical check is paired with the
same check at the confidence swapped for α, which must fail: the check has the power to see a confidence or a
sidedness quietly changed.
"""

from __future__ import annotations

import math
import random
import re
from dataclasses import replace
from fractions import Fraction

import numpy as np
import numpy.typing as npt
import pytest
from scipy import stats

from reviewdepth.estimation import stopping
from reviewdepth.estimation.monitor_simulation import Queue, simulate_queue
from reviewdepth.estimation.replay import (
    CHUNK,
    DESIGNS,
    RULES,
    Design,
    ReplayPlan,
    RuleRuns,
    chunk_count,
    concat_runs,
    failure_interval,
    replay,
    replay_chunk,
    rules_for,
    summarise,
    validate_plan,
)

TAU = Fraction(4, 5)
CONFIDENCE = 0.9
ALPHA = 1 - CONFIDENCE
Labels = npt.NDArray[np.int8]

DESIGN_OF: dict[str, Design] = {
    "none": Design("none"),
    "rest": Design("rest", sample_size=100),
    "population": Design("population", sample_size=300),
    "audit": Design("audit", every=5),
    "planned": Design("planned"),
}


def plan_for(design: str, *, rules: tuple[str, ...] | None = None, look_every: int = 25, replicates: int = 50,
             seed: int = 12, confidence: float = CONFIDENCE) -> ReplayPlan:
    return ReplayPlan(DESIGN_OF[design], rules_for(design) if rules is None else rules, TAU, confidence,
                      look_every, replicates, seed)


def failure_rate(runs: RuleRuns) -> float:
    """Failures over all replicates (a rule that never stops cannot fail): the chance of a false stop."""
    return float(np.count_nonzero(runs.failed)) / runs.replicates


def slack(trials: int) -> float:
    return 3 * math.sqrt(ALPHA * (1 - ALPHA) / trials)


def test_the_queue(cd012551_labels: Labels) -> None:
    queue = Queue.of(cd012551_labels, TAU)
    assert (queue.size, queue.relevant, queue.needed, queue.oracle_depth) == (591, 68, 55, 416)


def test_audit_rules_and_fresh_elusion_agree_exactly_with_monitor_simulation(cd012551_labels: Labels) -> None:
    """With key () chunk 0 draws simulate_queue's audit permutations, with key (1,) its elusion stream."""
    reps = CHUNK
    bench = simulate_queue(cd012551_labels, batches=[25], every=[5], sample_sizes=[100], replicates=reps, seed=12,
                           target=TAU, confidence=CONFIDENCE)
    audit = replay(cd012551_labels, plan_for("audit", rules=("monitor", "fixed", "qbcb", "target"),
                                             replicates=reps))
    rest = replay(cd012551_labels, plan_for("rest", rules=("elusion",), replicates=reps), key=(1,))
    pairs = [(audit[rule], bench[(25, f"{rule} K=5")]) for rule in ("monitor", "fixed", "qbcb", "target")]
    pairs.append((rest["elusion"], bench[(25, "elusion n=100")]))
    for runs, outcome in pairs:
        assert np.array_equal(runs.stopped, outcome.stopped), runs.rule
        assert np.array_equal(runs.depth, outcome.depth), runs.rule
        assert np.array_equal(runs.found, outcome.found), runs.rule
        assert np.array_equal(runs.reviewed_total, outcome.cost), runs.rule
        assert runs.stopped.any() and (runs.sampled > 0).any(), runs.rule  # the comparison covers stops and costs


@pytest.mark.parametrize("design", DESIGNS)
def test_replay_is_its_chunks_joined_whatever_order_they_run_in(cd012551_labels: Labels, design: str) -> None:
    plan = plan_for(design, replicates=2 * CHUNK + 7, look_every=50)
    assert chunk_count(plan) == 3
    order = [2, 0, 1]
    random.Random(design).shuffle(order)
    done = {c: replay_chunk(cd012551_labels, plan, c, key=(4,)) for c in order}
    assert [len(done[c][plan.rules[0]].depth) for c in range(3)] == [CHUNK, CHUNK, 7]
    whole = replay(cd012551_labels, plan, key=(4,))
    assert whole == concat_runs([done[c] for c in range(3)])
    assert list(whole) == list(plan.rules)
    assert whole == replay(cd012551_labels, plan, key=(4,))
    other = replay(cd012551_labels, plan, key=(5,))
    for rule in plan.rules:
        if design == "none" or len(set(whole[rule].reviewed_total.tolist())) == 1:
            assert other[rule] == whole[rule]  # nothing random to differ (e.g. a stop where the whole rest is sampled)
        else:
            assert other[rule] != whole[rule], rule
            assert not np.array_equal(other[rule].reviewed_total, whole[rule].reviewed_total), rule


def test_a_rules_runs_do_not_depend_on_the_other_rules_replayed(cd012551_labels: Labels) -> None:
    for design in ("rest", "audit", "population"):
        together = replay(cd012551_labels, plan_for(design))
        for rule in rules_for(design):
            alone = replay(cd012551_labels, plan_for(design, rules=(rule,)))
            assert alone[rule] == together[rule], (design, rule)


def test_monitor_stays_below_alpha_where_the_repeated_one_look_bound_does_not(cd012551_labels: Labels) -> None:
    reps = 200
    out = replay(cd012551_labels, plan_for("audit", rules=("monitor",), look_every=5, replicates=reps))
    monitor = out["monitor"]
    assert monitor.stopped.mean() > 0.9  # it stops inside the queue, so a false stop was possible
    assert failure_rate(monitor) <= ALPHA + slack(reps)
    # the same check with α passed as the confidence fails: it would see the swap
    swapped = replay(cd012551_labels, plan_for("audit", rules=("monitor",), look_every=5, replicates=reps,
                                               confidence=ALPHA))
    assert failure_rate(swapped["monitor"]) > ALPHA + slack(reps)


def test_one_look_fresh_sample_tests_are_valid_at_one_look(cd012551_labels: Labels) -> None:
    """One look only (B = 360 > N/2) at a cutoff whose recall is below the target (F(360) = 48 < 55): elusion's
    stop there is always a failure, and the hypergeometric test's is one unless the urn brings the seen set to
    55. Both are certified for one look: the chance of a false stop is at most α."""
    reps = 1000
    plan = plan_for("rest", rules=("elusion", "hypergeometric"), look_every=360, replicates=reps)
    assert Queue.of(cd012551_labels, TAU).found[360] == 48
    out = replay(cd012551_labels, plan)
    assert (out["elusion"].failed == out["elusion"].stopped).all()
    assert out["hypergeometric"].failed.any()  # the test is near its boundary: a false stop is possible
    for rule in ("elusion", "hypergeometric"):
        assert failure_rate(out[rule]) <= ALPHA + slack(reps), rule
    swapped = replay(cd012551_labels, replace(plan, confidence=ALPHA))
    for rule in ("elusion", "hypergeometric"):
        assert failure_rate(swapped[rule]) > ALPHA + slack(reps), rule


def test_repeated_fresh_sample_tests_fail_more_often_than_alpha(cd012551_labels: Labels) -> None:
    reps = 100
    out = replay(cd012551_labels, plan_for("rest", rules=("elusion", "hypergeometric"), look_every=2,
                                           replicates=reps))
    for rule in ("elusion", "hypergeometric"):
        assert failure_rate(out[rule]) > ALPHA + slack(reps), rule


def test_population_rules_are_valid_and_direct_stops_where_qbcb_does(cd012551_labels: Labels) -> None:
    reps = 300
    plan = plan_for("population", rules=("qbcb", "target", "direct"), look_every=5, replicates=reps)
    out = replay(cd012551_labels, plan)
    for rule in ("qbcb", "target", "direct"):
        assert out[rule].stopped.mean() > 0.5, rule
        assert failure_rate(out[rule]) <= ALPHA + slack(reps), rule
    assert np.array_equal(out["direct"].depth, out["qbcb"].depth)
    swapped = replay(cd012551_labels, replace(plan, confidence=ALPHA))
    for rule in ("qbcb", "target", "direct"):
        assert failure_rate(swapped[rule]) > ALPHA + slack(reps), rule


def test_population_qbcb_stops_at_the_first_look_past_its_order_statistic(cd012551_labels: Labels) -> None:
    """Independent of the engine: the samples re-drawn from the documented stream (chunk 0, samples first), j the
    smallest with P(Binomial(r, τ) ≥ j) ≤ α from scipy, the stop at the first look ≥ the j-th positive's rank."""
    plan = plan_for("population", rules=("qbcb",), look_every=5)
    out = replay_chunk(cd012551_labels, plan, 0, key=(2,))["qbcb"]
    rng = np.random.default_rng(np.random.SeedSequence(plan.seed, spawn_key=(2, 0)))
    size = len(cd012551_labels)
    for r in range(plan.replicates):
        sample = rng.choice(size, size=plan.design.sample_size, replace=False)
        ranks = np.sort(sample[cd012551_labels[sample] == 1]) + 1
        tail = stats.binom.sf(np.arange(len(ranks)), len(ranks), float(TAU))  # P(X ≥ j), j = 1 … r
        ok = np.flatnonzero(tail <= ALPHA)
        if not len(ok):
            assert not out.stopped[r]
            continue
        u_j = int(ranks[ok[0]])
        look = -(-u_j // plan.look_every) * plan.look_every
        assert bool(out.stopped[r]) == (look < size)
        assert int(out.depth[r]) == (look if look < size else size)
        assert int(out.sampled[r]) == int(np.count_nonzero(sample >= out.depth[r])) * bool(out.stopped[r])


def test_heuristics_read_the_prefix_only_and_are_the_same_in_every_replicate(cd012551_labels: Labels) -> None:
    plan = plan_for("none", look_every=25, replicates=60)
    looks = list(range(25, len(cd012551_labels), 25))
    for rule in ("knee", "budget"):
        depths = set()
        for design in DESIGNS:
            runs = replay(cd012551_labels, replace(plan, design=DESIGN_OF[design], rules=(rule,)), key=(3,))[rule]
            assert len(set(runs.depth.tolist())) == 1, (rule, design)
            depths.add(int(runs.depth[0]))
            if design == "none":
                assert (runs.sampled == 0).all()
        assert len(depths) == 1, rule
        depth = depths.pop()
        # the first look where the report's row (the rule at its AutoTAR checkpoints), shown only the prefix,
        # says stop
        expected = len(cd012551_labels)
        for k in looks:
            prefix = cd012551_labels[:k]
            evidence = (stopping.knee_method(prefix) if rule == "knee"
                        else stopping.budget_method(prefix, len(cd012551_labels)))
            if evidence.stop_now:
                expected = k
                break
        assert depth == expected, rule
    assert depth < len(cd012551_labels)  # budget stops (at 0.75·N at the latest): the check saw a stop


@pytest.mark.parametrize("design", DESIGNS)
def test_costs_are_counted_within_the_queue(cd012551_labels: Labels, design: str) -> None:
    out = replay(cd012551_labels, plan_for(design, look_every=50))
    for runs in out.values():
        never = ~runs.stopped
        assert (runs.depth[never] == runs.size).all() and (runs.sampled[never] == 0).all()
        assert (runs.recall[never] == 1).all()
        assert (runs.reviewed_total <= runs.size).all() and (runs.sampled >= 0).all()
        if design == "population":
            assert (runs.sampled <= plan_for(design).design.sample_size).all()
        assert (runs.failed == (runs.stopped & (runs.found < runs.needed))).all()
        prefix_found = Queue.of(cd012551_labels, TAU).found[runs.depth]
        if runs.rule == "hypergeometric":  # it certifies the prefix plus the stopping look's urn
            urn = runs.found - prefix_found
            assert (urn >= 0).all() and (urn <= 100).all() and (urn[~runs.stopped] == 0).all()
            assert (urn > 0).any()
        else:
            assert (runs.found == prefix_found).all()


# the planned design's team also looks after each audit step (it may stop on the audit alone): not this premise
@pytest.mark.parametrize("design", [d for d in DESIGNS if d != "planned"])
def test_no_look_before_the_end_means_no_stop(cd012551_labels: Labels, design: str) -> None:
    out = replay(cd012551_labels, plan_for(design, look_every=len(cd012551_labels), replicates=3))
    for runs in out.values():
        assert not runs.stopped.any() and (runs.depth == runs.size).all() and (runs.sampled == 0).all()


@pytest.mark.parametrize(("failures", "stops"), [(0, 1), (0, 40), (1, 40), (7, 40), (39, 40), (40, 40), (3, 1000)])
@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99])
def test_failure_interval_is_clopper_pearson(failures: int, stops: int, confidence: float) -> None:
    expected = stats.binomtest(failures, stops).proportion_ci(confidence_level=confidence, method="exact")
    low, high = failure_interval(failures, stops, confidence)
    assert low == pytest.approx(expected.low, abs=1e-12)
    assert high == pytest.approx(expected.high, abs=1e-12)


def runs_of(rule: str, stopped: list[bool], depth: list[int], found: list[int], sampled: list[int]) -> RuleRuns:
    return RuleRuns(rule, RULES[rule].kind, np.array(stopped), np.array(depth, dtype=np.int64),
                    np.array(found, dtype=np.int64), np.array(sampled, dtype=np.int64), 100, 10, 8, 40)


def test_summarise_by_hand() -> None:
    # topic 1: 4 runs, 3 stops of which 1 fails (found 7 < 8), one never stops (depth N, recall 1)
    one = {"budget": runs_of("budget", [True, True, True, False], [40, 20, 60, 100], [8, 7, 9, 10], [0, 0, 0, 0]),
           "monitor": runs_of("monitor", [True, False, True, True], [50, 100, 40, 80], [9, 10, 8, 10],
                              [10, 0, 20, 4])}
    # topic 2: the monitor only, 2 runs, no failure
    two = {"monitor": runs_of("monitor", [True, True], [40, 60], [8, 9], [2, 0])}
    summary = summarise([one, two], 0.95)
    assert [s.rule for s in summary] == ["monitor", "budget"]  # RULES order
    monitor, budget = summary
    assert (monitor.topics, monitor.runs, monitor.stops, monitor.failures, monitor.never_stopped) == (2, 6, 5, 0, 1)
    assert monitor.failure_rate == 0.0
    assert (monitor.failure_low, monitor.failure_high) == pytest.approx((0.0, 1 - 0.025 ** (1 / 5)))
    assert (budget.topics, budget.runs, budget.stops, budget.failures, budget.never_stopped) == (1, 4, 3, 1, 1)
    assert budget.failure_rate == pytest.approx(1 / 3)
    # false stops per run: over every run, stopped or not (1 of 4), with the Clopper–Pearson interval on 1 of 4
    assert budget.false_stop_rate == pytest.approx(1 / 4) and monitor.false_stop_rate == 0.0
    expected = stats.binomtest(1, 4).proportion_ci(confidence_level=0.95, method="exact")
    assert (budget.false_stop_low, budget.false_stop_high) == pytest.approx((expected.low, expected.high))
    assert (monitor.false_stop_low, monitor.false_stop_high) == pytest.approx((0.0, 1 - 0.025 ** (1 / 6)))
    recall = np.array([0.8, 0.7, 0.9, 1.0])
    assert budget.recall_quantiles == pytest.approx({k: float(np.quantile(recall, q)) for k, q in
                                                     (("p05", .05), ("p25", .25), ("p50", .5), ("p75", .75),
                                                      ("p95", .95))})
    assert budget.reviewed_ratio_median == pytest.approx(np.median([1.0, 0.5, 1.5, 2.5]))
    # monitor: (depth + sampled) / 40 = 1.5, 2.5, 1.5, 2.1, 1.05, 1.5
    assert monitor.total_ratio_median == pytest.approx(1.5)
    assert monitor.reviewed_ratio_median == pytest.approx(np.median([1.25, 2.5, 1.0, 2.0, 1.0, 1.5]))
    assert monitor.kind == "certified" and budget.kind == "heuristic"


def test_no_stop_has_no_failure_rate() -> None:
    runs = runs_of("knee", [False, False], [100, 100], [10, 10], [0, 0])
    (summary,) = summarise([{"knee": runs}], 0.95)
    assert summary.stops == 0 and math.isnan(summary.failure_rate)
    assert (summary.failure_low, summary.failure_high) == (0.0, 1.0)
    assert summary.recall_quantiles["p05"] == 1.0


@pytest.mark.parametrize(("change", "field"), [
    ({"design": Design("stratified")}, "design"),
    ({"design": Design("rest")}, "sample_size"),
    ({"design": Design("population", sample_size=-3)}, "sample_size"),
    ({"design": Design("audit")}, "every"),
    ({"rules": ()}, "rules"),
    ({"rules": ("quant",)}, "rules"),
    ({"rules": ("monitor",)}, "rules"),
    ({"rules": ("knee", "knee")}, "rules"),
    ({"target": Fraction(1)}, "target"),
    ({"target": "high"}, "target"),
    ({"confidence": 1.0}, "confidence"),
    ({"look_every": 0}, "look_every"),
    ({"replicates": 0}, "replicates"),
    ({"seed": -1}, "seed"),
])
def test_bad_plans_are_refused_naming_the_field(change: dict[str, object], field: str) -> None:
    plan = replace(plan_for("rest", rules=("elusion",)), **change)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=rf"^{field}: ") as caught:
        validate_plan(plan)
    assert "\n" not in str(caught.value)


def test_a_rule_outside_its_design_is_refused_listing_the_applicable_ones() -> None:
    assert rules_for("rest")[:4] == ("elusion", "hypergeometric", "knee", "budget")
    with pytest.raises(ValueError, match=r"rules: 'monitor' .* rest design; it replays "
                                         + re.escape(", ".join(rules_for("rest"))) + "$"):
        validate_plan(plan_for("rest", rules=("monitor",)))


@pytest.mark.parametrize(("labels", "message"), [([0, 0, 0], "at least one relevant"), ([0, 2, 1], "0 .* or 1"),
                                                 ([], "at least one relevant")])
def test_bad_labels_are_refused(labels: list[int], message: str) -> None:
    with pytest.raises(ValueError, match=f"labels: .*{message}"):
        replay(np.array(labels, dtype=np.int8), plan_for("none"))


def test_a_population_sample_larger_than_the_queue_is_refused() -> None:
    with pytest.raises(ValueError, match=r"sample_size: .*exceeds"):
        replay(np.array([1, 0, 1, 0], dtype=np.int8), plan_for("population"))


def test_every_rule_has_a_kind_and_a_design() -> None:
    assert all(info.kind in ("certified", "heuristic", "invalid") and info.designs for info in RULES.values())
    assert {rule for design in DESIGNS for rule in rules_for(design)} == set(RULES)


def _front_loaded(size: int, relevant: int, scale: float, seed: int) -> npt.NDArray[np.int8]:
    rng = np.random.default_rng(seed)
    weights = np.exp(-np.arange(size) / scale)
    labels = np.zeros(size, dtype=np.int8)
    labels[rng.choice(size, size=relevant, replace=False, p=weights / weights.sum())] = 1
    return labels


def test_safe_replays_its_own_training_draws_at_the_next_look() -> None:
    """The documented contract: replicate j of chunk c draws its 1 % training set from
    SeedSequence(seed, spawn_key=(*key, c, 1 + stream)); the team stops at the first look at or after SAFE's stop
    depth; the training documents ranked after that look are judged (sampled) and their relevant ones found."""
    labels = _front_loaded(1000, 120, 150.0, 21)
    plan = ReplayPlan(Design("none"), ("safe",), Fraction(95, 100), 0.95, 10, CHUNK + 10, 9)
    runs = replay(labels, plan, key=(3,))["safe"]
    assert runs.kind == "heuristic" and runs.replicates == CHUNK + 10
    found = np.concatenate(([0], np.cumsum(labels)))
    expected: list[tuple[bool, int, int, int]] = []
    for chunk in range(2):
        gen = np.random.default_rng(np.random.SeedSequence(9, spawn_key=(3, chunk, 1 + RULES["safe"].stream)))
        for _ in range(CHUNK if chunk == 0 else 10):
            training = gen.choice(1000, size=10, replace=False)
            depth = stopping.safe_procedure(labels, training).stop_depth
            look = None if depth is None else -(-depth // 10) * 10
            if look is None or look >= 1000:
                expected.append((False, 1000, int(labels.sum()), 0))
                continue
            after = training[training >= look]
            expected.append((True, look, int(found[look] + labels[after].sum()), len(after)))
    assert list(zip(runs.stopped.tolist(), runs.depth.tolist(), runs.found.tolist(), runs.sampled.tolist(),
                    strict=True)) == expected
    assert runs.stopped.any() and len(set(runs.depth.tolist())) > 1  # the random set moves the stop


def test_safe_is_reproducible_by_seed_and_independent_of_the_other_rules() -> None:
    labels = _front_loaded(1000, 120, 150.0, 21)
    plan = ReplayPlan(Design("none"), ("safe",), Fraction(95, 100), 0.95, 10, 40, 9)
    first = replay(labels, plan)["safe"]
    assert replay(labels, plan)["safe"] == first
    with_others = replay(labels, replace(plan, rules=("knee", "consecutive-irrelevant-50", "safe")))["safe"]
    assert with_others == first
    other_seed = replay(labels, replace(plan, seed=10))["safe"]
    assert not np.array_equal(other_seed.depth, first.depth)


def test_safe_is_replayed_under_the_design_none_only() -> None:
    assert RULES["safe"].designs == ("none",) and "safe" in rules_for("none")
    for design in ("rest", "population", "audit"):
        plan = ReplayPlan(Design(design, sample_size=20, every=5), ("safe",), Fraction(4, 5), 0.9, 10, 1, 1)
        with pytest.raises(ValueError, match=f"'safe' cannot be replayed under the {design} design"):
            validate_plan(plan)
