"""Per-role costs in the plan (issue 29, item 3): a document judged in first-pass review costs c_r, one judged as a
sample or audit document (a senior reviewer's) c_s. The monitor paths' expected cost used to count every document
once whatever --cost said; these checks pin the weighting."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from reviewdepth.estimation.stop_plan import (
    Certifier,
    PlannedPolicy,
    PolicyState,
    ReviewEvidence,
    plan_stop,
    run_fixed_rate,
    run_planned,
)

TAU, CONFIDENCE = Fraction("0.8"), 0.95


def queue(seed: int, size: int = 2000) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (rng.random(size) < 0.4 * np.exp(-np.arange(size) / 120) + 0.002).astype(np.int8)


def test_a_runs_cost_at_unit_costs_is_its_document_count_and_splits_by_role() -> None:
    for seed in range(6):
        labels = queue(seed)
        n = len(labels)
        rng = np.random.default_rng(100 + seed)
        perm = rng.permutation(n)
        run = run_planned(labels, perm, PlannedPolicy(n, Certifier(n, TAU, CONFIDENCE), batch=20, sample_cost=2.0))
        assert run.cost_at(1.0, 1.0) == run.cost
        # the review's share: its depth less the audit documents it reached; the audit's: every one judged as such
        stream = perm[: run.audited]
        assert run.paid >= int(np.count_nonzero(stream >= run.depth))
        assert run.cost_at(1.0, 0.0) == run.depth - run.paid_inside
        assert run.cost_at(0.0, 1.0) == run.paid
        assert run.paid_inside <= min(run.paid, run.depth)


def test_fixed_rate_stream_cost_weighs_audit_documents() -> None:
    labels = queue(3)
    n = len(labels)
    perm = np.random.default_rng(7).permutation(n)
    certifier = Certifier(n, TAU, CONFIDENCE)
    start = PolicyState(200, int(labels[:200].sum()), 0)
    unit = run_fixed_rate(labels, perm, 5, 20, certifier, start)
    review_only = run_fixed_rate(labels, perm, 5, 20, certifier, start, 1.0, 0.0)
    audit_only = run_fixed_rate(labels, perm, 5, 20, certifier, start, 0.0, 1.0)
    assert unit == review_only + audit_only and audit_only > 0
    assert run_fixed_rate(labels, perm, 5, 20, certifier, start, 1.0, 3.0) == review_only + 3 * audit_only


def test_dearer_samples_raise_the_monitor_paths_cost() -> None:
    labels = queue(11, 3000)
    evidence = ReviewEvidence(labels[:500], len(labels), rest_sample_size=300, rest_sample_relevant=1)
    unit = plan_stop(evidence, TAU, CONFIDENCE, replicates=10, table=False)
    dear = plan_stop(evidence, TAU, CONFIDENCE, replicates=10, table=False, sample_cost=3.0)
    for kind in ("planned", "audit_stream"):
        u = next(p for p in unit.paths if p.kind == kind)
        d = next(p for p in dear.paths if p.kind == kind)
        # every audit document now costs three: the same runs cost more, a replanned run no less than review
        assert d.expected_cost > u.expected_cost, kind
