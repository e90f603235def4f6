"""The plan near-linear in the queue (issue 44, item 1) makes the same plans as the code it replaced.

`stop_plan_before_44.py` beside this module is `reviewdepth/estimation/stop_plan.py` as it was before (each look
refitting the projection over the whole rest and bisecting the anytime-valid bound per F). Every plan of a grid of
states (synthetic queues of several sizes, reviewed shares, prevalences, targets, confidences, rest samples and
audit streams, and CLEF 2017 rankings) must come out equal, field by field, floats included; so must the replays
(`run_planned`, `run_fixed_rate`) and the certifier, pairwise. The new pieces are checked against what they stand
for: `monitor.upper_missed_at_most` against comparing `upper_missed`, `Certifier.allowed` against
`monitor.certifies`, the closed-form yields against the projection's arrays."""

from __future__ import annotations

import gzip
import importlib.util
import sys
from fractions import Fraction
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from reviewdepth.estimation import stop_plan
from reviewdepth.estimation.monitor import certifies, upper_missed, upper_missed_at_most

from ..conftest import shared_data


def _reference() -> ModuleType:
    name = "stop_plan_before_44"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name(f"{name}.py"))
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses look their module up while the class is made
        spec.loader.exec_module(module)
    return sys.modules[name]


before = _reference()


def _queue(size: int, prevalence: float, scale: float, seed: int) -> np.ndarray:
    """Labels in rank order: relevant with chance prevalence·e^(−i/(scale·size)) at rank i (a ranking that
    front-loads; a large ``scale`` is nearly flat)."""
    rng = np.random.default_rng(seed)
    chance = prevalence * np.exp(-np.arange(size) / (scale * size))
    return (rng.random(size) < chance).astype(np.int8)


def _evidence(module: ModuleType, labels: np.ndarray, reviewed: int, *, rest_sample: int = 0, audited: int = 0,
              seed: int = 0) -> object:
    """The module's ReviewEvidence at ``reviewed``: a simple random sample of the rest (placed, with offsets) or
    the first ``audited`` elements of an audit stream (a seeded permutation)."""
    n = len(labels)
    rng = np.random.default_rng([seed, reviewed, n])
    if rest_sample:
        sample = rng.choice(np.arange(reviewed, n), size=rest_sample, replace=False)
        positive = sample[labels[sample] == 1]
        return module.ReviewEvidence(labels[:reviewed].copy(), n, rest_sample_size=rest_sample,
                                     rest_sample_relevant=len(positive),
                                     rest_sample_offsets=tuple(int(i) - reviewed for i in sample),
                                     rest_sample_positive_offsets=tuple(int(i) - reviewed for i in positive))
    if audited:
        stream = rng.permutation(n)[:audited]
        outside = stream[stream >= reviewed]
        return module.ReviewEvidence(labels[:reviewed].copy(), n, audited=audited,
                                     outside_audited_ranks=tuple(int(i) for i in outside),
                                     outside_positive_ranks=tuple(int(i) for i in outside if labels[i] == 1))
    return module.ReviewEvidence(labels[:reviewed].copy(), n)


# (size, prevalence, scale, reviewed share, target, confidence, rest sample, audited, table, produce cost)
STATES = [
    (2000, 0.2, 0.05, 0.2, "0.95", 0.95, 0, 0, True, None),
    (2000, 0.2, 0.05, 0.1, "0.8", 0.9, 0, 0, False, None),
    (3000, 0.1, 0.1, 0.1, "0.95", 0.95, 0, 0, False, None),
    (3000, 0.1, 0.1, 0.3, "0.9", 0.99, 200, 0, False, None),
    (4000, 0.05, 0.2, 0.05, "0.95", 0.95, 300, 0, False, None),
    (4000, 0.3, 0.02, 0.15, "0.99", 0.95, 0, 0, False, None),
    (2500, 0.1, 0.1, 0.0, "0.95", 0.95, 300, 0, False, None),
    (2500, 0.15, 0.05, 0.2, "0.95", 0.95, 0, 400, False, None),
    (3000, 0.08, 0.3, 0.25, "0.8", 0.95, 0, 250, False, None),
    (2000, 0.2, 0.05, 0.3, "0.95", 0.9, 150, 0, False, 0.2),
    (5000, 0.02, 1.0, 0.1, "0.9", 0.95, 0, 0, False, None),
    (6000, 0.1, 0.05, 0.1, "0.95", 0.95, 0, 0, False, None),
]


