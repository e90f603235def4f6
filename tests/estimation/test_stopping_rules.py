"""Stopping rules (reference §7): QBCB and hypergeometric vectors, target-method K, heuristics' mechanics."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from reviewdepth.estimation.stopping import (
    autotar_checkpoints,
    batch_precision,
    budget_method,
    consecutive_irrelevant,
    direct_recall_rule,
    elusion_rule,
    hypergeometric_p_value,
    hypergeometric_test,
    knee_method,
    knee_rho,
    min_positives,
    qbcb,
    qbcb_threshold,
    quant_estimate,
    quant_rule,
    rule_2399,
    safe_procedure,
    safe_training_size,
    target_method,
    target_sample_size,
)


@pytest.mark.parametrize(("r", "tau", "j"), [(100, 0.9, 96), (100, 0.95, 99), (59, 0.95, 59), (58, 0.95, None),
                                             (30, 0.8, 28), (200, 0.95, 196)])
def test_qbcb_vectors(r: int, tau: float, j: int | None) -> None:
    assert qbcb_threshold(r, tau, 0.05) == j


def test_qbcb_threshold_definition() -> None:
    for r in range(1, 150, 7):
        for tau in (0.5, 0.8, 0.9, 0.95):
            j = qbcb_threshold(r, tau, 0.05)
            if j is None:
                assert tau**r > 0.05
                continue
            assert stats.binom.sf(j - 1, r, tau) <= 0.05
            assert j == 1 or stats.binom.sf(j - 2, r, tau) > 0.05


def test_sample_size_facts() -> None:
    assert min_positives(0.95, 0.05) == 59 and min_positives(0.9, 0.05) == 29
    assert target_sample_size(0.95, 0.05) == 59 and target_sample_size(0.7, 0.05) == 9
    assert target_sample_size(0.95, 0.05, "published") == 60 and target_sample_size(0.7, 0.05, "published") == 10
    assert qbcb_threshold(min_positives(0.95, 0.05), 0.95, 0.05) == 59  # j = r is the target method
    with pytest.raises(ValueError):
        target_sample_size(0.95, 0.05, "approx")


def test_qbcb_rule() -> None:
    ranks = np.arange(10, 1010, 10)  # 100 positives at ranks 10, 20, …, 1000
    ev = qbcb(ranks, reviewed=985, tau=0.9)
    assert ev.kind == "certified" and ev.stop_depth == 960 and ev.stop_now is True
    assert ev.details["j"] == 96 and "stop." in ev.reason
    ev = qbcb(ranks, reviewed=955, tau=0.9)
    assert ev.stop_now is False and "review to rank 960" in ev.reason
    few = qbcb(ranks[:58], reviewed=10_000, tau=0.95)
    assert few.stop_now is None and few.stop_depth is None and few.details["min_positives"] == 59
    assert "59" in few.reason


def test_target_method() -> None:
    targets = np.arange(1, 60) * 7  # 59 targets, deepest at 413
    ev = target_method(targets[::-1], reviewed=413)
    assert ev.stop_now is True and ev.stop_depth == 413 and ev.details["K"] == 59
    assert target_method(targets, reviewed=412).stop_now is False
    short = target_method(targets[:58], reviewed=1000)
    assert short.stop_now is None and "58 of the K = 59" in short.reason
    pub = target_method(targets, reviewed=1000, form="published")
    assert pub.stop_now is None and pub.details["K"] == 60


def test_direct_rule_matches_qbcb() -> None:
    ranks = np.arange(5, 505, 5)  # 100 positives
    for reviewed in (470, 490, 494, 495, 500):
        d = direct_recall_rule(ranks, reviewed, tau=0.95)
        q = qbcb(ranks, reviewed, tau=0.95)
        assert d.stop_now == q.stop_now and d.stop_depth == q.stop_depth == 495
    d = direct_recall_rule(ranks, 495, tau=0.95)
    assert float(d.details["recall_lower"]) >= 0.95
    assert direct_recall_rule(np.array([], dtype=np.int64), 10).stop_now is None


def test_hypergeometric_vectors() -> None:
    assert hypergeometric_p_value(10000, 5000, 191, 2000, 0, 0.95) == (pytest.approx(0.024616, abs=1e-6), 11)
    assert hypergeometric_p_value(10000, 4000, 191, 1000, 0, 0.95)[0] == pytest.approx(0.183238, abs=1e-6)
    assert hypergeometric_p_value(10000, 5000, 191, 2000, 1, 0.95) == (pytest.approx(0.102104, abs=1e-6), 12)
    labels = np.concatenate([np.ones(191), np.zeros(2809), np.zeros(2000)])
    ev = hypergeometric_test(labels, 10000, 0.95, 0.05, urn_start=3000)
    # Random mode certifies the 3,000 reviewed plus the 2,000 urn documents, not a queue depth.
    assert ev.kind == "certified" and ev.stop_now is True and ev.stop_depth is None
    assert ev.details["K_tar"] == 11 and ev.details["documents_seen"] == 5000
    ev1 = hypergeometric_test(labels[:4000], 10000, 0.95, 0.05, urn_start=3000)
    assert ev1.stop_now is False and ev1.stop_depth is None
    labels[3500] = 1
    ev2 = hypergeometric_test(labels, 10000, 0.95, 0.05, urn_start=3000)
    assert ev2.stop_now is False and ev2.details["p_value"] == pytest.approx(0.102104, abs=1e-6)


def test_hypergeometric_ranked_mode() -> None:
    labels = np.concatenate([np.ones(191), np.zeros(4809)])
    ev = hypergeometric_test(labels, 10000, 0.95, 0.05)
    assert ev.kind == "heuristic" and ev.stop_now is True and ev.stop_depth == 5000
    # The minimum over urns is no larger than the p of the urn of the last 2,000.
    assert float(ev.details["p_value"]) <= 0.024616
    early = hypergeometric_test(labels[:400], 10000, 0.95, 0.05)
    assert early.stop_now is False
    # K_tar beyond the pool means H0 is impossible: p = 0.
    assert hypergeometric_p_value(100, 100, 50, 10, 0, 0.5)[0] == 0.0


def test_elusion_rule() -> None:
    ev = elusion_rule(380, 10000, 500, 2, tau=0.7, alpha=0.05, reviewed=3000)
    assert ev.stop_now is True and ev.stop_depth == 3000
    assert float(ev.details["recall_lower"]) == pytest.approx(380 / 503)
    assert elusion_rule(380, 10000, 500, 2, tau=0.9).stop_now is False


def test_autotar_schedule_and_knee() -> None:
    pts = autotar_checkpoints(100)
    assert list(pts[:6]) == [1, 3, 6, 10, 15, 21] and pts[-1] <= 100
    steps = np.diff(np.concatenate(([0], pts)))
    assert all(b2 == b1 + -(-b1 // 10) for b1, b2 in itertools.pairwise(steps))
    cg = np.concatenate(([0], np.cumsum([1, 1, 1, 1, 0, 0, 0, 0, 0, 0])))
    i, rho = knee_rho(cg, 10)
    assert i == 4 and rho == pytest.approx((4 / 4) / (1 / 6))
    assert knee_rho(cg, 10, "max")[1] >= rho


def test_knee_method_fires_on_a_plateau_not_before() -> None:
    rng = np.random.default_rng(3)
    head = (rng.random(400) < 0.5).astype(int)
    labels = np.concatenate([head, np.zeros(3000, dtype=int)])
    ev = knee_method(labels)
    assert ev.kind == "heuristic" and ev.stop_now is True and ev.stop_depth is not None
    assert ev.stop_depth > 400  # the plateau must be long enough for ρ ≥ 156 − min(relret, 150)
    steady = (rng.random(3000) < 0.3).astype(int)
    assert knee_method(steady).stop_now is False
    assert knee_method(labels[:100]).stop_now is False  # under the 150-document gate


def test_budget_method() -> None:
    labels = np.zeros(800, dtype=int)
    labels[:5] = 1
    ev = budget_method(labels, population=1000)
    assert ev.stop_now is True and ev.stop_depth is not None and ev.stop_depth >= 750
    assert budget_method(labels[:700], population=1000).stop_now is False
    rich = np.concatenate([np.ones(100, dtype=int), np.zeros(1000, dtype=int)])
    fired = budget_method(rich, population=2000)
    assert fired.stop_now is True and fired.stop_depth is not None and fired.stop_depth >= 200


def test_quant() -> None:
    p = np.array([0.9, 0.8, 0.7, 0.1, 0.05, 0.05])
    est, var = quant_estimate(p, 3)
    s_all, s_rev = p.sum(), p[:3].sum()
    v = p * (1 - p)
    assert est == pytest.approx(s_rev / s_all)
    assert var == pytest.approx(s_rev**2 * v.sum() / s_all**4 + v[:3].sum() / s_all**2)
    ev = quant_rule(p, 3, tau=0.8)
    assert ev.rule == "quant" and ev.stop_now is True and ev.stop_depth == 3
    ci = quant_rule(p, 3, tau=0.8, m=2)
    assert ci.rule == "quant-ci" and ci.stop_now is False
    assert ci.stop_depth is None or ci.stop_depth > 3


def test_every_rule_says_what_it_certifies() -> None:
    ranks = np.arange(10, 1010, 10)
    labels = np.r_[np.ones(20), np.zeros(300)]
    prefix_rules = [
        qbcb(ranks, 985, 0.9), target_method(ranks, 1000), direct_recall_rule(ranks, 985, 0.9),
        elusion_rule(380, 10000, 500, 2, 0.7, reviewed=3000), hypergeometric_test(labels, 1000),
        knee_method(labels), budget_method(labels, 1000), quant_rule(np.full(100, 0.1), 50),
    ]
    assert all(ev.certifies == "reviewed prefix" for ev in prefix_rules)


def test_random_urn_test_certifies_prefix_plus_urn_not_the_prefix() -> None:
    """Issue 11: 6 relevant in 8 ranked, then an urn of all 56 remaining documents holding 6 relevant. Recall of
    the prefix is 6/12 = 0.5; the test (rightly) rejects 'recall < 0.95' for the seen set (prefix + urn = all 64
    documents, recall 1), which says nothing for the prefix: it must not report a stop at depth 8."""
    labels = np.r_[np.ones(6), np.zeros(2), np.ones(6), np.zeros(50)]
    ev = hypergeometric_test(labels, 64, .95, .05, urn_start=8)
    assert ev.stop_now is True and ev.kind == "certified"
    assert ev.stop_depth != 8 and ev.stop_depth is None
    assert ev.certifies == "the reviewed prefix plus the urn's documents"
    assert ev.details["documents_seen"] == 64 and ev.details["relevant_seen"] == 12
    assert "urn's 6 positives as found" in ev.reason
    # The guarantee is about the seen set: here it holds (12 of 12 seen), while the prefix alone has recall 0.5.
    assert labels.sum() / 12 >= 0.95 and labels[:8].sum() / 12 == 0.5


def test_target_method_uses_the_first_k_positives_in_draw_order() -> None:
    """K = 59 for 95 %/95 %; the sample went on to K + 5 = 64 positives, the 62nd of which is deep (rank 5,000).
    The target set is the first 59 drawn (deepest at rank 413), so the stop depth is 413, not 5,000."""
    first_k = np.arange(1, 60) * 7
    rng = np.random.default_rng(3)
    drawn = np.r_[rng.permutation(first_k), [30, 60, 5000, 90, 120]]
    ev = target_method(drawn, reviewed=413, in_draw_order=True)
    assert ev.details["K"] == 59 and ev.stop_depth == 413 and ev.stop_now is True
    assert ev.details["ignored_after_K"] == 5 and "draw order" in ev.reason
    assert target_method(drawn, reviewed=412, in_draw_order=True).stop_now is False
    # The deep positive drawn among the first K is a target: then the rule must go that deep.
    early = np.r_[drawn[:10], [5000], drawn[10:58], [20, 40]]
    assert target_method(early, reviewed=4999, in_draw_order=True).stop_depth == 5000
    # Unordered ranks: which K came first is unknown, so every positive is a target (valid, deeper).
    assert target_method(np.sort(drawn), reviewed=413).stop_depth == 5000
    with pytest.raises(ValueError):
        target_method(np.r_[0, drawn], reviewed=10, in_draw_order=True)


def test_target_method_in_draw_order_reaches_tau_by_simulation() -> None:
    """The guarantee for the first K drawn: R = 300 relevant at queue ranks 1…300 (recall at depth d is d/300);
    draw positives at random without replacement, keep going past K; P(recall at stop depth ≥ 0.95) ≥ 0.95."""
    rng = np.random.default_rng(11)
    reps, hits = 2000, 0
    for _ in range(reps):
        order = rng.permutation(300)[:70] + 1
        depth = target_method(order, reviewed=0, in_draw_order=True).stop_depth
        assert depth is not None
        hits += depth / 300 >= 0.95
    assert hits / reps >= 0.95 - 3 * math.sqrt(0.05 * 0.95 / reps)


def test_consecutive_irrelevant_stops_at_the_end_of_the_first_run_of_n() -> None:
    labels = [1, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0]
    fired = consecutive_irrelevant(labels, n=3)
    assert (fired.stop_now, fired.stop_depth, fired.kind) == (True, 7, "heuristic")  # ranks 5-7, not 9-11
    assert consecutive_irrelevant(labels[:6], n=3).stop_now is False  # a run of 2 so far
    assert consecutive_irrelevant(labels[:6], n=3).details["run_at_end"] == 2
    assert consecutive_irrelevant(labels, n=4).stop_depth == 12  # only the last run is 4 long
    assert consecutive_irrelevant(labels, n=5).stop_now is False


def test_consecutive_irrelevant_with_n_equal_to_the_reviewed() -> None:
    assert consecutive_irrelevant([0, 0, 0, 0], n=4).stop_depth == 4  # fires exactly at the last reviewed
    assert consecutive_irrelevant([0, 0, 0, 1], n=4).stop_now is False
    assert consecutive_irrelevant([0, 0, 0], n=4).stop_now is False  # fewer reviewed than n
    assert consecutive_irrelevant([], n=4).stop_now is False
    assert consecutive_irrelevant([0] * 100).stop_depth == 100 and consecutive_irrelevant([0] * 99).stop_now is False
    with pytest.raises(ValueError):
        consecutive_irrelevant([0], n=0)


def _first_2399_by_hand(labels: list[int]) -> int | None:
    """The 2399 rule's definition read literally: the first d with d >= 6/5·F(d) + 2399, F by counting."""
    for d in range(1, len(labels) + 1):
        if d >= Fraction(6, 5) * sum(labels[:d]) + 2399:
            return d
    return None


