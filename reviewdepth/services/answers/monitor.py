"""The anytime-valid monitor of a stored topic: the evidence from the store, the statistics from
`reviewdepth.estimation.monitor` (formulas and the argument there).

What goes in (`build_monitor`):

* the population N: the audit stream's (the distinct documents of the queue it was created on); with no stream,
  the current queue's size, and nothing audited;
* the reviewed set S: the union over the topic's queues of each queue's reviewed prefix as the report counts it
  (`reviewdepth.services.evidence.queue_evidence.queue_evidence`), within the population. A re-ranking adds a
  queue whose prefix starts short, but the documents reviewed along the old ranking stay in S: S never shrinks;
* F, the relevant documents in S, and R_known, every distinct document of the population with a relevant label
  (any role), under the label policy as of the judgment id;
* the current queue (named, else the topic's newest): its reviewed prefix and size, and the ranks on it of the
  audit documents outside S and of the known relevant documents outside S (0 when not in it).

The depth report's one-look stopping rules (elusion, QBCB, …) are shown beside the monitor, each labelled "valid
for one look only"; they come from the report's own computation for the current queue
(`reviewdepth.services.answers.assessment`), without the rest of the report.
"""

from __future__ import annotations

import dataclasses
import threading
from collections import OrderedDict
from collections.abc import Hashable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
import numpy.typing as npt
from sqlalchemy import Connection, Engine, func, select

from reviewdepth.estimation.assessment import Assessment
from reviewdepth.estimation.count_bound import certification_floor
from reviewdepth.estimation.distributions import STATUS_SCIPY, import_scipy_in_background
from reviewdepth.estimation.monitor import MonitorInput, MonitorNote, MonitorResult, monitor, monitor_step
from reviewdepth.estimation.target import DEFAULT_TARGET, Target
from reviewdepth.report.decision import AUDIT_BASIS, audit_figure, sample_figure, topic_status
from reviewdepth.report.model import ChainHead
from reviewdepth.report.monitor_model import (
    ONE_LOOK,
    Dashboard,
    DashboardEntry,
    MonitorAudit,
    MonitorFixedLook,
    MonitorNeeded,
    MonitorReport,
    MonitorToGo,
    OneLookRule,
    lower_text,
)
from reviewdepth.report.status_model import TopicStatus, Validity
from reviewdepth.report.wording import (
    audit_needed_text,
    monitor_guarantee,
    monitor_headline,
    monitor_note,
    stop_label,
    to_go_text,
    with_topic,
)
from reviewdepth.report.wording import headline as headline_words
from reviewdepth.report.wording import monitor_step as say_monitor_step
from reviewdepth.report.wording import next_step as next_step_words
from reviewdepth.services.answers.assessment import fully_judged, queue_assessment, queue_population
from reviewdepth.services.answers.monitor_summaries import store_reports, stored_reports
from reviewdepth.services.errors import Conflict, Invalid, NotFound, ServiceError
from reviewdepth.services.evidence.audit import AuditEvidence, audit_doc_ids, load_audit
from reviewdepth.services.evidence.confidence import checked_confidence, checked_target
from reviewdepth.services.evidence.queue_evidence import QueueEvidence
from reviewdepth.services.evidence.queue_state import QueueState, queue_state_of
from reviewdepth.services.evidence.topic import recorded_judgment
from reviewdepth.store import validation
from reviewdepth.store.chain import chain_head_at
from reviewdepth.store.ingest import as_utc, driver_columns
from reviewdepth.store.labels import POLICIES, resolve_labels
from reviewdepth.store.loaders import QueueLabels, load_judgment_arrays
from reviewdepth.store.models import AuditStream, Judgment, Queue, Sample, Topic
from reviewdepth.store.snapshot import read_snapshot

MAX_PENDING_SHOWN = 20
DASHBOARD_PAGE = 50  # topics on one dashboard page unless asked otherwise
DASHBOARD_PAGE_MAX = 200  # topics on one dashboard page at most
MONITOR_CACHE_ENTRIES = 1_000  # monitors a MonitorCache keeps at most (a few kB each)


# a target as the doors pass it (a Target), or as a Python caller or the dashboard gives it (text, a Fraction)
TargetGiven = Target | str | Fraction


def _settings(target: TargetGiven, confidence: object, policy: str,
              as_of: int | None) -> tuple[Fraction, float]:
    tau = checked_target(target).value
    level = checked_confidence(confidence)
    if policy not in POLICIES:
        raise Invalid(f"policy: unknown label policy {policy!r}; choose one of {', '.join(POLICIES)}")
    if as_of is not None and (isinstance(as_of, bool) or not isinstance(as_of, int)
                              or not 0 <= as_of <= validation.INT64_MAX):
        raise Invalid(f"as_of: must be a judgment id, not {as_of!r}")
    return tau, level


