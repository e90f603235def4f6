"""The anytime-valid monitor (`reviewdepth.estimation.monitor`): the confidence sequence is checked exactly (a
dynamic programme over every audit path of a small population computes the probability that the sequence ever
misses), pinned to an independent rational-arithmetic computation (so a changed level or side fails), and the whole
stop rule is replayed with a look after every document."""

from __future__ import annotations

import math
from fractions import Fraction
from math import comb

import numpy as np
import pytest

from reviewdepth.estimation.monitor import (
    MonitorInput,
    MonitorNote,
    certifies,
    fixed_look_upper,
    monitor,
    recall_lower,
    upper_missed,
)


def _brute_upper(population: int, audited: int, missed: int, alpha: Fraction) -> int:
    """max over x' ≤ x of max{r : L(r) > α Σ π₀ L}, in exact rationals (C(N, m) cancels)."""
    best = 0
    for x in range(missed + 1):
        prior = [Fraction(1, (r + 1) * (r + 2)) for r in range(population)] + [Fraction(1, population + 1)]
        like = [comb(r, x) * comb(population - r, audited - x) for r in range(population + 1)]
        evidence = sum(p * v for p, v in zip(prior, like, strict=True))
        inside = [r for r in range(population + 1) if like[r] > alpha * evidence]
        best = max(best, inside[-1])
    return best


@pytest.mark.parametrize("population", [12, 30])
def test_bound_equals_the_rational_computation_at_the_stated_level(population: int) -> None:
    for audited in range(0, population + 1, 3):
        for missed in range(0, min(audited, 4) + 1):
            for confidence, alpha in ((0.95, Fraction(1, 20)), (0.9, Fraction(1, 10))):
                expected = population if audited == 0 else _brute_upper(population, audited, missed, alpha)
                assert upper_missed(population, audited, missed, confidence) == expected, (audited, missed)


def _full_range_upper(population: int, audited: int, missed: int, alpha: float) -> int:
    """The raw upper end over every r in the support (no window), in floating point."""
    r = np.arange(missed, population - (audited - missed) + 1)
    log_like = np.array([math.lgamma(v + 1) - math.lgamma(missed + 1) - math.lgamma(v - missed + 1)
                         + math.lgamma(population - v + 1) - math.lgamma(audited - missed + 1)
                         - math.lgamma(population - v - audited + missed + 1) for v in r])
    log_prior = -np.log(r + 1.0) - np.log(r + 2.0)
    log_prior[r == population] = -math.log(population + 1.0)
    joint = log_prior + log_like
    peak = joint.max()
    evidence = peak + math.log(float(np.exp(joint - peak).sum()))
    return int(r[np.flatnonzero(log_like > math.log(alpha) + evidence)[-1]])


