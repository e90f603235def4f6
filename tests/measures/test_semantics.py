"""Edge cases of trec_eval's rules (ties, float32, -c, -M, -l, errors), on small inline inputs."""

from __future__ import annotations

import numpy as np
import pytest

from reviewdepth.formats.errors import InputError
from reviewdepth.formats.trec import parse_qrels, parse_run
from reviewdepth.measures import trec
from reviewdepth.measures.ranking import NOT_IN_QRELS, UNJUDGED, RankedQueries
from reviewdepth.measures.segments import sequential_sums, suffix_max
from reviewdepth.services.evaluation.evaluate import EvalOptions, evaluate_columns


def run_eval(qrels: str, run: str, **kw: object) -> dict[str, dict[str, float | int]]:
    options = EvalOptions(measures=kw.pop("measures", ["all"]), **kw)  # type: ignore[arg-type]
    comments = options.version >= 10
    result = evaluate_columns(parse_qrels(qrels.encode(), "q.txt", allow_comments=comments),
                              parse_run(run.encode(), "r.txt", allow_comments=comments), options)
    return {**result.per_query, "all": result.summary}  # type: ignore[dict-item]


def test_ties_broken_by_docno_descending() -> None:
    qrels = "q 0 d1 1\nq 0 d2 1\nq 0 d3 0\n"
    run = "".join(f"q Q0 d{i} {i} 1.0 t\n" for i in range(1, 6))
    values = run_eval(qrels, run)["q"]
    # order d5 d4 d3 d2 d1
    assert "%6.4f" % values["map"] == "0.3250"
    assert values["recip_rank"] == 0.25


def test_docno_order_is_bytes_not_numbers() -> None:
    # strcmp: "d10" < "d9", so d9 ranks first among ties
    values = run_eval("q 0 d9 1\nq 0 d10 0\n", "q Q0 d10 1 5 t\nq Q0 d9 2 5 t\n")["q"]
    assert values["recip_rank"] == 1.0


def test_float32_scores_tie_in_908_but_not_in_10() -> None:
    qrels = "q 0 a 1\nq 0 b 0\n"
    run = "q Q0 a 1 1.00000002 t\nq Q0 b 2 1.00000001 t\n"
    assert run_eval(qrels, run)["q"]["map"] == 0.5
    assert run_eval(qrels, run, version=10)["q"]["map"] == 1.0


def test_rank_column_and_line_order_are_ignored() -> None:
    qrels = "q 0 a 1\nq 0 b 0\n"
    assert run_eval(qrels, "q Q0 b 1 1 t\nq Q0 a 2 2 t\n")["q"]["map"] == 1.0


def test_p_at_k_beyond_ranking_divides_by_k() -> None:
    qrels = "".join(f"q 0 d{i} {int(i < 4)}\n" for i in range(15))
    run = "".join(f"q Q0 d{i} {i} {100 - i} t\n" for i in range(15))
    values = run_eval(qrels, run)["q"]
    assert values["P_20"] == 0.2


def test_query_without_relevant_counts_zero_and_qrels_only_is_ignored() -> None:
    qrels = "a 0 x 1\nb 0 y 0\nc 0 z 1\n"
    run = "a Q0 x 1 1 t\nb Q0 y 1 1 t\n"
    values = run_eval(qrels, run)
    assert values["b"]["map"] == 0.0
    assert values["all"]["num_q"] == 2
    assert values["all"]["map"] == 0.5
    complete = run_eval(qrels, run, complete=True)
    assert complete["all"]["num_q"] == 3
    assert complete["all"]["map"] == pytest.approx(1 / 3)
    assert "c" not in complete  # 9.0.8 prints no per-query lines for it
    assert "c" in run_eval(qrels, run, complete=True, version=10)


def test_qids_are_strings() -> None:
    values = run_eval("01 0 x 1\n1 0 x 0\n", "1 Q0 x 1 1 t\n01 Q0 x 1 1 t\n")
    assert values["01"]["map"] == 1.0 and values["1"]["map"] == 0.0
    assert list(values)[:2] == ["01", "1"]


def test_negative_rel_is_unjudged_and_skipped_by_bpref() -> None:
    qrels = "q 0 r 1\nq 0 u -1\nq 0 n 0\n"
    run = "q Q0 u 1 3 t\nq Q0 r 2 2 t\nq Q0 n 3 1 t\n"
    values = run_eval(qrels, run)["q"]
    assert values["num_rel"] == 1 and values["bpref"] == 1.0 and values["map"] == 0.5


def test_max_docs_and_level() -> None:
    qrels = "q 0 a 2\nq 0 b 1\nq 0 c 2\n"
    run = "q Q0 a 1 3 t\nq Q0 b 2 2 t\nq Q0 c 3 1 t\n"
    values = run_eval(qrels, run, relevance_level=2, max_docs=2)["q"]
    assert values["num_ret"] == 2 and values["num_rel"] == 2 and values["num_rel_ret"] == 1
    assert values["map"] == 0.5


