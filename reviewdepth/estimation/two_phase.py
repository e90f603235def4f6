"""Two-phase (TAR 1.0) validation: recall and production precision when documents ranked at or above a cutoff are
produced without all being reviewed. Pure: counts in, figures out; no I/O.

Notation. A queue ranks N documents; the cutoff K splits it. The *coded* set C holds the documents coded in a
review role (wherever they sit in the ranking); F of them are coded relevant. The rest splits into the uncoded
documents at or above the cutoff (N_a of them, X_a relevant, unknown) and the uncoded documents below it — the
discard pile (N_b, X_b relevant, unknown).

- A relevant document counts as **found** when it is coded relevant, or is uncoded and ranked at or above the
  cutoff (Relativity's "Elusion with Recall"). The **produced set** is the same set of documents: the coded
  relevant plus every uncoded document at or above the cutoff (F + N_a documents; documents coded not relevant
  are withheld wherever they rank).
- recall = (F + X_a) / (F + X_a + X_b); precision of the produced set = (F + X_a) / (F + N_a).

X_a is estimated from a simple random sample of the uncoded documents at or above the cutoff and X_b from one of
the discard pile. A sample drawn from a frame that holds a whole stratum (``ranks:1-K`` for the produced set,
``below-rank:K`` for the discard pile, or the whole queue for both), restricted to the stratum's documents, is —
conditional on how many of its documents fall there — a simple random sample of the stratum; when one sample
serves both strata its two parts are, on that condition, independent. Every bound below holds conditionally,
hence unconditionally.

Intervals. Each count gets the exact interval of :func:`reviewdepth.estimation.intervals.hypergeometric_interval`
(``method="hypergeometric"``) or N·[L, U] from the Clopper–Pearson interval (``method="clopper-pearson"``; exact
for a binomial proportion, conservative for sampling without replacement). Recall is increasing in X_a and
decreasing in X_b, so

    recall_L = (F + La) / (F + La + Ub),   recall_U = (F + Ua) / (F + Ua + Lb),

where each of the two stratum intervals is taken at the level γ = √(1 − α) (Šidák): the samples are independent,
so both intervals hold at once with probability γ² = 1 − α. A two-sided recall interval takes two-sided stratum
intervals (γ each); the one-sided recall lower bound takes the one-sided lower bound La and the one-sided upper
bound Ub (γ each). A stratum with no uncoded document, or one sampled whole, is known exactly and the other
stratum takes the full level 1 − α. Precision depends on X_a alone: its interval takes the level 1 − α (two-sided
or one-sided lower).

Sample documents not yet judged are counted against each bound: as not relevant for a lower bound on the
stratum's relevant count, as relevant for an upper bound (practice counts them as relevant; this is that for the
bounds that decide a stop, and the opposite for the others, so no bound is made more favourable by a skipped
document). Point estimates use the judged sample documents only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache

from reviewdepth.estimation.intervals import hypergeometric_interval, proportion_interval

TWO_PHASE_METHODS: tuple[str, ...] = ("hypergeometric", "clopper-pearson")


class TwoPhaseAssumption(StrEnum):
    """What a two-phase figure rests on (the sentences: `reviewdepth.report.wording.two_phase_assumption`)."""

    CODING_CORRECT = "coding_correct"
    CUTOFF_BEFORE_SAMPLES = "cutoff_before_samples"
    PRODUCED_SAMPLE_SRS = "produced_sample_srs"
    DISCARD_SAMPLE_SRS = "discard_sample_srs"
    CODING_BLIND_TO_SAMPLES = "coding_blind_to_samples"
    JOINT_LEVEL = "joint_level"
    UNJUDGED_AGAINST_BOUNDS = "unjudged_against_bounds"
    BINOMIAL_CONSERVATIVE = "binomial_conservative"
    CONTROL_SET_APART = "control_set_apart"


class TwoPhaseGap(StrEnum):
    """Why a figure is not given."""

    NO_PRODUCED_SAMPLE = "no_produced_sample"
    NO_DISCARD_SAMPLE = "no_discard_sample"
    NOTHING_PRODUCED = "nothing_produced"
    NO_RELEVANT = "no_relevant"


@dataclass(frozen=True)
class StratumSample:
    """A simple random sample of one stratum: ``size`` documents of the stratum drawn, ``relevant`` of them judged
    relevant, ``unjudged`` of them not judged yet."""

    size: int
    relevant: int
    unjudged: int = 0

    def __post_init__(self) -> None:
        if self.size < 0 or self.relevant < 0 or self.unjudged < 0 or self.relevant + self.unjudged > self.size:
            raise ValueError(f"a stratum sample needs 0 ≤ relevant + unjudged ≤ size, got {self}")

    @property
    def judged(self) -> int:
        return self.size - self.unjudged


@dataclass(frozen=True)
class TwoPhaseCounts:
    """The state at the cutoff: ``coded_relevant`` F (coded relevant anywhere), of which ``coded_relevant_above``
    rank at or above the cutoff; ``coded`` all coded documents, ``uncoded_above`` N_a and ``uncoded_below`` N_b;
    the stratum samples (None: the stratum has no usable sample)."""

    cutoff: int
    coded: int
    coded_relevant: int
    coded_relevant_above: int
    uncoded_above: int
    uncoded_below: int
    produced_sample: StratumSample | None = None
    discard_sample: StratumSample | None = None

    def __post_init__(self) -> None:
        if min(self.cutoff, self.coded, self.coded_relevant, self.coded_relevant_above, self.uncoded_above,
               self.uncoded_below) < 0:
            raise ValueError("two-phase counts must be non-negative")
        if self.coded_relevant_above > self.coded_relevant or self.coded_relevant > self.coded:
            raise ValueError("coded_relevant_above ≤ coded_relevant ≤ coded")
        for sample, stratum in ((self.produced_sample, self.uncoded_above),
                                (self.discard_sample, self.uncoded_below)):
            if sample is not None and sample.size > stratum:
                raise ValueError(f"a sample of {sample.size} cannot come from a stratum of {stratum}")

    @property
    def produced(self) -> int:
        """F + N_a: the coded relevant and every uncoded document at or above the cutoff."""
        return self.coded_relevant + self.uncoded_above


@dataclass(frozen=True)
class CountFigure:
    """The relevant documents of one stratum of ``stratum`` documents: point estimate, two-sided interval and the
    one-sided bounds, each at ``confidence``; ``exact`` when no uncoded document is left unseen."""

    stratum: int
    sample_size: int
    sample_relevant: int
    sample_unjudged: int
    point: float
    lower: float
    upper: float
    lower_one_sided: float
    upper_one_sided: float
    confidence: float
    exact: bool


@dataclass(frozen=True)
class RatioFigure:
    """A proportion (recall or precision) with its two-sided interval and one-sided lower bound at
    ``confidence``; ``stratum_confidence``: the level each stratum's interval was taken at."""

    point: float
    lower: float
    upper: float
    lower_one_sided: float
    confidence: float
    stratum_confidence: float
    assumptions: tuple[TwoPhaseAssumption, ...]