def test_rule_2399_stops_at_1_2_found_plus_2399() -> None:
    assert rule_2399([0] * 2399).stop_depth == 2399  # nothing found: 2,399 reviewed
    assert rule_2399([0] * 2398).stop_now is False
    one = [1] + [0] * 2400  # 1.2 + 2399 = 2400.2: the 2,401st document, not the 2,400th
    assert rule_2399(one).stop_depth == 2401 and rule_2399(one[:2400]).stop_now is False
    five = [1] * 5 + [0] * 3000  # 6 + 2399
    fired = rule_2399(five)
    assert (fired.stop_now, fired.stop_depth, fired.kind, fired.rule) == (True, 2405, "heuristic", "2399-rule")
    assert rule_2399([]).stop_now is False
    rng = np.random.default_rng(7)
    for _ in range(5):
        labels = (rng.random(3200) < rng.uniform(0.0, 0.3)).astype(int).tolist()
        assert rule_2399(labels).stop_depth == _first_2399_by_hand(labels)


def test_rule_2399_fires_at_the_first_depth_only() -> None:
    # the rule can hold, stop holding after relevant documents, and hold again: the stop is the first depth
    labels = [0] * 2399 + [1] * 3 + [0] * 10
    assert rule_2399(labels).stop_depth == 2399 == _first_2399_by_hand(labels)


