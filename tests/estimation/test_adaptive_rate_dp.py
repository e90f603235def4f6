"""An audit rate that changes with the evidence (issue 24, item 4): the probability of a false stop computed
exactly, with no Monte Carlo, over every audit path of small populations, for every policy that decides from the
past how many audit documents to draw before each ranked document is reviewed.

Model (`reviewdepth.estimation.monitor`'s docstring). N documents in a fixed ranking with known 0/1 labels; the
review reads it one document per step (depth k); the audit stream is a uniformly random permutation of the
population, consumed in order (a document already reviewed is passed free but still consumed, so m counts
permutation elements). Between two ranked documents a policy draws any number of audit documents, and the team
looks after every draw and every ranked document: the monitor certifies as `monitor.monitor` does,
``certifies(τ, F(k), F(k) + x, max(min(upper_missed(N, m, x), N − k), x))`` with x the audit's relevant documents
ranked at or after k (R_known = F + x). A false stop is a look that certifies while F(k) < τ·R.

Exact computation. Only the draws' relevant documents matter by name: after m draws the state is (k, which relevant
documents were drawn, how many non-relevant), and from it the next draw is each undrawn document with probability
1/(N − m). Counting the orderings of the undrawn documents instead of probabilities keeps everything in integers,
so P(false stop) = (permutations with a false stop) / N! is an exact fraction. Per configuration:

- named policies (fixed rates, "audit only while the audit has found nothing outside S", …), evaluated exactly;
- **the best of every policy** (Bellman: at each state the larger of "draw one more" and "review the next ranked
  document"); the state holds everything the future depends on, so no history-dependent or randomised policy does
  better; the maximiser knows the configuration, i.e. the ranking's future labels included;
- the **clairvoyant** figure: P(some state along the permutation's path is a false stop at some depth), what a
  rate that also sees the permutation's future could reach;
- P(E), E = {∃m: U*(m, x*_m) < b*}: the confidence sequence for the fixed set S* (the largest prefix with recall
  < τ) fails at some audit size, the event the docstring's argument reduces every false stop to.

The argument predicts named ≤ best ≤ clairvoyant ≤ P(E) ≤ α, and the test asserts each inequality. The mutation
the guarantee does not cover, an order that depends on the audit (a ranker trained on audit labels: every relevant
document the audit finds outside the reviewed set is reviewed at once), is run through the same programme and
exceeds α; so does the check run at level 2α. ``python tests/estimation/test_adaptive_rate_dp.py`` prints the
table of figures.

A rate that uses the ranking's labels not yet judged is no mutation: the labels are fixed, so such a rate is one
more policy of the family the maximum runs over, and the maximiser is one ("to |S*|, then audit" needs to know where
recall reaches τ). Nor is a rate that peeks at the permutation's future (the clairvoyant column): E holds at every m
at once. Only what moves S* with the permutation, or makes the evidence other than a prefix of it, can break it.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from fractions import Fraction
from functools import cache, cached_property

import numpy as np
import pytest

from reviewdepth.estimation.monitor import MonitorInput, certifies, monitor, upper_missed

SAFE, OPEN, FALSE_STOP = 0, 1, 2


@dataclass(frozen=True)
class Look:
    """What the team sees at a look: ``depth`` k ranked documents read, ``reviewed`` |S| (k, plus the documents an
    audit-trained ranker moved up), ``found`` F, ``audited`` m, ``missed`` x."""

    depth: int
    reviewed: int
    found: int
    audited: int
    missed: int


Policy = Callable[[Look], bool]  # draw one more audit document before reviewing the next ranked one?


@dataclass(frozen=True)
class Review:
    """One configuration: the ranking's labels, the target τ and the monitor's confidence 1 − α. With
    ``audit_trained`` (the mutation) every relevant document the audit draws outside the reviewed set is reviewed
    at once, so the reviewed sets depend on the audit."""

    name: str
    labels: tuple[int, ...]
    target: Fraction
    confidence: float
    audit_trained: bool = False

    @property
    def size(self) -> int:
        return len(self.labels)

    @cached_property
    def relevant_ranks(self) -> tuple[int, ...]:
        return tuple(rank for rank, label in enumerate(self.labels) if label)

    @property
    def relevant(self) -> int:
        return len(self.relevant_ranks)

    @cached_property
    def found(self) -> tuple[int, ...]:
        """F(k), k = 0 … N."""
        return tuple(itertools.accumulate(self.labels, initial=0))

    @cached_property
    def deepest_false_depth(self) -> int:
        """|S*|: the largest k with F(k) < τ·R (recall below the target)."""
        return max(k for k in range(self.size + 1) if self.found[k] < self.target * self.relevant)

    @property
    def outside_star(self) -> int:
        """b* = |R \\ S*|."""
        return self.relevant - self.found[self.deepest_false_depth]

    @cached_property
    def outside_masks(self) -> tuple[int, ...]:
        """Bit i set when relevant document i is ranked at or after k (outside the prefix of depth k)."""
        return tuple(sum(1 << i for i, rank in enumerate(self.relevant_ranks) if rank >= k)
                     for k in range(self.size + 1))

    def look(self, depth: int, drawn: int, audited: int) -> Look:
        """The look at depth k after m draws, ``drawn`` the bit set of the relevant documents among them."""
        outside = (drawn & self.outside_masks[depth]).bit_count()
        if self.audit_trained:  # the audit's finds were reviewed when drawn: nothing found stays outside
            return Look(depth, depth + outside, self.found[depth] + outside, audited, 0)
        return Look(depth, depth, self.found[depth], audited, outside)

    def verdict(self, look: Look) -> int:
        if look.found >= self.target * self.relevant:
            return SAFE  # recall ≥ τ, and F never decreases along a path: no false stop from here on
        return FALSE_STOP if stops(self, look.reviewed, look.found, look.audited, look.missed) else OPEN

    @cached_property
    def table(self) -> list[list[list[int]]]:
        """verdict[k][drawn][non-relevant drawn] for every state."""
        n, r = self.size, self.relevant
        return [[[self.verdict(self.look(k, drawn, drawn.bit_count() + zeros)) for zeros in range(n - r + 1)]
                 for drawn in range(1 << r)] for k in range(n + 1)]


@cache
def stops(review: Review, reviewed: int, found: int, audited: int, missed: int) -> bool:
    """The monitor's stop decision as `monitor.monitor` takes it (N = the population, U capped at the documents
    outside the reviewed set and never below the x relevant documents known outside, R_known = F + x)."""
    n = review.size
    upper = max(min(upper_missed(n, audited, missed, review.confidence), n - reviewed), missed)
    return certifies(review.target, found, found + missed, upper)


def _states(review: Review) -> Iterator[tuple[int, int, int]]:
    """(m, drawn, non-relevant drawn) with m descending, so a state's successors come before it."""
    n, r = review.size, review.relevant
    for audited in range(n, -1, -1):
        for drawn in range(1 << r):
            zeros = audited - drawn.bit_count()
            if 0 <= zeros <= n - r:
                yield audited, drawn, zeros


