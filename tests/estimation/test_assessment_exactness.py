"""Every certified figure of the depth report equals its definition at the stated confidence and sidedness
(issue 11, "Show": mutation resistance).

The expected values are computed here by brute force from scipy.stats (hypergeom, binom, beta), independently of
reviewdepth's interval code, and compared with what ``assess`` (the one function behind every report figure)
returns. Each case also checks that the definition at the wrong confidence (0.8) or the wrong sidedness
(two-sided where the guarantee is one-sided, or the reverse) gives a different number, so lowering the report's
confidence or swapping a bound makes these tests fail.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import numpy.typing as npt
import pytest
from scipy import stats

from reviewdepth.estimation.assessment import Assessment, ReviewState, SampleDraw, assess

CONFIDENCE = 0.95
ALPHA = 1 - CONFIDENCE
LOWERED = 0.2  # α of a report lowered to 0.8 confidence


def missed_upper(y: int, m: int, rest: int, tail: float) -> int:
    """D_U: the largest number K of relevant documents among ``rest`` for which seeing ≤ y in a simple random
    sample of m still has probability > ``tail`` (brute force over every K)."""
    k = np.arange(y, rest - (m - y) + 1)
    ok = k[stats.hypergeom.cdf(y, rest, k, m) > tail]
    return int(ok.max())


def missed_lower(y: int, m: int, rest: int, tail: float) -> int:
    """D_L: the smallest K for which seeing ≥ y has probability > ``tail``."""
    k = np.arange(y, rest - (m - y) + 1)
    ok = k[stats.hypergeom.sf(y - 1, rest, k, m) > tail]
    return int(ok.min())


def needed(tau: str, relevant: int) -> int:
    return math.ceil(Fraction(tau) * relevant)


def qbcb_j(r: int, tau: float, alpha: float) -> int | None:
    """Smallest j with P(Binomial(r, τ) ≥ j) ≤ α, by brute force."""
    for j in range(1, r + 1):
        if stats.binom.sf(j - 1, r, tau) <= alpha:
            return j
    return None


def review(size: int, prefix_relevant_ranks: npt.ArrayLike, reviewed: int, sample_ranks: npt.ArrayLike,
           sample_positive_ranks: npt.ArrayLike) -> tuple[ReviewState, npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """A queue of ``size``: prefix judged (relevant at the given ranks), the rest unjudged except the sample."""
    labels = np.full(size, -1, dtype=np.int8)
    labels[:reviewed] = 0
    labels[np.asarray(prefix_relevant_ranks, dtype=np.int64) - 1] = 1
    ranks = np.asarray(sample_ranks, dtype=np.int64)
    sample_labels = np.isin(ranks, np.asarray(sample_positive_ranks, dtype=np.int64)).astype(np.int64)
    beyond = ranks > reviewed
    labels[ranks[beyond] - 1] = sample_labels[beyond]
    inside = ~beyond
    assert np.array_equal(labels[ranks[inside] - 1], sample_labels[inside]), "sample labels must match the prefix"
    return ReviewState(labels, reviewed), ranks, sample_labels


def elusion_state(found: int, y: int) -> tuple[Assessment, int, int, int]:
    """Queue of 3,000: the first 1,000 reviewed with ``found`` relevant; a rest sample drawn at c0 = 600 (600
    documents, every 4th rank from 601) rolled forward to c = 1,000: 100 of its documents are now in the reviewed
    prefix and the 500 past 1,000 hold y positives.
    Returns (assessment, F, m, N_u)."""
    size, c, c0 = 3000, 1000, 600
    prefix = np.arange(1, found + 1) * (c // max(found, 1))
    prefix = prefix[prefix <= c0]  # relevant documents in ranks ≤ 600 only, so the sample's prefix part is negative
    extra = found - len(prefix)
    prefix = np.concatenate((prefix, np.arange(c0 + 2, c0 + 2 + 4 * extra, 4)[:extra]))  # avoid sampled ranks
    assert len(prefix) == found and prefix.max(initial=0) <= c
    sample = np.arange(c0 + 1, size + 1, 4)[:600]
    rest_part = sample[sample > c]
    state, ranks, labels = review(size, prefix, c, sample, rest_part[:y])
    draw = SampleDraw(1, c0, ranks, labels, len(sample))
    result = assess(state, [draw], ["0.8", "0.95", "1"], confidence=CONFIDENCE)
    return result, found, len(rest_part), size - c


def test_elusion_case_is_what_the_docstring_says() -> None:
    result, _, m, rest = elusion_state(80, 6)
    assert (result.reviewed, result.found, m, rest) == (1000, 80, 500, 2000)
    assert result.basis.method == "elusion"
    assert result.rest_sample == 1


@pytest.mark.parametrize("y", [0, 6, 25])
def test_conservative_upper_is_the_one_sided_exact_bound_at_the_stated_confidence(y: int) -> None:
    result, found, m, rest = elusion_state(80, y)
    expected = found + missed_upper(y, m, rest, ALPHA)
    assert result.conservative_upper == expected
    # the wrong definitions give other numbers, so a mutation cannot pass unnoticed
    assert found + missed_upper(y, m, rest, ALPHA / 2) > expected          # two-sided 95 %
    assert found + missed_upper(y, m, rest, LOWERED) < expected            # one-sided 80 %
    assert found + missed_upper(y, m, rest, 0.10) < expected              # one-sided 90 %


@pytest.mark.parametrize("y", [0, 6, 25])
def test_conservative_needed_of_the_095_row(y: int) -> None:
    result, found, m, rest = elusion_state(80, y)
    row = next(t for t in result.targets if t.target == 0.95)
    assert row.conservative.needed == needed("0.95", found + missed_upper(y, m, rest, ALPHA))
    assert row.conservative.needed != needed("0.95", found + missed_upper(y, m, rest, ALPHA / 2))
    assert row.conservative.needed != needed("0.95", found + missed_upper(y, m, rest, LOWERED))
    assert row.conservative.reached is False and row.status == "not reached"


@pytest.mark.parametrize("y", [0, 6, 25])
def test_elusion_rule_and_recall_figure_use_the_one_sided_bound(y: int) -> None:
    result, found, m, rest = elusion_state(80, y)
    expected = found / (found + missed_upper(y, m, rest, ALPHA))
    rule = next(r for r in result.stopping if r.rule == "elusion")
    assert rule.details["recall_lower"] == pytest.approx(expected, rel=1e-12)
    figure = next(f for f in result.recall if f.basis == "elusion")
    assert figure.lower_one_sided == pytest.approx(expected, rel=1e-12)
    for wrong in (ALPHA / 2, LOWERED):
        assert found / (found + missed_upper(y, m, rest, wrong)) != pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize("y", [0, 6, 25])
def test_two_sided_r_and_recall_intervals(y: int) -> None:
    result, found, m, rest = elusion_state(80, y)
    lower = found + missed_lower(y, m, rest, ALPHA / 2)
    upper = found + missed_upper(y, m, rest, ALPHA / 2)
    assert (result.basis.lower, result.basis.upper) == (max(lower, found + y), upper)
    assert result.basis.point == pytest.approx(found + rest * y / m, rel=1e-12)
    figure = next(f for f in result.recall if f.basis == "elusion")
    assert figure.lower == pytest.approx(found / upper, rel=1e-12)
    assert figure.upper == pytest.approx(min(1.0, found / max(lower, found + y)), rel=1e-12)
    assert upper != found + missed_upper(y, m, rest, ALPHA)          # a one-sided bound in its place
    assert upper != found + missed_upper(y, m, rest, LOWERED / 2)    # two-sided 80 %


def test_reached_follows_the_one_sided_bound_not_the_two_sided_one() -> None:
    """y = 0 of 500: F = 200 meets ⌈0.95·(F + D_U)⌉ with the one-sided D_U but not with the two-sided one."""
    found, y = 200, 0
    result, _, m, rest = elusion_state(found, y)
    one, two = missed_upper(y, m, rest, ALPHA), missed_upper(y, m, rest, ALPHA / 2)
    assert found >= needed("0.95", found + one) and found < needed("0.95", found + two)  # the case is a boundary
    row = next(t for t in result.targets if t.target == 0.95)
    assert row.status == "reached" and row.conservative.reached is True
    assert row.conservative.needed == needed("0.95", found + one)
    assert next(r for r in result.stopping if r.rule == "elusion").stop_now is True


def test_not_reached_when_only_a_lowered_confidence_would_reach() -> None:
    """F = 150, y = 0: reached with the 80 % one-sided bound, not with the 95 % one."""
    found, y = 150, 0
    result, _, m, rest = elusion_state(found, y)
    assert found >= needed("0.95", found + missed_upper(y, m, rest, LOWERED))
    assert found < needed("0.95", found + missed_upper(y, m, rest, ALPHA))
    row = next(t for t in result.targets if t.target == 0.95)
    assert row.status == "not reached"
    assert next(r for r in result.stopping if r.rule == "elusion").stop_now is False


def test_target_one_is_not_reached_by_a_sample() -> None:
    result, *_ = elusion_state(200, 0)
    row = next(t for t in result.targets if t.target == 1.0)
    assert row.status != "reached"


def population_state(reviewed: int) -> tuple[Assessment, npt.NDArray[np.int64], int]:
    """Queue of 2,000 whose relevant documents are every 5th rank (400 relevant); a whole-queue sample of every
    7th rank (285 documents, 57 relevant … 1 per 35 ranks) plus 30 more relevant ones, drawn before the review.
    Returns (assessment, sorted positive ranks, sample size)."""
    size = 2000
    relevant_ranks = np.arange(5, size + 1, 5)
    sample = np.unique(np.concatenate((np.arange(7, size + 1, 7), np.arange(10, 310, 10))))
    positives = sample[np.isin(sample, relevant_ranks)]
    state, ranks, labels = review(size, relevant_ranks[relevant_ranks <= reviewed], reviewed, sample, positives)
    draw = SampleDraw(2, 0, ranks, labels, len(sample))
    return assess(state, [draw], ["0.8", "0.95"], confidence=CONFIDENCE), np.sort(positives), len(sample)


def test_qbcb_certified_depth_is_the_binomial_tail_order_statistic() -> None:
    result, positives, _ = population_state(600)
    r = len(positives)
    assert r >= 59  # QBCB can certify 95 % / 95 %
    j = qbcb_j(r, 0.95, ALPHA)
    assert j is not None
    row = next(t for t in result.targets if t.target == 0.95)
    assert row.certified_depth == int(positives[j - 1])
    rule = next(s for s in result.stopping if s.rule == "qbcb")
    assert rule.stop_depth == int(positives[j - 1])
    lowered = qbcb_j(r, 0.95, LOWERED)
    assert lowered is not None and positives[lowered - 1] < positives[j - 1]
    row80 = next(t for t in result.targets if t.target == 0.8)
    j80 = qbcb_j(r, 0.8, ALPHA)
    assert j80 is not None and row80.certified_depth == int(positives[j80 - 1])


def test_direct_recall_is_clopper_pearson_at_the_stated_confidence() -> None:
    result, positives, _ = population_state(600)
    n_pos, f = len(positives), int(np.count_nonzero(positives <= 600))
    figure = next(x for x in result.recall if x.basis == "direct")
    one = stats.beta.ppf(ALPHA, f, n_pos - f + 1)
    lower = stats.beta.ppf(ALPHA / 2, f, n_pos - f + 1)
    upper = stats.beta.ppf(1 - ALPHA / 2, f + 1, n_pos - f)
    assert figure.point == pytest.approx(f / n_pos, rel=1e-12)
    assert figure.lower_one_sided == pytest.approx(one, rel=1e-9)
    assert figure.lower == pytest.approx(lower, rel=1e-9)
    assert figure.upper == pytest.approx(upper, rel=1e-9)
    assert stats.beta.ppf(LOWERED, f, n_pos - f + 1) != pytest.approx(one, rel=1e-6)
    assert lower != pytest.approx(one, rel=1e-6)


def test_srs_conservative_upper_is_one_sided_when_the_sample_lies_in_the_prefix() -> None:
    """A whole-queue sample entirely inside the reviewed prefix: no rest sample, so the basis is the SRS estimate
    and the conservative bound is the one-sided exact bound on R over the queue (R ≥ the relevant judged)."""
    size, c = 3000, 1000
    relevant_ranks = np.arange(20, c + 1, 20)  # 50 relevant in the prefix
    sample = np.arange(5, c + 1, 5)            # 200 documents, 10 positives (every 20th rank)
    positives = sample[np.isin(sample, relevant_ranks)]
    state, ranks, labels = review(size, relevant_ranks, c, sample, positives)
    result = assess(state, [SampleDraw(3, 0, ranks, labels, len(sample))], ["0.95"], confidence=CONFIDENCE)
    y, n = len(positives), len(sample)
    assert result.basis.method == "srs"

    def k_upper(tail: float) -> int:
        k = np.arange(y, size - (n - y) + 1)
        return int(k[stats.hypergeom.cdf(y, size, k, n) > tail].max())

    def k_lower(tail: float) -> int:
        k = np.arange(y, size - (n - y) + 1)
        return int(k[stats.hypergeom.sf(y - 1, size, k, n) > tail].min())

    assert result.conservative_upper == max(k_upper(ALPHA), 50)
    assert k_upper(ALPHA) > 50 and k_upper(ALPHA / 2) != k_upper(ALPHA) != k_upper(LOWERED)
    assert (result.basis.lower, result.basis.upper) == (max(k_lower(ALPHA / 2), 50), k_upper(ALPHA / 2))
    row = result.targets[0]
    assert row.conservative.needed == needed("0.95", k_upper(ALPHA))


def test_clopper_pearson_interval_option_is_one_sided_binomial_for_the_conservative_bound() -> None:
    """``interval="clopper-pearson"``: D_U = N_u·U with U the one-sided Clopper–Pearson bound."""
    size, c = 3000, 1000
    prefix = np.arange(10, 801, 10)  # 80 relevant
    sample = np.arange(c + 1, size + 1, 5)  # 400 documents of the rest
    positives = sample[:6]
    state, ranks, labels = review(size, prefix, c, sample, positives)
    draw = SampleDraw(4, c, ranks, labels, len(sample))
    result = assess(state, [draw], ["0.95"], confidence=CONFIDENCE, interval="clopper-pearson")
    m, rest, y = len(sample), size - c, 6
    one = 80 + rest * stats.beta.ppf(1 - ALPHA, y + 1, m - y)
    assert result.conservative_upper == pytest.approx(one, rel=1e-9)
    assert 80 + rest * stats.beta.ppf(1 - ALPHA / 2, y + 1, m - y) != pytest.approx(one, rel=1e-6)
    assert result.basis.upper == pytest.approx(80 + rest * stats.beta.ppf(1 - ALPHA / 2, y + 1, m - y), rel=1e-9)
