"""Graded measures (ndcg, ndcg_cut, ndcg_rel, Rndcg, G, binG) and ``-J`` against trec_eval 9.0.8.

Default gains: every value against pytrec-eval-terrier 0.5.11 (trec_eval 9.0.8's C code) on generated graded qrels
(levels −1 … 4, many ties, float32-close scores) under ``-l``, ``-M`` and ``-J``. Gain parameters
(``-m ndcg.1=3.5,2=9``): pytrec_eval cannot take them (its parser reports "malformed pair parameters" or crashes),
so the expected lines below were printed by the trec_eval 9.0.8 binary built from NIST's tag v9.0.8
(``make`` in usnistgov/trec_eval at d95ca64) on the regression files:
``trec_eval -q -m ndcg.1=3.5,2=9.0,4=7.0 -m G.1=0.5,2=0.7 -m Rndcg.0=1,1=2 -m ndcg_rel.2=5 -m ndcg_cut.3,7
-m binG qrels.rel_level results.test`` and ``trec_eval -J -m ndcg qrels.rel_level results.test``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import pytrec_eval
from hypothesis import given, settings
from hypothesis import strategies as st

from reviewdepth.formats.errors import InputError
from reviewdepth.formats.trec import parse_qrels, parse_run
from reviewdepth.measures.suite import MeasureError, MeasureSpec
from reviewdepth.report.render import render
from reviewdepth.services.evaluation.evaluate import EvalOptions, evaluate_columns, evaluate_files

QIDS = ["1", "01", "10", "9"]
DOCS = [f"d{i}" for i in range(14)] + ["D2", "a", "b"]
SCORES = [1.0, 1.00000001, 1.00000002, 0.5, 0.0, 2.5, 3.0, -1.0]
RELS = [-1, 0, 0, 0, 1, 1, 2, 3, 3, 4]
CUTOFFS = (1, 2, 3, 5, 10, 20)
GRADED = {"ndcg", "ndcg_rel", "Rndcg", "G", "binG", "ndcg_cut." + ",".join(map(str, CUTOFFS)), "num_ret",
          "num_rel_ret", "map", "P.5", "bpref"}
Case = tuple[dict[str, dict[str, int]], dict[str, dict[str, float]], int | None, int, bool]


@st.composite
def collections(draw: st.DrawFn) -> Case:
    qrels: dict[str, dict[str, int]] = {}
    for qid in draw(st.lists(st.sampled_from(QIDS), min_size=1, max_size=3, unique=True)):
        docs = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=14, unique=True))
        rels = {d: draw(st.sampled_from(RELS)) for d in docs}
        if all(v < 0 for v in rels.values()):
            rels[docs[0]] = 0  # trec_eval aborts on an all-negative query; reviewdepth refuses it
        qrels[qid] = rels
    run: dict[str, dict[str, float]] = {}
    for qid in qrels:
        docs = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=16, unique=True))
        run[qid] = {d: draw(st.sampled_from(SCORES)) for d in docs}
    return (qrels, run, draw(st.sampled_from([None, None, 2, 4])), draw(st.sampled_from([1, 1, 2, 3])),
            draw(st.booleans()))


def to_text(qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]]) -> tuple[bytes, bytes]:
    qtext = "".join(f"{q} 0 {d} {r}\n" for q, docs in qrels.items() for d, r in docs.items())
    rtext = "".join(f"{q} Q0 {d} 0 {s!r} tag\n" for q, docs in run.items() for d, s in docs.items())
    return qtext.encode(), rtext.encode()


def first_ranked(run: dict[str, dict[str, float]], max_docs: int | None) -> dict[str, dict[str, float]]:
    """-M for pytrec_eval: trec_eval's order is float32 score descending, then docno descending by bytes."""
    if max_docs is None:
        return run
    return {qid: dict(sorted(docs.items(), key=lambda kv: (float(np.float32(kv[1])), kv[0].encode()),
                             reverse=True)[:max_docs]) for qid, docs in run.items()}


