"""Replaying completed reviews (issue 17): how each stopping rule would have done on a team's own fully judged
queues. The one simulation engine behind ``reviewdepth simulate``, the portfolio calibration and the monitor bench.
Pure: numpy, scipy (through the estimation core) and the product's own rules; no I/O.

A *queue* is a completed review: ``labels`` 0/1 in rank order (population = queue, N documents, R ≥ 1 relevant,
F(k) relevant among the first k). The replayed team reviews in rank order and *looks* after every B ranked
documents, k = B, 2B, … < N (at N the queue is exhausted: recall 1, nothing to decide); at each look every rule
reads what the design has judged so far and the review stops at the first look where the rule says stop. Target
τ, confidence 1 − α; the oracle depth d* is the smallest k with F(k) ≥ ⌈τ·R⌉; a stop *fails* when the set the
rule certifies holds fewer than ⌈τ·R⌉ relevant documents.

Designs (what the team judges besides the ranked prefix; ``sampled`` counts those documents outside the prefix at
the stop, each once; a rule that never stops reviews all N and samples nothing more):

- ``none``: nothing; only the rules that read the prefix alone (the heuristics).
- ``rest``: at every look, a fresh simple random sample of n documents (all of them when fewer are left) from the
  ranks after k, judged. Sample counts per look are drawn as Hypergeometric(N − k, R − F(k), n); the union of the
  samples at the stop is drawn exactly from its conditional law (`monitor_simulation.fresh_sample_union`).
- ``population``: one simple random sample of n documents of the whole queue, drawn (in a random draw order)
  before the review starts and judged; sampled = its documents ranked after the stop.
- ``audit``: the audit stream of `reviewdepth.estimation.monitor`: a uniformly random permutation of the queue,
  one audit document due after every K ranked, documents already judged passed free
  (`monitor_simulation.stream_positions`); sampled = audited documents ranked after the stop.

Rules (:data:`RULES`; ``kind``: ``certified`` = the rule's guarantee holds for the stop as replayed, ``invalid`` =
a one-look guarantee applied at every look, which the guarantee does not cover, ``heuristic`` = no guarantee):

- ``monitor`` (audit, certified): `monitor.certifies` with the anytime-valid bound `monitor.upper_missed`;
- ``fixed`` (audit, invalid): the same with `monitor.fixed_look_upper`, the one-look bound, at every look;
- ``qbcb`` (population: `stopping.qbcb` on the sample's positives, certified; audit: QBCB on the audit positives
  so far, as in the monitor bench — the sample grows with the looks, so this is the bench's "repeated" QBCB);
- ``target`` (population: `stopping.target_method` on the first K positives in draw order; audit: the first K
  audit positives in stream order; certified);
- ``direct`` (population, certified): `stopping.direct_recall_rule`, the one-sided Clopper–Pearson bound on the
  sample positives' recall (it stops exactly where QBCB does; replayed through its own function as a check);
- ``elusion`` (rest, invalid): `stopping.elusion_rule` on each look's fresh sample — certified for one look at a
  fixed cutoff, repeated here at every look;
- ``hypergeometric`` (rest, invalid): `stopping.hypergeometric_p_value` with the look's fresh sample as the
  random urn (Callaghan & Müller-Hansen) — it certifies the prefix *plus the urn*, so its ``found`` is F(k) + the
  urn's positives; a one-look test repeated at every look;
- ``knee``, ``budget`` (every design, heuristic): `stopping.knee_method` / `stopping.budget_method` exactly as
  the depth report's rows evaluate them (on the prefix, at AutoTAR's batch ends), so a portfolio calibration
  measures the row it is printed beside; the team acts at its first look at or after the batch end where the rule
  first fires (at a look k the report's row says stop exactly then). They read no sample, so
  their depth is the same in every replicate; their ``sampled`` is what the design judged by their stop (a team
  that follows the design judges those documents whichever rule it reads).
- ``safe`` (none, heuristic): the SAFE procedure (`stopping.safe_procedure`), which draws its own random training
  set (1 % of the queue) per replicate from its own stream, phase 2 and phase 3 on the one ranking; ``sampled`` is
  its training documents ranked after the stop, whose relevant ones count as found. Only under ``none``: a
  design's own sample would overlap the training set.

Seeding: replicates are cut into chunks of :data:`CHUNK`; chunk c of a queue identified by ``key`` draws from
``default_rng(SeedSequence(seed, spawn_key=(*key, c)))``, so results do not depend on the number or kind of
workers nor on the order chunks run in. Within a chunk the design's draws come first (audit: one permutation per
replicate, `monitor_simulation.audit_permutations`; rest: the sample counts of every look; population: the
samples); a rule's runs do not depend on which other rules are replayed with it (the rest design's union draws
for a rule other than ``elusion`` come from its own stream, ``spawn_key=(*key, c, 1 + its index in RULES)``).
With ``key=()`` chunk 0 of the audit design draws the permutations of `monitor_simulation.simulate_queue` with
the same seed, and with ``key=(1,)`` chunk 0 of the rest design draws its elusion stream for one batch and one
sample size: the two agree exactly (tests/estimation/test_replay.py).
"""

