"""The measure table drives ``-m`` parsing, computation, print order and the docs; parameterised names print as
trec_eval prints them (regressions: set_F.0.25, two rbp values, P.5 with P.10, 11pt_avg with levels)."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewdepth.measures import table, trec
from reviewdepth.measures.suite import MeasureError, MeasureSpec
from reviewdepth.report.render import render
from reviewdepth.services.evaluation.evaluate import EvalOptions, evaluate_files

DOCS = Path(__file__).resolve().parents[2] / "docs" / "measures.md"


def evaluate(trec_data: Path, *measures: str, version: int = 9) -> tuple[list[str], dict[str, float | int | str]]:
    result = evaluate_files(trec_data / "qrels.test", trec_data / "results.test",
                            EvalOptions(measures=list(measures), version=version))
    return result.measures, result.summary


def test_docs_page_matches_the_table() -> None:
    """docs/measures.md's measure section is generated from the table (python -m reviewdepth.measures.table)."""
    assert table.docs_section(DOCS.read_text()) == table.markdown()


def test_every_measure_is_computed_and_printed_in_table_order(trec_data: Path) -> None:
    names, summary = evaluate(trec_data, "all_trec", version=10)
    bases = [next(m.name for m in table.TABLE if n == m.name or (m.expands and n.startswith(m.name + "_")))
             for n in names]
    assert list(dict.fromkeys(bases)) == [m.name for m in table.group_members("all_trec", 10) if m.in_summary]
    assert set(summary) == set(names)
    nine, _ = evaluate(trec_data, "all")
    assert "rbp" not in nine and "set_F" in nine  # rbp and rbp_resid joined all_trec in 10.0


def test_set_f_with_a_parameter_prints_it_as_trec_eval(trec_data: Path) -> None:
    names, summary = evaluate(trec_data, "set_F.0.25")
    assert names == ["set_F_0.25"]
    plain_names, plain = evaluate(trec_data, "set_F")
    assert plain_names == ["set_F"] and plain["set_F"] != summary["set_F_0.25"]
    lines = render(evaluate_files(trec_data / "qrels.test", trec_data / "results.test",
                                  EvalOptions(measures=["set_F.0.25"])), "trec")
    assert lines == "set_F_0.25            \tall\t0.0962\n"


def test_two_rbp_values_give_two_labelled_lines(trec_data: Path) -> None:
    names, summary = evaluate(trec_data, "rbp.0.8", "rbp.p=0.95", version=10)
    assert names == ["rbp_0.8", "rbp_p=0.95"]
    assert "%6.4f" % summary["rbp_0.8"] != "%6.4f" % summary["rbp_p=0.95"]
    _, default = evaluate(trec_data, "rbp", version=10)
    _, explicit = evaluate(trec_data, "rbp.0.9", version=10)
    assert default["rbp"] == explicit["rbp_0.9"] == pytest.approx(0.3234, abs=5e-5)


def test_cutoff_lists_of_several_options_add_up(trec_data: Path) -> None:
    names, _ = evaluate(trec_data, "P.5", "P.10")
    assert names == ["P_5", "P_10"]
    names, _ = evaluate(trec_data, "P.10,5", "P_7", "recall.20")
    assert names == ["P_5", "P_7", "P_10", "recall_20"]


def test_parameters_match_trec_eval_10_output(trec_data: Path) -> None:
    """trec_eval 10.0's own test of parameterised measures (out.test.meas_params), for every line of a measure
    reviewdepth implements: names, order and values."""
    result = evaluate_files(trec_data / "qrels.test", trec_data / "results.test", EvalOptions(
        measures=["iprec_at_recall..10,.20,.25,.75,.50", "P.5,7,3", "recall.20,2000", "11pt_avg..25,.5,.75"],
        version=10))
    ours = render(result, "trec", per_query=True).splitlines()
    want = [line for line in (trec_data / "out10.test.meas_params").read_text().splitlines()
            if line.split()[0].startswith(("iprec_at_recall_", "P_", "recall_", "11pt_avg"))]
    assert ours == want


def test_eleven_point_average_with_levels_agrees_with_iprec(trec_data: Path) -> None:
    _, summary = evaluate(trec_data, "11pt_avg..25,.5,.75", "iprec_at_recall.0.25,0.5,0.75")
    mean = sum(summary[f"iprec_at_recall_{p}"] for p in ("0.25", "0.50", "0.75")) / 3  # type: ignore[misc]
    assert summary["11pt_avg_.25,.5,.75"] == pytest.approx(mean, abs=1e-12)
    _, default = evaluate(trec_data, "11pt_avg")
    _, spelled = evaluate(trec_data, "11pt_avg.0,.1,.2,.3,.4,.5,.6,.7,.8,.9,1")
    assert default["11pt_avg"] == spelled["11pt_avg_0,.1,.2,.3,.4,.5,.6,.7,.8,.9,1"]


@pytest.mark.parametrize(("request_", "message"), [
    ("11pt_avg..5,.25", "increasing order"),
    ("11pt_avg.1.5", "recall levels must be in [0, 1]"),
    ("rbp.q=0.5", "bad parameters in measure 'rbp.q=0.5'"),
    ("rbp_resid.1", "rbp_resid persistence must be in (0, 1)"),
    ("map.3", "measure 'map' takes no parameters"),
    ("P.5,5", "cutoffs of P must be positive and unique"),
    ("P_0", "cutoff must be > 0"),
    ("prefs_simp", "unknown measure 'prefs_simp'; known: runid, num_q,"),
])
def test_bad_requests_are_refused(request_: str, message: str) -> None:
    with pytest.raises(MeasureError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")):
        MeasureSpec.parse([request_])


def test_rbp_resid_takes_its_own_parameter_and_follows_rbp_for_9() -> None:
    spec = MeasureSpec.parse(["rbp.0.8", "rbp_resid"], version=9)
    assert [s.outputs for s in spec.selected] == [(("rbp_0.8", 0.8),), (("rbp_resid", 0.8),)]
    spec10 = MeasureSpec.parse(["rbp.0.8", "rbp_resid", "rbp_resid.p=0.5"], version=10)
    assert [s.outputs for s in spec10.selected] == [(("rbp_0.8", 0.8),), (("rbp_resid_p=0.5", 0.5),)]


def test_formulas_are_the_computing_functions_docstrings() -> None:
    assert table.BY_NAME["map"].doc().startswith("map (AP) = (1/R)")
    assert table.BY_NAME["P"].formula is trec.precision_at
    assert all(m.doc() for m in table.TABLE)