@dataclass
class _Topic:
    id: int
    name: str
    population_size: int | None
    queues: list[Queue]


def _topic(conn: Connection, topic: str) -> _Topic:
    topic = validation.topic_name(topic)
    row = conn.execute(select(Topic.id, Topic.population_size).where(Topic.name == topic)).first()
    if row is None:
        raise NotFound(f"unknown topic {topic!r}")
    queues = list(conn.execute(select(Queue.id, Queue.name, Queue.size).where(Queue.topic_id == row[0])
                               .order_by(Queue.id)).all())
    return _Topic(int(row[0]), topic, None if row[1] is None else int(row[1]),
                  [Queue(id=int(i), name=n, size=int(s)) for i, n, s in queues])


def _current(info: _Topic, name: str | None) -> Queue:
    if not info.queues:
        raise Conflict(f"topic {info.name!r} has no queue; import a run first")
    if name is None:
        return info.queues[-1]
    name = validation.queue_name(name)
    for row in info.queues:
        if row.name == name:
            return row
    raise NotFound(f"queue: topic {info.name!r} has no queue {name!r} (its queues: "
                   f"{', '.join(q.name for q in info.queues)})")


def _docs(conn: Connection, queue_id: int, upto: int | None = None) -> tuple[str, ...]:
    """The queue's doc ids in rank order (the first ``upto`` only, when given); a plain driver read, since the
    dashboard does this for every topic. A tuple of strings: the garbage collector stops scanning it after its
    first look (a list of a million documents would be scanned at every collection of its generation, holding
    the GIL, hence the event loop, meanwhile)."""
    sql = "SELECT doc_id FROM queue_entries WHERE queue_id = ?"
    params: tuple[int, ...] = (queue_id,)
    if upto is not None:
        sql += " AND rank <= ?"
        params += (upto,)
    return driver_columns(conn, sql + " ORDER BY rank", params, width=1)[0]


def _last_judgment(conn: Connection, topic_id: int, as_of: int | None) -> tuple[int | None, str | None]:
    """The id and time (ISO, UTC) of the topic's last logged row up to ``as_of``."""
    stmt = select(Judgment.id, Judgment.recorded_at).where(Judgment.topic_id == topic_id)
    if as_of is not None:
        stmt = stmt.where(Judgment.id <= as_of)
    row = conn.execute(stmt.order_by(Judgment.id.desc()).limit(1)).first()
    if row is None:
        return None, None
    return int(row[0]), as_utc(row[1]).isoformat()


@dataclass
class _Sets:
    """The monitor's counts of the reviewed set S against the population: |population|, |S|, F, R_known, the
    relevant documents outside the population, and the current-queue ranks (0: not in it) of the audit documents
    outside S (with their labels), of the known relevant documents outside S, and of every population document
    outside S."""

    population: int
    reviewed: int
    found: int
    known: int
    relevant_outside: int
    audit_ranks: npt.NDArray[np.int64]
    audit_relevant: npt.NDArray[np.bool_]
    known_outside_ranks: npt.NDArray[np.int64]
    outside_ranks: npt.NDArray[np.int64]


def _on_review_order(audit: AuditEvidence | None, order: npt.NDArray[np.int64] | None) -> AuditEvidence | None:
    """The audit with its documents' current-queue ranks carried onto the queue's review order (the monitor
    counts positions along it: S first, then the unreviewed rest in queue order)."""
    if audit is None or order is None:
        return audit
    position = np.empty(len(order), dtype=np.int64)
    position[order - 1] = np.arange(1, len(order) + 1, dtype=np.int64)
    return dataclasses.replace(audit, ranks=[None if r is None or not 0 < r <= len(order) else int(position[r - 1])
                                             for r in audit.ranks])


def _audit_origin(conn: Connection, audit: AuditEvidence | None) -> int | None:
    """The id of the queue the audit stream samples from (None: no stream, or its queue is gone)."""
    if audit is None:
        return None
    found = conn.execute(select(AuditStream.queue_id).where(AuditStream.id == audit.stream_id)).scalar_one_or_none()
    return None if found is None else int(found)


def _one_queue(info: _Topic, current: Queue, audit: AuditEvidence | None, origin: int | None) -> bool:
    """Whether S is the current queue's reviewed prefix and the population the current queue: the topic has one
    queue, and the audit stream (if any) samples from it. Then `_sets_by_rank` gives the sets from the queue's
    labels by rank, without reading its documents."""
    return len(info.queues) == 1 and (audit is None or origin == current.id)