from __future__ import annotations

import hashlib
import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from functools import lru_cache
from typing import Generic, TypeVar

import numpy as np
import numpy.typing as npt

from reviewdepth.estimation.intervals import proportion_interval
from reviewdepth.estimation.monitor_simulation import (
    Decisions,
    Queue,
    audit_permutations,
    first_look,
    fresh_sample_counts,
    fresh_sample_union,
    look_ranks,
    simulate_audit_rules,
    stream_positions,
)
from reviewdepth.estimation.rules import DESIGNS as DESIGNS
from reviewdepth.estimation.rules import KINDS as KINDS
from reviewdepth.estimation.rules import (
    REPLAYABLE,
    OnPrefix,
    OnRestSample,
    OnTrainingSample,
    OnWholeQueueSample,
    Rule,
)
from reviewdepth.estimation.stop_plan import Certifier, PlannedPolicy, run_planned
from reviewdepth.measures.depth import exact_fraction

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

V = TypeVar("V")

CHUNK = 50
QUANTILES: tuple[tuple[str, float], ...] = (("p05", 0.05), ("p25", 0.25), ("p50", 0.5), ("p75", 0.75),
                                            ("p95", 0.95))

#: the replayable rules of the one table (`reviewdepth.estimation.rules`), in replay order
RULES: dict[str, Rule] = {rule.name: rule for rule in REPLAYABLE}


def rules_for(design: str) -> tuple[str, ...]:
    """The rules replayable under ``design``, in :data:`RULES` order."""
    return tuple(name for name, info in RULES.items() if design in info.designs)


@dataclass(frozen=True)
class Design:
    """What the team judges besides the ranked prefix. ``sample_size``: rest — documents in the fresh rest sample
    drawn at each look; population — size of the one simple random sample of the queue drawn before the review.
    ``every``: audit — one audit document served per ``every`` ranked documents. Fields a design does not use are
    ignored."""

    kind: str
    sample_size: int = 0
    every: int = 0


@dataclass(frozen=True)
class ReplayPlan:
    """One replay: the design, the rules, target τ and confidence, a look after every ``look_every`` ranked
    documents, ``replicates`` seeded replicates; ``review_cost`` and ``sample_cost``: the cost of a document
    judged in first-pass review and in a sample or audit (a senior reviewer's), which the planned policy weighs and
    the summary's cost column reads."""

    design: Design
    rules: tuple[str, ...]
    target: Fraction
    confidence: float
    look_every: int
    replicates: int
    seed: int
    review_cost: float = 1.0
    sample_cost: float = 1.0
    # the cost of a document produced without being reviewed: recorded; a replayed review stops and withholds the
    # rest (one-phase), so no run produces one and no cost column reads it
    produce_cost: float = 1.0


@dataclass(frozen=True, eq=False)
class RuleRuns:
    """Per replicate, one rule on one queue: ``stopped`` before the queue's end, ``depth`` (ranked documents
    reviewed at the stop; N when never stopped), ``found`` (relevant documents in the set the rule certifies:
    F(depth), and for ``hypergeometric`` F(depth) plus its urn's positives), ``sampled`` (documents judged outside
    the reviewed prefix, counted once). ``size`` N, ``relevant`` R, ``needed`` ⌈τ·R⌉, ``oracle_depth`` d*."""

    rule: str
    kind: str
    stopped: BoolArray
    depth: IntArray
    found: IntArray
    sampled: IntArray
    size: int
    relevant: int
    needed: int
    oracle_depth: int

    @property
    def replicates(self) -> int:
        return len(self.depth)

    @property
    def recall(self) -> FloatArray:
        """found / R per replicate (1 when the rule never stopped)."""
        out: FloatArray = self.found / self.relevant
        return out

    @property
    def failed(self) -> BoolArray:
        """Stops whose recall is below the target: stopped and found < ⌈τ·R⌉."""
        out: BoolArray = self.stopped & (self.found < self.needed)
        return out

    @property
    def reviewed_total(self) -> IntArray:
        """Documents judged at the stop: depth + sampled."""
        out: IntArray = self.depth + self.sampled
        return out

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RuleRuns):
            return NotImplemented
        scalars = ("rule", "kind", "size", "relevant", "needed", "oracle_depth")
        arrays = ("stopped", "depth", "found", "sampled")
        return (all(getattr(self, f) == getattr(other, f) for f in scalars)
                and all(np.array_equal(getattr(self, f), getattr(other, f)) for f in arrays))

    __hash__ = None  # type: ignore[assignment]


def _target(plan: ReplayPlan) -> Fraction:
    return exact_fraction(plan.target)