def test_batch_precision_reads_full_batches_and_needs_slack_in_a_row() -> None:
    quarter = Fraction(1, 4)
    labels = [*[1, 1, 0, 0], *[1, 0, 0, 0], *[1, 1, 0, 0], *[0, 0, 0, 0], *[1, 0, 0, 0], 0, 0]
    assert batch_precision(labels, batch=4, cutoff=quarter).stop_depth == 8  # batch 2 has precision 1/4
    two = batch_precision(labels, batch=4, cutoff=quarter, slack=2)
    assert (two.stop_now, two.stop_depth, two.rule, two.kind) == (True, 20, "batch-precision", "heuristic")
    assert batch_precision(labels, batch=4, cutoff=quarter, slack=3).stop_now is False
    assert batch_precision(labels, batch=4, cutoff=Fraction(0), slack=1).stop_depth == 16  # precision 0 only
    # an unfinished batch is not read, however poor
    partial = batch_precision([1, 1, 0, 0, 0, 0, 0], batch=4, cutoff=quarter)
    assert partial.stop_now is False and partial.details["batches"] == 1


def test_batch_precision_defaults_are_tarexps() -> None:
    five = [1] * 5 + [0] * 195  # 5/200: at the cutoff, which stops (precision <= 5/200)
    assert batch_precision(five).stop_depth == 200
    six = [1] * 6 + [0] * 194 + [1] * 6 + [0] * 194
    assert batch_precision(six).stop_now is False
    assert batch_precision([0] * 199).stop_now is False  # no full batch of 200 yet
    assert batch_precision(six + [0] * 200).stop_depth == 600
    for bad in ({"batch": 0}, {"slack": 0}, {"cutoff": Fraction(1)}, {"cutoff": Fraction(-1, 10)}):
        with pytest.raises(ValueError):
            batch_precision([0] * 10, **bad)  # type: ignore[arg-type]


