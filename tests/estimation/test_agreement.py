"""Cohen's κ, Krippendorff's α, percent agreement and QC error rates against hand-worked examples, sklearn,
the ``krippendorff`` package, exact-fraction derivations and a coverage simulation."""

from __future__ import annotations

import math
import warnings
from fractions import Fraction

import krippendorff
import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import cohen_kappa_score

from reviewdepth.estimation.agreement import (
    cohen_kappa,
    corrected_relevant_count,
    krippendorff_alpha_binary,
    percent_agreement,
    reviewer_error_rates,
)


def labels_from_table(n11: int, n10: int, n01: int, n00: int) -> tuple[np.ndarray, np.ndarray]:
    """Reviewer A and B label vectors with the given 2×2 counts (n10: A relevant, B not)."""
    a = np.array([1] * n11 + [1] * n10 + [0] * n01 + [0] * n00)
    b = np.array([1] * n11 + [0] * n10 + [1] * n01 + [0] * n00)
    return a, b


def exact_kappa(n11: int, n10: int, n01: int, n00: int) -> Fraction:
    n = n11 + n10 + n01 + n00
    p_o = Fraction(n11 + n00, n)
    p_e = Fraction(n11 + n10, n) * Fraction(n11 + n01, n) + Fraction(n01 + n00, n) * Fraction(n10 + n00, n)
    return (p_o - p_e) / (1 - p_e)


def delta_method_variance(n11: int, n10: int, n01: int, n00: int) -> Fraction:
    """Var(κ̂) by the delta method, derived here independently of the FCE (1969) closed form.

    κ = (p_o − p_e)/(1 − p_e), ∂p_o/∂p_ij = [i = j], ∂p_e/∂p_ij = p_.i + p_j. (row i of A, column j of B), so
    g_ij = ∂κ/∂p_ij = ([i = j] − (p_.i + p_j.)(1 − κ)) / (1 − p_e); a multinomial has Cov(p̂) = (diag(p) − pp')/n,
    hence Var(κ̂) = (Σ p_ij g_ij² − (Σ p_ij g_ij)²) / n.
    """
    n = n11 + n10 + n01 + n00
    p = {(1, 1): Fraction(n11, n), (1, 0): Fraction(n10, n), (0, 1): Fraction(n01, n), (0, 0): Fraction(n00, n)}
    row = {i: p[(i, 0)] + p[(i, 1)] for i in (0, 1)}
    col = {j: p[(0, j)] + p[(1, j)] for j in (0, 1)}
    p_e = row[0] * col[0] + row[1] * col[1]
    kappa = exact_kappa(n11, n10, n01, n00)
    g = {(i, j): (Fraction(int(i == j)) - (col[i] + row[j]) * (1 - kappa)) / (1 - p_e) for (i, j) in p}
    mean = sum(p[c] * g[c] for c in p)
    second = sum(p[c] * g[c] ** 2 for c in p)
    return (second - mean**2) / n


# ---------------------------------------------------------------------------------------------------- Cohen's κ


def test_kappa_hand_example() -> None:
    # Table (A rows, B columns), n = 50:   B=1  B=0
    #                                A=1   20    5    → A relevant 25/50 = 1/2
    #                                A=0   10   15    → A not relevant 25/50 = 1/2
    #                     B relevant 30/50 = 3/5, B not relevant 20/50 = 2/5
    # p_o = (20 + 15)/50 = 7/10
    # p_e = 1/2·3/5 + 1/2·2/5 = 3/10 + 2/10 = 1/2
    # κ = (7/10 − 1/2)/(1 − 1/2) = (1/5)/(1/2) = 2/5
    a, b = labels_from_table(20, 5, 10, 15)
    res = cohen_kappa(a, b)
    assert exact_kappa(20, 5, 10, 15) == Fraction(2, 5)
    assert res.n == 50
    assert (res.both_relevant, res.only_a_relevant, res.only_b_relevant, res.both_not_relevant) == (20, 5, 10, 15)
    assert res.observed_agreement == pytest.approx(0.7, abs=1e-15)
    assert res.expected_agreement == pytest.approx(0.5, abs=1e-15)
    assert res.kappa == pytest.approx(0.4, abs=1e-15)
    se = math.sqrt(delta_method_variance(20, 5, 10, 15))
    assert res.standard_error == pytest.approx(se, rel=1e-12)
    z = float(stats.norm.ppf(0.975))
    assert (res.lower, res.upper) == pytest.approx((0.4 - z * se, 0.4 + z * se), abs=1e-12)
    assert "Fleiss" in res.method and res.confidence == 0.95