def _audit_outside(audit: AuditEvidence | None, inside: Any) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.bool_]]:
    """The current-queue ranks (0: not in it) and labels of the audit documents for which ``inside(doc, rank)``
    is false."""
    ranks: list[int] = []
    relevant: list[bool] = []
    if audit is not None:
        for doc, is_rel, rank in zip(audit.doc_ids, audit.relevant, audit.ranks, strict=True):
            if not inside(doc, rank):
                ranks.append(rank or 0)
                relevant.append(is_rel)
    return np.array(ranks, dtype=np.int64), np.array(relevant, dtype=np.bool_)


def _sets_by_rank(labels: npt.NDArray[np.int8], reviewed: int, audit: AuditEvidence | None,
                  relevant_total: int) -> _Sets:
    """`_Sets` when `_one_queue`: S is ranks 1..``reviewed`` and the population every rank, so each set is a
    range of ranks or a mask of ``labels`` (the queue's labels by rank, resolved as the topic's are). Memory
    and time go with the queue's size in bytes, not in Python objects (a 3,000,000-entry queue read as
    documents cost ~400 MB)."""
    relevant = labels == 1
    known = int(np.count_nonzero(relevant))
    audit_ranks, audit_relevant = _audit_outside(audit, lambda _doc, rank: rank is not None and 0 < rank <= reviewed)
    return _Sets(population=len(labels), reviewed=reviewed, found=int(np.count_nonzero(relevant[:reviewed])),
                 known=known, relevant_outside=relevant_total - known, audit_ranks=audit_ranks,
                 audit_relevant=audit_relevant,
                 known_outside_ranks=(np.flatnonzero(relevant[reviewed:]) + reviewed + 1).astype(np.int64),
                 outside_ranks=np.arange(reviewed + 1, len(labels) + 1, dtype=np.int64))


def _reviewed_docs(docs: Sequence[str], evidence: Any) -> list[str]:
    """The documents of a queue's reviewed set S, from the queue's documents in rank order (its first |S| when S
    is a prefix)."""
    if evidence.order is None:
        return list(docs[:evidence.reviewed])
    return [docs[int(r) - 1] for r in evidence.order[:evidence.reviewed]]


def _sets_by_document(conn: Connection, info: _Topic, current: Queue, prefixes: dict[int, Any],
                      audit: AuditEvidence | None, origin: int | None, relevant_docs: set[str]) -> _Sets:
    """`_Sets` in general (several queues, or a stream over another queue): by document. The population is the
    audit stream's queue's documents (load_audit has checked them against the stored digest), else the current
    queue's; S the union of each queue's reviewed prefix."""
    current_docs = _docs(conn, current.id)
    if prefixes[current.id].order is not None:  # positions on the review order, as the audit's ranks are
        current_docs = tuple(current_docs[int(r) - 1] for r in prefixes[current.id].order)
    # doc → rank on the current queue: a dict of strings and ints, which the garbage collector never scans (a set
    # of the queue's documents would be scanned whole at each collection of its generation)
    rank_of = {d: i + 1 for i, d in enumerate(current_docs)}
    population: AbstractSet[str]
    if audit is None or origin == current.id:
        population = rank_of.keys()
    elif origin is not None:
        population = set(_docs(conn, origin))
    else:
        population = set(audit_doc_ids(conn, info.name))  # its queue is gone: the stream found another
    reviewed_docs: set[str] = set(current_docs[:prefixes[current.id].reviewed])
    for q in info.queues:
        if q.id != current.id and prefixes[q.id].reviewed:
            evidence = prefixes[q.id]
            reviewed_docs.update(_reviewed_docs(_docs(conn, q.id, None if evidence.order is not None
                                                      else evidence.reviewed), evidence))
    # comprehensions, not set operators: one C call over half a million documents holds the GIL ~0.1 s
    in_population = {d for d in reviewed_docs if d in population}
    known = {d for d in relevant_docs if d in population}
    audit_ranks, audit_relevant = _audit_outside(audit, lambda doc, _rank: doc in in_population)
    return _Sets(
        population=len(population), reviewed=len(in_population),
        found=sum(1 for d in in_population if d in relevant_docs), known=len(known),
        relevant_outside=sum(1 for d in relevant_docs if d not in population), audit_ranks=audit_ranks,
        audit_relevant=audit_relevant,
        known_outside_ranks=np.array(sorted(rank_of.get(d, 0) for d in known - in_population), dtype=np.int64),
        outside_ranks=np.fromiter((rank_of.get(d, 0) for d in population if d not in in_population),
                                  dtype=np.int64))


