"""`services.evaluation.evaluate.evaluate`, the one use case behind `reviewdepth eval` and ``POST /evaluate``: a file
read
from disk and the same bytes uploaded give the same result, options of the other suite are refused before any
file is read, and the doors' choices are the core's."""

from __future__ import annotations

import gzip
import weakref
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from reviewdepth.measures import ranking
from reviewdepth.report.render import render
from reviewdepth.services.evaluation.evaluate import EvalInput, EvalRequest, SuiteMismatch, evaluate


@pytest.mark.parametrize("suite", ["trec", "tar"])
def test_path_and_uploaded_bytes_give_the_same_result(seed_data: Path, suite: str) -> None:
    qrels, run = seed_data / "seed.qrels", seed_data / "seed.runA"
    request = EvalRequest(suite=suite)
    from_files = evaluate(EvalInput(str(qrels)), EvalInput(str(run)), request)
    from_bytes = evaluate(EvalInput(str(qrels), qrels.read_bytes()), EvalInput(str(run), run.read_bytes()), request)
    assert render(from_files, "json", per_query=True) == render(from_bytes, "json", per_query=True)


def test_gzip_files_are_read_like_plain_ones(seed_data: Path, tmp_path: Path) -> None:
    packed = tmp_path / "seed.runA.gz"
    packed.write_bytes(gzip.compress((seed_data / "seed.runA").read_bytes()))
    qrels = EvalInput(str(seed_data / "seed.qrels"))
    plain = evaluate(qrels, EvalInput(str(seed_data / "seed.runA")), EvalRequest())
    assert render(evaluate(qrels, EvalInput(str(packed)), EvalRequest()), "trec") == render(plain, "trec")


@pytest.mark.parametrize(("request_", "suite", "named"), [
    (EvalRequest(suite="tar", measures=["map"], version=10), "tar", ("measures", "version")),
    (EvalRequest(suite="trec", compat="clef2017", run_format="clef"), "trec", ("compat", "run_format")),
    (EvalRequest(suite="tar", judged_only=True), "tar", ("judged_only",)),
])
def test_options_of_the_other_suite_are_refused_before_reading(tmp_path: Path, request_: EvalRequest, suite: str,
                                                               named: tuple[str, ...]) -> None:
    missing = EvalInput(str(tmp_path / "no-such-file"))
    with pytest.raises(SuiteMismatch) as caught:
        evaluate(missing, missing, request_)
    assert caught.value.suite == suite and caught.value.options == named


def test_the_doors_offer_the_cores_choices() -> None:
    from typing import get_args

    from reviewdepth.cli.eval_cmd import Compat, RunFormat, Suite
    from reviewdepth.cli.report_cmds import PlotKind
    from reviewdepth.measures.tar_suite import COMPAT_MODES
    from reviewdepth.report.charts import ChartKind
    from reviewdepth.services.evaluation.evaluate import SUITES
    from reviewdepth.services.evaluation.evaluate_tar import RUN_FORMATS

    assert [c.value for c in Compat] == list(COMPAT_MODES)
    assert [r.value for r in RunFormat] == list(RUN_FORMATS)
    assert [s.value for s in Suite] == list(SUITES)
    assert [k.value for k in PlotKind] == list(get_args(ChartKind))


def test_a_mapped_input_is_released_once_its_columns_are_made(seed_data: Path) -> None:
    # the map of a file (here one whose scan was started early, as the eval command does) is closed when parsing
    # returns, so its pages are not resident beside the columns through the join; the columns do not need it
    from reviewdepth.formats import prescan
    from reviewdepth.formats.trec import parse_qrels

    path = str(seed_data / "seed.qrels")
    mapped = prescan.start(path, prescan.QRELS_LAYOUT, False)
    columns = EvalInput(path, mapped=mapped).parse(parse_qrels)
    if mapped is not None:  # None: the compiled scanner is not built, and nothing was mapped early
        assert mapped.closed
    plain = EvalInput(path, (seed_data / "seed.qrels").read_bytes()).parse(parse_qrels)
    assert columns.qid.tolist() == plain.qid.tolist() and columns.rel.tolist() == plain.rel.tolist()
    assert columns.docno.values.tolist() == plain.docno.values.tolist()
    assert columns.line.tolist() == plain.line.tolist()


def test_the_eval_commands_prescans_are_the_scans_evaluate_takes(seed_data: Path) -> None:
    # the eval command starts both scans with the layouts and the hashes choice `evaluate` reads with; a scan
    # asked differently would be done again, the pre-scan's columns thrown away
    from reviewdepth.formats import prescan

    qrels, run = str(seed_data / "seed.qrels"), str(seed_data / "seed.runA")
    maps = (prescan.start(qrels, prescan.QRELS_LAYOUT, False, prescan.EVAL_SCAN_HASHES),
            prescan.start(run, prescan.RUN_LAYOUT, False, prescan.EVAL_SCAN_HASHES))
    if maps[0] is None or maps[1] is None:
        pytest.skip("the C scanner is not built: nothing is scanned early")
    pending = [m.pending for m in maps]
    early = evaluate(EvalInput(qrels, mapped=maps[0]), EvalInput(run, mapped=maps[1]), EvalRequest())
    assert all(p is not None and p.result is None and p.data is None for p in pending)  # both handed over
    plain = evaluate(EvalInput(qrels), EvalInput(run), EvalRequest())
    assert render(early, "trec", per_query=True) == render(plain, "trec", per_query=True)