def validate_plan(plan: ReplayPlan) -> None:
    """Raise ValueError with a one-line message naming the field when ``plan`` cannot be replayed."""
    design = plan.design
    if design.kind not in DESIGNS:
        raise ValueError(f"design: unknown design {design.kind!r}; choose from {', '.join(DESIGNS)}")
    if design.kind in ("rest", "population") and (not isinstance(design.sample_size, int)
                                                   or design.sample_size < 1):
        raise ValueError(f"sample_size: the {design.kind} design needs a positive sample size, "
                         f"got {design.sample_size!r}")
    if design.kind == "audit" and (not isinstance(design.every, int) or design.every < 1):
        raise ValueError(f"every: the audit design needs one audit document per every >= 1 ranked documents, "
                         f"got {design.every!r}")
    applicable = rules_for(design.kind)
    if not plan.rules:
        raise ValueError(f"rules: name at least one rule; the {design.kind} design replays {', '.join(applicable)}")
    for rule in plan.rules:
        if rule not in RULES:
            raise ValueError(f"rules: unknown rule {rule!r}; choose from {', '.join(RULES)}")
        if rule not in applicable:
            raise ValueError(f"rules: {rule!r} cannot be replayed under the {design.kind} design; it replays "
                             f"{', '.join(applicable)}")
    if len(set(plan.rules)) != len(plan.rules):
        raise ValueError("rules: a rule is named twice")
    try:
        tau = _target(plan)
    except (TypeError, ValueError):
        raise ValueError(f"target: not a number: {plan.target!r}") from None
    if not 0 < tau < 1:
        raise ValueError(f"target: must lie strictly between 0 and 1, got {plan.target}")
    if not isinstance(plan.confidence, float | int) or not 0 < plan.confidence < 1:
        raise ValueError(f"confidence: must lie strictly between 0 and 1, got {plan.confidence!r}")
    if not isinstance(plan.look_every, int) or plan.look_every < 1:
        raise ValueError(f"look_every: must be a positive number of ranked documents, got {plan.look_every!r}")
    if not isinstance(plan.replicates, int) or plan.replicates < 1:
        raise ValueError(f"replicates: must be positive, got {plan.replicates!r}")
    if not isinstance(plan.seed, int) or plan.seed < 0:
        raise ValueError(f"seed: must be a non-negative integer, got {plan.seed!r}")