@dataclass(frozen=True)
class TwoPhaseEstimate:
    """The two-phase figures at one cutoff; a figure that cannot be given is None with its reason in ``gaps``."""

    counts: TwoPhaseCounts
    confidence: float
    method: str
    found_uncoded: CountFigure | None
    eluded: CountFigure | None
    recall: RatioFigure | None
    precision: RatioFigure | None
    gaps: tuple[TwoPhaseGap, ...]


@lru_cache(maxsize=65536)
def _bound(kind: str, relevant: int, draws: int, population: int, confidence: float, method: str,
           sided: str) -> float:
    if method == "hypergeometric":
        lo, up = hypergeometric_interval(relevant, draws, population, confidence, sided)
        return float(lo if kind == "lower" else up)
    p_lo, p_up = proportion_interval(relevant, draws, confidence, "clopper-pearson", sided)
    return population * (p_lo if kind == "lower" else p_up)


def count_bounds(sample: StratumSample, stratum: int, confidence: float, method: str,
                 sided: str = "two") -> tuple[float, float]:
    """(lower, upper) bounds on the relevant documents of a stratum of ``stratum`` documents from ``sample``:
    two-sided (α/2 each side) or ``sided="lower"``/``"upper"`` (α on that side, the other its certain value).
    Unjudged sample documents count as not relevant for the lower bound and as relevant for the upper."""
    if stratum == 0:
        return 0.0, 0.0
    n, k, m = sample.size, sample.relevant, sample.unjudged
    if n == stratum:
        return float(k), float(k + m)
    if n == 0:
        return 0.0, float(stratum)
    certain_low, certain_high = float(k), float(stratum - (n - k - m))
    lower = certain_low if sided == "upper" else max(certain_low, _bound("lower", k, n, stratum, confidence,
                                                                        method, sided))
    upper = certain_high if sided == "lower" else min(certain_high, _bound("upper", k + m, n, stratum, confidence,
                                                                          method, sided))
    return lower, upper