def test_hyperbolic_mass_is_the_integral_of_the_rate() -> None:
    from scipy.integrate import quad

    from reviewdepth.estimation.stopping import hyperbolic_mass, hyperbolic_rate

    for a, b, k in ((0.2, 0.3, 0.01), (0.05, 0.7, 0.002), (0.4, 1.0, 0.05), (0.1, 1e-4, 0.001)):
        numeric, _ = quad(lambda x, a=a, b=b, k=k: float(hyperbolic_rate(np.array(x), a, b, k)), 250.0, 4000.0)
        assert hyperbolic_mass(a, b, k, 250.0, 4000.0) == pytest.approx(numeric, rel=1e-7)


def test_point_process_checkpoints_gate_and_early_stop() -> None:
    from reviewdepth.estimation.stopping import hyperbolic_point_process, point_process_checkpoints

    assert point_process_checkpoints(4000).tolist() == list(range(100, 4000, 100))  # every 2.5 % of N, below N
    top = [1] * 25 + [0] * 3975  # by rank 100 (the first checkpoint): 25 found, ranks 51-100 hold none
    fired = hyperbolic_point_process(top, 4000)
    assert (fired.stop_depth, fired.kind, fired.rule) == (100, "heuristic", "point-process")
    assert hyperbolic_point_process(top[:99], 4000).stop_now is False  # the checkpoint 100 is not reached
    few = [1] * 19 + [0] * 3981  # never 20 relevant: the gate holds it
    assert hyperbolic_point_process(few, 4000).stop_now is False


