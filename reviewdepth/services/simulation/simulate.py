"""Replay completed reviews: how each stopping rule would have done on fully judged topics (issue 17, items 2 and 4).

The statistics are the one replay engine's (`reviewdepth.estimation.replay`): for each topic, ``replicates`` seeded
replays of the review under a sampling design, every rule looking every ``look_every`` documents; per rule,
whether and where it stopped, what it had found and sampled. This module gets the topics (from the store or from a
run and its qrels), cuts the work into jobs, runs them in-process, in worker processes or on a Dask cluster, and
turns the engine's summary into a `SimulationReport`.

Determinism. A job is one (topic, chunk) pair; the engine's ``replay_chunk(labels, plan, chunk, key)`` depends only
on the seed, the topic's key and the chunk number. The key is derived from the topic's *name*
(`topic_key`: the first 16 bytes of SHA-256 of its UTF-8, as four 32-bit integers), so a topic gives the same
replicates alone or among others, from the store or from files, and whatever executor or number of workers ran
the jobs: the chunks are put back in order before anything is summarised.

Interruption. On KeyboardInterrupt (Ctrl-C, or a progress callback raising it) the jobs not yet finished are
cancelled and the report covers what was done: for every topic, the chunks 0..k-1 where k is the largest count
such that every topic has them all (jobs run chunk by chunk across the topics, so k is close to what finished),
flagged ``partial`` with the replicates done.

Sources. `queues_from_store`: the named topics (or every topic whose queue is fully judged), each through its
newest queue (or the queue named ``queue``) and its labels under the label policy; a topic with an unjudged
document in that queue is refused (`Invalid` naming the topic and how many). `queues_from_files`: each topic of a
TREC or CLEF run (file order by default, CLEF's rule; ``order="trec_eval"`` ranks by score) with its qrels labels
(relevant = grade >= ``level``); a document without a qrels line, or with a negative grade, counts as non-relevant
(the report says how many).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any

import numpy as np
import numpy.typing as npt
from sqlalchemy import Connection, Engine, select

from reviewdepth.estimation.plural import counted
from reviewdepth.estimation.replay import (
    CHUNK,
    DESIGNS,
    RULES,
    Design,
    ReplayPlan,
    RuleRuns,
    RuleSummary,
    chunk_count,
    concat_runs,
    replay_chunk,
    rules_for,
    summarise,
    validate_plan,
)
from reviewdepth.estimation.target import DEFAULT_TARGET, Target
from reviewdepth.formats.errors import InputError
from reviewdepth.formats.runs import read_run
from reviewdepth.formats.trec import read_qrels
from reviewdepth.measures.ranking import rank_order
from reviewdepth.report.simulation_model import (
    QUANTILES,
    RecallQuantiles,
    SimulationChart,
    SimulationReport,
    SimulationRule,
    SimulationSettings,
    SimulationTopic,
)
from reviewdepth.services.errors import Conflict, Invalid, NotFound
from reviewdepth.services.evidence.confidence import checked_confidence, checked_target
from reviewdepth.services.simulation.costs import checked_costs
from reviewdepth.store import validation
from reviewdepth.store.labels import POLICIES
from reviewdepth.store.loaders import load_queue_labels
from reviewdepth.store.models import Queue, Topic

# progress(done, total): called after each finished job, in the caller's thread
Progress = Callable[[int, int], None]
RUN_ORDERS = ("given", "trec_eval")
MAX_CHART_POINTS = 400
MAX_REPLICATES = 1_000_000  # the job list is built up front: ~20,000 chunks per topic at most
DASK_CONNECT_SECONDS = 10
FAILURE_MEANING = ("A failure is a stop with recall below the target: the rule stopped before the reviewed prefix "
                   "held ceil(target × R) of the topic's R relevant documents. The failure rate is failures / stops "
                   "(runs that never stopped are counted apart), with a two-sided Clopper–Pearson interval at the "
                   "confidence level. False stops per run = failures / runs (every run, stopped or not): what a "
                   "certified rule's guarantee bounds by 1 − confidence; failures / stops can exceed it for a rule "
                   "that seldom stops.")


@dataclass(frozen=True)
class NamedQueue:
    """One fully judged ranking: ``labels[i]`` is 1 when the document at rank i + 1 is relevant, else 0.
    ``unlabelled`` counts the documents taken as non-relevant without a judgment (files only: no qrels line, or a
    negative grade)."""

    name: str
    labels: npt.NDArray[np.int8]
    origin: str
    unlabelled: int = 0

    @property
    def relevant(self) -> int:
        return int(np.count_nonzero(self.labels))


@dataclass(frozen=True)
class SimulationSource:
    """The topics to replay and where they come from (``description`` is shown in the report)."""

    queues: tuple[NamedQueue, ...]
    description: str
    notes: tuple[str, ...] = field(default_factory=tuple)


def topic_key(name: str) -> tuple[int, ...]:
    """The engine's stream key of a topic: SHA-256 of its UTF-8 name, the first 16 bytes as four big-endian
    unsigned 32-bit integers. By name, so that a topic's replicates do not depend on the other topics."""
    digest = hashlib.sha256(name.encode("utf-8")).digest()
    return tuple(int.from_bytes(digest[i:i + 4], "big") for i in range(0, 16, 4))


