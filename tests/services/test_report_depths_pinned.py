"""Issue 38, item 8: the report's point and conservative depths come from the one definition in
`reviewdepth.measures.depth`, pinned here on the demo topic (CLEF TAR 2017 CD008803, Waterloo's ranking, 1,000
reviewed, a rest sample of 400) against a plain count written in this test.

The point depth for target τ is the rank of the ⌈τ·R̂⌉-th relevant document of the reviewed prefix (R̂ the basis
estimate), the conservative depth the same with the one-sided upper bound R_U. A copy that returned one rank
less (the mutant the issue names) changed every point depth of the demo and passed the whole suite."""

from __future__ import annotations

import gzip
import math
from fractions import Fraction

from sqlalchemy import Engine

from reviewdepth.services.demo import RUN_FILE, demo_file, demo_labels, run_demo


def _rank_of_kth_relevant(labels: list[int], k: int) -> int | None:
    """The 1-based rank of the k-th relevant label, counted one by one (0 for k ≤ 0, None if there are fewer)."""
    if k <= 0:
        return 0
    seen = 0
    for rank, label in enumerate(labels, start=1):
        seen += label == 1
        if seen == k:
            return rank
    return None


def _needed(tau: float, relevant: float) -> int:
    # ⌈τ·R⌉ in exact decimals: Fraction of the printed decimals, as a reviewer would compute it by hand
    return max(0, math.ceil(Fraction(str(tau)) * Fraction(repr(float(relevant)))))


def test_report_depths_are_the_rank_of_the_needed_relevant_document(engine: Engine) -> None:
    report = run_demo(engine)
    truth = demo_labels()
    with gzip.open(demo_file(RUN_FILE), "rt") as handle:
        ranking = [line.split()[2] for line in handle if line.strip()]
    reviewed = [int(truth[d] == "1") for d in ranking[:report.summary.reviewed]]
    assert report.summary.reviewed == 1000 and sum(reviewed) == report.summary.relevant_found_in_reviewed
    basis = next(row for row in report.estimates if row.estimate.method == report.depth_basis)
    r_hat, r_upper = basis.estimate.point, basis.upper_one_sided
    assert r_upper is not None
    pinned = []
    for row in report.depth:
        point_needed, upper_needed = _needed(row.target, r_hat), _needed(row.target, r_upper)
        assert row.point.needed == point_needed
        assert row.point.depth == _rank_of_kth_relevant(reviewed, point_needed)
        assert row.conservative.needed == upper_needed
        assert row.conservative.depth == _rank_of_kth_relevant(reviewed, upper_needed)
        pinned.append(row.point.depth)
    # the demo's point depths exist (the estimate is met within the 1,000 reviewed) and differ per target
    assert all(d is not None for d in pinned) and len(set(pinned)) == len(pinned)