def count_figure(sample: StratumSample, stratum: int, confidence: float, method: str) -> CountFigure:
    """Point, two-sided interval and one-sided bounds on a stratum's relevant documents at ``confidence``."""
    point = 0.0 if stratum == 0 or sample.judged == 0 else stratum * sample.relevant / sample.judged
    lower, upper = count_bounds(sample, stratum, confidence, method, "two")
    lower_one, _ = count_bounds(sample, stratum, confidence, method, "lower")
    _, upper_one = count_bounds(sample, stratum, confidence, method, "upper")
    exact = stratum == 0 or (sample.size == stratum and sample.unjudged == 0)
    return CountFigure(stratum, sample.size, sample.relevant, sample.unjudged, point, lower, upper, lower_one,
                       upper_one, confidence, exact)


def _ratio(found: float, total: float) -> float:
    return 1.0 if total == 0 else found / total


def _check(confidence: float, method: str) -> None:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be strictly between 0 and 1, got {confidence!r}")
    if method not in TWO_PHASE_METHODS:
        raise ValueError(f"method must be one of {TWO_PHASE_METHODS}, got {method!r}")


def two_phase_recall(counts: TwoPhaseCounts, confidence: float = 0.95,
                     method: str = "hypergeometric") -> RatioFigure | None:
    """Recall of the produced set (module docstring), or None when a stratum with uncoded documents has no sample
    or no relevant document can exist."""
    _check(confidence, method)
    f, na, nb = counts.coded_relevant, counts.uncoded_above, counts.uncoded_below
    a, b = counts.produced_sample, counts.discard_sample
    if (na > 0 and a is None) or (nb > 0 and b is None):
        return None
    a = a or StratumSample(0, 0)
    b = b or StratumSample(0, 0)
    known_a = na == 0 or (a.size == na and a.unjudged == 0)
    known_b = nb == 0 or (b.size == nb and b.unjudged == 0)
    gamma = confidence if known_a or known_b else math.sqrt(confidence)
    la, ua = count_bounds(a, na, gamma, method, "two")
    lb, ub = count_bounds(b, nb, gamma, method, "two")
    la1, _ = count_bounds(a, na, gamma, method, "lower")
    _, ub1 = count_bounds(b, nb, gamma, method, "upper")
    xa = count_figure(a, na, confidence, method).point
    xb = count_figure(b, nb, confidence, method).point
    if f + ua + ub == 0:
        return None
    assumptions = [TwoPhaseAssumption.CODING_CORRECT, TwoPhaseAssumption.CUTOFF_BEFORE_SAMPLES,
                   TwoPhaseAssumption.CODING_BLIND_TO_SAMPLES]
    if na > 0:
        assumptions.append(TwoPhaseAssumption.PRODUCED_SAMPLE_SRS)
    if nb > 0:
        assumptions.append(TwoPhaseAssumption.DISCARD_SAMPLE_SRS)
    if gamma != confidence:
        assumptions.append(TwoPhaseAssumption.JOINT_LEVEL)
    if a.unjudged or b.unjudged:
        assumptions.append(TwoPhaseAssumption.UNJUDGED_AGAINST_BOUNDS)
    if method == "clopper-pearson":
        assumptions.append(TwoPhaseAssumption.BINOMIAL_CONSERVATIVE)
    return RatioFigure(
        point=_ratio(f + xa, f + xa + xb), lower=_ratio(f + la, f + la + ub), upper=_ratio(f + ua, f + ua + lb),
        lower_one_sided=_ratio(f + la1, f + la1 + ub1), confidence=confidence, stratum_confidence=gamma,
        assumptions=tuple(assumptions))