def _draw(review: Review, row: list[list[int]], audited: int, drawn: int, zeros: int) -> int:
    """Σ over the next audit document of the successor's count (each successor weighs one ordering of the rest)."""
    total = sum(row[drawn | 1 << i][zeros] for i in range(review.relevant) if not drawn >> i & 1)
    if zeros < review.size - review.relevant:
        total += (review.size - review.relevant - zeros) * row[drawn][zeros + 1]
    return total


def false_stop_counts(review: Review, policy: Policy | None = None
                      ) -> tuple[int, dict[tuple[int, int, int], bool]]:
    """C(k, state): of the (N − m)! orderings of the undrawn documents, how many lead to a false stop — under
    ``policy``, or under the best policy (None: the larger of drawing and reviewing). Returns C at the start
    (k = 0, nothing drawn) and the decision taken at every open state (True: draw)."""
    n = review.size
    later: list[list[int]] | None = None
    decisions: dict[tuple[int, int, int], bool] = {}
    for k in range(n, -1, -1):
        row = [[0] * (n - review.relevant + 1) for _ in range(1 << review.relevant)]
        for audited, drawn, zeros in _states(review):
            verdict = review.table[k][drawn][zeros]
            if verdict != OPEN:
                row[drawn][zeros] = math.factorial(n - audited) if verdict == FALSE_STOP else 0
                continue
            assert later is not None, "a look at depth N is never open (recall 1)"
            review_next = later[drawn][zeros]
            if audited == n:  # the audit has consumed the whole permutation
                draw = False
            elif policy is None:
                draw = _draw(review, row, audited, drawn, zeros) > review_next
            else:
                draw = policy(review.look(k, drawn, audited))
            row[drawn][zeros] = _draw(review, row, audited, drawn, zeros) if draw else review_next
            decisions[k, drawn, zeros] = draw
        later = row
    assert later is not None
    return later[0][0], decisions