@settings(max_examples=150, deadline=None)
@given(collections())
def test_graded_values_match_pytrec_eval(case: Case) -> None:
    qrels, run, max_docs, level, judged = case
    qtext, rtext = to_text(qrels, run)
    ours = evaluate_columns(parse_qrels(qtext), parse_run(rtext),
                            EvalOptions(measures=sorted(GRADED), max_docs=max_docs, relevance_level=level,
                                        judged_only=judged))
    oracle = pytrec_eval.RelevanceEvaluator(qrels, GRADED, relevance_level=level,
                                            judged_docs_only_flag=judged).evaluate(first_ranked(run, max_docs))
    assert set(ours.per_query) == set(oracle)
    for qid, values in ours.per_query.items():
        for name, value in values.items():
            assert value == oracle[qid][name], (qid, name, value, oracle[qid][name])
    for name in ours.measures:
        if name in ("runid", "num_q", "num_ret", "num_rel_ret"):
            continue
        total = 0.0
        for qid in sorted(oracle, key=lambda q: q.encode()):
            total += oracle[qid][name]
        assert ours.summary[name] == total / len(oracle), name


def test_all_trec_prints_the_graded_measures_in_trec_eval_order() -> None:
    names = [n for n in MeasureSpec.parse(["all_trec"]).output_names(summary=True)
             if n.startswith(("ndcg", "G", "binG", "Rndcg"))]
    assert names == ["binG", "G", "ndcg", "ndcg_rel", "Rndcg"] + [f"ndcg_cut_{k}" for k in
                                                                  (5, 10, 15, 20, 30, 100, 200, 500, 1000)]


EXPECTED_PARAMS = """\
binG                  \t301\t0.0238
G_1=0.5,2=0.7         \t301\t0.2294
ndcg_1=3.5,2=9.0,4=7.0\t301\t0.1452
ndcg_rel_2=5          \t301\t0.1269
Rndcg_0=1,1=2         \t301\t0.2741
ndcg_cut_3            \t301\t0.0000
ndcg_cut_7            \t301\t0.0497
binG                  \t302\t0.2160
G_1=0.5,2=0.7         \t302\t0.1623
ndcg_1=3.5,2=9.0,4=7.0\t302\t0.6617
ndcg_rel_2=5          \t302\t0.7130
Rndcg_0=1,1=2         \t302\t0.5554
ndcg_cut_3            \t302\t0.7654
ndcg_cut_7            \t302\t0.7709
binG                  \t303\t0.1839
G_1=0.5,2=0.7         \t303\t0.0000
ndcg_1=3.5,2=9.0,4=7.0\t303\t0.3669
ndcg_rel_2=5          \t303\t0.2186
Rndcg_0=1,1=2         \t303\t0.3105
ndcg_cut_3            \t303\t0.0000
ndcg_cut_7            \t303\t0.0000
binG                  \tall\t0.1412
G_1=0.5,2=0.7         \tall\t0.1306
ndcg_1=3.5,2=9.0,4=7.0\tall\t0.3912
ndcg_rel_2=5          \tall\t0.3528
Rndcg_0=1,1=2         \tall\t0.3800
ndcg_cut_3            \tall\t0.2551
ndcg_cut_7            \tall\t0.2735
"""


def test_gain_parameters_match_trec_eval_908(trec_data: Path) -> None:
    # G_1=0.5,2=0.7 on 303 is trec_eval's truncating comparator at work: gains 0, 0.5 and 0.7 compare equal, the
    # parameter levels stay first and level 0 (gain 0) ends up on top of the ideal ranking, so G is 0
    measures = ["ndcg.1=3.5,2=9.0,4=7.0", "G.1=0.5,2=0.7", "Rndcg.0=1,1=2", "ndcg_rel.2=5", "ndcg_cut.3,7", "binG"]
    result = evaluate_files(trec_data / "qrels.rel_level", trec_data / "results.test", EvalOptions(measures=measures))
    assert render(result, "trec", per_query=True) == EXPECTED_PARAMS
    judged = evaluate_files(trec_data / "qrels.rel_level", trec_data / "results.test",
                            EvalOptions(measures=["ndcg"], judged_only=True))
    assert "%6.4f" % judged.summary["ndcg"] == "0.4128"