# ---- the plan -------------------------------------------------------------------------------------------------------


def parse_looks(text: str) -> int:
    """``every:K`` (K >= 1 documents between two looks) as K; `Invalid` naming ``looks`` otherwise."""
    head, sep, tail = str(text).strip().partition(":")
    if head != "every" or not sep or not tail.strip().isdigit() or int(tail) < 1:
        raise Invalid(f"looks: expected every:K with K a whole number >= 1 (e.g. every:100), not {text!r}")
    return int(tail)


def build_plan(*, design: str, rules: Sequence[str] = (), target: Target | str = DEFAULT_TARGET,
               confidence: float = 0.95,
               look_every: int = 100, replicates: int = 100, seed: int = 0, sample_size: int = 0,
               every: int = 0, review_cost: float = 1.0, sample_cost: float = 1.0,
               produce_cost: float = 1.0) -> ReplayPlan:
    """A checked `ReplayPlan`; each refusal is `Invalid` naming the option. No ``rules``: every rule applicable to
    the design."""
    if design not in DESIGNS:
        raise Invalid(f"design: unknown design {design!r}; choose one of {', '.join(DESIGNS)}")
    if design == "none" and rules and all(RULES[name].designs == ("planned",) for name in rules if name in RULES) \
            and all(name in RULES for name in rules):
        # the planned rule brings its own design, which needs no sample size or rate: ``--rule planned`` names it
        design = "planned"
    tau = checked_target(target, certify=True).value
    level = checked_confidence(confidence)
    for name, value, least in (("replicates", replicates, 1), ("looks", look_every, 1), ("seed", seed, 0),
                               ("sample-size", sample_size, 0), ("every", every, 0)):
        if isinstance(value, bool) or not isinstance(value, int) or not least <= value <= validation.INT64_MAX:
            raise Invalid(f"{name}: must be a whole number >= {least}, not {value!r}")
    if replicates > MAX_REPLICATES:
        raise Invalid(f"replicates: at most {MAX_REPLICATES:,} per topic, not {replicates:,}")
    chosen = tuple(dict.fromkeys(rules)) or rules_for(design)
    for name in chosen:
        if name not in RULES:
            raise Invalid(f"rule: unknown rule {name!r}; choose from {', '.join(RULES)}")
        if design not in RULES[name].designs:
            raise Invalid(f"rule: {name!r} does not apply to the design {design!r} (it needs "
                          f"{' or '.join(RULES[name].designs)}); the rules for {design!r}: "
                          f"{', '.join(rules_for(design)) or 'none'}")
    if not chosen:
        raise Invalid(f"rule: no rule applies to the design {design!r}")
    costs = checked_costs(review_cost, sample_cost, produce_cost)
    plan = ReplayPlan(design=Design(kind=design, sample_size=sample_size, every=every), rules=chosen, target=tau,
                      confidence=level, look_every=look_every, replicates=replicates, seed=seed,
                      review_cost=costs.review, sample_cost=costs.sample, produce_cost=costs.produce_recorded)
    checked_plan(plan)
    return plan


def checked_plan(plan: ReplayPlan) -> None:
    """The engine's own checks (`validate_plan`), as `Invalid`."""
    try:
        validate_plan(plan)
    except ValueError as exc:
        raise Invalid(str(exc)) from None


# ---- the topics -----------------------------------------------------------------------------------------------------