def test_point_process_stops_where_its_prediction_reaches_the_target() -> None:
    from scipy.integrate import quad
    from scipy.stats import poisson

    from reviewdepth.estimation.stopping import hyperbolic_point_process, hyperbolic_rate

    rng = np.random.default_rng(5)
    size = 4000
    labels = (rng.random(size) < 0.3 / (1 + 0.5 * 0.004 * np.arange(size)) ** 2).astype(int)
    fired = hyperbolic_point_process(labels, size, tau=0.9, confidence=0.95)
    assert fired.stop_depth is not None and "predicted_relevant" in fired.details
    d = fired.details
    n, found = int(d["checked_at"]), int(d["found"])
    assert n == fired.stop_depth and found == labels[:n].sum()
    a, b, k = float(d["a"]), float(d["b"]), float(d["k"])
    mu, _ = quad(lambda x: float(hyperbolic_rate(np.array(x), a, b, k)), n, size)
    predicted = found + int(poisson.ppf(0.95, mu))
    assert predicted == d["predicted_relevant"] and found >= 0.9 * predicted
    assert hyperbolic_point_process(labels[:n - 1], size, tau=0.9).stop_now is False


def _ranking(size: int, relevant_ranks: list[int]) -> np.ndarray:
    """0/1 labels with relevant documents at the given 1-based ranks."""
    labels = np.zeros(size, dtype=np.int8)
    labels[np.array(relevant_ranks) - 1] = 1
    return labels


# SAFE on 1,000 documents with a random set of t = 10 (1 %): the 10 % floor needs 100 screened. Each case below makes
# one of phase 2's three conditions the last to hold; phase 3 then needs 50 more irrelevant in a row.
TRAINING_AT_END = list(range(900, 910))  # 0-based ranks 900–909, ranked after every stop below


def test_safe_training_set_is_one_percent_rounded_up() -> None:
    assert [safe_training_size(n) for n in (1, 99, 100, 101, 1000, 1001, 38_000)] == [1, 1, 1, 2, 10, 11, 380]
    with pytest.raises(ValueError, match="fraction"):
        safe_training_size(100, Fraction(0))