@pytest.mark.parametrize("table", [(20, 5, 10, 15), (3, 1, 2, 44), (1, 7, 9, 3), (40, 0, 0, 10), (5, 30, 0, 1)])
def test_kappa_standard_error_is_the_delta_method_variance(table: tuple[int, int, int, int]) -> None:
    res = cohen_kappa(*labels_from_table(*table))
    assert res.kappa == pytest.approx(float(exact_kappa(*table)), abs=1e-14)
    assert res.standard_error == pytest.approx(math.sqrt(delta_method_variance(*table)), rel=1e-9, abs=1e-12)


def test_kappa_matches_sklearn_on_random_vectors() -> None:
    rng = np.random.default_rng(20240611)
    compared = 0
    for _ in range(200):
        n = int(rng.integers(2, 400))
        prevalence = float(rng.uniform(0.01, 0.99))
        a = (rng.random(n) < prevalence).astype(int)
        # B copies A with probability q, otherwise draws independently with its own prevalence.
        q = float(rng.uniform(0.0, 0.95))
        b_own = (rng.random(n) < float(rng.uniform(0.01, 0.99))).astype(int)
        b = np.where(rng.random(n) < q, a, b_own)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = cohen_kappa_score(a, b)
        got = cohen_kappa(a, b).kappa
        if math.isnan(expected):
            assert math.isnan(got)
        else:
            assert got == pytest.approx(expected, abs=1e-12)
            compared += 1
    assert compared >= 190


def test_kappa_edge_cases() -> None:
    empty = cohen_kappa(np.array([], dtype=int), np.array([], dtype=int))
    assert empty.n == 0
    assert all(math.isnan(v) for v in (empty.kappa, empty.lower, empty.upper, empty.observed_agreement))
    for label in (0, 1):
        same = cohen_kappa([label] * 7, [label] * 7)
        assert same.observed_agreement == 1.0 and same.expected_agreement == 1.0
        assert math.isnan(same.kappa) and math.isnan(same.lower) and math.isnan(same.upper)
    perfect = cohen_kappa([1, 0, 1, 0, 0], [1, 0, 1, 0, 0])
    assert perfect.kappa == 1.0 and perfect.standard_error == 0.0 and perfect.upper == 1.0
    # Bounds are clipped to [−1, 1].
    tiny = cohen_kappa([1, 0, 1], [0, 1, 1])
    assert -1.0 <= tiny.lower <= tiny.kappa <= tiny.upper <= 1.0
    assert cohen_kappa([True, False, True], [True, True, False]).n == 3
    with pytest.raises(ValueError):
        cohen_kappa([1, 0, 2], [1, 0, 1])
    with pytest.raises(ValueError):
        cohen_kappa([1, 0], [1, 0, 1])
    with pytest.raises(ValueError):
        cohen_kappa([1, 0], [1, 0], confidence=1.0)