def _fraction_text(value: Fraction) -> str:
    """0.95 as written (a decimal when it has one), else the fraction."""
    for places in range(1, 7):
        scaled = value * 10**places
        if scaled.denominator == 1:
            return f"{float(value):.{places}f}"
    return str(value)


def build_monitor(engine: Engine, topic: str, *, queue: str | None = None,
                  target: TargetGiven = DEFAULT_TARGET, confidence: float = 0.95, policy: str = "latest",
                  as_of: int | None = None, one_look: bool = True, with_samples: bool = True) -> MonitorReport:
    """`monitor_of` in one read snapshot."""
    with read_snapshot(engine) as conn:
        return monitor_of(conn, topic, queue=queue, target=target, confidence=confidence, policy=policy,
                          as_of=as_of, one_look=one_look, with_samples=with_samples)


def monitor_of(conn: Connection, topic: str, *, queue: str | None = None,
               target: TargetGiven = DEFAULT_TARGET, confidence: float = 0.95, policy: str = "latest",
               as_of: int | None = None, one_look: bool = True, with_samples: bool = True,
               loaded: QueueState | None = None) -> MonitorReport:
    """The monitor's status of ``topic`` as of judgment ``as_of`` (default: now), read through ``conn``; module
    docstring for what goes in. ``one_look``: also compute the depth report's one-look stopping rules for the
    current queue (the dashboard leaves them out). ``with_samples``: put the random samples' figure in the topic
    status (the report, which has its own, leaves it out). `Invalid` for a bad setting, `NotFound` for an
    unknown topic or queue. ``loaded``: a queue's state already read by the caller through ``conn`` under the same
    policy and as-of point (the report passes its own), so it is not read twice; the other queues and the audit
    stream are still read here."""
    tau, level = _settings(target, confidence, policy, as_of)
    # while the reads below wait on the database (the point-process fit is one of the one-look rules)
    import_scipy_in_background(STATUS_SCIPY if one_look else ("scipy.special",))
    if as_of is not None:
        recorded_judgment(conn, as_of)
    info = _topic(conn, topic)
    current = _current(info, queue)
    last_id, last_time = _last_judgment(conn, info.id, as_of)
    point = as_of if as_of is not None else last_id
    chain_head = ChainHead(**chain_head_at(conn, info.id, as_of))  # type: ignore[arg-type]  # the store's 3 keys
    if current.size == 0:
        raise Invalid(f"queue: queue {current.name!r} of topic {info.name!r} has no documents")
    states = {q.id: loaded if loaded is not None and loaded.queue.id == q.id else
              queue_state_of(conn, info.id, q, info.population_size, policy, point) for q in info.queues}
    prefixes = {q: state.evidence for q, state in states.items()}
    # each queue on its review order: its reviewed set S first (documents reviewed out of queue order included)
    labels_by_queue = {q: state.labels for q, state in states.items()}
    audit = _on_review_order(load_audit(conn, info.name, current.name, policy=policy, as_of=point),
                             prefixes[current.id].order)
    queue_reviewed = prefixes[current.id].reviewed
    origin = _audit_origin(conn, audit)
    if _one_queue(info, current, audit, origin):
        # the topic's relevant documents counted as the queue's labels resolved them: no document is read as a
        # Python string (a million judgments read as documents cost ~60 MB more)
        sets = _sets_by_rank(labels_by_queue[current.id].labels, queue_reviewed, audit,
                             labels_by_queue[current.id].relevant_total)
    else:
        docs, ids, rel, adj, markers = load_judgment_arrays(conn, info.id, point)
        resolved = resolve_labels(docs, ids, rel, adj, policy, markers)
        relevant_docs = {d for d, lab in zip(resolved.doc_ids.tolist(), resolved.labels.tolist(), strict=True)
                         if lab == 1}
        sets = _sets_by_document(conn, info, current, prefixes, audit, origin, relevant_docs)
    inp = MonitorInput(
        population=sets.population if audit is None else audit.population_size, reviewed=sets.reviewed,
        found=sets.found, audited=0 if audit is None else audit.judged, known_relevant=sets.known,
        queue_reviewed=queue_reviewed, queue_size=current.size, audit_outside_ranks=sets.audit_ranks,
        audit_outside_relevant=sets.audit_relevant, known_outside_relevant_ranks=sets.known_outside_ranks,
        outside_ranks=sets.outside_ranks)
    result = monitor(inp, tau, level)

    notes = [monitor_note(n) for n in result.notes]
    if sets.relevant_outside:
        notes.append(monitor_note(MonitorNote.OUTSIDE_POPULATION, {"outside": sets.relevant_outside}))
    if info.population_size is not None and info.population_size > inp.population:
        notes.append(monitor_note(MonitorNote.COLLECTION_LARGER,
                                  {"collection": info.population_size, "population": inp.population}))
    if audit is not None and as_of is not None:
        notes.append(monitor_note(MonitorNote.PAST_AUDIT))
    if len(info.queues) > 1:
        notes.append(monitor_note(MonitorNote.JOINED_QUEUES, {
            "queues": len(info.queues), "reviewed": inp.reviewed, "queue_reviewed": queue_reviewed,
            "queue": current.name}))
    evidence = prefixes[current.id]
    # without the one-look rules shown, the heuristics are not evaluated (the point process fits a curve at each
    # checkpoint): the sample figure and its status read the certified rules only
    # R known (every document of the population judged) decides too, as in the report: without it a fully
    # screened topic read "unknown" in `topics` and on the dashboard while its report read "reached, by R known"
    known = with_samples and fully_judged(labels_by_queue[current.id],
                                          queue_population(labels_by_queue[current.id], info.population_size))
    assessment = _assessment(info, labels_by_queue[current.id], evidence, tau, level, heuristics=one_look) if (
        one_look or (with_samples and (evidence.draws or known))) else None
    rules = _one_look_rules(assessment, tau) if one_look else []
    sample = sample_figure(assessment) if assessment is not None and with_samples else None
    sample_words = (None, None) if assessment is None or sample is None else (
        headline_words(assessment.headline), next_step_words(assessment.headline.step,
                                                             assessment.headline.step_counts))
    status = topic_status(
        Target(tau, _fraction_text(tau)), level, inp.reviewed, inp.found, sample=sample,
        sample_status=None if assessment is None else assessment.headline.status,
        audit=None if audit is None else audit_figure(audit.stream_id, audit.judged, result.recall_lower, level,
                                                      result.certified, result.upper_missed,
                                                      inp.population - inp.reviewed),
        sample_headline=None if sample_words[0] is None else with_topic(sample_words[0], info.name),
        sample_next=None if sample_words[1] is None else with_topic(sample_words[1], info.name), topic=info.name)
    if prefixes[current.id].out_of_order:
        notes.append(monitor_note(MonitorNote.OUT_OF_ORDER,
                                  {"out_of_order": prefixes[current.id].out_of_order, "queue": current.name}))
    return _report(info.name, current, point, tau, level, inp, result, audit, rules, notes, last_time,
                   chain_head, status, prefixes[current.id].order)


