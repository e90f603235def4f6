"""``--compat clef2017`` reproduces every official CLEF 2017 TAR output file shipped in ../shared/data, byte for
byte (both judgment levels, all six runs), and the clean mode departs from it where the script is wrong."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewdepth.report.render import render
from reviewdepth.services.evaluation.evaluate_tar import TarEvaluation, TarOptions, evaluate_tar_files

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "clef-tar-2017"
RUNS = ("waterloo.A-rank-normal", "waterloo.B-thresh-normal", "amc.run", "ecnu.run2", "qut.result_bool_es_test",
        "iiit.run1")
LEVELS = {"abstract": "qrel_abs_test.txt.gz", "document": "qrel_content_test.txt.gz"}


def clef2017(*parts: str) -> Path:
    """A path under ../shared/data/clef-tar-2017, or skip (as tests/conftest.py's shared_data does)."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"shared data not found at {path} (clone the repo beside ../shared to run this test)")
    return path


def evaluate(level: str, run: str, compat: str = "clef2017") -> TarEvaluation:
    return evaluate_tar_files(clef2017("qrels", LEVELS[level]), clef2017("runs", f"{run}.gz"),
                              TarOptions(compat=compat))


@pytest.mark.parametrize("level", sorted(LEVELS))
@pytest.mark.parametrize("run", RUNS)
def test_official_output_reproduced_byte_for_byte(level: str, run: str) -> None:
    expected = clef2017("official-eval", level, f"{run}.results").read_text()
    ours = render(evaluate(level, run), "tar")
    if ours != expected:  # name the first differing line rather than dumping two 800-line files
        for mine, theirs in zip(ours.splitlines(), expected.splitlines(), strict=False):
            assert mine == theirs
    assert ours == expected


def test_document_level_skips_the_topic_without_relevant_documents() -> None:
    result = evaluate("document", "amc.run")
    assert "Skipping topic: CD010653" in result.notices
    assert "CD010653" not in result.per_query and len(result.per_query) == 29


def test_ecnu_num_docs_quirk() -> None:
    """ecnu.run2 shows 1,000 documents for topics with fewer qrels lines: the script prints the qrels count as
    num_docs, uses num_shown as N in wss and loss_e, and lets N − n go negative in the cost penalty."""
    topic = evaluate("abstract", "ecnu.run2").per_query["CD008760"]
    assert topic["num_docs"] == 64 and topic["num_shown"] == 1000
    assert topic["total_cost_uniform"] == 844.0  # 1000 + (64 − 1000)·2·M_r/R: a negative penalty
    assert topic["total_cost_uniform"] < topic["total_cost"]
    clean = evaluate("abstract", "ecnu.run2", "none").per_query["CD008760"]
    assert clean["num_docs"] == 1000 and clean["total_cost_uniform"] == clean["total_cost"]


def test_wss_95_half_even_target_compat_versus_ceil_clean() -> None:
    """CD010783 has R = 30: the script's k = round(28.5) = 28 gives the official 0.835; the ceil rule's k = 29
    gives 0.825."""
    compat = evaluate("abstract", "waterloo.A-rank-normal").per_query["CD010783"]
    clean = evaluate("abstract", "waterloo.A-rank-normal", "none").per_query["CD010783"]
    assert compat["num_rels"] == 30 and clean["num_rels"] == 30
    assert round(float(compat["wss_95"]), 3) == 0.835
    assert round(float(clean["wss_95"]), 3) == 0.825


def test_ncg_off_by_one_compat_versus_clean() -> None:
    """The script reads NCG@k at the last multiple of ⌊N/10⌋ strictly below k·N/100 and micro-averages ALL; the
    clean rule reads CG(round(N·k/100)) and macro-averages: on a full ranking they must differ somewhere."""
    compat = evaluate("abstract", "amc.run")
    clean = evaluate("abstract", "amc.run", "none")
    diffs = [(q, k) for q in compat.per_query for k in (f"NCG@{x}" for x in range(10, 101, 10))
             if round(float(compat.per_query[q][k]), 3) != round(float(clean.per_query[q][k]), 3)]
    assert diffs, "the 2017 NCG rule should differ from the clean one somewhere on a full ranking"
    # the micro-averaged ALL line versus the clean macro mean
    assert compat.summary["NCG@10"] != clean.summary["NCG@10"]