def chunk_count(plan: ReplayPlan) -> int:
    """Chunks of :data:`CHUNK` replicates (the last one may be shorter)."""
    return -(-plan.replicates // CHUNK)


def queue_of(labels: npt.ArrayLike, target: Fraction) -> Queue:
    """The :class:`Queue` of a fully judged ranking; ValueError unless the labels are 0/1 with one relevant."""
    lab = np.asarray(labels).reshape(-1)
    if lab.dtype.kind not in "biu" or (len(lab) and not (int(lab.min()) >= 0 and int(lab.max()) <= 1)):
        raise ValueError("labels: a replayed queue's labels are 0 (not relevant) or 1 (relevant)")
    if not (lab == 1).any():
        raise ValueError("labels: a replayed queue needs at least one relevant document")
    return Queue.of(lab, target)


class RestDecisions:
    """One rest-sample rule (`rules.OnRestSample`) on one queue at a plan's looks k_t, sample sizes n_t, target and
    confidence: ``stop[t, y]``, whether the rule stops at look t when the fresh sample holds y relevant documents.

    A rule with a ``threshold`` stops exactly at y ≤ y_max(t): the table is that one column of thresholds, made
    for every look at once (one threshold per look, `stopping.elusion_threshold` for the elusion test). Any other
    rule is asked once per (look, count) the first time a replicate draws that count, and the answer is kept.
    Either way a decision is the rule's own (`tests/estimation/test_replay.py` compares them on a grid), and a
    chunk reads its replicates' decisions with one indexing."""

    def __init__(self, queue: Queue, looks: IntArray, sizes: IntArray, how: OnRestSample, target: Fraction,
                 alpha: float) -> None:
        self.queue, self.looks, self.sizes, self.how = queue, looks, sizes, how
        self.target, self.alpha = target, alpha
        self.threshold: IntArray | None = None
        if how.threshold is not None:
            self.threshold = np.array(
                [how.threshold(queue.size, k, int(queue.found[k]), n, target, alpha)
                 for k, n in zip(looks.tolist(), sizes.tolist(), strict=True)], dtype=np.int64).reshape(-1)
        # a sample holds at most min(n_t, R − F(k_t)) relevant documents: the table's columns
        width = 0 if self.threshold is not None else int(min(int(sizes.max(initial=0)), queue.relevant)) + 1
        self.known = np.zeros((len(looks), width), dtype=np.int8)  # 0 unknown, 1 stop, 2 go on
        self.asked = 0  # scalar decisions made so far (a rule without a threshold)

    def stops(self, ys: IntArray) -> BoolArray:
        """stop[r, t] for the sample counts ``ys[r, t]`` of replicate r at look t."""
        if self.threshold is not None:
            out: BoolArray = ys <= self.threshold[None, :]
            return out
        looks = np.broadcast_to(np.arange(len(self.looks), dtype=np.int64)[None, :], ys.shape)
        codes = looks * self.known.shape[1] + ys
        flat = self.known.reshape(-1)
        missing = np.unique(codes[flat[codes] == 0])
        for code in missing.tolist():
            t, y = divmod(code, self.known.shape[1])
            k = int(self.looks[t])
            says = self.how.stops(self.queue.size, k, int(self.queue.found[k]), int(self.sizes[t]), y,
                                  self.target, self.alpha)
            flat[code] = 1 if says else 2
        self.asked += len(missing)
        decided: BoolArray = flat[codes] == 1
        return decided


class _BoundedCache(Generic[V]):
    """A least-recently-used map of at most ``size`` entries; locked, as the server replays jobs on threads."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.entries: OrderedDict[tuple[object, ...], V] = OrderedDict()
        self.lock = threading.Lock()

    def get(self, key: tuple[object, ...]) -> V | None:
        with self.lock:
            hit = self.entries.get(key)
            if hit is not None:
                self.entries.move_to_end(key)
            return hit

    def put(self, key: tuple[object, ...], value: V) -> None:
        with self.lock:
            self.entries[key] = value
            self.entries.move_to_end(key)
            while len(self.entries) > self.size:
                self.entries.popitem(last=False)


# What each queue's replay decides once, kept across chunks by (queue digest, queue size, rule, design, the plan's
# looks, sample size, target, confidence). A run goes chunk by chunk across its topics
# (`services.simulation.simulate`), and the
# replayers' own cache (`_replayer_for`, which holds whole queues) keeps only the last 16: with more topics every
# chunk made these again (the point-process fit of each prefix rule, the elusion interval of each look). These
# entries are small (an int; a rest rule's table is one int or byte per look and count), so many are kept.
#: the first look at which each prefix rule stops
_PREFIX_LOOKS: _BoundedCache[int] = _BoundedCache(16384)
#: each rest-sample rule's decisions
_REST_DECISIONS: _BoundedCache[RestDecisions] = _BoundedCache(1024)
#: the monitor's and the fixed-look rule's decisions (`monitor_simulation.Decisions`: one entry per (rule, F, m, x)
#: met, some tens of thousands for a CLEF topic over 1,000 replicates), per (queue digest, size, target, confidence)
_MONITOR_DECISIONS: _BoundedCache[Decisions] = _BoundedCache(256)


@dataclass
class _Replayer:
    """One queue under one plan's design, rules, target, confidence and looks (``setup``: the plan with seed 0 and
    one replicate): what every chunk shares — the looks, the prefix rules' depths and the rules' decisions. Kept in
    a small cache (`_replayer_for`); the decisions, which cost the most to make, also in the larger per-queue caches
    (`_PREFIX_LOOKS`, `_REST_DECISIONS`, `_MONITOR_DECISIONS`), so a run that goes chunk by chunk across more topics
    than the replayers kept still makes them once per queue. How each rule is replayed under the design is its line
    of the rule table (`reviewdepth.estimation.rules`)."""

    queue: Queue
    plan: ReplayPlan
    decisions: Decisions
    looks: IntArray = field(init=False)
    prefix_look: dict[str, int] = field(init=False)
    policy: PlannedPolicy | None = None
    digest: bytes = field(init=False)

    def __post_init__(self) -> None:
        plan, queue = self.plan, self.queue
        if plan.design.kind == "population" and plan.design.sample_size > queue.size:
            raise ValueError(f"sample_size: a population sample of {plan.design.sample_size} exceeds the queue's "
                             f"{queue.size} documents")
        self.looks = look_ranks(queue.size, plan.look_every)
        self.digest = _digest(queue)
        self.prefix_look = {rule: self._prefix_look(rule, how) for rule in plan.rules
                            for how in [RULES[rule].replay_under(plan.design.kind)] if isinstance(how, OnPrefix)}

    @property
    def alpha(self) -> float:
        return 1 - self.plan.confidence

    def key(self, rule: str) -> tuple[object, ...]:
        """What a rule's per-queue decisions depend on (`_PREFIX_LOOKS`, `_REST_DECISIONS`)."""
        plan = self.plan
        return (self.digest, self.queue.size, rule, plan.design.kind, plan.look_every, plan.design.sample_size,
                _target(plan), plan.confidence)

    def _prefix_look(self, rule: str, how: OnPrefix) -> int:
        """Index of the first look where a prefix rule stops (−1: never). The rule is the report's row: checked on
        the prefix (the knee and budget rules at their own AutoTAR checkpoints), so at a look k it says stop exactly
        when its first firing depth is ≤ k — the team stops at the first look at or after that depth."""
        key = self.key(rule)
        known = _PREFIX_LOOKS.get(key)
        if known is not None:
            return known
        depth = how.depth(self.queue.labels, self.queue.size, _target(self.plan), self.alpha)
        look = -1 if depth is None else int(np.searchsorted(self.looks, depth, side="left"))
        look = look if look < len(self.looks) else -1
        _PREFIX_LOOKS.put(key, look)
        return look

    def runs(self, rule: str, stop_look: IntArray, sampled_at: Callable[[IntArray], IntArray],
             urn_found: IntArray | None = None) -> RuleRuns:
        """RuleRuns from the first stopping look per replicate (−1: never), the design's count of documents judged
        outside the prefix at given depths (replicate-wise) and, for a rule that certifies the prefix plus an urn,
        the urn's relevant documents at the stop."""
        queue = self.queue
        stopped = stop_look >= 0
        depth = np.full(len(stop_look), queue.size, dtype=np.int64)
        depth[stopped] = self.looks[stop_look[stopped]]
        sampled = np.where(stopped, sampled_at(depth), 0).astype(np.int64)
        found = queue.found[depth] if urn_found is None else queue.found[depth] + urn_found
        return RuleRuns(rule, RULES[rule].kind_under(self.plan.design.kind), stopped, depth, found, sampled,
                        queue.size, queue.relevant, queue.needed, queue.oracle_depth)

    def prefix_runs(self, rule: str, reps: int, sampled_at: Callable[[IntArray], IntArray]) -> RuleRuns:
        """A prefix rule's runs: the same stop in every replicate."""
        return self.runs(rule, np.full(reps, self.prefix_look[rule], dtype=np.int64), sampled_at)

    def chunk(self, plan: ReplayPlan, chunk: int, key: Sequence[int]) -> dict[str, RuleRuns]:
        """Chunk ``chunk`` of ``plan`` (whose design, rules, target, confidence and looks are this replayer's)."""
        if not 0 <= chunk < chunk_count(plan):
            raise ValueError(f"chunk: {chunk} is outside 0 … {chunk_count(plan) - 1}")
        reps = min((chunk + 1) * CHUNK, plan.replicates) - chunk * CHUNK
        seq = np.random.SeedSequence(plan.seed, spawn_key=(*key, chunk))
        rng = np.random.default_rng(seq)
        kind = plan.design.kind
        if kind == "audit":
            out = self._audit(reps, plan.seed, (*key, chunk))
        elif kind == "rest":
            out = self._rest(reps, rng, seq)
        elif kind == "population":
            out = self._population(reps, rng)
        elif kind == "planned":
            out = self._planned(reps, rng)
        else:
            out = {}
            for rule in plan.rules:
                how = RULES[rule].replay_under(kind)
                out[rule] = (self.training_runs(rule, how, reps, seq) if isinstance(how, OnTrainingSample)
                             else self.prefix_runs(rule, reps, lambda depth: np.zeros_like(depth)))
        return {rule: out[rule] for rule in plan.rules}

    def training_runs(self, rule: str, how: OnTrainingSample, reps: int, seq: np.random.SeedSequence) -> RuleRuns:
        """A rule with its own random training set (SAFE): one simple random sample of ``how.size(N)`` documents per
        replicate from the rule's own stream (``spawn_key=(*chunk key, 1 + stream)``, as the rest design's unions), so
        its runs do not depend on which other rules are replayed with it. The team stops at the first look at or
        after the rule's stop depth; the training documents ranked after that look count as sampled and their
        relevant ones as found."""
        queue = self.queue
        gen = np.random.default_rng(np.random.SeedSequence(
            seq.entropy, spawn_key=(*seq.spawn_key, 1 + (RULES[rule].stream or 0))))
        size = how.size(queue.size)
        training = np.stack([gen.choice(queue.size, size=size, replace=False) for _ in range(reps)]).astype(np.int64)
        stop_look = np.full(reps, -1, dtype=np.int64)
        for r in range(reps):
            depth = how.stop(queue.labels, training[r]).stop_depth
            if depth is not None:
                look = int(np.searchsorted(self.looks, depth, side="left"))
                stop_look[r] = look if look < len(self.looks) else -1
        stopped = stop_look >= 0
        at = np.full(reps, queue.size, dtype=np.int64)
        at[stopped] = self.looks[stop_look[stopped]]
        after = training >= at[:, None]
        found_after = np.count_nonzero(after & (queue.labels[training] == 1), axis=1).astype(np.int64)

        def sampled_at(depth: IntArray) -> IntArray:
            count: IntArray = np.count_nonzero(training >= depth[:, None], axis=1).astype(np.int64)
            return count

        return self.runs(rule, stop_look, sampled_at, found_after)

    def _audit(self, reps: int, seed: int, spawn_key: tuple[int, ...]) -> dict[str, RuleRuns]:
        plan, queue = self.plan, self.queue
        every = plan.design.every
        perms, positions = _audit_stream(seed, spawn_key, queue.size, reps, every)

        def audited_after(depth: IntArray) -> IntArray:
            # audit documents served by the time the prefix reaches depth, ranked after it
            m = positions[np.arange(reps), depth // every]
            inside = np.arange(queue.size)[None, :] < m[:, None]
            count: IntArray = np.count_nonzero(inside & (perms >= depth[:, None]), axis=1).astype(np.int64)
            return count

        audit_rules = [rule for rule in plan.rules if rule not in self.prefix_look]
        out: dict[str, RuleRuns] = {}
        if audit_rules:
            outcomes = simulate_audit_rules(queue, perms, plan.look_every, every, target=_target(plan),
                                            confidence=plan.confidence, rules=audit_rules,
                                            decisions=self.decisions, positions=positions)
            for rule, o in outcomes.items():
                out[rule] = RuleRuns(rule, RULES[rule].kind_under("audit"), o.stopped, o.depth, o.found,
                                     o.cost - o.depth,
                                     queue.size, queue.relevant, queue.needed, queue.oracle_depth)
        for rule in self.prefix_look:
            out[rule] = self.prefix_runs(rule, reps, audited_after)
        return out

    def _planned(self, reps: int, rng: np.random.Generator) -> dict[str, RuleRuns]:
        """The planned policy (`stop_plan.PlannedPolicy`), one audit permutation per replicate; its looks are every
        ``look_every`` ranked documents and at each audit positive. Decisions are cached on the replayer (the
        review before the first audit is the same in every replicate)."""
        plan, queue = self.plan, self.queue
        if self.policy is None:
            self.policy = PlannedPolicy(queue.size, Certifier(queue.size, _target(plan), plan.confidence),
                                        batch=plan.look_every, review_cost=plan.review_cost,
                                        sample_cost=plan.sample_cost)
        runs = [run_planned(queue.labels, rng.permutation(queue.size), self.policy) for _ in range(reps)]
        depth = np.array([r.depth for r in runs], dtype=np.int64)
        stopped = depth < queue.size
        cost = np.array([r.cost for r in runs], dtype=np.int64)
        out: dict[str, RuleRuns] = {}
        for rule in plan.rules:
            if rule in self.prefix_look:
                out[rule] = self.prefix_runs(rule, reps, lambda d: np.zeros_like(d))
            else:
                out[rule] = RuleRuns(rule, RULES[rule].kind, stopped, depth, queue.found[depth],
                                     np.where(stopped, cost - depth, 0), queue.size, queue.relevant, queue.needed,
                                     queue.oracle_depth)
        return out

    def rest_decisions(self, rule: str, how: OnRestSample, sizes: IntArray) -> RestDecisions:
        """The rule's decisions at every look of this queue (`RestDecisions`), made once per queue and plan setup
        and kept across chunks (`_REST_DECISIONS`), so that a run that goes chunk by chunk across many topics does
        not make them again for each chunk."""
        key = self.key(rule)
        found = _REST_DECISIONS.get(key)
        if found is None:
            found = RestDecisions(self.queue, self.looks, sizes, how, _target(self.plan), self.alpha)
            _REST_DECISIONS.put(key, found)
        return found

    def _rest(self, reps: int, rng: np.random.Generator, seq: np.random.SeedSequence) -> dict[str, RuleRuns]:
        plan, queue, looks = self.plan, self.queue, self.looks
        sizes = np.minimum(plan.design.sample_size, queue.size - looks).astype(np.int64)
        ys = fresh_sample_counts(queue, looks, sizes, reps, rng)

        def union(rule: str, stop_look: IntArray) -> IntArray:
            # a rule whose line says so continues on the chunk's stream (elusion, as
            # monitor_simulation.simulate_fresh_elusion does); any other rule draws its union from a stream of its own
            how = RULES[rule].replay_under("rest")
            gen = rng if isinstance(how, OnRestSample) and how.chunk_stream else np.random.default_rng(
                np.random.SeedSequence(seq.entropy, spawn_key=(*seq.spawn_key, 1 + (RULES[rule].stream or 0))))
            cost = fresh_sample_union(queue, looks, sizes, ys, stop_look, gen)
            return cost

        def sampled_from(rule: str, stop_look: IntArray) -> Callable[[IntArray], IntArray]:
            cost = union(rule, stop_look)
            return lambda depth: cost - depth

        out: dict[str, RuleRuns] = {}
        for rule in plan.rules:
            how = RULES[rule].replay_under("rest")
            if isinstance(how, OnRestSample):
                stop_look = first_look(self.rest_decisions(rule, how, sizes).stops(ys))
                urn_positives: IntArray | None = None
                if how.urn_found:
                    urn_positives = np.zeros(reps, dtype=np.int64)
                    stopped = np.flatnonzero(stop_look >= 0)
                    urn_positives[stopped] = ys[stopped, stop_look[stopped]]
                out[rule] = self.runs(rule, stop_look, sampled_from(rule, stop_look), urn_positives)
            else:
                stop_look = np.full(reps, self.prefix_look[rule], dtype=np.int64)
                out[rule] = self.runs(rule, stop_look, sampled_from(rule, stop_look))
        return out

    def _population(self, reps: int, rng: np.random.Generator) -> dict[str, RuleRuns]:
        plan, queue, looks = self.plan, self.queue, self.looks
        n = plan.design.sample_size
        tau, alpha = _target(plan), self.alpha
        # 0-based ranks in draw order, one sample per replicate
        samples = np.stack([rng.choice(queue.size, size=n, replace=False) for _ in range(reps)]).astype(np.int64)

        def sampled_after(depth: IntArray) -> IntArray:
            count: IntArray = np.count_nonzero(samples >= depth[:, None], axis=1).astype(np.int64)
            return count

        positives = [row[queue.labels[row] == 1] + 1 for row in samples]  # 1-based ranks, draw order

        def look_of(depth: int | None) -> int:
            return -1 if depth is None else int(np.searchsorted(looks, depth))

        out: dict[str, RuleRuns] = {}
        for rule in plan.rules:
            how = RULES[rule].replay_under("population")
            if isinstance(how, OnWholeQueueSample) and how.by_depth:
                stop_look = np.array([look_of(how.evidence(p, 0, tau, alpha).stop_depth) for p in positives])
            elif isinstance(how, OnWholeQueueSample):
                stop_look = np.array([self._first_look_saying_stop(how, p) for p in positives])
            else:
                stop_look = np.full(reps, self.prefix_look[rule])
            stop_look = stop_look.astype(np.int64)
            stop_look[stop_look >= len(looks)] = -1
            out[rule] = self.runs(rule, stop_look, sampled_after)
        return out

    def _first_look_saying_stop(self, how: OnWholeQueueSample, positive_ranks: IntArray) -> int:
        """First look where the rule says stop (its evidence only grows with the depth, so a bisection over the
        looks finds it); −1 if none."""
        tau, alpha = _target(self.plan), self.alpha

        def says(t: int) -> bool:
            return bool(how.evidence(positive_ranks, int(self.looks[t]), tau, alpha).stop_now)

        lo, hi = 0, len(self.looks)
        if hi == 0 or not says(hi - 1):
            return -1
        hi -= 1
        while lo < hi:
            mid = (lo + hi) // 2
            if says(mid):
                hi = mid
            else:
                lo = mid + 1
        return lo


@lru_cache(maxsize=2)
def _audit_stream(seed: int, spawn_key: tuple[int, ...], size: int, replicates: int,
                  every: int) -> tuple[npt.NDArray[np.int32], IntArray]:
    """A chunk's audit permutations (its stream's first draws) and stream positions, cached (read-only) so that
    plans differing only in their looks share them (common random numbers, one computation) when run one after the
    other on the same chunk; two entries only, as a permutation matrix of a large queue is tens of megabytes."""
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=spawn_key))
    perms = audit_permutations(size, replicates, rng)
    positions = stream_positions(perms, every)
    perms.setflags(write=False)
    positions.setflags(write=False)
    return perms, positions