def _store_topics(conn: Connection, topics: Sequence[str]) -> list[tuple[int, str]]:
    if not topics:
        return [(int(i), n) for i, n in conn.execute(select(Topic.id, Topic.name).order_by(Topic.name))]
    found: list[tuple[int, str]] = []
    for raw in dict.fromkeys(topics):
        name = validation.topic_name(raw)
        row = conn.execute(select(Topic.id).where(Topic.name == name)).scalar_one_or_none()
        if row is None:
            raise NotFound(f"topic: unknown topic {name!r}")
        found.append((int(row), name))
    return found


def queues_from_store(engine: Engine, topics: Sequence[str] = (), *, queue: str | None = None,
                      policy: str = "latest") -> list[NamedQueue]:
    """The named topics' rankings with their labels under ``policy``: each topic's newest queue, or its queue
    named ``queue``. Every document of the queue must have a label: `Invalid` names the topic and how many have
    none. No topics: every topic of the store whose queue is fully judged (the others are left out; `Invalid`
    when none is). Reads only."""
    if policy not in POLICIES:
        raise Invalid(f"policy: unknown label policy {policy!r}; choose one of {', '.join(POLICIES)}")
    wanted = None if queue is None else validation.queue_name(queue)
    named = bool(topics)
    out: list[NamedQueue] = []
    with engine.connect() as conn:
        for topic_id, name in _store_topics(conn, topics):
            rows = conn.execute(select(Queue.id, Queue.name, Queue.size).where(Queue.topic_id == topic_id)
                                .order_by(Queue.id)).all()
            if wanted is not None:
                rows = [r for r in rows if r[1] == wanted]
            if not rows:
                if named:
                    raise NotFound(f"topic {name!r} has no queue" + ("" if wanted is None else f" {wanted!r}"))
                continue
            queue_id, queue_name, size = int(rows[-1][0]), str(rows[-1][1]), int(rows[-1][2])
            labels = load_queue_labels(conn, queue_id, topic_id, size, policy).labels
            unjudged = int(np.count_nonzero(labels < 0))
            if unjudged or size == 0:
                if named:
                    what = "is empty" if size == 0 else f"has {counted(unjudged, 'unjudged document')} of {size:,}"
                    raise Invalid(f"topic {name!r}: queue {queue_name!r} {what}; simulate replays fully judged "
                                  "topics only (judge every document, or import the qrels)")
                continue
            out.append(NamedQueue(name, (labels == 1).astype(np.int8), f"store queue {queue_name!r}"))
    if not out:
        raise Conflict("topic: no topic of the store has a fully judged queue; name topics, or give --qrels and --run")
    return out


def queues_from_files(qrels: str, run: str, topics: Sequence[str] = (), *, order: str = "given",
                      level: int = 1) -> list[NamedQueue]:
    """One queue per topic of the run (in the run's order of topics), the documents in file order (``given``,
    CLEF's rule) or trec_eval's (``trec_eval``: score descending, docno descending on ties), labelled from the
    qrels: relevant when the grade is >= ``level``; no qrels line, or a negative grade, counts as non-relevant.
    ``topics``: only these (each must be in the run). Bad files raise `InputError` (file:line: field)."""
    if order not in RUN_ORDERS:
        raise Invalid(f"order: must be given or trec_eval, not {order!r}")
    judged = read_qrels(qrels)
    ranked = read_run(run, scores=order == "trec_eval")
    grades: dict[bytes, dict[bytes, int]] = {}
    for qid, doc, rel in zip(judged.qid.tolist(), judged.docno.values.tolist(), judged.rel.tolist(), strict=True):
        grades.setdefault(qid, {})[doc] = int(rel)
    starts, names = ranked.topic_blocks()
    repeated = np.flatnonzero(ranked.repeated())
    if len(repeated):
        row = int(repeated[0])
        raise InputError(run, int(ranked.line[row]), "docno",
                         f"duplicate docno {ranked.docno.values[row].decode('utf-8', 'replace')!r} for topic "
                         f"{ranked.qid[row].decode('utf-8', 'replace')!r}")
    ends = [*starts[1:].tolist(), len(ranked)]
    blocks = {name.decode("utf-8", "replace"): (int(s), int(e), name)
              for s, e, name in zip(starts.tolist(), ends, names, strict=True)}
    for wanted in topics:
        if wanted not in blocks:
            raise Invalid(f"topic: {wanted!r} is not a topic of the run {run}")
    out: list[NamedQueue] = []
    for text, (start, end, raw) in blocks.items():
        if topics and text not in topics:
            continue
        rows = np.arange(start, end, dtype=np.int64)
        if order == "trec_eval":
            rows = rows[rank_order(np.zeros(len(rows), dtype=np.int64), ranked.scores()[rows],
                                   ranked.docno.values[rows], 9)]
        topic_grades = grades.get(raw, {})
        values = [topic_grades.get(doc, -1) for doc in ranked.docno.values[rows].tolist()]
        grade = np.array(values, dtype=np.int64)
        out.append(NamedQueue(text, (grade >= level).astype(np.int8), f"run {run}",
                              int(np.count_nonzero(grade < 0))))
    return out