@pytest.mark.parametrize("expected", ["out.test.aq", "out.test.aqc", "out.test.aqcM", "out.test.aql"])
def test_graded_lines_of_the_908_regression_outputs(trec_data: Path, expected: str) -> None:
    options = {"out.test.aq": ("qrels.test", "results.test", EvalOptions(measures=["all"])),
               "out.test.aqc": ("qrels.test", "results.trunc", EvalOptions(measures=["all"], complete=True)),
               "out.test.aqcM": ("qrels.test", "results.trunc",
                                 EvalOptions(measures=["all"], complete=True, max_docs=100)),
               "out.test.aql": ("qrels.rel_level", "results.test", EvalOptions(measures=["all"], relevance_level=2))}
    qrels, run, opts = options[expected]
    prefixes = ("binG", "G ", "ndcg", "Rndcg")
    ours = [line for line in render(evaluate_files(trec_data / qrels, trec_data / run, opts), "trec",
                                     per_query=True).splitlines() if line.startswith(prefixes)]
    want = [line for line in (trec_data / expected).read_text().splitlines() if line.startswith(prefixes)]
    assert len(want) == 14 * (4 if expected in ("out.test.aq", "out.test.aql") else 3)
    assert ours == want


@pytest.mark.parametrize("bad", ["ndcg.1", "ndcg.1=2,1=3", "ndcg.x=1", "ndcg.1=nan", "ndcg_cut.0", "G.=1"])
def test_bad_gain_parameters_are_refused(bad: str) -> None:
    with pytest.raises(MeasureError):
        MeasureSpec.parse([bad])


def test_duplicate_graded_judgment_is_refused() -> None:
    with pytest.raises(InputError, match="duplicate docno 'a'"):
        evaluate_columns(parse_qrels(b"1 0 a 2\n1 0 b 0\n1 0 a 3\n"), parse_run(b"1 Q0 a 1 1.0 t\n"),
                         EvalOptions(measures=["ndcg"]))


JUDGED_N = """\
num_ret               \t301\t259
utility_1,-1,0,1      \t301\t221.0000
ndcg                  \t301\t0.1479
num_ret               \t302\t264
utility_1,-1,0,1      \t302\t545.0000
ndcg                  \t302\t0.6654
num_ret               \t303\t146
utility_1,-1,0,1      \t303\t724.0000
ndcg                  \t303\t0.4249
num_ret               \tall\t669
utility_1,-1,0,1      \tall\t496.6667
ndcg                  \tall\t0.4128
"""