def _assessment(info: _Topic, labels: QueueLabels, evidence: QueueEvidence, tau: Fraction,
                level: float, *, heuristics: bool = True) -> Assessment:
    """The depth report's assessment of the current queue at this moment (`reviewdepth.services.answers.assessment`)."""
    population = queue_population(labels, info.population_size)
    return queue_assessment(labels, evidence, population, fully_judged(labels, population),
                            [Target(tau, _fraction_text(tau))], confidence=level, heuristics=heuristics)


def _one_look_rules(assessment: Assessment | None, tau: Fraction) -> list[OneLookRule]:
    """The depth report's stopping rules for the current queue at this moment."""
    if assessment is None:
        return []
    return [OneLookRule(rule=e.rule, kind=e.kind, target=_fraction_text(tau), stop_now=e.stop_now,
                        stop_depth=e.stop_depth, certifies=e.certifies, guarantee=e.guarantee, reason=e.reason,
                        label=ONE_LOOK, stop_label=stop_label(e.kind, e.stop_now)) for e in assessment.stopping]


def _report(topic: str, current: Queue, point: int | None, tau: Fraction, level: float, inp: MonitorInput,
            result: MonitorResult, audit: AuditEvidence | None, rules: list[OneLookRule], notes: list[str],
            last_time: str | None, chain_head: ChainHead,
            status: TopicStatus, order: npt.NDArray[np.int64] | None = None) -> MonitorReport:
    target = _fraction_text(tau)
    sample = next((f for f in status.figures if f.validity != Validity.ANYTIME_VALID), None)
    audit_section: MonitorAudit | None = None
    if audit is not None:
        audit_section = MonitorAudit(
            stream_id=audit.stream_id, seed=audit.seed, population_size=audit.population_size,
            position=audit.position, served=audit.served, judged=audit.judged, relevant=sum(audit.relevant),
            outside_reviewed=len(inp.audit_outside_ranks), relevant_outside_reviewed=inp.missed,
            pending=len(audit.pending), pending_documents=list(audit.pending[:MAX_PENDING_SHOWN]),
            description=audit.description)
    to_go = _to_go(result, order)
    needed = MonitorNeeded(result.audit_needed, result.audit_needed_to_judge,
                           audit_needed_text(result.audit_needed, result.audit_needed_to_judge, audit is not None))
    step = monitor_step(result.certified, audit is not None, 0 if audit is None else len(audit.pending),
                        inp.queue_reviewed >= inp.queue_size, sample is not None)
    monitor_next = say_monitor_step(step, topic, pending=() if audit is None else audit.pending,
                                    audit_judged=0 if audit is None else audit.judged, to_go_bound=to_go.bound,
                                    depth_bound=to_go.depth_bound, audit_more=needed.more,
                                    audit_to_judge=needed.to_judge)
    # the decision's next step: the monitor's when the audit stream decides, else the samples' (or, with no
    # bound at all, how to get one); every door prints this one
    status = dataclasses.replace(status, next_step=monitor_next if status.decided_by == AUDIT_BASIS else (
        with_topic(status.next_step, topic) if status.next_step else monitor_next))
    return MonitorReport(
        topic=topic, queue=current.name, as_of_judgment=point, status=result.status, certified=result.certified,
        headline=monitor_headline(result.certified, audit is not None, sample is not None,
                                  lower_text(result.recall_lower), level, target),
        target=target, confidence=level, guarantee=monitor_guarantee(target, level),
        recall_lower=result.recall_lower, recall_point=result.recall_point, relevant_found=inp.found,
        reviewed=inp.reviewed, queue_reviewed=inp.queue_reviewed, queue_size=inp.queue_size,
        population=inp.population, relevant_known=inp.known_relevant, missed_upper=result.upper_missed,
        audit=audit_section, to_go=to_go, audit_needed=needed,
        fixed_look=MonitorFixedLook(result.fixed_look.upper_missed, result.fixed_look.recall_lower,
                                    result.fixed_look.certified, ONE_LOOK),
        one_look_rules=rules, assumptions=list(result.assumptions), notes=notes, last_activity=last_time,
        judgment_chain_head=chain_head,
        topic_status=status,
        floor=certification_floor(inp.found, inp.population - inp.reviewed, tau, level) if tau < 1 else
        inp.population - inp.reviewed,
        next_step=status.next_step or monitor_next)