@pytest.mark.parametrize("state", STATES, ids=[f"{s[0]}-{s[1]}-{s[3]}-{s[4]}-{s[5]}" for s in STATES])
def test_plans_on_a_grid_of_states_are_the_ones_before(state: tuple) -> None:
    size, prevalence, scale, share, target, confidence, rest_sample, audited, table, produce = state
    labels = _queue(size, prevalence, scale, seed=size + int(prevalence * 100))
    reviewed = int(share * size)
    tau = Fraction(target)
    new = stop_plan.plan_stop(_evidence(stop_plan, labels, reviewed, rest_sample=rest_sample, audited=audited),
                              tau, confidence, table=table, produce_cost=produce, seed=3)
    old = before.plan_stop(_evidence(before, labels, reviewed, rest_sample=rest_sample, audited=audited), tau,
                           confidence, table=table, produce_cost=produce, seed=3)
    assert repr(new) == repr(old)


def _ranking(topic: str, run: str) -> np.ndarray:
    relevant = set()
    with gzip.open(shared_data("clef-tar-2017", "qrels", "qrel_abs_test.txt.gz"), "rt") as qrels:
        for line in qrels:
            f = line.split()
            if len(f) == 4 and f[0] == topic and f[3] != "0":
                relevant.add(f[2])
    order: dict[str, None] = {}
    with gzip.open(shared_data("clef-tar-2017", "runs", run), "rt") as lines:
        for line in lines:
            f = line.split()
            if f[0] == topic:
                order.setdefault(f[2])
    return np.array([d in relevant for d in order], dtype=np.int8)


@pytest.mark.parametrize(("reviewed", "rest_sample", "audited"), [(200, 0, 0), (350, 300, 0), (500, 0, 300)])
def test_plans_on_a_clef_ranking_are_the_ones_before(reviewed: int, rest_sample: int, audited: int) -> None:
    labels = _ranking("CD007431", "ecnu.run2.gz")
    for target, confidence in (("0.95", 0.95), ("0.8", 0.9)):
        tau = Fraction(target)
        new = stop_plan.plan_stop(_evidence(stop_plan, labels, reviewed, rest_sample=rest_sample, audited=audited),
                                  tau, confidence, seed=1)
        old = before.plan_stop(_evidence(before, labels, reviewed, rest_sample=rest_sample, audited=audited), tau,
                               confidence, seed=1)
        assert repr(new) == repr(old)


@pytest.mark.parametrize(("prevalence", "scale", "share", "target"), [
    (0.1, 0.05, 0.1, "0.95"), (0.1, 1.0, 0.2, "0.9"), (0.3, 0.02, 0.05, "0.8"), (0.05, 0.2, 0.4, "0.99")])