def store_source(engine: Engine, topics: Sequence[str] = (), *, queue: str | None = None,
                 policy: str = "latest") -> SimulationSource:
    """`queues_from_store` as a `SimulationSource`."""
    queues = queues_from_store(engine, topics, queue=queue, policy=policy)
    which = "each topic's newest queue" if queue is None else f"queue {queue!r}"
    return SimulationSource(tuple(queues), f"the store ({which}, label policy {policy})")


def file_source(qrels: str, run: str, topics: Sequence[str] = (), *, order: str = "given",
                level: int = 1) -> SimulationSource:
    """`queues_from_files` as a `SimulationSource`."""
    queues = queues_from_files(qrels, run, topics, order=order, level=level)
    ranked = "file order" if order == "given" else "trec_eval's order"
    return SimulationSource(tuple(queues), f"run {run} ({ranked}) with qrels {qrels} (relevant: grade >= {level})")


# ---- running the jobs ------------------------------------------------------------------------------------------------

Job = tuple[int, int]  # (topic index, chunk)
Part = dict[str, RuleRuns]

def _in_process(jobs: list[Job], labels: list[npt.NDArray[np.int8]], keys: list[tuple[int, ...]],
                plan: ReplayPlan) -> Iterator[tuple[Job, Part]]:
    for topic, chunk in jobs:
        yield (topic, chunk), replay_chunk(labels[topic], plan, chunk, keys[topic])


def _in_processes(jobs: list[Job], labels: list[npt.NDArray[np.int8]], keys: list[tuple[int, ...]],
                  plan: ReplayPlan, workers: int) -> Iterator[tuple[Job, Part]]:
    """Worker processes (spawned: a fork of a threaded parent, e.g. the API server, can deadlock), at most
    4 jobs per worker in flight so that the jobs finish in about the order they were listed."""
    import multiprocessing
    from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait

    from reviewdepth.services.simulation import simulate_workers
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"),
                               initializer=simulate_workers.start, initargs=(labels, keys, plan))
    pending: dict[Future[Part], Job] = {}
    todo = iter(jobs)
    try:
        while True:
            for job in todo:
                pending[pool.submit(simulate_workers.job, *job)] = job
                if len(pending) >= 4 * workers:
                    break
            if not pending:
                return
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in sorted(done, key=lambda f: pending[f]):
                yield pending.pop(future), future.result()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _on_dask(jobs: list[Job], labels: list[npt.NDArray[np.int8]], keys: list[tuple[int, ...]], plan: ReplayPlan,
             address: str) -> Iterator[tuple[Job, Part]]:
    """The jobs on an existing Dask distributed cluster (the scheduler at ``address``); the workers need
    reviewdepth installed. The topics are scattered once; results come back as they finish."""
    import importlib

    try:  # untyped: held as Any
        distributed: Any = importlib.import_module("distributed")
    except ImportError:
        raise Invalid("dask: --dask needs the optional dependency: pip install 'reviewdepth[dask]'") from None
    try:
        client = distributed.Client(address, timeout=DASK_CONNECT_SECONDS, set_as_default=False)
    except (OSError, TimeoutError, ValueError) as exc:
        raise Invalid(f"dask: cannot reach a Dask scheduler at {address!r} ({exc})") from None
    futures: list[Any] = []
    try:
        scattered = client.scatter(labels)
        index = {}
        for job in jobs:
            topic, chunk = job
            future = client.submit(replay_chunk, scattered[topic], plan, chunk, keys[topic], pure=False)
            index[future.key] = job
            futures.append(future)
        for future in distributed.as_completed(futures, loop=client.loop):
            yield index[future.key], future.result()
    finally:
        client.cancel(futures)
        client.close()