def test_cli_judged_only_and_documents_in_collection(trec_data: Path) -> None:
    """``reviewdepth eval -J -N 1000`` prints what ``trec_eval -q -J -N 1000 -m utility.1,-1,0,1 -m ndcg -m num_ret
    qrels.rel_level results.test`` (9.0.8 binary, as above) prints; -J drops the unjudged from num_ret too."""
    exe = Path(sys.executable).parent / "reviewdepth"
    done = subprocess.run([str(exe), "eval", "-q", "-J", "-N", "1000", "-m", "utility.1,-1,0,1", "-m", "ndcg", "-m",
                           "num_ret", str(trec_data / "qrels.rel_level"), str(trec_data / "results.test")],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout == JUDGED_N
    refused = subprocess.run([str(exe), "eval", "--suite", "tar", "-J", str(trec_data / "qrels.test"),
                              str(trec_data / "results.test")], capture_output=True, text=True, check=False)
    assert refused.returncode == 2 and "-J" in refused.stderr and "Traceback" not in refused.stderr


NAN_CASES = """\
num_ret               \t1\t0
map                   \t1\t0.0000
iprec_at_recall_0.00  \t1\t  -nan
iprec_at_recall_0.50  \t1\t0.0000
11pt_avg              \t1\t  -nan
ndcg                  \t1\t0.0000
num_ret               \t2\t1
map                   \t2\t1.0000
iprec_at_recall_0.00  \t2\t1.0000
iprec_at_recall_0.50  \t2\t1.0000
11pt_avg              \t2\t1.0000
ndcg                  \t2\t1.0000
num_ret               \tall\t1
map                   \tall\t0.5000
iprec_at_recall_0.00  \tall\t  -nan
iprec_at_recall_0.50  \tall\t0.5000
11pt_avg              \tall\t  -nan
ndcg                  \tall\t0.5000
"""


def test_judged_only_query_with_nothing_judged_prints_c_nan() -> None:
    """-J empties query 1's ranking: trec_eval 9.0.8 (binary, ``trec_eval -q -J -m iprec_at_recall.0,0.5 -m 11pt_avg
    -m num_ret -m ndcg -m map``) prints its 0/0 as ``-nan``; Rndcg with every gain 0 (``-m Rndcg.1=0``) too."""
    qrels, run = parse_qrels(b"1 0 a 1\n1 0 c 0\n2 0 a 1\n"), parse_run(b"1 Q0 b 0 1.0 t\n2 Q0 a 0 1.0 t\n")
    result = evaluate_columns(qrels, run, EvalOptions(
        measures=["iprec_at_recall.0,0.5", "11pt_avg", "num_ret", "ndcg", "map"], judged_only=True))
    assert render(result, "trec", per_query=True) == NAN_CASES
    zero = evaluate_columns(qrels, run, EvalOptions(measures=["Rndcg.1=0"]))
    assert render(zero, "trec", per_query=True).split() == ["Rndcg_1=0", "1", "-nan", "Rndcg_1=0", "2", "-nan",
                                                            "Rndcg_1=0", "all", "-nan"]


def test_ranking_without_qrels_levels_uses_binary_levels() -> None:
    """A stored queue's ranking carries no qrels levels: levels 0 (num_nonrel) and 1 (num_rel) give the values
    the qrels file gives for binary judgments."""
    from dataclasses import replace

    from reviewdepth.measures import graded
    from reviewdepth.measures.ranking import join_and_rank

    qrels = parse_qrels(b"1 0 a 1\n1 0 b 0\n1 0 c 1\n1 0 d 0\n1 0 e 1\n2 0 a 0\n2 0 z 1\n")
    run = parse_run(b"1 Q0 b 0 3 t\n1 Q0 a 0 2 t\n1 Q0 x 0 1 t\n1 Q0 e 0 0.5 t\n2 Q0 a 0 1 t\n2 Q0 z 0 0.5 t\n")
    ranked, _ = join_and_rank(run_qids=run.qid, run_docnos=run.docno.values, run_hashes=run.docno.hashes,
                              run_scores=run.scores(), qrels_qids=qrels.qid, qrels_docnos=qrels.docno.values,
                              qrels_hashes=qrels.docno.hashes, qrels_rels=qrels.rel)
    bare = replace(ranked, judged_levels=None)
    for measure in (graded.ndcg, graded.ndcg_rel, graded.r_ndcg, graded.g_measure):
        assert measure(bare).tolist() == measure(ranked).tolist()
    assert [a.tolist() for a in graded.ndcg_cut(bare, [1, 3])] == [a.tolist() for a in graded.ndcg_cut(ranked, [1, 3])]
    # and the values are trec_eval's (pytrec_eval on the same files)
    oracle = pytrec_eval.RelevanceEvaluator({"1": {"a": 1, "b": 0, "c": 1, "d": 0, "e": 1}, "2": {"a": 0, "z": 1}},
                                            {"ndcg"}).evaluate({"1": {"b": 3, "a": 2, "x": 1, "e": 0.5},
                                                                "2": {"a": 1, "z": 0.5}})
    assert graded.ndcg(bare).tolist() == [oracle["1"]["ndcg"], oracle["2"]["ndcg"]]