def false_stop(review: Review, policy: Policy | None = None) -> Fraction:
    """P(the monitor ever certifies while recall < τ) under ``policy`` (None: the best policy), exactly."""
    return Fraction(false_stop_counts(review, policy)[0], math.factorial(review.size))


def clairvoyant(review: Review) -> Fraction:
    """P(∃m, ∃k: the state after m draws is a false stop at depth k): the most any rate could reach, even one that
    sees the permutation's future (it need only review to that k and draw to that m)."""
    n = review.size
    count = [[0] * (n - review.relevant + 1) for _ in range(1 << review.relevant)]
    for audited, drawn, zeros in _states(review):
        if any(review.table[k][drawn][zeros] == FALSE_STOP for k in range(n + 1)):
            count[drawn][zeros] = math.factorial(n - audited)
        elif audited < n:
            count[drawn][zeros] = _draw(review, count, audited, drawn, zeros)
    return Fraction(count[0][0], math.factorial(n))


def sequence_miss(review: Review) -> Fraction:
    """P(∃m: U*(m, x*_m) < b*), x*_m the audit's relevant documents outside S* after m draws (Hypergeometric
    paths), exactly: the probability Ville's inequality bounds by α."""
    n, b = review.size, review.outside_star
    count: dict[tuple[int, int], int] = {}
    for audited in range(n, -1, -1):
        for x in range(max(0, audited - (n - b)), min(audited, b) + 1):
            if upper_missed(n, audited, x, review.confidence) < b:
                count[audited, x] = math.factorial(n - audited)
            elif audited < n:
                count[audited, x] = ((b - x) * count.get((audited + 1, x + 1), 0)
                                     + (n - b - (audited - x)) * count.get((audited + 1, x), 0))
            else:
                count[audited, x] = 0
    return Fraction(count[0, 0], math.factorial(n))


# ---- policies: each sees only the past (the look), except the last, which knows the ranking's labels ----

def per_document(rate: Fraction) -> Policy:
    """A fixed rate: ``rate`` audit elements per ranked document (draw while m ≤ rate·k)."""
    def policy(look: Look) -> bool:
        return look.audited <= rate * look.depth
    return policy


def while_clean(look: Look) -> bool:
    """Draw only while the audit has found nothing outside the reviewed set; once it finds one, review until the
    find is inside the reviewed set, then draw again (uncapped)."""
    return look.missed == 0


def while_clean_capped(look: Look) -> bool:
    """The same at no more than two audit elements per ranked document."""
    return look.missed == 0 and look.audited <= 2 * look.depth


def chase_finds(look: Look) -> bool:
    """The opposite: a slow rate (one per three) while the audit is clean, draw on while it has found something."""
    return look.missed > 0 or 3 * look.audited <= look.depth


def review_to_the_last_false_depth(review: Review) -> Policy:
    """Review to |S*| (the ranking's future labels tell where that is), then draw the whole audit there."""
    def policy(look: Look) -> bool:
        return look.depth >= review.deepest_false_depth
    return policy