@pytest.mark.skipif(ranking.compiled_join is None, reason="the C hash join was not built")
def test_the_join_frees_the_columns_it_no_longer_reads(seed_data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """By the time the hash join runs (the peak of the join's memory), the query ids and the scores of both files
    are freed: `evaluate` hands the parsed columns over instead of keeping them. The docnos' hashes, which the
    compiled join never reads, are not even made: both files are scanned without them."""
    columns: dict[str, weakref.ref[np.ndarray]] = {}
    parse = EvalInput.parse
    hashes_made: list[str] = []

    def parse_and_watch(self: EvalInput, parser: Any, **options: Any) -> Any:
        parsed = parse(self, parser, **options)
        side = "run" if hasattr(parsed, "run_id") else "qrels"
        if parsed.docno.hashes is not None:
            hashes_made.append(side)
        columns[f"{side} qid"] = weakref.ref(parsed.qid)
        if side == "run":
            columns["run score"] = weakref.ref(parsed.score)
        return parsed

    alive_at_join: list[str] = []
    hash_join = ranking._rel_by_hash_join

    def join_and_look(*args: Any) -> Any:
        alive_at_join.extend(name for name, ref in columns.items() if ref() is not None)
        return hash_join(*args)

    monkeypatch.setattr(EvalInput, "parse", parse_and_watch)
    monkeypatch.setattr(ranking, "_rel_by_hash_join", join_and_look)
    evaluate(EvalInput(str(seed_data / "seed.qrels")), EvalInput(str(seed_data / "seed.runA")),
             EvalRequest(measures=["all_trec"]))
    assert len(columns) == 3 and alive_at_join == [] and hashes_made == []


@pytest.mark.parametrize("compiled_scan", [True, False])
@pytest.mark.parametrize("compiled_join", [True, False])
@pytest.mark.parametrize(("qrels", "run", "version", "where", "message"), [
    ("q 0 a 1\nq 0 b 0\nq 0 a 2\n", "q Q0 a 1 1 t\n", 9, "q.txt:3", "duplicate docno 'a'"),
    ("q 0 a 1\n\nq 0 b 0\nq 0 a 2\n", "q Q0 a 1 1 t\n", 9, "q.txt:4", "duplicate docno 'a'"),
    ("# judged\nq 0 a 1\nq 0 a 2\n", "q Q0 a 1 1 t\n", 10, "q.txt:3", "duplicate docno 'a'"),
    ("q 0 a 1\n", "q Q0 a 1 2 t\nq Q0 a 2 1 t\n", 9, "r.txt:2", "duplicate docno 'a'"),
    ("q 0 a 1\n", "\n\nq Q0 a 1 2 t\nq Q0 a 2 1 t\n", 9, "r.txt:4", "duplicate docno 'a'"),
    ("p 0 x 1\nq 0 a -1\n", "p Q0 x 1 1 t\nq Q0 a 1 1 t\n", 9, "q.txt:2", "only negative"),
    ("p 0 x 1\n \nq 0 a -1\n", "p Q0 x 1 1 t\nq Q0 a 1 1 t\n", 9, "q.txt:3", "only negative"),
    ("p 0 x 1\nq 0 a 1\n", "p Q0 x 1 1 t\n", 10, "q.txt:2", "in the qrels but not in the run"),
    ("p 0 x 1\n# q next\nq 0 a 1\n", "p Q0 x 1 1 t\n", 10, "q.txt:3", "in the qrels but not in the run"),
])
def test_errors_after_the_join_name_the_file_line_with_or_without_lines_that_are_not_records(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, compiled_scan: bool, compiled_join: bool, qrels: str,
        run: str, version: int, where: str, message: str) -> None:
    """Line numbers are stored only for files with a blank or comment line before their last record: the
    errors name the same line either way, whichever scanner and join read the files."""
    from reviewdepth.formats import scan as scan_module
    from reviewdepth.formats.errors import InputError

    if not compiled_scan:
        monkeypatch.setattr(scan_module, "compiled", None)
    if not compiled_join:
        monkeypatch.setattr(ranking, "compiled_join", None)
    (tmp_path / "q.txt").write_text(qrels)
    (tmp_path / "r.txt").write_text(run)
    with pytest.raises(InputError) as caught:
        evaluate(EvalInput(str(tmp_path / "q.txt")), EvalInput(str(tmp_path / "r.txt")),
                 EvalRequest(version=version))
    assert caught.value.describe().startswith(f"{tmp_path / where}:") and message in caught.value.describe()