def _decisions_for(queue: Queue, digest: bytes, target: Fraction, confidence: float) -> Decisions:
    """The monitor's and the fixed-look rule's cached decisions on one queue (they do not depend on the looks; each
    is a function of (rule, F, m, x) alone, so keeping them longer changes no figure), kept across chunks
    (`_MONITOR_DECISIONS`)."""
    key = (digest, queue.size, target, confidence)
    known = _MONITOR_DECISIONS.get(key)
    if known is None:
        known = Decisions(queue, target, confidence)
        _MONITOR_DECISIONS.put(key, known)
    return known


@lru_cache(maxsize=16)
def _replayer_for(labels: bytes, setup: ReplayPlan) -> _Replayer:
    tau = _target(setup)
    queue = Queue.of(np.frombuffer(labels, dtype=np.int8), tau)
    return _Replayer(queue, setup, _decisions_for(queue, _digest(queue), tau, setup.confidence))


def _digest(queue: Queue) -> bytes:
    """What the per-queue caches know a queue by (with its size): a 16-byte BLAKE2b digest of its labels."""
    return hashlib.blake2b(queue.labels.tobytes(), digest_size=16).digest()


def _replayer(labels: npt.ArrayLike, plan: ReplayPlan) -> _Replayer:
    """The (cached) replayer of a validated plan on checked labels."""
    queue = queue_of(labels, _target(plan))
    return _replayer_for(queue.labels.tobytes(), replace(plan, rules=tuple(plan.rules), seed=0, replicates=1))


