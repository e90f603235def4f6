"""The concept text's worked example (systems A and B), with its R-precision slip corrected."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewdepth.services.evaluation.evaluate import EvalOptions, evaluate_files

ALL = EvalOptions(measures=["all"])


def evaluate(seed: Path, system: str, version: int = 9) -> dict[str, float | int]:
    result = evaluate_files(seed / "seed.qrels", seed / f"seed.run{system}",
                            EvalOptions(measures=["all"], version=version))
    return result.per_query["q1"]


def test_system_a(seed_data: Path) -> None:
    a = evaluate(seed_data, "A")
    assert a["map"] == pytest.approx((1 + 1 + 3 / 9 + 4 / 10) / 4, abs=1e-15)
    assert "%6.4f" % a["map"] == "0.6833"
    assert a["P_10"] == 0.4 and a["recall_10"] == 1.0
    assert a["Rprec"] == 0.5 and a["recip_rank"] == 1.0 and a["bpref"] == 0.5
    assert a["P_5"] == 0.4 and a["recall_5"] == 0.5
    assert a["iprec_at_recall_0.60"] == 0.4  # 9.0.8: c = int(2.4 + 0.9) = 3
    assert "%6.4f" % a["11pt_avg"] == "0.7273"


def test_system_b_and_the_concept_text_slip(seed_data: Path) -> None:
    b = evaluate(seed_data, "B")
    assert b["map"] == pytest.approx(0.525, abs=1e-15)
    assert "%6.4f" % b["map"] == "0.5250"
    assert b["P_10"] == 0.4 and b["recall_10"] == 1.0
    assert b["P_5"] == 0.6 and b["recall_5"] == 0.75
    # The concept text says 0.25 ("one relevant document in its top four"); ranks 3 and 4 are both in the
    # top four, so R-precision is 2/4 = 0.5, the same as system A.
    assert b["Rprec"] == 0.5
    assert b["Rprec"] != 0.25
    assert b["recip_rank"] == pytest.approx(1 / 3)


def test_version_10_changes_only_a_iprec(seed_data: Path) -> None:
    a10 = evaluate(seed_data, "A", version=10)
    assert a10["iprec_at_recall_0.60"] == 1.0  # lround(2.4) = 2
    assert "%6.4f" % a10["11pt_avg"] == "0.7818"
    b9, b10 = evaluate(seed_data, "B"), evaluate(seed_data, "B", version=10)
    assert b9["11pt_avg"] == b10["11pt_avg"] == pytest.approx(2 / 3)