def test_set_f_parameter_is_beta_squared() -> None:
    qrels = "q 0 a 1\nq 0 b 1\nq 0 c 0\n"
    run = "q Q0 a 1 2 t\nq Q0 c 2 1 t\n"
    beta2 = 4.0
    values = run_eval(qrels, run, measures=[f"set_F.{beta2}"])["q"]
    p, r = 0.5, 0.5
    # printed as trec_eval prints it: the name, "_" and the parameter as written
    assert values[f"set_F_{beta2}"] == pytest.approx((beta2 + 1) * p * r / (beta2 * p + r))


@pytest.mark.parametrize(("qrels", "run", "where"), [
    ("q 0 a 1\nq 0 a 0\n", "q Q0 a 1 1 t\n", "q.txt:2: field docno"),
    ("q 0 a 1\n", "q Q0 a 1 1 t\nq Q0 a 2 2 t\n", "r.txt:2: field docno"),
    ("q 0 a 1 extra\n", "q Q0 a 1 1 t\n", "q.txt:1"),
    ("q 0 a x\n", "q Q0 a 1 1 t\n", "q.txt:1: field rel"),
    ("q 0 a 1\n", "q Q0 a 1 abc t\n", "r.txt:1: field score"),
    ("q 0 a 1\n", "q Q0 a 1 nan t\n", "r.txt:1: field score"),
    ("q 0 a 1\n", "q Q0 a 1 1\n", "r.txt:1"),
    ("q 0 a 1\n", "# comment\nq Q0 a 1 1 t\n", "r.txt:1"),
    ("x 0 a 1\n", "q Q0 a 1 1 t\n", "no queries with both"),
    ("q 0 a -1\n", "q Q0 a 1 1 t\n", "only negative"),
    ("", "q Q0 a 1 1 t\n", "empty qrels"),
])
def test_bad_input_names_file_and_line(qrels: str, run: str, where: str) -> None:
    with pytest.raises(InputError) as info:
        run_eval(qrels, run)
    assert where in str(info.value)


def test_duplicate_beyond_max_docs_is_not_checked() -> None:
    run = "q Q0 a 1 3 t\nq Q0 b 2 2 t\nq Q0 a 3 1 t\n"
    assert run_eval("q 0 a 1\n", run, max_docs=1)["q"]["map"] == 1.0


def test_version_10_comments_and_missing_query() -> None:
    values = run_eval("q 0 a 1\n", "# header\nq Q0 a 1 1 t\n", version=10)
    assert values["q"]["map"] == 1.0
    with pytest.raises(InputError, match="not in the run"):
        run_eval("q 0 a 1\nz 0 a 1\n", "q Q0 a 1 1 t\n", version=10)


def test_gm_map_clamps_before_log() -> None:
    values = run_eval("a 0 x 1\nb 0 y 1\n", "a Q0 x 1 1 t\nb Q0 z 1 1 t\n")
    assert values["all"]["gm_map"] == pytest.approx(np.exp((np.log(1.0) + np.log(1e-5)) / 2))


def test_sequential_helpers_are_left_to_right() -> None:
    values = np.array([1e16, 1.0, -1e16, 1.0])
    offsets = np.array([0, 4])
    # a C loop gives ((1e16 + 1) - 1e16) + 1 = 1.0; pairwise or exact summation would differ
    assert sequential_sums(values, offsets)[0] == ((1e16 + 1.0) - 1e16) + 1.0
    assert list(suffix_max(np.array([0.1, 0.5, 0.2, 0.9, 0.3]), np.array([0, 3, 5]))) == [0.5, 0.5, 0.2, 0.9, 0.3]


def test_recall_level_count_rules() -> None:
    r = np.array([3, 4, 5, 77])
    assert list(trec.recall_level_count(0.7, r)) == [2, 3, 4, 54]  # 0.7*3 = 2.0999999999999996 -> 2
    assert list(trec.recall_level_count(0.6, r, version=10)) == [2, 2, 3, 46]
    assert list(trec.recall_level_count(0.5, np.array([5]), version=10)) == [3]  # half away from zero


def test_precision_recall_curve_and_rbp_on_a_ranking() -> None:
    ranked = RankedQueries(qids=["q"], offsets=np.array([0, 4]), rel=np.array([1, NOT_IN_QRELS, 0, 1]),
                           num_rel=np.array([3]), num_nonrel=np.array([1]), level=1, source_rows=np.arange(4))
    curve = trec.precision_recall_curve(ranked, 0)
    assert list(curve["precision"]) == [1.0, 0.5, 1 / 3, 0.5]
    assert list(curve["interpolated_precision"]) == [1.0, 0.5, 0.5, 0.5]
    assert list(curve["recall"]) == [1 / 3, 1 / 3, 1 / 3, 2 / 3]
    assert trec.rank_biased_precision(ranked, 0.5)[0] == pytest.approx(0.5 * (1 + 0.125))
    resid = trec.rbp_residual(ranked, 0.5)[0]
    assert resid == pytest.approx(0.5**4 + 0.5 * 0.5)
    judged = RankedQueries(qids=["q"], offsets=np.array([0, 2]), rel=np.array([1, 0]), num_rel=np.array([1]),
                           num_nonrel=np.array([1]), level=1, source_rows=np.arange(2))
    assert trec.rbp_residual(judged, 0.9)[0] == pytest.approx(0.81)
    assert trec.rbp_residual(judged, 0.9, trec_eval_10_quirk=True)[0] == 0.0
    assert UNJUDGED < 0
