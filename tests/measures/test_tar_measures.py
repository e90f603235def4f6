"""Recall-oriented measures on the concept text's worked example (systems A and B, R = 4, N = 12) and the
compat-versus-clean differences (reference: ../shared/reference/recall-measures-and-estimation.md §2.6, §3)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from reviewdepth.measures import depth, tar
from reviewdepth.measures.tar_suite import TopicRun, asreview_topic, clean_topic, clef2017_topic, clef2019_topic

A = np.array([1, 1, 0, 0, 0, 0, 0, 0, 1, 1])
B = np.array([0, 0, 1, 1, 1, 1, 0, 0, 0, 0])
R = 4


def flagged(rel: np.ndarray, n: int, *flags: int) -> TopicRun:
    plain = TopicRun.plain("q1", rel, n, R)
    marks = np.zeros(len(rel), dtype=bool)
    for position in flags:
        marks[position - 1] = True
    return TopicRun(plain.qid, plain.rel, plain.shown, plain.feedback, plain.cost_shown, plain.cost_feedback,
                    marks, n, R)


def test_worked_example_core_values() -> None:
    assert round(tar.average_precision(A, R), 3) == 0.683 and round(tar.average_precision(B, R), 3) == 0.525
    assert tar.last_rel(A) == 10 and tar.last_rel(B) == 6
    assert round(depth.wss_100(A, 12, R), 3) == 0.167 and depth.wss_100(B, 12, R) == 0.5
    assert tar.norm_area(A, 12, R) == pytest.approx(28 / 40) and tar.norm_area(B, 12, R) == pytest.approx(32 / 40)
    assert round(depth.wss_at(A, 12, R, "0.95"), 3) == 0.117 and round(depth.wss_at(B, 12, R, "0.95"), 3) == 0.45
    assert round(tar.loss_e(10, 12, R), 3) == 0.642 and tar.loss_r(tar.recall(A, R)) == 0.0
    assert tar.rels_found(A) == 4 and tar.num_shown(A) == 10 and round(tar.norm_last_rel(A, 12), 3) == 0.833


def test_recall_oriented_measures_reverse_the_ap_ranking() -> None:
    assert tar.average_precision(A, R) > tar.average_precision(B, R)
    assert tar.last_rel(B) < tar.last_rel(A)
    assert depth.wss_100(B, 12, R) > depth.wss_100(A, 12, R)
    assert tar.norm_area(B, 12, R) > tar.norm_area(A, 12, R)
    assert depth.depth_at_recall(B, R, "1") == 6 and depth.depth_at_recall(A, R, "1") == 10


def test_with_n_equal_to_the_ten_judged_documents() -> None:
    assert depth.wss_100(A, 10, R) == 0.0 and round(depth.wss_at(A, 10, R, "0.95"), 3) == -0.05
    assert tar.norm_area(A, 10, R) == pytest.approx(0.625) and tar.norm_area(B, 10, R) == pytest.approx(0.75)
    assert round(tar.loss_e(10, 10, R), 3) == 0.925
    assert round(depth.wss_100(B, 10, R), 3) == 0.4 and round(depth.wss_at(B, 10, R, "0.95"), 3) == 0.35


@pytest.mark.parametrize(("tau", "r_count", "ceil", "tar_eval", "asreview"), [
    ("0.95", 30, 29, 28, 28), ("0.95", 14, 14, 13, 13), ("0.95", 10, 10, 10, 9), ("0.95", 4, 4, 4, 3),
    ("0.55", 100, 55, 55, 55), ("0.95", 20, 19, 19, 19),
])
def test_target_count_rules(tau: str, r_count: int, ceil: int, tar_eval: int, asreview: int) -> None:
    assert depth.target_count(tau, r_count, "ceil") == ceil
    assert depth.target_count(tau, r_count, "tar_eval") == tar_eval  # round half even
    assert depth.target_count(tau, r_count, "asreview") == asreview  # floor
    assert depth.target_count(0.55, 100) == 55  # a float is read as its decimal text, not 0.55000000000000004…
    assert depth.target_count(Fraction(11, 20), 100) == 55


def test_depth_not_reached_and_r_zero() -> None:
    ranks_b = depth.relevant_ranks_from_labels(B)
    assert depth.depth_at_count(ranks_b, 5) is None and depth.depth_at_count(ranks_b, 0) == 0
    assert depth.depth_at_recall(B, 0, "0.95") is None
    assert depth.wss_at(B[:4], 12, R, "0.95") == 0.0 and depth.wss_100(B[:5], 12, R) == 0.0


def test_clef2017_ncg_is_one_decile_late_and_clean_is_not() -> None:
    _, ncg_a = tar.clef2017_ncg(A, np.ones(10, dtype=bool), 12, R)
    _, ncg_b = tar.clef2017_ncg(B, np.ones(10, dtype=bool), 12, R)
    assert [ncg_a[i] for i in (0, 1, 7, 8)] == [0.25, 0.5, 0.75, 1.0]
    assert [ncg_b[i] for i in (0, 1, 7, 8)] == [0.0, 0.0, 1.0, 1.0]
    # N = 10 (a multiple of 10): the script prints NCG@10 = 0 although A's first document is relevant
    _, ncg_10 = tar.clef2017_ncg(A, np.ones(10, dtype=bool), 10, R)
    assert ncg_10[0] == 0.0 and ncg_10[1] == 0.25
    clean = tar.recall_at_percent(A, 10, R, [10, 20])
    assert clean.tolist() == [0.25, 0.5]


def test_tiny_topic_crashes_the_2017_script_not_the_clean_suite() -> None:
    tiny = np.array([1, 0, 1])
    with pytest.raises(ZeroDivisionError):
        tar.clef2017_ncg(tiny, np.ones(3, dtype=bool), 5, 2)
    values = clean_topic(TopicRun.plain("t", tiny, 5, 2)).values
    assert values["NCG@10"] == 0.0 and values["NCG@20"] == 0.5 and values["NCG@100"] == 1.0
    assert values["wss_100"] == pytest.approx(0.4)


def test_clef2019_recall_at_percent_seed_and_short_run_quirk() -> None:
    _, ra = tar.clef2019_recall_at_percent(A, 12, R)
    _, rb = tar.clef2019_recall_at_percent(B, 12, R)
    picks = [7, 16, 24, 49, 74, 79]  # 8 %, 17 %, 25 %, 50 %, 75 %, 80 %
    assert [ra[i] for i in picks] == [0.25, 0.5, 0.5, 0.5, 0.75, 1.0]
    assert [rb[i] for i in picks] == [0.0, 0.0, 0.25, 1.0, 1.0, 1.0]
    # N = 300, A's 10 lines: checkpoints every 3 positions; the 2019 script keeps CG at the last checkpoint
    # reached (position 9) for every later x, so the relevant 10th line never counts; the clean rule does
    _, short = tar.clef2019_recall_at_percent(A, 300, R)
    assert short[2] == 0.75 and short[99] == 0.75
    assert tar.recall_at_percent(A, 300, R, [100])[0] == 1.0


def test_clef2019_topic_seed_no_flag() -> None:
    a = clef2019_topic(flagged(A, 12)).values
    b = clef2019_topic(flagged(B, 12)).values
    assert (a["norm_last_rel"], a["threshold"], a["norm_threshold"]) == (0.833, 12, 1.0)
    assert (b["norm_last_rel"], b["threshold"], b["norm_threshold"]) == (0.5, 12, 1.0)
    assert a["total_cost"] == -70.0 and b["total_cost"] == -70.0
    assert round(float(a["wss_95"]), 3) == 0.117 and b["wss_100"] == 0.5


def test_double_charged_cost_compat_and_clean() -> None:
    compat = clef2019_topic(flagged(A, 12, 3)).values
    assert compat["threshold"] == 3 and compat["recall_threshold"] == 0.5 and compat["r"] == 0.5
    assert round(float(compat["loss_e"]), 3) == 0.058 and round(float(compat["loss_er"]), 3) == 0.308
    assert compat["total_cost"] == 43.0  # bug: relevant documents 9 and 10 charged twice
    clean = clean_topic(flagged(A, 12, 3)).values
    assert clean["utility"] == 3.0 and clean["recall_threshold"] == 0.5 and clean["num_shown"] == 3
    assert tar.clef2019_utility_cost(A, 3, R) == 43.0 and tar.utility_cost(3, 2, R) == 3.0


def test_two_flags_threshold_takes_the_last_loss_the_first() -> None:
    values = clef2019_topic(flagged(A, 12, 3, 9)).values
    assert values["threshold"] == 9 and values["recall_threshold"] == 0.75
    assert values["r"] == 0.5 and values["total_cost"] == 43.0


def test_clef2017_topic_seed_and_integer_zero_wss() -> None:
    a = clef2017_topic(TopicRun.plain("q1", A, 12, R)).values
    assert (a["last_rel"], a["norm_area"], round(float(a["ap"]), 3)) == (10, 0.7, 0.683)
    assert a["total_cost"] == 10.0 and a["NCG@10"] == 0.25 and a["NCG@90"] == 1.0
    short = clef2017_topic(TopicRun.plain("q1", A[:9], 12, R)).values
    assert short["wss_100"] == 0 and isinstance(short["wss_100"], int)  # printed "0", as the script


def test_clef2017_costs_with_missed_documents() -> None:
    # 9 documents shown with feedback asked on each, one relevant missed, N = 12
    t = TopicRun("q", A[:9], np.ones(9, dtype=bool), np.ones(9, dtype=bool), np.ones(9, dtype=bool),
                 np.ones(9, dtype=bool), np.zeros(9, dtype=bool), 12, R)
    v = clef2017_topic(t).values
    assert v["total_cost"] == 27.0 and v["num_feedback"] == 9
    assert v["total_cost_uniform"] == 27.0 + 3 * 2.0 * 1 / 4
    assert v["total_cost_weighted"] == 27.0  # M_r = 1: the script's loop adds nothing
    assert tar.cost_weighted(0.0, 3, 3) == pytest.approx(tar.clef2017_cost_weighted(0.0, 3, 3)) == 4.5


def test_asreview_seed_vectors() -> None:
    a = asreview_topic(TopicRun.plain("q1", A, 12, R)).values
    b = asreview_topic(TopicRun.plain("q1", B, 12, R)).values
    assert [a[k] for k in ("rrf@10", "rrf@25", "rrf@50", "rrf@75", "rrf@90")] == [0.25, 0.5, 0.5, 0.75, 1.0]
    assert [b[k] for k in ("rrf@10", "rrf@25", "rrf@50", "rrf@75", "rrf@90")] == [0.0, 0.25, 1.0, 1.0, 1.0]
    assert round(float(a["wss@95"]), 3) == -0.083 and b["wss@95"] == 0.25
    assert round(float(a["wss@100"]), 3) == 0.083 and round(float(b["wss@100"]), 3) == 0.417
    assert a["erf@10"] == 0.25 and b["erf@10"] == 0.0
    assert a["atd"] == 5.5 and b["atd"] == 4.5 and a["loss"] == 0.375 and b["loss"] == 0.25
    assert round(float(a["ndcg"]), 6) == 0.867044 and round(float(b["ndcg"]), 6) == 0.653393
    assert tar.time_to_discovery(A).tolist() == [1, 2, 9, 10]
    ten = asreview_topic(TopicRun.plain("q1", A, 10, R)).values
    assert ten["loss"] == 0.5 and round(float(ten["wss@95"]), 3) == -0.2


def test_asreview_recall_curve_points() -> None:
    x, y = tar.asreview_recall_curve(tar.asreview_labels(B, 12))
    assert len(x) == 12 and x[0] == 1 / 12 and x[-1] == 1.0
    assert y.tolist()[:6] == [0.0, 0.0, 0.25, 0.5, 0.75, 1.0]
    assert tar.asreview_rrf(tar.asreview_labels(B, 12), 0.05) == 0.0  # below the first point


def test_gain_area_is_exact_and_matches_a_direct_sum() -> None:
    rng = np.random.default_rng(5)
    for _ in range(50):
        rel = (rng.random(int(rng.integers(1, 60))) < 0.3).astype(np.int64)
        n_docs = len(rel) + int(rng.integers(0, 20))
        cg = np.concatenate(([0], np.cumsum(rel)))
        direct = sum(cg[i] + 0.5 * rel[i] for i in range(len(rel))) + (n_docs - len(rel)) * cg[-1]
        assert tar.gain_area(rel, n_docs) == direct