@pytest.mark.parametrize(
    "probs",
    [
        {"p11": 0.30, "p10": 0.10, "p01": 0.05, "p00": 0.55},  # κ ≈ 0.68
        {"p11": 0.15, "p10": 0.10, "p01": 0.10, "p00": 0.65},  # κ ≈ 0.47
    ],
)
def test_kappa_interval_coverage(probs: dict[str, float]) -> None:
    p11, p10, p01, p00 = probs["p11"], probs["p10"], probs["p01"], probs["p00"]
    a1, b1 = p11 + p10, p11 + p01
    p_e = a1 * b1 + (1 - a1) * (1 - b1)
    true_kappa = (p11 + p00 - p_e) / (1 - p_e)
    rng = np.random.default_rng(7)
    n, reps = 200, 400
    tables = rng.multinomial(n, [p11, p10, p01, p00], size=reps)
    covered = 0
    for t in tables:
        res = cohen_kappa(*labels_from_table(*(int(v) for v in t)))
        covered += res.lower <= true_kappa <= res.upper
    coverage = covered / reps
    print(f"kappa Wald/FCE interval: true κ = {true_kappa:.4f}, n = {n}, coverage = {coverage:.3f} of {reps}")
    assert coverage >= 0.92


# ------------------------------------------------------------------------------------------- percent agreement


def test_percent_agreement() -> None:
    res = percent_agreement(45, 50)
    ci = stats.binomtest(45, 50).proportion_ci(0.95, method="exact")
    assert res.point == 0.9 and (res.lower, res.upper) == pytest.approx((ci.low, ci.high), abs=1e-12)
    assert res.method == "clopper-pearson" and (res.successes, res.trials) == (45, 50)
    wilson = percent_agreement(45, 50, 0.9, method="wilson")
    ci = stats.binomtest(45, 50).proportion_ci(0.9, method="wilson")
    assert (wilson.lower, wilson.upper) == pytest.approx((ci.low, ci.high), abs=1e-12)
    empty = percent_agreement(0, 0)
    assert math.isnan(empty.point) and math.isnan(empty.lower) and math.isnan(empty.upper)
    with pytest.raises(ValueError):
        percent_agreement(6, 5)
    with pytest.raises(ValueError):
        percent_agreement(1, 5, method="wald")


# ------------------------------------------------------------------------------------------- Krippendorff's α