def _executed(jobs: list[Job], labels: list[npt.NDArray[np.int8]], keys: list[tuple[int, ...]], plan: ReplayPlan,
              workers: int, dask_address: str | None) -> Iterator[tuple[Job, Part]]:
    if dask_address is not None:
        return _on_dask(jobs, labels, keys, plan, dask_address)
    if workers > 1 and len(jobs) > 1:
        return _in_processes(jobs, labels, keys, plan, workers)
    return _in_process(jobs, labels, keys, plan)


# ---- the use case ---------------------------------------------------------------------------------------------------


class _Collected:
    """The finished chunks of each topic, joined in chunk order as soon as they are contiguous (every
    JOIN_EVERY chunks), so that a run holds a few arrays per topic and rule, not an object per chunk: 100,000
    replicates are 2,000 chunks a topic, and each chunk's runs cost ~2.5 kB of objects besides their data."""

    JOIN_EVERY = 64

    def __init__(self, topics: int) -> None:
        self.received = 0
        self._joined: list[list[Part]] = [[] for _ in range(topics)]  # each topic's contiguous first chunks
        self._chunks = [0] * topics  # how many chunks _joined holds, per topic
        self._waiting: dict[Job, Part] = {}  # chunks that came before an earlier one of their topic

    def add(self, job: Job, part: Part) -> None:
        self.received += 1
        topic = job[0]
        self._waiting[job] = part
        while (topic, self._chunks[topic]) in self._waiting:
            self._joined[topic].append(self._waiting.pop((topic, self._chunks[topic])))
            self._chunks[topic] += 1
        if len(self._joined[topic]) >= self.JOIN_EVERY:
            self._joined[topic] = [concat_runs(self._joined[topic])]

    def complete(self) -> int:
        """Chunks done on every topic, from the first."""
        return min(self._chunks)

    def runs(self, topic: int, replicates: int) -> Part:
        """The topic's first ``replicates`` runs of each rule (within its contiguous chunks)."""
        joined = concat_runs(self._joined[topic])
        self._joined[topic] = [joined]
        return {rule: replace(r, stopped=r.stopped[:replicates], depth=r.depth[:replicates],
                              found=r.found[:replicates], sampled=r.sampled[:replicates])
                for rule, r in joined.items()}


def run_simulation(source: SimulationSource, plan: ReplayPlan, *, workers: int = 1, dask_address: str | None = None,
                   progress: Progress | None = None) -> SimulationReport:
    """Replay every topic of ``source`` under ``plan`` and summarise per rule (`SimulationReport`).

    ``workers``: worker processes on this machine (1: in this process); ``dask_address``: a Dask scheduler to send
    the jobs to instead (``workers`` is then ignored). The result is the same bytes whatever the executor.
    ``progress(done, total)`` is called after each finished job; a KeyboardInterrupt (from it, or Ctrl-C) stops
    the run and returns the replicates done so far, flagged ``partial``. Topics without a relevant document are
    left out (recall is undefined there); the report says which."""
    checked_plan(plan)
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise Invalid(f"workers: must be a whole number >= 1, not {workers!r}")
    if dask_address is not None and not str(dask_address).strip():
        raise Invalid("dask: the scheduler address is empty (e.g. tcp://127.0.0.1:8786)")
    notes = list(source.notes)
    empty = [q.name for q in source.queues if q.relevant == 0]
    if empty:
        notes.append(f"left out, no relevant document (recall undefined): {', '.join(empty)}")
    queues = [q for q in source.queues if q.relevant > 0]
    if not queues:
        raise Invalid("topic: no topic with a relevant document to replay")
    unlabelled = sum(q.unlabelled for q in queues)
    if unlabelled:
        notes.append(f"{counted(unlabelled, 'document')} of the run {'has' if unlabelled == 1 else 'have'} no qrels "
                     "line (or a negative grade) and count as non-relevant")
    labels = [q.labels for q in queues]
    keys = [topic_key(q.name) for q in queues]
    chunks = chunk_count(plan)
    # chunk by chunk across the topics: an interrupted run has about the same replicates on every topic
    jobs = [(topic, chunk) for chunk in range(chunks) for topic in range(len(queues))]
    collected = _Collected(len(queues))
    interrupted = False
    try:
        for job, part in _executed(jobs, labels, keys, plan, workers, dask_address):
            collected.add(job, part)
            if progress is not None:
                progress(collected.received, len(jobs))
    except KeyboardInterrupt:
        interrupted = True
    complete = collected.complete()
    per_topic = [collected.runs(t, min(complete * CHUNK, plan.replicates)) for t in range(len(queues))] \
        if complete else []
    summaries = summarise(per_topic, plan.confidence, plan.review_cost, plan.sample_cost) if per_topic else []
    done = len(next(iter(per_topic[0].values())).stopped) if per_topic else 0
    if interrupted:
        notes.append(f"interrupted: {done:,} of {plan.replicates:,} replicates per topic were done; the figures "
                     "cover those")
    return _report(source, plan, queues, per_topic, summaries, done, interrupted, notes)