def test_the_likelihood_window_loses_nothing_on_large_populations() -> None:
    # upper_missed evaluates only where ln L is within WINDOW of its maximum; the full support gives the same end
    for population in (2000, 12000):
        for audited in (7, population // 9, population // 2, population - 5):
            for missed in sorted({0, 1, 3, min(40, audited)}):
                own = upper_missed(population, audited, missed, 0.95)
                assert own == max(_full_range_upper(population, audited, x, 0.05) for x in range(missed + 1))


def test_a_changed_level_changes_the_bound() -> None:
    # guards the pin above from passing vacuously: 90 % and 99 % differ from 95 % on this grid
    base = [upper_missed(200, m, 1, 0.95) for m in range(20, 200, 20)]
    assert base != [upper_missed(200, m, 1, 0.9) for m in range(20, 200, 20)]
    assert base != [upper_missed(200, m, 1, 0.99) for m in range(20, 200, 20)]


def _miss_probability(population: int, outside: int, bound: object, confidence: float) -> float:
    """P(∃m: bound(N, m, x_m) < b) for b = ``outside``, exactly, over all audit paths (a dynamic programme over the
    count x of relevant documents outside among the first m draws)."""
    alive = np.zeros(outside + 1)
    alive[0] = 1.0
    missed_mass = 0.0
    for m in range(population + 1):
        for x in range(min(m, outside) + 1):
            if alive[x] > 0 and bound(population, m, x, confidence) < outside:  # type: ignore[operator]
                missed_mass += alive[x]
                alive[x] = 0.0
        if m == population:
            break
        step = np.zeros_like(alive)
        for x in range(min(m, outside) + 1):
            if alive[x] == 0:
                continue
            p_hit = (outside - x) / (population - m)
            if x + 1 <= outside:
                step[x + 1] += alive[x] * p_hit
            step[x] += alive[x] * (1 - p_hit)
        alive = step
    return missed_mass


@pytest.mark.parametrize("confidence", [0.9, 0.95])
def test_confidence_sequence_misses_with_probability_at_most_alpha_over_every_look(confidence: float) -> None:
    population = 60
    worst = max(_miss_probability(population, b, upper_missed, confidence) for b in range(0, population + 1, 3))
    assert worst <= 1 - confidence


def test_the_one_look_bound_repeated_after_every_draw_is_not_valid() -> None:
    # the reason the fixed-look figure is labelled "valid for one look only"
    population = 60
    worst = max(_miss_probability(population, b, fixed_look_upper, 0.95) for b in range(1, 20))
    assert worst > 0.05


def test_bound_is_monotone_in_the_relevant_documents_found_outside() -> None:
    for audited in (5, 40, 150, 290):
        bounds = [upper_missed(300, audited, x, 0.95) for x in range(0, min(audited, 25) + 1)]
        assert bounds == sorted(bounds)
        assert all(b >= x for x, b in enumerate(bounds))


def test_certifies_uses_exact_arithmetic() -> None:
    tau = Fraction(19, 20)
    assert certifies(tau, 19, 19, 1)  # 19/20 is exactly 0.95
    assert not certifies(tau, 18, 18, 1)
    assert certifies(tau, 0, 0, 0)
    assert not certifies(Fraction(1), 100, 100, 1)
    assert recall_lower(19, 19, 1) == pytest.approx(0.95)
    assert recall_lower(0, 0, 5) == 0.0


def _replay(rel: np.ndarray, tau: float, confidence: float, every: int, rng: np.random.Generator
            ) -> tuple[float, int, int, bool]:
    """One review of a fixed ranking with an audit document after every ``every`` ranked documents and a look after
    each document: (recall at the stop, reviewed, audit documents judged outside the reviewed set, depth-bound
    covered at every look)."""
    n = len(rel)
    r_total = int(rel.sum())
    order = rng.permutation(n)  # audit order over ranks 0..n-1
    cum = np.concatenate([[0], np.cumsum(rel)])
    needed = int(np.ceil(tau * r_total - 1e-9))
    depth_true = int(np.searchsorted(cum, needed))
    audited = 0
    extra = 0
    bound_ok = True
    for k in range(0, n + 1):
        while audited < k // every and audited < n:
            if order[audited] >= k:
                extra += 1
            audited += 1
        seen = order[:audited]
        outside = seen[seen >= k]
        known_outside = outside[rel[outside] == 1]
        inp = MonitorInput(
            population=n, reviewed=k, found=int(cum[k]), audited=audited,
            known_relevant=int(cum[k]) + len(known_outside), queue_reviewed=k, queue_size=n,
            audit_outside_ranks=(outside + 1).astype(np.int64), audit_outside_relevant=rel[outside] == 1,
            known_outside_relevant_ranks=(known_outside + 1).astype(np.int64))
        result = monitor(inp, tau, confidence)
        if result.depth_bound is not None and result.depth_bound < depth_true:
            bound_ok = False
        if result.certified:
            return (1.0 if r_total == 0 else cum[k] / r_total), k, extra, bound_ok
    return 1.0, n, extra, bound_ok


def test_stopping_at_the_first_certified_look_fails_at_most_alpha() -> None:
    # a ranking with relevant documents spread down the queue; looks after every document, 150 replicates
    rng = np.random.default_rng(2026)
    n = 120
    rel = (rng.random(n) < np.linspace(0.5, 0.02, n)).astype(np.int64)
    stops = [_replay(rel, 0.8, 0.9, 2, rng) for _ in range(150)]
    failures = sum(1 for recall, *_ in stops if recall < 0.8)
    bound_misses = sum(1 for *_, ok in stops if not ok)
    # α = 0.1; 150 replicates: P(Binomial(150, 0.1) > 26) < 0.01
    assert failures <= 26
    assert bound_misses <= 26
    assert all(k <= n for _, k, _, _ in stops)


def test_monitor_without_audit_says_continue_and_what_is_needed() -> None:
    inp = MonitorInput(population=1000, reviewed=300, found=40, audited=0, known_relevant=40, queue_reviewed=300,
                       queue_size=1000)
    result = monitor(inp, 0.95, 0.95)
    assert result.status == "continue" and not result.certified
    # no audit: the bound is every document outside the reviewed set
    assert result.upper_missed == 700 and result.recall_lower == pytest.approx(40 / 740)
    assert result.audit_needed is not None and result.audit_needed > 0
    assert result.fixed_look.label == "valid for one look only"
    assert MonitorNote.NO_AUDIT_JUDGED in result.notes


def test_monitor_certifies_when_a_large_audit_finds_nothing_outside() -> None:
    n = 1000
    outside = np.arange(301, 1001, dtype=np.int64)
    inp = MonitorInput(population=n, reviewed=300, found=60, audited=900, known_relevant=60, queue_reviewed=300,
                       queue_size=n, audit_outside_ranks=outside[:630],
                       audit_outside_relevant=np.zeros(630, dtype=np.bool_))
    result = monitor(inp, 0.95, 0.95)
    assert result.certified and result.status == "stop certified"
    assert result.depth_bound == 300 and result.to_go_bound == 0 and result.audit_needed == 0
    assert 0.95 <= result.recall_lower <= 1.0


def test_a_review_that_reaches_every_document_certifies_even_without_enough_audit() -> None:
    # b can never exceed the documents outside S: nothing outside, nothing missed (recall 1)
    n = 400
    inp = MonitorInput(population=n, reviewed=n, found=30, audited=12, known_relevant=30, queue_reviewed=n,
                       queue_size=n, outside_ranks=np.zeros(0, dtype=np.int64))
    result = monitor(inp, 0.95, 0.95)
    assert result.certified and result.upper_missed == 0 and result.recall_lower == 1.0
    # one document left: the bound is 1; 10/11 < 0.95 does not certify, reviewing the last document does
    inp = MonitorInput(population=n, reviewed=n - 1, found=10, audited=12, known_relevant=10, queue_reviewed=n - 1,
                       queue_size=n, outside_ranks=np.array([n], dtype=np.int64))
    result = monitor(inp, 0.95, 0.95)
    assert result.upper_missed == 1 and not result.certified
    assert result.depth_bound == n and result.to_go_bound == 1


def test_the_printed_assumption_is_the_one_the_proof_needs() -> None:
    # the argument fixes S*, which needs the reviewed sets to be independent of the audit altogether (which documents
    # it drew included), not only of its labels (issue 25)
    from reviewdepth.estimation.monitor import ASSUMPTIONS

    wording = " ".join(ASSUMPTIONS)
    assert "which documents it drew" in wording and "audit's labels" not in wording