def test_replays_are_the_ones_before(prevalence: float, scale: float, share: float, target: str) -> None:
    """`run_planned` and `run_fixed_rate` run for run, from a start with an audit stream under way."""
    size = 3000
    labels = _queue(size, prevalence, scale, seed=7)
    reviewed = int(share * size)
    tau = Fraction(target)
    rng = np.random.default_rng(11)
    for replicate in range(6):
        perm = rng.permutation(size).astype(np.int64)
        audited = 0 if replicate % 2 else 120
        head = perm[:audited]
        outside = tuple(int(i) for i in head[head >= reviewed])
        start_args = (reviewed, int(labels[:reviewed].sum()), audited, tuple(i for i in outside if labels[i] == 1),
                      outside)
        runs = []
        for module in (stop_plan, before):
            certifier = module.Certifier(size, tau, 0.95)
            policy = module.PlannedPolicy(size, certifier, max(10, size // 200))
            start = module.PolicyState(*start_args)
            planned = module.run_planned(labels, perm, policy, start=start)
            fixed = [module.run_fixed_rate(labels, perm, every, max(10, size // 200), certifier, start)
                     for every in (1, 7, 40)]
            runs.append((repr(planned), fixed))
        assert runs[0] == runs[1]


def test_the_public_look_decides_as_before() -> None:
    """`PlannedPolicy.decide` from a `PolicyState` (the door other callers use) gives the action it gave."""
    labels = _queue(2000, 0.15, 0.05, seed=5)
    tau = Fraction("0.95")
    for d, m in ((0, 0), (100, 0), (300, 80), (600, 200)):
        perm = np.random.default_rng(d).permutation(2000)[:m]
        outside = tuple(int(i) for i in perm[perm >= d])
        positives = tuple(i for i in outside if labels[i] == 1)
        actions = []
        for module in (stop_plan, before):
            policy = module.PlannedPolicy(2000, module.Certifier(2000, tau, 0.95), 10)
            state = module.PolicyState(d, int(labels[:d].sum()), m, positives, outside)
            actions.append(repr(policy.decide(state, labels[:d])))
        assert actions[0] == actions[1]


@pytest.mark.parametrize(("population", "confidence"), [(500, 0.95), (5000, 0.9), (40000, 0.99)])
def test_the_certifier_answers_as_before(population: int, confidence: float) -> None:
    for target in ("0.8", "0.95"):
        tau = Fraction(target)
        new, old = stop_plan.Certifier(population, tau, confidence), before.Certifier(population, tau, confidence)
        for found in (0, 1, 7, 40, 133, 900):
            for missed in (0, 1, 3):
                assert new.elements_needed(found, missed) == old.elements_needed(found, missed)
                for audited in (missed, 50, 300, population // 3, population):
                    for reviewed in (0, population // 2, population - 5):
                        if audited >= missed:
                            assert (new.certified(found, missed, audited, reviewed)
                                    == old.certified(found, missed, audited, reviewed))


def test_the_allowed_bound_is_where_certifies_turns() -> None:
    """K(F, x) is the largest U that `monitor.certifies` accepts: it accepts every U up to K and none above."""
    for target in ("0.5", "0.8", "0.9", "0.95", "0.99"):
        tau = Fraction(target)
        certifier = stop_plan.Certifier(10_000, tau, 0.95)
        for found in (0, 1, 2, 19, 20, 21, 99, 100, 1000):
            for missed in (0, 1, 5, 50):
                k = certifier.allowed(found, missed)
                assert certifies(tau, found, found + missed, k)
                assert not certifies(tau, found, found + missed, k + 1)
                assert all(certifies(tau, found, found + missed, u) for u in range(0, k + 1, max(1, k // 7)))


@pytest.mark.parametrize(("population", "confidence"), [(300, 0.95), (20_000, 0.95), (20_000, 0.9),
                                                        (1_000_000, 0.99)])
def test_the_bound_compared_with_k_without_computing_it_agrees(population: int, confidence: float) -> None:
    rng = np.random.default_rng(population)
    for _ in range(150):
        audited = int(rng.integers(1, population + 1))
        missed = int(min(audited, rng.integers(0, 6)))
        exact = upper_missed(population, audited, missed, confidence)
        for bound in {0, max(0, exact - 3), max(0, exact - 1), exact, exact + 1, exact + 5, 2 * exact,
                      int(rng.integers(0, population))}:
            assert upper_missed_at_most(population, audited, missed, confidence, bound) == (exact <= bound)


@pytest.mark.parametrize("rest_sample", [(0, 0), (300, 2), (1000, 40), (50, 0)])
def test_closed_form_yields_are_the_arrays_floors(rest_sample: tuple[int, int]) -> None:
    """`_projected_gains` gives ⌊cum(D)·s + 10⁻⁹⌋ of the projection's own arrays, or None (the arrays decide)."""
    size, relevant = rest_sample
    rng = np.random.default_rng(size)
    answered = 0
    for _ in range(60):
        reviewed = int(rng.integers(0, 5000))
        prefix = (rng.random(reviewed) < rng.uniform(0.001, 0.4) * np.exp(-np.arange(reviewed) / 2000)).astype(
            np.int8)
        rest = int(rng.integers(1, 200_000))
        ones_at = np.concatenate([[0], np.cumsum(prefix == 1, dtype=np.int64)])
        recent, decay, window = stop_plan._projection_fit(ones_at, reviewed)
        projection = stop_plan.project_yield(prefix, rest, rest_sample_size=size, rest_sample_relevant=relevant)
        assert (recent, decay, window) == (projection.recent_rate, projection.decay_per_window, projection.window)
        offsets = np.unique(rng.integers(1, rest + 1, size=40))
        share = 1 - rng.integers(0, 5, size=len(offsets)) / offsets
        gains = stop_plan._projected_gains(recent, decay, window, rest, size, relevant, offsets, share)
        if gains is not None:
            answered += 1
            expected = np.floor(projection.cumulative[offsets] * share + 1e-9).astype(np.int64)
            assert gains.tolist() == expected.tolist()
    assert answered >= 50