def _ratio(numerator: npt.NDArray[Any], denominator: int) -> npt.NDArray[np.float64]:
    return np.asarray(numerator, dtype=np.float64) / float(denominator)


def _chart(rule: str, per_topic: list[Part]) -> SimulationChart:
    """Recall at stop against (reviewed + sampled) / oracle depth of the stopped runs, at most MAX_CHART_POINTS
    of them (evenly spaced in topic, replicate order)."""
    recall: list[npt.NDArray[np.float64]] = []
    cost: list[npt.NDArray[np.float64]] = []
    for runs in per_topic:
        r = runs[rule]
        stopped = np.asarray(r.stopped, dtype=bool)
        recall.append(_ratio(np.asarray(r.found)[stopped], r.relevant))
        cost.append(_ratio((np.asarray(r.depth) + np.asarray(r.sampled))[stopped], max(r.oracle_depth, 1)))
    x, y = (np.concatenate(cost), np.concatenate(recall)) if recall else (np.zeros(0), np.zeros(0))
    if len(x) > MAX_CHART_POINTS:
        keep = np.linspace(0, len(x) - 1, MAX_CHART_POINTS).round().astype(np.int64)
        x, y = x[keep], y[keep]
    return SimulationChart(rule, [float(v) for v in x], [float(v) for v in y])


def _fraction_text(value: Fraction) -> str:
    for places in range(0, 7):
        scaled = value * 10**places
        if scaled.denominator == 1:
            return f"{float(value):.{max(places, 1)}f}" if places else str(int(value))
    return str(value)


def _report(source: SimulationSource, plan: ReplayPlan, queues: list[NamedQueue], per_topic: list[Part],
            summaries: list[RuleSummary], done: int, partial: bool, notes: list[str]) -> SimulationReport:
    rules = []
    for s in summaries:
        info = RULES[s.rule]
        rules.append(SimulationRule(
            rule=s.rule, kind=s.kind, description=info.description, topics=s.topics, runs=s.runs,
            stops=s.stops, never_stopped=s.never_stopped, failures=s.failures,
            failure_rate=s.failure_rate, failure_low=s.failure_low, failure_high=s.failure_high,
            recall_at_stop=RecallQuantiles(**{k: s.recall_quantiles.get(k) for k in QUANTILES}),
            reviewed_ratio_median=s.reviewed_ratio_median, total_ratio_median=s.total_ratio_median,
            false_stop_rate=s.false_stop_rate, false_stop_low=s.false_stop_low, false_stop_high=s.false_stop_high,
            cost_ratio_median=s.cost_ratio_median))
    topics = []
    for i, q in enumerate(queues):
        first = next(iter(per_topic[i].values())) if per_topic else None
        topics.append(SimulationTopic(topic=q.name, origin=q.origin, size=len(q.labels), relevant=q.relevant,
                                      needed=None if first is None else first.needed,
                                      oracle_depth=None if first is None else first.oracle_depth,
                                      unlabelled=q.unlabelled))
    d = plan.design
    settings = SimulationSettings(
        source=source.description, design=d.kind, sample_size=d.sample_size, every=d.every, rules=list(plan.rules),
        target=_fraction_text(plan.target), confidence=plan.confidence, looks_every=plan.look_every,
        replicates=plan.replicates, replicates_done=done, seed=plan.seed, topics=len(queues), partial=partial,
        review_cost=plan.review_cost, sample_cost=plan.sample_cost, produce_cost=plan.produce_cost)
    return SimulationReport(settings=settings, failure_meaning=FAILURE_MEANING, rules=rules, topics=topics,
                            charts=[_chart(s.rule, per_topic) for s in summaries], notes=notes)