def two_phase_precision(counts: TwoPhaseCounts, confidence: float = 0.95,
                        method: str = "hypergeometric") -> RatioFigure | None:
    """Precision of the produced set, (F + X_a)/(F + N_a), from the produced-set sample at level 1 − α; None when
    nothing is produced or the uncoded documents at or above the cutoff have no sample."""
    _check(confidence, method)
    f, na, a = counts.coded_relevant, counts.uncoded_above, counts.produced_sample
    if f + na == 0 or (na > 0 and a is None):
        return None
    a = a or StratumSample(0, 0)
    la, ua = count_bounds(a, na, confidence, method, "two")
    la1, _ = count_bounds(a, na, confidence, method, "lower")
    xa = count_figure(a, na, confidence, method).point
    total = f + na
    assumptions = [TwoPhaseAssumption.CODING_CORRECT]
    if na > 0:
        assumptions += [TwoPhaseAssumption.CUTOFF_BEFORE_SAMPLES, TwoPhaseAssumption.PRODUCED_SAMPLE_SRS,
                        TwoPhaseAssumption.CODING_BLIND_TO_SAMPLES]
    if a.unjudged:
        assumptions.append(TwoPhaseAssumption.UNJUDGED_AGAINST_BOUNDS)
    if method == "clopper-pearson":
        assumptions.append(TwoPhaseAssumption.BINOMIAL_CONSERVATIVE)
    return RatioFigure(point=(f + xa) / total, lower=(f + la) / total, upper=(f + ua) / total,
                       lower_one_sided=(f + la1) / total, confidence=confidence, stratum_confidence=confidence,
                       assumptions=tuple(assumptions))


def two_phase_estimate(counts: TwoPhaseCounts, confidence: float = 0.95,
                       method: str = "hypergeometric") -> TwoPhaseEstimate:
    """Every two-phase figure at ``counts``' cutoff: the relevant uncoded documents at or above the cutoff (found
    by production) and in the discard pile (eluded), each at level 1 − α; recall and production precision."""
    _check(confidence, method)
    gaps: list[TwoPhaseGap] = []
    if counts.uncoded_above > 0 and counts.produced_sample is None:
        gaps.append(TwoPhaseGap.NO_PRODUCED_SAMPLE)
    if counts.uncoded_below > 0 and counts.discard_sample is None:
        gaps.append(TwoPhaseGap.NO_DISCARD_SAMPLE)
    if counts.produced == 0:
        gaps.append(TwoPhaseGap.NOTHING_PRODUCED)
    recall = two_phase_recall(counts, confidence, method)
    if recall is None and not gaps:
        gaps.append(TwoPhaseGap.NO_RELEVANT)
    found = None if counts.produced_sample is None and counts.uncoded_above > 0 else count_figure(
        counts.produced_sample or StratumSample(0, 0), counts.uncoded_above, confidence, method)
    eluded = None if counts.discard_sample is None and counts.uncoded_below > 0 else count_figure(
        counts.discard_sample or StratumSample(0, 0), counts.uncoded_below, confidence, method)
    return TwoPhaseEstimate(counts, confidence, method, found, eluded, recall,
                            two_phase_precision(counts, confidence, method), tuple(gaps))


def control_set_recall(relevant: int, found: int, confidence: float = 0.95) -> RatioFigure | None:
    """Recall from a control set (a random sample of the whole queue judged apart from the review): of its
    ``relevant`` documents, ``found`` count as found. Given their number, the control set's relevant documents are
    a simple random sample of all relevant ones, so found/relevant estimates recall; the Clopper–Pearson interval
    (two-sided, and one-sided lower) at ``confidence``. None when the control set holds no relevant document.
    Valid only when neither the cutoff nor the ranking was chosen by looking at the control set (the classic
    TAR 1.0 practice of tuning the cutoff on the control set biases this figure upwards)."""
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be strictly between 0 and 1, got {confidence!r}")
    if not 0 <= found <= relevant:
        raise ValueError(f"found must be in [0, relevant], got {found} of {relevant}")
    if relevant == 0:
        return None
    lower, upper = proportion_interval(found, relevant, confidence, "clopper-pearson", "two")
    lower_one, _ = proportion_interval(found, relevant, confidence, "clopper-pearson", "lower")
    return RatioFigure(found / relevant, lower, upper, lower_one, confidence, confidence,
                       (TwoPhaseAssumption.CODING_CORRECT, TwoPhaseAssumption.CONTROL_SET_APART,
                        TwoPhaseAssumption.BINOMIAL_CONSERVATIVE))