def _to_go(result: MonitorResult, order: npt.NDArray[np.int64] | None = None) -> MonitorToGo:
    """Documents still to review along the current queue: the point estimate and the bound. ``order``: the queue
    rank at each position of the review order when S is not a prefix (the monitor counts positions; the team
    reads queue ranks)."""
    if order is not None:
        def rank(position: int | None) -> int | None:
            return None if position is None or not 0 < position <= len(order) else int(order[position - 1])
        result = dataclasses.replace(result, depth_bound=rank(result.depth_bound),
                                     depth_estimate=rank(result.depth_estimate))
    return MonitorToGo(result.to_go_estimate, result.to_go_bound, result.depth_estimate, result.depth_bound,
                       result.certified or result.to_go_bound is not None,
                       to_go_text(result.certified, result.to_go_bound, result.depth_bound, result.to_go_estimate,
                                  result.confidence))


# ----------------------------------------------------------------------------------------------------------------
# watching and the dashboard


def change_marker(engine: Engine, topic: str) -> tuple[Any, ...]:
    """What changes when the monitor's answer may: the topic's judgment chain (length and head), its newest
    judgment, queue and sample, its audit streams (id, position, voided). Cheap: a few indexed reads."""
    with engine.connect() as conn:
        found = conn.execute(select(Topic.id).where(Topic.name == validation.topic_name(topic))).scalar_one_or_none()
        if found is None:
            raise NotFound(f"unknown topic {topic!r}")
        return change_markers(conn, [int(found)])[int(found)]