def replay_chunk(labels: npt.ArrayLike, plan: ReplayPlan, chunk: int, key: Sequence[int] = ()) -> dict[str, RuleRuns]:
    """Replicates [chunk·CHUNK, min((chunk + 1)·CHUNK, replicates)) of ``plan`` on one queue, drawn from
    ``default_rng(SeedSequence(plan.seed, spawn_key=(*key, chunk)))``; ``key`` identifies the queue (e.g.
    ``(topic_index,)``). Keys: the plan's rules, in the plan's order."""
    validate_plan(plan)
    return _replayer(labels, plan).chunk(plan, chunk, tuple(key))


def concat_runs(parts: Sequence[dict[str, RuleRuns]]) -> dict[str, RuleRuns]:
    """The chunks of one queue, in chunk order, as one set of runs per rule."""
    if not parts:
        raise ValueError("parts: no chunk to join")
    out: dict[str, RuleRuns] = {}
    for rule, first in parts[0].items():
        pieces = [part[rule] for part in parts]
        out[rule] = RuleRuns(rule, first.kind, np.concatenate([p.stopped for p in pieces]),
                             np.concatenate([p.depth for p in pieces]), np.concatenate([p.found for p in pieces]),
                             np.concatenate([p.sampled for p in pieces]), first.size, first.relevant,
                             first.needed, first.oracle_depth)
    return out