def counts_from_reliability(data: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-unit relevant / not-relevant vote counts from a reviewers × units matrix (NaN = not judged)."""
    return (data == 1).sum(axis=0), (data == 0).sum(axis=0)


def test_alpha_hand_example() -> None:
    # unit   votes        r  s  m  r·s/(m−1)
    # u1     1 1          2  0  2  0
    # u2     1 0          1  1  2  1
    # u3     0 0 0        0  3  3  0
    # u4     1 1 0        2  1  3  2·1/2 = 1
    # u5     1            1  0  1  not pairable, ignored
    # n₁ = 2+1+0+2 = 5, n₀ = 0+1+3+1 = 5, n = 10, o_01 = 2
    # D_o = 2·o_01/n = 4/10, D_e = 2·n₀·n₁/(n(n − 1)) = 50/90 = 5/9
    # α = 1 − (4/10)/(5/9) = 1 − 36/50 = 7/25 = 0.28
    nan = np.nan
    data = np.array([[1, 1, 0, 1, 1], [1, 0, 0, 1, nan], [nan, nan, 0, 0, nan]], dtype=float)
    rel, nrel = counts_from_reliability(data)
    assert rel.tolist() == [2, 1, 0, 2, 1] and nrel.tolist() == [0, 1, 3, 1, 0]
    res = krippendorff_alpha_binary(rel, nrel)
    assert res.alpha == pytest.approx(0.28, abs=1e-14)
    assert res.observed_disagreement == pytest.approx(0.4, abs=1e-14)
    assert res.expected_disagreement == pytest.approx(5 / 9, abs=1e-14)
    assert (res.units_used, res.units_ignored, res.pairable_values) == (4, 1, 10)
    assert (res.relevant_values, res.not_relevant_values) == (5, 5)
    assert res.alpha == pytest.approx(krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"))


def test_alpha_matches_krippendorff_package_with_missing_values() -> None:
    rng = np.random.default_rng(99)
    for _ in range(100):
        reviewers = int(rng.integers(2, 7))
        units = int(rng.integers(5, 120))
        unit_prevalence = rng.beta(0.7, 0.7, size=units)  # units differ, so α is usually well above 0
        data = (rng.random((reviewers, units)) < unit_prevalence).astype(float)
        data[rng.random((reviewers, units)) < float(rng.uniform(0.0, 0.6))] = np.nan
        rel, nrel = counts_from_reliability(data)
        pairable = (rel + nrel) >= 2
        if rel[pairable].sum() == 0 or nrel[pairable].sum() == 0:
            continue  # D_e = 0: the package raises, ours returns NaN (tested separately)
        expected = krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")
        res = krippendorff_alpha_binary(rel, nrel, replicates=0)
        assert res.alpha == pytest.approx(expected, abs=1e-10)
        assert res.units_used == int(pairable.sum())
        assert math.isnan(res.lower) and math.isnan(res.upper)


def test_alpha_edge_cases() -> None:
    none = krippendorff_alpha_binary([1, 0, 1], [0, 1, 0])  # every unit has one vote
    assert none.units_used == 0 and none.units_ignored == 3
    assert math.isnan(none.alpha) and math.isnan(none.lower) and math.isnan(none.upper)
    constant = krippendorff_alpha_binary([2, 3, 0], [0, 0, 1])  # pairable votes all relevant: D_e = 0
    assert constant.units_used == 2 and math.isnan(constant.alpha) and constant.expected_disagreement == 0.0
    assert krippendorff_alpha_binary([], []).units_used == 0
    with pytest.raises(ValueError):
        krippendorff_alpha_binary([1, 2], [1])
    with pytest.raises(ValueError):
        krippendorff_alpha_binary([1, -1], [1, 1])
    with pytest.raises(ValueError):
        krippendorff_alpha_binary([1.5, 1], [1, 1])


def random_units(rng: np.random.Generator, units: int) -> tuple[np.ndarray, np.ndarray]:
    votes = rng.integers(1, 5, size=units)
    prevalence = rng.beta(0.5, 1.5, size=units)
    rel = rng.binomial(votes, prevalence)
    return rel, votes - rel


def test_alpha_bootstrap_is_deterministic_and_brackets_the_point() -> None:
    rng = np.random.default_rng(3)
    rel, nrel = random_units(rng, 500)
    first = krippendorff_alpha_binary(rel, nrel, seed=11)
    again = krippendorff_alpha_binary(rel, nrel, seed=11)
    assert first == again
    assert "seed 11" in first.method and "deterministic" in first.method
    assert first.lower < first.alpha < first.upper
    assert first.replicates == 2000 and first.replicates_undefined == 0
    other = krippendorff_alpha_binary(rel, nrel, seed=12)
    assert other.alpha == first.alpha and (other.lower, other.upper) != (first.lower, first.upper)
    # Grouping by pattern makes the result independent of document order.
    order = rng.permutation(rel.size)
    assert krippendorff_alpha_binary(rel[order], nrel[order], seed=11) == first
    wider = krippendorff_alpha_binary(rel, nrel, confidence=0.99, seed=11)
    assert wider.lower <= first.lower and wider.upper >= first.upper


def test_alpha_bootstrap_matches_naive_document_resampling() -> None:
    # The multinomial-over-patterns bootstrap must have the same distribution as resampling documents.
    rng = np.random.default_rng(5)
    rel, nrel = random_units(rng, 300)
    pairable = rel + nrel >= 2
    r, s = rel[pairable].astype(float), nrel[pairable].astype(float)
    idx = rng.integers(0, r.size, size=(4000, r.size))
    rr, ss = r[idx], s[idx]
    n1, n0 = rr.sum(axis=1), ss.sum(axis=1)
    o01 = (rr * ss / (rr + ss - 1)).sum(axis=1)
    naive = 1 - (n1 + n0 - 1) * o01 / (n0 * n1)
    naive_lower, naive_upper = np.quantile(naive, [0.025, 0.975])
    res = krippendorff_alpha_binary(rel, nrel, replicates=4000, seed=1)
    width = naive_upper - naive_lower
    assert res.lower == pytest.approx(naive_lower, abs=0.08 * width)
    assert res.upper == pytest.approx(naive_upper, abs=0.08 * width)


def test_alpha_bootstrap_handles_many_documents() -> None:
    rng = np.random.default_rng(8)
    rel, nrel = random_units(rng, 200_000)
    res = krippendorff_alpha_binary(rel, nrel, replicates=1000)
    assert res.units_used + res.units_ignored == 200_000
    assert res.lower < res.alpha < res.upper and res.upper - res.lower < 0.02


# ----------------------------------------------------------------------------------------- QC error rates


def test_error_rates_and_corrected_count_hand_example() -> None:
    # 30 QC documents: 10 originally relevant, of which QC says 2 are not (FPR = 2/10);
    # 20 originally not relevant, of which QC says 3 are relevant (FNR = 3/20); 5 disagreements of 30.
    original = np.array([1] * 10 + [0] * 20)
    check = np.array([1] * 8 + [0] * 2 + [1] * 3 + [0] * 17)
    rates = reviewer_error_rates(original, check)
    assert rates.n == 30 and rates.disagreements == 5
    fpr, fnr, err = rates.false_positive_rate, rates.false_negative_rate, rates.error_rate
    assert (fpr.successes, fpr.trials, fpr.point) == (2, 10, 0.2)
    assert (fnr.successes, fnr.trials, fnr.point) == (3, 20, 0.15)
    assert (err.successes, err.trials) == (5, 30) and err.point == pytest.approx(1 / 6)
    for result, (y, n) in ((fpr, (2, 10)), (fnr, (3, 20)), (err, (5, 30))):
        ci = stats.binomtest(y, n).proportion_ci(0.95, method="exact")
        assert (result.lower, result.upper) == pytest.approx((ci.low, ci.high), abs=1e-12)
    # 100 judged relevant, 400 judged not relevant:
    # point = 100·(1 − 0.2) + 400·0.15 = 80 + 60 = 140
    point, lower, upper = corrected_relevant_count(100, 400, rates)
    assert point == pytest.approx(140.0)
    assert lower == pytest.approx(100 * (1 - fpr.upper) + 400 * fnr.lower)
    assert upper == pytest.approx(100 * (1 - fpr.lower) + 400 * fnr.upper)
    assert lower < point < upper
    wilson = reviewer_error_rates(original, check, confidence=0.9, method="wilson")
    assert wilson.false_positive_rate.method == "wilson" and wilson.confidence == 0.9


def test_all_agree_gives_zero_error_rates() -> None:
    labels = np.array([1] * 12 + [0] * 38)
    rates = reviewer_error_rates(labels, labels.copy())
    assert rates.disagreements == 0
    for r in (rates.false_negative_rate, rates.false_positive_rate, rates.error_rate):
        assert r.point == 0.0 and r.lower == 0.0 and 0.0 < r.upper < 1.0
    assert rates.false_positive_rate.upper == pytest.approx(1 - 0.025 ** (1 / 12))
    point, lower, upper = corrected_relevant_count(50, 1000, rates)
    assert point == 50.0
    assert lower == pytest.approx(50 * (1 - rates.false_positive_rate.upper))
    assert upper == pytest.approx(50 + 1000 * rates.false_negative_rate.upper)


def test_error_rates_with_an_empty_denominator() -> None:
    rates = reviewer_error_rates([1, 1, 1, 1], [1, 0, 1, 1])  # nothing originally judged not relevant
    assert math.isnan(rates.false_negative_rate.point) and rates.false_negative_rate.trials == 0
    assert rates.false_positive_rate.point == 0.25 and rates.error_rate.point == 0.25
    point, _, _ = corrected_relevant_count(40, 0, rates)
    assert point == pytest.approx(30.0)
    assert all(math.isnan(v) for v in corrected_relevant_count(40, 10, rates))
    empty = reviewer_error_rates([], [])
    assert empty.n == 0 and math.isnan(empty.error_rate.point)
    with pytest.raises(ValueError):
        reviewer_error_rates([1, 0], [1])
    with pytest.raises(ValueError):
        corrected_relevant_count(-1, 0, rates)