def change_markers(conn: Connection, topic_ids: Sequence[int]) -> dict[int, tuple[Any, ...]]:
    """`change_marker` of each topic of ``topic_ids`` (known ids), in five statements whatever their number: the
    dashboard reads a page's markers at once, then builds only the monitors whose marker moved."""
    ids = sorted(set(topic_ids))
    if not ids:
        return {}

    def newest(column: Any, owner: Any) -> dict[int, int]:
        return {int(t): int(n) for t, n in conn.execute(
            select(owner, func.max(column)).where(owner.in_(ids)).group_by(owner))}

    # the chain, and the topic's settings that change its monitor (a declared random screening order changes what
    # counts as reviewed; the conflict rule, what the quality figures count)
    chains = {int(i): (length, head, order, rule) for i, length, head, order, rule in conn.execute(
        select(Topic.id, Topic.chain_length, Topic.chain_head, Topic.screening_order, Topic.conflict_rule)
        .where(Topic.id.in_(ids)))}
    last = newest(Judgment.id, Judgment.topic_id)
    queues = newest(Queue.id, Queue.topic_id)
    samples = newest(Sample.id, Sample.topic_id)
    streams: dict[int, list[tuple[Any, ...]]] = {}
    for topic_id, stream_id, position, live in conn.execute(
            select(AuditStream.topic_id, AuditStream.id, AuditStream.position, AuditStream.voided_at.is_(None))
            .where(AuditStream.topic_id.in_(ids)).order_by(AuditStream.topic_id, AuditStream.id)):
        streams.setdefault(int(topic_id), []).append((stream_id, position, live))
    return {t: (*chains[t], last.get(t), queues.get(t), samples.get(t), tuple(streams.get(t, ())))
            for t in ids if t in chains}


class MonitorCache:
    """Dashboard monitors kept per topic and settings, each with the topic's `change_marker` when it was built:
    reused while the marker is unchanged (no judgment, queue, sample or audit-stream change since), so a
    dashboard that reloads does not load a large queue's labels again. Thread-safe; at most ``entries`` kept,
    the least recently used dropped first. One per process (the API keeps one per application)."""

    def __init__(self, entries: int = MONITOR_CACHE_ENTRIES) -> None:
        self._entries: OrderedDict[Hashable, tuple[Hashable, MonitorReport]] = OrderedDict()
        self._size = entries
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get(self, key: Hashable, marker: Hashable) -> MonitorReport | None:
        with self._lock:
            found = self._entries.get(key)
            if found is None or found[0] != marker:
                self.misses += 1
                return None
            self._entries.move_to_end(key)
            self.hits += 1
            return found[1]

    def peek(self, key: Hashable, marker: Hashable) -> MonitorReport | None:
        """`get` without counting a hit or a miss or refreshing the entry."""
        with self._lock:
            found = self._entries.get(key)
            return None if found is None or found[0] != marker else found[1]

    def put(self, key: Hashable, marker: Hashable, report: MonitorReport) -> None:
        with self._lock:
            self._entries[key] = (marker, report)
            self._entries.move_to_end(key)
            while len(self._entries) > self._size:
                self._entries.popitem(last=False)