def replay(labels: npt.ArrayLike, plan: ReplayPlan, key: Sequence[int] = ()) -> dict[str, RuleRuns]:
    """Every chunk of ``plan`` on one queue (identical to `concat_runs` of every `replay_chunk` in order)."""
    validate_plan(plan)
    replayer = _replayer(labels, plan)
    return concat_runs([replayer.chunk(plan, c, tuple(key)) for c in range(chunk_count(plan))])


@dataclass(frozen=True)
class RuleSummary:
    """One rule over a portfolio of queues. ``failure_rate`` = failures / stops (NaN with no stop) and its
    two-sided Clopper–Pearson interval at the plan's confidence ([0, 1] with no stop); ``false_stop_rate`` =
    failures / runs, every run counted whether it stopped or not — the probability a certified rule bounds by
    1 − confidence (its guarantee is P(stop with recall < τ) ≤ α, not a bound on failures / stops, which a rule that
    seldom stops can exceed) — with its interval; ``recall_quantiles`` of the
    recall at the stop over every run (a run that never stopped has recall 1); the medians of depth / d* and
    (depth + sampled) / d* over every run; ``cost_ratio_median``: the median over every run of
    (c_r·depth + c_s·sampled) / (c_r·d*), the run's cost over the oracle's review cost at the plan's per-role
    costs (equal to the total ratio when both costs are 1)."""

    rule: str
    kind: str
    topics: int
    runs: int
    stops: int
    failures: int
    failure_rate: float
    failure_low: float
    failure_high: float
    recall_quantiles: dict[str, float]
    reviewed_ratio_median: float
    total_ratio_median: float
    never_stopped: int
    false_stop_rate: float
    false_stop_low: float
    false_stop_high: float
    cost_ratio_median: float = math.nan