def test_safe_the_consecutive_run_binds() -> None:
    # relevant at 1–5, 60 and 89: at rank 90 the 10 % floor holds (10 + 90 screened) but the run is 1; it reaches
    # 50 at rank 89 + 50 = 139 (phase 2); phase 3 meets a relevant at 160, then 50 irrelevant: rank 210
    labels = _ranking(1000, [1, 2, 3, 4, 5, 60, 89, 160])
    ev = safe_procedure(labels, TRAINING_AT_END)
    assert ev.kind == "heuristic" and ev.guarantee == "none" and ev.stop_now is True
    assert (ev.details["phase2_stop"], ev.details["phase3_stop"], ev.stop_depth) == (139, 210, 210)
    assert ev.details["estimated_relevant"] == 0 and ev.details["training_after_stop"] == 10


def test_safe_the_ten_percent_floor_binds() -> None:
    # relevant at 1–5: 50 irrelevant in a row at rank 55, but 10 + k >= 100 only from k = 90 (phase 2); phase 3:
    # 50 more irrelevant, rank 140
    ev = safe_procedure(_ranking(1000, [1, 2, 3, 4, 5]), TRAINING_AT_END)
    assert (ev.details["phase2_stop"], ev.stop_depth) == (90, 140)


def test_safe_twice_the_estimate_binds() -> None:
    # 2 of the 10 random documents relevant: estimate 2 × 1000 / 10 = 200, twice that 400 screened = 10 + k, so
    # k = 390 (phase 2); phase 3: rank 440. The two relevant training documents ranked after the stop stay found.
    labels = _ranking(1000, [1, 2, 3, 4, 5, 901, 902])
    ev = safe_procedure(labels, TRAINING_AT_END)
    assert ev.details["estimated_relevant"] == 200
    assert (ev.details["phase2_stop"], ev.stop_depth) == (390, 440)
    assert ev.details["training_relevant_after_stop"] == 2 and ev.details["screened_at_stop"] == 450
    # a factor of 1 (not SAFE's) halves the bar: 200 = 10 + k at k = 190
    assert safe_procedure(labels, TRAINING_AT_END, estimate_factor=1).details["phase2_stop"] == 190


def test_safe_skips_the_training_documents_in_the_ranking() -> None:
    # random set at ranks 101–110 (irrelevant, already screened): they are skipped, so neither counted twice nor
    # part of a run. After the relevant at 89: 90–100 (11) and 111–149 (39) make 50 in a row at rank 149, where
    # 10 + 149 − 10 = 149 are screened; phase 3 ends at 199
    labels = _ranking(1000, [1, 2, 3, 4, 5, 60, 89])
    ev = safe_procedure(labels, list(range(100, 110)))
    assert (ev.details["phase2_stop"], ev.stop_depth) == (149, 199)
    assert ev.details["training_after_stop"] == 0 and ev.details["screened_at_stop"] == 199


def test_safe_never_stops_when_a_phase_runs_out_of_documents() -> None:
    # 100 documents, t = 1 at rank 100: phase 2 stops at 55 (run of 50 after rank 5; 1 + 55 >= 10), phase 3 would
    # need rank 105
    ev = safe_procedure(_ranking(100, [1, 2, 3, 4, 5]), [99])
    assert ev.stop_now is False and ev.stop_depth is None and ev.details["phase2_stop"] == 55
    assert "screens every document" in ev.reason
    # relevant every 40 ranks: no run of 50 in phase 2
    ev = safe_procedure(_ranking(1000, list(range(1, 1001, 40))), TRAINING_AT_END)
    assert ev.stop_depth is None and ev.details["phase2_stop"] == 0


@pytest.mark.parametrize(("training", "changes", "message"), [
    ([5, 5], {}, "distinct ranks"), ([1000], {}, "distinct ranks"), ([], {}, "non-empty"),
    ([1], {"phase2_run": 0}, "phase2_run"), ([1], {"phase3_run": True}, "phase3_run"),
    ([1], {"estimate_factor": 0}, "estimate_factor"), ([1], {"min_screened": Fraction(3, 2)}, "min_screened")])
def test_safe_refuses_bad_parameters(training: list[int], changes: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        safe_procedure(np.zeros(1000, dtype=np.int8), training, **changes)  # type: ignore[arg-type]