def _whole(name: str, value: object, top: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= top:
        raise Invalid(f"{name}: must be a whole number from 1 to {top:,}, not {value!r}")
    return value


def checked_page(page: object, limit: object) -> tuple[int, int]:
    """The dashboard's page (from 1) and topics per page (1 to DASHBOARD_PAGE_MAX); `Invalid` otherwise."""
    return _whole("page", page, validation.INT64_MAX), _whole("limit", limit, DASHBOARD_PAGE_MAX)


def _cache_key(name: str, tau: Fraction, level: float) -> Hashable:
    return (name, tau, level)


def _dashboard_monitor(engine: Engine, name: str, tau: Fraction, level: float,
                       cache: MonitorCache | None, marker: tuple[Any, ...] | None) -> MonitorReport:
    """The topic's monitor for the dashboard, from ``cache`` while its change ``marker`` is unchanged. The marker
    is read before the monitor is built, so a change meanwhile makes the next request build it again."""
    if cache is None or marker is None:
        return build_monitor(engine, name, target=tau, confidence=level, one_look=False)
    key = _cache_key(name, tau, level)
    report = cache.get(key, marker)
    if report is None:
        report = build_monitor(engine, name, target=tau, confidence=level, one_look=False)
        cache.put(key, marker, report)
    return report


def _by_activity(conn: Connection) -> list[tuple[int, str, int | None]]:
    """(id, name, id of its newest judgment-log row or None) of every topic, the most recently judged first
    (judgment ids grow with time), then the never-judged ones, each group by name. One indexed look-up per topic
    (``ix_judgments_topic_id_id``), not a scan of the judgments."""
    newest = (select(func.max(Judgment.id)).where(Judgment.topic_id == Topic.id).correlate(Topic)
              .scalar_subquery())
    rows = [(int(i), str(n), None if j is None else int(j))
            for i, n, j in conn.execute(select(Topic.id, Topic.name, newest))]
    return sorted(rows, key=lambda row: (row[2] is None, -(row[2] or 0), row[1]))


def _name_filter(text: object) -> str:
    """The dashboard's name filter as compared (NFC, no outer space, case folded); `Invalid` when it is no name
    part (longer than a topic name, a control character)."""
    try:
        return validation.free_text(text, "q", validation.TOPIC_LENGTH).strip().casefold()
    except validation.InvalidValue as exc:
        raise Invalid(f"q: {exc.message}") from None


def build_dashboard(engine: Engine, *, target: TargetGiven = DEFAULT_TARGET, confidence: float = 0.95,
                    topics: Sequence[str] | None = None, page: int = 1, limit: int = DASHBOARD_PAGE,
                    cache: MonitorCache | None = None, name_contains: str = "",
                    judged_only: bool = False) -> Dashboard:
    """One page of the topics (every topic, or ``topics``), the most recently active first (by their newest
    judgment; never-judged topics after them; each group by name), ``limit`` a page, each with its monitor at the
    newest queue, without the one-look rules (from ``cache`` while the topic is unchanged). ``name_contains``:
    only topics whose name contains it (ignoring case); ``judged_only``: only topics with a judgment. A topic
    whose monitor cannot be computed (no queue yet; a stream whose documents no longer match) is listed with the
    reason. `Invalid` for a bad setting or page."""
    tau, level = _settings(target, confidence, "latest", None)
    page, limit = checked_page(page, limit)
    needle = _name_filter(name_contains)
    wanted = None if topics is None else set(topics)
    with engine.connect() as conn:
        chosen = [(topic_id, name, newest) for topic_id, name, newest in _by_activity(conn)
                  if (wanted is None or name in wanted) and needle in name.casefold()
                  and (newest is not None or not judged_only)]
        rows = chosen[(page - 1) * limit:page * limit]
        ids = [topic_id for topic_id, _, _ in rows]
        name_of = {topic_id: name for topic_id, name, _ in rows}
        with_queue = set(conn.execute(select(Queue.topic_id).where(Queue.topic_id.in_(ids)).distinct()).scalars())
        newest_ids = [newest for _, _, newest in rows if newest is not None]
        last = {int(topic_id): as_utc(moment).isoformat() for topic_id, moment in conn.execute(
            select(Judgment.topic_id, Judgment.recorded_at).where(Judgment.id.in_(newest_ids)))} \
            if newest_ids else {}
        markers = change_markers(conn, [t for t in ids if t in with_queue]) if cache is not None else {}
        settings = f"{tau}|{level!r}"
        if cache is not None:  # a new process, or topics the cache dropped: read what the store kept of them
            missing = {t: m for t, m in markers.items() if cache.peek(_cache_key(name_of[t], tau, level), m) is None}
            for topic_id, stored in stored_reports(conn, settings, missing).items():
                cache.put(_cache_key(name_of[topic_id], tau, level), markers[topic_id], stored)
    board = Dashboard(target=_fraction_text(tau), confidence=level, total=len(chosen), page=page, limit=limit,
                      name_contains=name_contains.strip(), judged_only=judged_only)
    built: dict[int, tuple[tuple[Any, ...], MonitorReport]] = {}
    for topic_id, name, _ in rows:
        report: MonitorReport | None = None
        problem: str | None = None
        if topic_id in with_queue:
            marker = markers.get(topic_id)
            fresh = cache is not None and marker is not None and cache.peek(_cache_key(name, tau, level), marker) \
                is None
            try:
                report = _dashboard_monitor(engine, name, tau, level, cache, marker)
            except ServiceError as exc:  # e.g. a stream whose documents no longer match: shown, not fatal
                problem = str(exc)
            if fresh and report is not None and marker is not None:
                built[topic_id] = (marker, report)
        board.entries.append(DashboardEntry(name, report, problem, last.get(topic_id)))
    store_reports(engine, settings, built)  # best effort: the page is served whether or not they are kept
    return board


def topic_statuses(engine: Engine, names: Sequence[str], *, target: TargetGiven = DEFAULT_TARGET,
                   confidence: float = 0.95, cache: MonitorCache | None = None) -> dict[str, tuple[str, str]]:
    """(status word, status line) per topic, as its dashboard row shows them (``no queue`` or ``problem`` with
    the reason when there is no status): what ``reviewdepth topics`` and ``GET /topics?status=true`` print."""
    out: dict[str, tuple[str, str]] = {}
    wanted = set(names)
    page = 1
    while wanted - out.keys():
        board = build_dashboard(engine, target=target, confidence=confidence, topics=sorted(wanted), page=page,
                                limit=DASHBOARD_PAGE_MAX, cache=cache)
        for entry in board.entries:
            if entry.monitor is not None:
                text = entry.monitor.topic_status.text
            else:
                text = entry.problem or "no queue yet: import a run"
            out[entry.topic] = (entry.state, text)
        if not board.has_next:
            break
        page += 1
    return out
