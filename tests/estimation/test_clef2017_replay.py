"""Replay CLEF TAR 2017 topics in rank order with random elusion samples and compare the report's conservative
depth (the rank of the ⌈τ·R_U⌉-th relevant document, R_U the upper bound of R) with the true depth computed from
the full qrels. Beyond the reviewed prefix that rank is read off the full ranking (the simulation knows it).

The depth computation is the report's own (`depth_under_unknown_r` on the `estimate_elusion` estimate, which is
what `build_report` calls for an elusion sample)."""

from __future__ import annotations

import gzip
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from reviewdepth.estimation.depth_unknown import depth_under_unknown_r
from reviewdepth.estimation.relevant import estimate_elusion
from reviewdepth.measures.depth import depth_to_recall

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "clef-tar-2017"
TARGET = "0.95"


def load_topics() -> dict[str, np.ndarray]:
    """Topic -> 0/1 relevance of Waterloo's ranking (file order), abstract-level qrels."""
    if not SHARED.exists():
        pytest.skip(f"shared CLEF TAR 2017 data not found at {SHARED}")
    with gzip.open(SHARED / "qrels" / "qrel_abs_test.txt.gz", "rt") as handle:
        qrels = {(f[0], f[2]): int(f[3]) for f in (line.split() for line in handle) if len(f) == 4}
    ranking: dict[str, list[int]] = {}
    with gzip.open(SHARED / "runs" / "waterloo.A-rank-normal.gz", "rt") as handle:
        for line in handle:
            f = line.split()
            if len(f) >= 6:
                ranking.setdefault(f[0], []).append(1 if qrels.get((f[0], f[2]), 0) > 0 else 0)
    return {t: np.array(v, dtype=np.int64) for t, v in ranking.items() if sum(v) >= 10 and len(v) >= 1000}


def test_conservative_depth_is_rarely_shallower_than_the_truth() -> None:
    topics = load_topics()
    assert len(topics) >= 10
    rng = np.random.default_rng(2017)
    checked = violations = 0
    for _, rel in sorted(topics.items()):
        ranks = np.flatnonzero(rel) + 1
        true_r = len(ranks)
        true_depth = depth_to_recall(ranks, true_r, [TARGET])[0].depth
        assert true_depth is not None
        for fraction in (0.1, 0.2, 0.3, 0.5):
            reviewed = int(len(rel) * fraction)
            unreviewed = len(rel) - reviewed
            for _ in range(10):
                sample = rng.choice(unreviewed, size=min(400, unreviewed), replace=False) + reviewed
                estimate = estimate_elusion(int(rel[:reviewed].sum()), unreviewed, len(sample),
                                            int(rel[sample].sum()))
                row = depth_under_unknown_r(ranks[ranks <= reviewed], reviewed, estimate,
                                            [float(Fraction(TARGET))])[0]
                assert row.conservative_needed is not None
                checked += 1
                if row.conservative_needed > true_r:
                    continue  # more relevant documents than exist: the whole queue, never too shallow
                # where the review reaches the conservative count, read off the full ranking
                depth = int(ranks[row.conservative_needed - 1])
                if row.conservative_depth is not None:
                    assert row.conservative_depth == depth  # inside the reviewed prefix the report knows it
                violations += depth < true_depth
    rate = violations / checked
    print(f"\nCLEF 2017 replay: {checked} replicates, {violations} conservative depths shallower than the "
          f"true 95% depth ({rate:.2%})")
    assert checked >= 100
    assert rate <= 0.05