NAMED: dict[str, Callable[[Review], Policy]] = {
    "½ per doc": lambda _: per_document(Fraction(1, 2)),
    "1 per doc": lambda _: per_document(Fraction(1)),
    "2 per doc": lambda _: per_document(Fraction(2)),
    "while clean": lambda _: while_clean,
    "while clean, ≤ 2/doc": lambda _: while_clean_capped,
    "chase finds": lambda _: chase_finds,
    "to |S*|, then audit": review_to_the_last_false_depth,
}


def _labels(size: int, ranks: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(1 if i in ranks else 0 for i in range(size))


# (name, N, relevant ranks): the relevant documents at the end (the review finds nothing until the last ranks, the
# audit must find them), spread down the ranking, split between the top and the end
PLACEMENTS: tuple[tuple[str, int, tuple[int, ...]], ...] = (
    ("N=12, R=3 at the end", 12, (9, 10, 11)),
    ("N=12, R=6 at the end", 12, (6, 7, 8, 9, 10, 11)),
    ("N=14, R=4 spread", 14, (1, 5, 8, 12)),
    ("N=14, R=6 split", 14, (0, 1, 2, 11, 12, 13)),
    ("N=20, R=3 at the end", 20, (17, 18, 19)),
    ("N=20, R=6 at the end", 20, (14, 15, 16, 17, 18, 19)),
    ("N=24, R=5 spread", 24, (2, 7, 12, 17, 22)),
)
TARGETS = (Fraction(1, 2), Fraction(4, 5))
ALPHAS = (Fraction(1, 20), Fraction(1, 10))


def _confidence(alpha: Fraction) -> float:
    return float(1 - alpha)


@dataclass(frozen=True)
class Row:
    review: Review
    alpha: Fraction
    named: dict[str, Fraction]
    best: Fraction
    clairvoyant: Fraction
    sequence_miss: Fraction


@cache
def row(name: str, size: int, ranks: tuple[int, ...], target: Fraction, alpha: Fraction) -> Row:
    review = Review(name, _labels(size, ranks), target, _confidence(alpha))
    named = {label: false_stop(review, make(review)) for label, make in NAMED.items()}
    return Row(review, alpha, named, false_stop(review), clairvoyant(review), sequence_miss(review))


def rows() -> list[Row]:
    return [row(name, size, ranks, target, alpha)
            for name, size, ranks in PLACEMENTS for target in TARGETS for alpha in ALPHAS]


def report() -> str:
    lines = [f"{'configuration':<22} {'τ':>4} {'α':>5} {'|S*|':>4} {'b*':>3} "
             + " ".join(f"{label:>10.10}" for label in NAMED) + f" {'best':>7} {'clairv.':>7} {'P(E)':>7}"]
    for r in rows():
        lines.append(f"{r.review.name:<22} {r.review.target!s:>4} {float(r.alpha):>5.2f} "
                     f"{r.review.deepest_false_depth:>4} {r.review.outside_star:>3} "
                     + " ".join(f"{float(p):>10.4f}" for p in r.named.values())
                     + f" {float(r.best):>7.4f} {float(r.clairvoyant):>7.4f} {float(r.sequence_miss):>7.4f}")
    for alpha in ALPHAS:
        worst = max((r for r in rows() if r.alpha == alpha), key=lambda r: r.best)
        lines.append(f"worst at α = {float(alpha)}: {worst.best} = {float(worst.best):.4f} "
                     f"({worst.review.name}, τ = {worst.review.target})")
    for name, size, ranks in MUTATED:
        for target in TARGETS:
            for alpha in ALPHAS:
                review = Review(name, _labels(size, ranks), target, _confidence(alpha), audit_trained=True)
                p = false_stop(review)
                lines.append(f"audit-trained order, {name}, τ = {target}, α = {float(alpha)}: best policy {p} = "
                             f"{float(p):.4f}; 1 per doc: {float(false_stop(review, per_document(Fraction(1)))):.4f}")
    for name, size, ranks, target, alpha in DOUBLED:
        p = false_stop(Review(name, _labels(size, ranks), target, _confidence(2 * alpha)))
        lines.append(f"check at level 2α, {name}, τ = {target}, α = {float(alpha)}: {p} = {float(p):.4f}")
    return "\n".join(lines)


# ---- the guarantee ----

@pytest.mark.parametrize(("name", "size", "ranks"), PLACEMENTS)
def test_no_audit_rate_exceeds_alpha(name: str, size: int, ranks: tuple[int, ...]) -> None:
    for target in TARGETS:
        for alpha in ALPHAS:
            r = row(name, size, ranks, target, alpha)
            for label, p in r.named.items():
                assert p <= r.best, (label, target, alpha)
            # the best policy reaches no more than the clairvoyant figure, which reaches no more than P(E): every
            # false stop is a miss of the sequence for S* (the docstring's argument, checked path by path)
            assert r.best <= r.clairvoyant <= r.sequence_miss <= alpha, (target, alpha)
            # the stop rule is monotone in the prefix (F grows, x and the cap fall), so the adversary's best play
            # is the non-adaptive one that needs the ranking's future labels: review to S*, then audit
            assert r.best == r.clairvoyant == r.named["to |S*|, then audit"], (target, alpha)


def test_the_grid_is_not_vacuous() -> None:
    # the worst policy comes within a factor of three of α at both levels (the sequence is conservative on
    # populations this small, but not so conservative that a broken argument could hide)
    for alpha in ALPHAS:
        worst = max(r.best for r in rows() if r.alpha == alpha)
        assert alpha / 3 < worst <= alpha
    # and the adaptive policies do certify falsely on some configuration
    assert max(r.named["while clean"] for r in rows()) > 0
    assert max(r.named["1 per doc"] for r in rows()) > 0


# ---- the mutations the test must catch ----

MUTATED: tuple[tuple[str, int, tuple[int, ...]], ...] = (
    ("N=12, R=6 at the end", 12, (6, 7, 8, 9, 10, 11)),
    ("N=14, R=6 split", 14, (0, 1, 2, 11, 12, 13)),
)


@pytest.mark.parametrize(("name", "size", "ranks"), MUTATED)
def test_an_order_trained_on_the_audit_breaks_the_guarantee(name: str, size: int, ranks: tuple[int, ...]) -> None:
    # the audit's finds are reviewed at once: x stays 0 while m grows, the sample that certifies is the one that
    # was emptied of its relevant documents, and S* now depends on the permutation
    for alpha in ALPHAS:
        review = Review(name, _labels(size, ranks), Fraction(4, 5), _confidence(alpha), audit_trained=True)
        assert false_stop(review) > alpha
        valid = Review(name, _labels(size, ranks), Fraction(4, 5), _confidence(alpha))
        assert false_stop(valid) <= alpha


# (name, N, relevant ranks, τ, α): the check run at confidence 1 − 2α against the claim P ≤ α
DOUBLED: tuple[tuple[str, int, tuple[int, ...], Fraction, Fraction], ...] = (
    ("N=20, R=3 at the end", 20, (17, 18, 19), Fraction(1, 2), Fraction(1, 20)),
    ("N=20, R=6 at the end", 20, (14, 15, 16, 17, 18, 19), Fraction(4, 5), Fraction(1, 20)),
    ("N=14, R=6 split", 14, (0, 1, 2, 11, 12, 13), Fraction(4, 5), Fraction(1, 10)),
    ("N=24, R=5 spread", 24, (2, 7, 12, 17, 22), Fraction(1, 2), Fraction(1, 10)),
)


@pytest.mark.parametrize(("name", "size", "ranks", "target", "alpha"), DOUBLED)
def test_a_check_at_twice_the_error_level_is_caught(name: str, size: int, ranks: tuple[int, ...], target: Fraction,
                                                   alpha: Fraction) -> None:
    assert false_stop(Review(name, _labels(size, ranks), target, _confidence(2 * alpha))) > alpha


# ---- the programme checked against every permutation and against `monitor.monitor` ----

@cache
def _monitor_certifies(review: Review, reviewed: int, found: int, audited: int, missed: int) -> bool:
    """`monitor.monitor` itself on a look with these counts (the x relevant audit documents outside placed at the
    last ranks; the decision does not depend on where)."""
    n = review.size
    ranks = np.arange(n - missed + 1, n + 1, dtype=np.int64)
    inp = MonitorInput(population=n, reviewed=reviewed, found=found, audited=audited,
                       known_relevant=found + missed, queue_reviewed=reviewed, queue_size=n,
                       audit_outside_ranks=ranks, audit_outside_relevant=np.ones(missed, dtype=np.bool_),
                       known_outside_relevant_ranks=ranks)
    return monitor(inp, review.target, review.confidence).certified


def _replay_every_permutation(review: Review, decide: Callable[[int, list[int]], bool]) -> int:
    """Permutations of the population on which the review has a false stop, by direct replay: ``decide(k,
    drawn documents)`` says whether to draw before reading rank k; the monitor is `monitor.monitor` itself."""
    n, needed = review.size, review.target * review.relevant
    failures = 0
    for perm in itertools.permutations(range(n)):
        k, m = 0, 0
        while True:
            drawn = list(perm[:m])
            moved = {d for d in drawn if review.labels[d] and d >= k} if review.audit_trained else set()
            found = review.found[k] + len(moved)
            if found >= needed:
                break
            missed = sum(1 for d in drawn if review.labels[d] and d >= k and d not in moved)
            if _monitor_certifies(review, k + len(moved), found, m, missed):
                failures += 1
                break
            if m < n and decide(k, drawn):
                m += 1
            else:
                k += 1
    return failures


def _state_of(review: Review, drawn: list[int]) -> tuple[int, int]:
    bits = sum(1 << review.relevant_ranks.index(d) for d in drawn if review.labels[d])
    return bits, sum(1 for d in drawn if not review.labels[d])


@pytest.mark.parametrize("audit_trained", [False, True])
def test_the_programme_counts_the_same_permutations_as_a_direct_replay(audit_trained: bool) -> None:
    # N = 7 (5040 permutations): the best policy's decisions and two adaptive ones, replayed on every permutation
    # with `monitor.monitor` deciding, give exactly the programme's counts
    review = Review("N=7", (1, 1, 0, 0, 1, 1, 1), Fraction(1, 2), 0.9, audit_trained)
    best, decisions = false_stop_counts(review)

    def follow(k: int, drawn: list[int]) -> bool:
        bits, zeros = _state_of(review, drawn)
        return decisions.get((k, bits, zeros), False)

    assert best > 0
    assert _replay_every_permutation(review, follow) == best
    for policy in (while_clean, per_document(Fraction(1))):
        def act(k: int, drawn: list[int], policy: Policy = policy) -> bool:
            bits, _ = _state_of(review, drawn)
            return policy(review.look(k, bits, len(drawn)))
        assert _replay_every_permutation(review, act) == false_stop_counts(review, policy)[0]


def test_the_decision_is_the_monitors() -> None:
    # `stops` (what the programme uses) agrees with `monitor.monitor` on every look of a 14-document review
    review = Review("N=14", _labels(14, (1, 5, 8, 12)), Fraction(1, 2), 0.95)
    for k in range(review.size + 1):
        outside = review.relevant - review.found[k]
        for audited in range(review.size + 1):
            for missed in range(max(0, audited - (review.size - outside)), min(audited, outside) + 1):
                assert stops(review, k, review.found[k], audited, missed) == _monitor_certifies(
                    review, k, review.found[k], audited, missed), (k, audited, missed)


if __name__ == "__main__":
    start = time.perf_counter()
    print(report())
    print(f"{time.perf_counter() - start:.1f} s")
