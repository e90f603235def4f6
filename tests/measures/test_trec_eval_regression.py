"""reviewdepth reproduces trec_eval 9.0.8's own regression outputs for every measure it implements."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewdepth.report.render import render
from reviewdepth.services.evaluation.evaluate import EvalOptions, evaluate_files

CASES = [
    ("out.test", "qrels.test", "results.test", EvalOptions(), False),
    ("out.test.aq", "qrels.test", "results.test", EvalOptions(measures=["all"]), True),
    ("out.test.aqc", "qrels.test", "results.trunc", EvalOptions(measures=["all"], complete=True), True),
    ("out.test.aqcM", "qrels.test", "results.trunc",
     EvalOptions(measures=["all"], complete=True, max_docs=100), True),
    ("out.test.aql", "qrels.rel_level", "results.test",
     EvalOptions(measures=["all", "relstring.20"], relevance_level=2), True),
]


def expected_lines(path: Path, names: set[str]) -> list[str]:
    return [line for line in path.read_text().splitlines() if line.split()[0] in names]


@pytest.mark.parametrize(("expected", "qrels", "run", "options", "per_query"), CASES,
                         ids=[c[0] for c in CASES])
def test_matches_trec_eval_908_output(trec_data: Path, expected: str, qrels: str, run: str,
                                      options: EvalOptions, per_query: bool) -> None:
    result = evaluate_files(trec_data / qrels, trec_data / run, options)
    ours = render(result, "trec", per_query=per_query).splitlines()
    names = {line.split()[0] for line in ours}
    want = expected_lines(trec_data / expected, names)
    # every measure we print is in trec_eval's output, line for line and in the same order
    assert ours == want
    # and it covers the measures the issue lists
    for name in ("map", "gm_map", "Rprec", "bpref", "recip_rank", "P_10", "num_rel_ret"):
        assert name in names or (name == "gm_map" and not per_query)


def test_default_output_is_byte_identical(trec_data: Path) -> None:
    result = evaluate_files(trec_data / "qrels.test", trec_data / "results.test", EvalOptions())
    assert render(result, "trec", per_query=False) == (trec_data / "out.test").read_text()


def test_version_10_iprec_and_rbp(trec_data: Path) -> None:
    """trec_eval 10.0: lround recall-level counts, and rbp/rbp_resid test vectors."""
    result = evaluate_files(trec_data / "qrels.test", trec_data / "results.test",
                            EvalOptions(measures=["all"], version=10))
    ours = render(result, "trec", per_query=True).splitlines()
    names = {line.split()[0] for line in ours}
    want = expected_lines(trec_data / "out10.test.aq", names)
    assert ours == want
    assert "%6.4f" % result.summary["iprec_at_recall_0.60"] == "0.0858"
    assert ["%6.4f" % result.per_query[q]["rbp"] for q in ("301", "302", "303")] == ["0.1861", "0.7628", "0.0212"]
    assert "%6.4f" % result.summary["rbp"] == "0.3234"
    assert ["%6.4f" % result.per_query[q]["rbp_resid"] for q in ("301", "302", "303")] == [
        "0.0610", "0.0001", "0.0000"]
    assert "%6.4f" % result.summary["rbp_resid"] == "0.0204"
