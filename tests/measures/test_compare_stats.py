"""The paired tests, corrections and effect size of `measures.compare`, each against a computation that does
not share its code path: the t formula by hand, Wilcoxon's and the randomization test's exact null
distributions by enumerating every sign vector, and hand-worked corrections."""

from __future__ import annotations

import itertools
import math
import warnings
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from reviewdepth.measures.compare import adjust, effect_size, paired_test, randomization

BASE = np.array([0.21, 0.35, 0.10, 0.50, 0.42, 0.33, 0.27, 0.61, 0.18, 0.44])
RUN = np.array([0.30, 0.33, 0.25, 0.58, 0.49, 0.31, 0.40, 0.70, 0.20, 0.52])


def test_t_matches_the_formula() -> None:
    d = RUN - BASE
    n = len(d)
    t = d.mean() / (d.std(ddof=1) / math.sqrt(n))
    p = 2 * stats.t.sf(abs(t), n - 1)
    result = paired_test(BASE, RUN, "t")
    assert result.statistic == pytest.approx(t, rel=1e-12)
    assert result.p_value == pytest.approx(p, rel=1e-9)
    assert result.mean_difference == pytest.approx(d.mean())
    assert result.effect_size * math.sqrt(n) == pytest.approx(t, rel=1e-12)  # t = d_z·√n


def test_wilcoxon_matches_the_exact_signed_rank_distribution() -> None:
    d = RUN - BASE  # no ties, no zeros: scipy's exact branch
    ranks = stats.rankdata(np.abs(d))
    w_plus = ranks[d > 0].sum()
    n = len(d)
    sums = [sum(r for r, s in zip(ranks, signs, strict=True) if s) for signs in itertools.product((0, 1), repeat=n)]
    w = min(w_plus, n * (n + 1) / 2 - w_plus)
    p = min(1.0, 2 * sum(s <= w for s in sums) / 2**n)
    result = paired_test(BASE, RUN, "wilcoxon")
    assert result.statistic == w
    assert result.p_value == pytest.approx(p, rel=1e-12)


def exact_randomization_p(d: list[Fraction]) -> Fraction:
    observed = abs(sum(d))
    hits = sum(abs(sum(s * x for s, x in zip(signs, d, strict=True))) >= observed
               for signs in itertools.product((1, -1), repeat=len(d)))
    return Fraction(hits, 2 ** len(d))


def test_randomization_enumerates_exactly_with_ties_counted() -> None:
    # discrete differences (P@10-like) tie often; exact rational arithmetic decides each tie
    d = [Fraction(k, 10) for k in (1, 2, -1, 1, 0, 3, 1, -2, 1, 2)]
    expected = exact_randomization_p(d)
    base = np.full(len(d), 0.3)
    run = base + np.array([float(x) for x in d])
    result = paired_test(base, run, "randomization", permutations=2**len(d))
    assert result.p_value == pytest.approx(float(expected), abs=1e-15)


def test_monte_carlo_randomization_is_seeded_and_near_the_exact_value() -> None:
    d = RUN - BASE
    exact = randomization(d, permutations=2**len(d))[1]
    first = randomization(d, permutations=1000, seed=7)[1]
    assert randomization(d, permutations=1000, seed=7)[1] == first
    assert randomization(d, permutations=1000, seed=8)[1] != first
    assert abs(first - exact) < 4 * math.sqrt(exact * (1 - exact) / 1000) + 1 / 1001


def test_no_difference_is_p_one() -> None:
    for test in ("t", "wilcoxon", "randomization"):
        assert paired_test(BASE, BASE, test).p_value == 1.0
    assert effect_size(np.zeros(5)) == 0.0


def test_corrections_by_hand() -> None:
    p = [0.01, 0.04, 0.03, math.nan]
    assert adjust(p, "none")[:3] == [0.01, 0.04, 0.03]
    assert adjust(p, "bonferroni")[:3] == pytest.approx([0.03, 0.12, 0.09])
    # Holm: 0.01·3 = 0.03, 0.03·2 = 0.06, max(0.06, 0.04·1) = 0.06
    assert adjust(p, "holm")[:3] == pytest.approx([0.03, 0.06, 0.06])
    assert math.isnan(adjust(p, "holm")[3])
    assert adjust([0.5, 0.9], "bonferroni") == [1.0, 1.0]


def test_unknown_test_and_correction_are_refused() -> None:
    with pytest.raises(ValueError, match="test must be one of"):
        paired_test(BASE, RUN, "sign")
    with pytest.raises(ValueError, match="correction must be one of"):
        adjust([0.1], "fdr")


def test_t_equals_scipy_ttest_bit_for_bit() -> None:
    """The t test runs on scipy.special alone (no scipy.stats import): its statistic and p-value must still be
    scipy.stats' own, on score-like and arbitrary differences, tiny and large samples."""
    from reviewdepth.measures.compare import paired_t

    rng = np.random.default_rng(30)
    samples = [rng.normal(rng.normal(0, 0.05), rng.uniform(1e-3, 0.3), size=int(rng.integers(2, 400)))
               for _ in range(300)]
    samples += [np.round(rng.uniform(-1, 1, size=int(rng.integers(2, 60))), 1) for _ in range(100)]
    samples += [np.array([0.1, -0.1]), np.array([0.0, 0.0, 0.2]), np.array([1e-300, 2e-300, -5e-301]),
                np.array([0.25] * 7), np.array([-0.5, -0.5])]
    for d in samples:
        if not np.any(d):
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            expected = stats.ttest_1samp(d, 0.0, alternative="two-sided")
            statistic, p = paired_t(d)
        assert (statistic, p) == (float(expected.statistic), float(expected.pvalue)), d
