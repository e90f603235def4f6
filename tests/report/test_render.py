"""One renderer interface (`reviewdepth.report.render`) over the three results: every format of each, the
grid formats shared by both evaluations, and the formats a result does not have refused by name."""

from __future__ import annotations

import importlib
import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from sqlalchemy import Engine
from typer.testing import CliRunner

from reviewdepth.cli.app import create_cli
from reviewdepth.measures.suite import Evaluation
from reviewdepth.report.render import FORMATS, Result, formats_of, render, rich_view
from reviewdepth.report.tar_model import TarEvaluation
from reviewdepth.services.answers.report import ReportOptions, build_report
from reviewdepth.services.evaluation.evaluate import EvalOptions, evaluate_files
from reviewdepth.services.evaluation.evaluate_tar import TarOptions, evaluate_tar_files
from reviewdepth.services.files.imports import import_run
from reviewdepth.services.review.judgments import record_judgments

DATA = Path(__file__).resolve().parents[1] / "data"


def trec_result() -> Evaluation:
    return evaluate_files(DATA / "trec_eval" / "qrels.test", DATA / "trec_eval" / "results.test", EvalOptions())


def tar_result() -> TarEvaluation:
    return evaluate_tar_files(DATA / "seed" / "seed.qrels", DATA / "seed" / "seed.runB",
                              TarOptions(compat="clef2017", num_docs=12))


@pytest.mark.parametrize("make", [trec_result, tar_result])
def test_evaluations_share_the_grid_formats(make: Callable[[], Result]) -> None:
    result = make()
    per_query = render(result, "json", per_query=True)
    body = json.loads(per_query)
    assert set(body) == {"per_query", "all"} and body["per_query"]
    # the TAR topic label is not a measure: left out of every grid format
    assert all("topic_id" not in values for values in [body["all"], *body["per_query"].values()])
    assert json.loads(render(result, "json"))["per_query"] == {}
    csv_rows = render(result, "csv", per_query=True).splitlines()
    assert csv_rows[0] == "measure,query,value"
    lines = render(result, "trec", per_query=True).splitlines()
    assert len(csv_rows) - 1 == len(lines) == sum(len(v) for v in [body["all"], *body["per_query"].values()])
    assert all(re.fullmatch(r"\S+ *\t\S+\t\S+", line) and len(line.split("\t")[0]) >= 22 for line in lines)
    assert [line.split("\t")[1] for line in lines][-1] == "all"
    table = render(result, "table", per_query=True)
    query = next(iter(body["per_query"]))
    assert query in table and "measure" in table and "all" in table
    page = render(result, "html", per_query=True)
    assert page.startswith("<!DOCTYPE html>") and f'<th scope="col">{query}</th>' in page


@pytest.mark.sqlite_only  # rendering is the same whatever store built the report
def test_each_result_takes_its_formats_and_refuses_the_others_by_name(engine: Engine, tmp_path: Path) -> None:
    run = tmp_path / "t.run"
    run.write_text("".join(f"T Q0 d{i} {i + 1} {60 - i} sys\n" for i in range(60)))
    import_run(engine, str(run))
    record_judgments(engine, "T", [(f"d{i}", "1" if i % 3 == 0 else "0") for i in range(30)], reviewer="r")
    report = build_report(engine, "T", ReportOptions())
    results: list[Result] = [trec_result(), tar_result(), report]
    shown: dict[tuple[int, str], str] = {}
    for i, result in enumerate(results):
        for fmt in FORMATS:
            if fmt in formats_of(result):
                shown[i, fmt] = render(result, fmt, per_query=True)
                assert shown[i, fmt]
            else:
                with pytest.raises(ValueError, match=f"format: '{fmt}' is not a format of {type(result).__name__}"):
                    render(result, fmt)
    assert formats_of(report) == ("table", "json", "csv", "html")
    assert shown[2, "json"] == report.to_json()
    assert shown[2, "html"].startswith("<!DOCTYPE html>") and "conservative depth" in shown[2, "table"]
    assert rich_view(report) is not None


def test_tar_format_is_the_clef_lines_and_table_width_is_honoured() -> None:
    result = tar_result()
    lines = render(result, "tar").splitlines()
    assert lines[-1].startswith("ALL\t") and any(line.split("\t")[1] == "topic_id" for line in lines)
    narrow = render(result, "table", per_query=True, width=60)
    assert max(len(line) for line in narrow.splitlines()) <= 60


def test_html_of_an_evaluation_escapes_query_ids(tmp_path: Path) -> None:
    qrels = tmp_path / "qrels"
    qrels.write_text("<b>&q 0 d1 1\n<b>&q 0 d2 0\n")
    run = tmp_path / "run"
    run.write_text("<b>&q Q0 d1 1 2 sys\n<b>&q Q0 d2 2 1 sys\n")
    page = render(evaluate_files(qrels, run, EvalOptions()), "html", per_query=True)
    assert "<b>" not in page and "&lt;b&gt;&amp;q" in page


def test_eval_command_prints_every_format_through_the_dispatch() -> None:
    qrels, run = DATA / "trec_eval" / "qrels.test", DATA / "trec_eval" / "results.test"
    seed = DATA / "seed"
    cases = [([str(qrels), str(run), "-q"], trec_result()),
             ([str(seed / "seed.qrels"), str(seed / "seed.runB"), "-q", "--suite", "tar", "--compat", "clef2017",
               "--num-docs", "12"], tar_result())]
    for args, result in cases:
        for fmt in ("trec", "json", "csv", "html"):
            done = CliRunner().invoke(create_cli(), ["eval", *args, "--format", fmt])
            assert done.exit_code == 0, done.output
            assert done.stdout == render(result, fmt, per_query=True)


def test_one_table_of_renderers_by_result_type_and_format() -> None:
    """`RENDERERS` names every result type's formats, the default first (what `formats_of` said before the
    table), each key a real class; a result of no registered type is refused by name."""
    from reviewdepth.report.render import RENDERERS

    expected = {
        "reviewdepth.measures.suite.Evaluation": ("trec", "json", "csv", "table", "html"),
        "reviewdepth.report.tar_model.TarEvaluation": ("tar", "trec", "json", "csv", "table", "html"),
        "reviewdepth.report.model.Report": ("table", "json", "csv", "html"),
        "reviewdepth.report.monitor_model.MonitorReport": ("table", "json"),
        "reviewdepth.report.simulation_model.SimulationReport": ("table", "json", "csv", "html"),
        "reviewdepth.report.compare_model.Comparison": ("table", "json", "csv", "latex", "markdown"),
    }
    for name, formats in expected.items():
        module, _, cls = name.rpartition(".")
        assert isinstance(getattr(importlib.import_module(module), cls), type)
        assert tuple(fmt for key, fmt in RENDERERS if key == name) == formats
    assert {key for key, _ in RENDERERS} == set(expected)
    with pytest.raises(TypeError, match="no renderer for a dict"):
        render({}, "json")  # type: ignore[arg-type]

