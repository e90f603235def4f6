"""The identification boxes of the PRISMA 2020 flow (issue 41, item 3) as plain data: the records per declared
source split into databases, registers and other methods, and `arithmetic_problems` catching counts whose
identification boxes do not add up."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from reviewdepth.report.prisma_model import PrismaCounts, arithmetic_problems, identification_by_source

SOURCES = {"database: MEDLINE": 1203, "database: Embase": 1577, "register: ClinicalTrials.gov": 88,
           "other: citation searching": 41}


def counts(identified: int = 3000, sources: dict[str, int] | None = None) -> PrismaCounts:
    """A flow with no screening yet, its identification from ``sources`` (default `SOURCES`)."""
    return PrismaCounts(
        identified=identified, identified_source="topic population", screened=0, included=0,
        excluded_by_reviewers=0, not_screened_review_stopped=identified - 600, judged_outside_queue=0,
        included_outside_queue=0, stopped_at_rank=0, reviewed=0, relevant_in_reviewed=0, reviewers_per_record={},
        conflicts=0, conflicts_resolved=0, independent=None, label_policy="latest", duplicates_removed=600,
        after_duplicates_removed=identified - 600,
        **identification_by_source(identified, SOURCES if sources is None else sources))


def test_the_sources_split_into_the_three_boxes_and_the_rest_is_not_recorded() -> None:
    c = counts()
    assert (c.identified_from_databases, c.identified_from_registers, c.identified_from_other_methods,
            c.identified_source_not_recorded) == (1203 + 1577, 88, 41, 3000 - 1203 - 1577 - 88 - 41)
    assert list(c.identified_per_source) == list(SOURCES)  # the order the sources were imported in
    assert arithmetic_problems(c) == ()
    # no source declared: every box is not recorded, and nothing to check
    bare = counts(sources={})
    assert (bare.identified_per_source, bare.identified_from_databases, bare.identified_from_registers,
            bare.identified_from_other_methods, bare.identified_source_not_recorded) == ({}, None, None, None, None)
    assert arithmetic_problems(bare) == ()


@pytest.mark.parametrize(("change", "problem"), [
    ({"identified_from_databases": 2781}, "databases = sum of the database sources: 2781 != 2780"),
    ({"identified_from_registers": 0}, "registers = sum of the register sources: 0 != 88"),
    ({"identified_from_other_methods": 40}, "other methods = sum of the other sources: 40 != 41"),
    ({"identified_source_not_recorded": 90},  # 91 records of no declared source, one lost
     "identified = databases + registers + other methods + source not recorded: 3000 != 2999"),
    ({"identified_per_source": {**SOURCES, "journal: BMJ": 5}}, "sources of no PRISMA type: journal"),
])
def test_arithmetic_problems_cover_the_identification_boxes(change: dict[str, Any], problem: str) -> None:
    assert problem in arithmetic_problems(replace(counts(), **change))


def test_more_sourced_records_than_identified_is_a_problem() -> None:
    over = counts(identified=2800)  # the sources bring 2,909 records: 109 more than the population
    assert over.identified_source_not_recorded == -109
    assert arithmetic_problems(over) == ("records of no declared source >= 0: -109 < 0",)
