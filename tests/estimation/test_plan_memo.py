"""The planned policy's memo reuses a decision only where the decision would be the same.

One `PlannedPolicy` serves many paths: the synthetic queues `plan_stop` replays, every replicate of a replayed queue
and every chunk a process replays while its replayer lives. Its memo was keyed by (depth, audited count, the audit's
positive ranks beyond the depth, the audited count beyond it), but a decision also reads F, the prefix's fit (its
labels) and which audited documents each candidate depth passes. A policy that had seen another path then gave that
path's decision, so a replay's figures depended on which chunks a worker process had replayed before. Each test
below builds looks that share the old key and differ in what the decision reads, checks that a fresh policy decides
them differently (else the test could not fail), and that a policy which has seen the one decides the other as a
fresh policy does."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from reviewdepth.estimation import replay as replay_module
from reviewdepth.estimation.replay import Design, ReplayPlan, RuleRuns, chunk_count, replay, replay_chunk, rules_for
from reviewdepth.estimation.stop_plan import Action, Certifier, PlannedPolicy, PolicyState, run_planned

from .test_stop_plan import clef2017_waterloo

SIZE = 2000
DEPTH = 400
TAU = Fraction("0.95")


def _policy() -> PlannedPolicy:
    return PlannedPolicy(SIZE, Certifier(SIZE, TAU, 0.95), batch=10)


def _prefix(relevant: list[int]) -> np.ndarray:
    labels = np.zeros(DEPTH, dtype=np.int8)
    labels[relevant] = 1
    return labels


def _cold_and_warm(first: tuple[PolicyState, np.ndarray], second: tuple[PolicyState, np.ndarray]) -> tuple[
        Action, Action, Action]:
    """The first look's and the second's decisions by fresh policies, and the second's by a policy that decided the
    first before."""
    warm = _policy()
    warm.decide(*first)
    return _policy().decide(*first), _policy().decide(*second), warm.decide(*second)


def test_the_prefix_labels_behind_the_same_count_are_part_of_the_decision() -> None:
    """40 relevant in 400 reviewed, all in the first 40 (the fit sees none lately: audit) or one in every 10 (the
    fit sees a steady yield: review on)."""
    early, steady = _prefix(list(range(40))), _prefix(list(range(0, DEPTH, 10)))
    first, second = (PolicyState(DEPTH, 40, 0), early), (PolicyState(DEPTH, 40, 0), steady)
    cold_first, cold_second, warm_second = _cold_and_warm(first, second)
    assert cold_first.kind == "audit" and cold_second.kind == "review"
    assert warm_second == cold_second


def test_the_found_count_is_part_of_the_decision() -> None:
    """The same last 200 reviewed (all the fit reads) with 10 or 70 relevant before them: F differs."""
    window = list(range(200, DEPTH, 10))
    few, many = _prefix([*range(10), *window]), _prefix([*range(70), *window])
    first = (PolicyState(DEPTH, int(few.sum()), 0), few)
    second = (PolicyState(DEPTH, int(many.sum()), 0), many)
    cold_first, cold_second, warm_second = _cold_and_warm(first, second)
    assert cold_first != cold_second
    assert warm_second == cold_second


@pytest.mark.parametrize("audited", [20, 100, 300])
def test_which_audited_documents_lie_ahead_is_part_of_the_decision(audited: int) -> None:
    """``audited`` stream elements, all beyond the prefix and none relevant: right after it (reviewing on passes
    them free) or at the queue's end."""
    labels = _prefix(list(range(40)))
    near = PolicyState(DEPTH, 40, audited, (), tuple(range(DEPTH, DEPTH + audited)))
    far = PolicyState(DEPTH, 40, audited, (), tuple(range(SIZE - audited, SIZE)))
    cold_first, cold_second, warm_second = _cold_and_warm((near, labels), (far, labels))
    assert cold_first.kind == "review" and cold_second.kind == "audit"
    assert warm_second == cold_second


def _queue(seed: int) -> np.ndarray:
    """A queue whose relevant documents thin out down the ranking (about 75 in 2,000)."""
    rng = np.random.default_rng(seed)
    return (rng.random(SIZE) < 0.15 * np.exp(-np.arange(SIZE) / 300)).astype(np.int8)


def test_a_policy_that_followed_other_paths_follows_a_path_as_a_fresh_one() -> None:
    """As in `plan_stop` and a replay: one policy over paths that share the reviewed prefix and differ beyond it
    (labels and audit streams); each path must come out as with a policy of its own."""
    base = _queue(3)
    start = PolicyState(DEPTH, int(base[:DEPTH].sum()), 0)
    rng = np.random.default_rng(5)
    shared = _policy()
    for _ in range(12):
        labels = _queue(int(rng.integers(1 << 30)))
        labels[:DEPTH] = base[:DEPTH]
        perm = rng.permutation(SIZE).astype(np.int64)
        assert run_planned(labels, perm, shared, start=start) == run_planned(labels, perm, _policy(), start=start)


# ---- a replay's figures whatever the chunks' order and the process that replays them ---------------------------

# CLEF 2017 CD010386 in waterloo A's order (626 documents, 2 relevant) at target 0.8, confidence 0.9, a look every
# 25: with the old key, chunk 1 of 200 replicates came out differently after chunk 0 than in a fresh process
TOPIC = "CD010386"


def _runs_equal(one: dict[str, RuleRuns], other: dict[str, RuleRuns]) -> bool:
    return one.keys() == other.keys() and all(
        np.array_equal(getattr(one[rule], name), getattr(other[rule], name))
        for rule in one for name in ("stopped", "depth", "found", "sampled"))


def test_planned_replay_chunks_are_the_same_cold_or_warm() -> None:
    labels = clef2017_waterloo(TOPIC)
    plan = ReplayPlan(Design("planned"), rules_for("planned"), Fraction("0.8"), 0.9, 25, 200, 44)
    chunks = range(chunk_count(plan))
    # cold: each chunk in a fresh replayer (a worker process that has replayed nothing of this queue before)
    cold = []
    for chunk in chunks:
        replay_module._replayer_for.cache_clear()
        cold.append(replay_chunk(labels, plan, chunk, (0,)))
    # warm: the chunks one after another in one replayer, in order and backwards
    replay_module._replayer_for.cache_clear()
    in_order = [replay_chunk(labels, plan, chunk, (0,)) for chunk in chunks]
    replay_module._replayer_for.cache_clear()
    backwards = {chunk: replay_chunk(labels, plan, chunk, (0,)) for chunk in reversed(chunks)}
    for chunk in chunks:
        assert _runs_equal(in_order[chunk], cold[chunk]), chunk
        assert _runs_equal(backwards[chunk], cold[chunk]), chunk
    # the whole replay, in a replayer that has run every chunk already
    whole = replay(labels, plan, (0,))
    joined = replay_module.concat_runs(cold)
    assert _runs_equal(whole, joined)