def failure_interval(failures: int, stops: int, confidence: float) -> tuple[float, float]:
    """Two-sided Clopper–Pearson interval on the failure rate: L = Beta⁻¹(α/2; f, s − f + 1),
    U = Beta⁻¹(1 − α/2; f + 1, s − f) (`intervals.proportion_interval`); [0, 1] when nothing stopped."""
    if stops == 0:
        return 0.0, 1.0
    return proportion_interval(failures, stops, confidence, "clopper-pearson", "two")


def summarise(per_topic: Sequence[dict[str, RuleRuns]], confidence: float, review_cost: float = 1.0,
              sample_cost: float = 1.0) -> list[RuleSummary]:
    """One :class:`RuleSummary` per rule present in any topic, in :data:`RULES` order; costs per document judged
    in review and in a sample (the cost column)."""
    out: list[RuleSummary] = []
    for rule in RULES:
        runs = [topic[rule] for topic in per_topic if rule in topic]
        if not runs:
            continue
        stops = sum(int(np.count_nonzero(r.stopped)) for r in runs)
        failures = sum(int(np.count_nonzero(r.failed)) for r in runs)
        low, high = failure_interval(failures, stops, confidence)
        recall = np.concatenate([r.recall for r in runs])
        reviewed = np.concatenate([r.depth / r.oracle_depth for r in runs])
        total = np.concatenate([r.reviewed_total / r.oracle_depth for r in runs])
        cost = np.concatenate([(review_cost * r.depth + sample_cost * r.sampled) / (review_cost * r.oracle_depth)
                               for r in runs])
        out.append(RuleSummary(
            rule, runs[0].kind, len(runs), len(recall), stops, failures,
            failures / stops if stops else math.nan, low, high,
            {name: float(np.quantile(recall, q)) for name, q in QUANTILES},
            float(np.median(reviewed)), float(np.median(total)),
            sum(int(np.count_nonzero(~r.stopped)) for r in runs),
            failures / len(recall), *failure_interval(failures, len(recall), confidence),
            float(np.median(cost))))
    return out
