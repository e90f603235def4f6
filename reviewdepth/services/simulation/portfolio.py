"""The team's portfolio: completed topics marked as the reference set, and the calibration of the heuristic
stopping rules on it (issue 17, item 3).

A calibration replays every portfolio topic's review through `reviewdepth.services.simulation.simulate` with the rules
the
engine (`reviewdepth.estimation.replay.RULES`) marks ``heuristic`` or ``invalid`` — rules without a guarantee —
and keeps, per rule, the failure rate (share of stops with recall below the target τ) with its Clopper–Pearson
interval and the cost relative to the oracle depth (the shortest prefix that reaches τ·R). The depth report shows
the latest calibration beside each heuristic rule evaluated for the same τ (`calibration_for_report`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from sqlalchemy import Engine, delete, insert, select

from reviewdepth.estimation.target import DEFAULT_TARGET as TARGET_095
from reviewdepth.estimation.target import Target
from reviewdepth.services.errors import Invalid, NotFound
from reviewdepth.services.evidence import calibration as evidence_calibration
from reviewdepth.services.evidence.calibration import CalibrationRecord
from reviewdepth.store import validation
from reviewdepth.store.ingest import as_utc, utc_now
from reviewdepth.store.loaders import load_queue_labels
from reviewdepth.store.models import Calibration, PortfolioTopic, Queue, Topic

if TYPE_CHECKING:
    from reviewdepth.estimation.replay import ReplayPlan
    from reviewdepth.services.simulation.simulate import Progress

DEFAULT_TARGET = TARGET_095
DEFAULT_CONFIDENCE = 0.95
# knee and budget read no sample: under the design "none" every replicate of a topic is the same run
DEFAULT_REPLICATES = 1
DEFAULT_SEED = 17
DEFAULT_LOOKS = 100
# the kinds of rule a calibration measures: those that carry no guarantee of their own
CALIBRATED_KINDS = ("heuristic", "invalid")


@dataclass(frozen=True)
class PortfolioEntry:
    """A topic of the portfolio: who marked it and when."""

    topic: str
    added_at: datetime
    added_by: str

    def as_dict(self) -> dict[str, str]:
        return {"topic": self.topic, "added_at": as_utc(self.added_at).isoformat(), "added_by": self.added_by}


def incomplete_reason(engine: Engine, topic_id: int) -> str | None:
    """Why a topic is not fully judged (None when it is), by the rule `services.simulation.simulate.queues_from_store`
    replays by: the topic's newest queue has documents and a label for each of them under the ``latest``
    policy."""
    with engine.connect() as conn:
        newest = conn.execute(select(Queue.id, Queue.name, Queue.size).where(Queue.topic_id == topic_id)
                              .order_by(Queue.id.desc()).limit(1)).first()
        if newest is None:
            return "no queue"
        queue_id, name, size = int(newest[0]), str(newest[1]), int(newest[2])
        if size == 0:
            return f"queue {name!r} is empty"
        unjudged = int((load_queue_labels(conn, queue_id, topic_id, size).labels < 0).sum())
    if unjudged:
        return f"{unjudged:,} of {size:,} documents of queue {name!r} unjudged"
    return None


def _topic_ids(engine: Engine, topics: Sequence[str]) -> dict[str, int]:
    names = list(dict.fromkeys(validation.topic_name(t) for t in topics))
    if not names:
        raise Invalid("name at least one topic")
    with engine.connect() as conn:
        found = {str(n): int(i) for n, i in conn.execute(select(Topic.name, Topic.id).where(Topic.name.in_(names)))}
    unknown = [n for n in names if n not in found]
    if unknown:
        raise NotFound(f"unknown topic{'s' if len(unknown) > 1 else ''}: {', '.join(unknown)}")
    return {n: found[n] for n in names}


def add_topics(engine: Engine, topics: Sequence[str], *, reviewer: str) -> list[PortfolioEntry]:
    """Mark completed topics as the portfolio; a topic already in it stays as it was. Every named topic must be
    fully judged: otherwise nothing is added and the error names each incomplete topic and why."""
    reviewer = validation.reviewer_name(reviewer)
    ids = _topic_ids(engine, topics)
    incomplete = [(name, reason) for name, topic_id in ids.items()
                  if (reason := incomplete_reason(engine, topic_id)) is not None]
    if incomplete:
        raise Invalid("only fully judged topics can join the portfolio; not fully judged: "
                      + "; ".join(f"{name} ({reason})" for name, reason in incomplete))
    now = utc_now()
    with engine.begin() as conn:
        present = set(conn.execute(select(PortfolioTopic.topic_id)
                                   .where(PortfolioTopic.topic_id.in_(list(ids.values())))).scalars())
        new = [{"topic_id": i, "added_at": now, "added_by": reviewer} for i in ids.values() if i not in present]
        if new:
            conn.execute(insert(PortfolioTopic), new)
    return [e for e in list_portfolio(engine) if e.topic in ids]


def remove_topics(engine: Engine, topics: Sequence[str]) -> list[str]:
    """Take topics out of the portfolio (their judgments are untouched); a named topic that is not in it is
    refused, and then nothing is removed."""
    ids = _topic_ids(engine, topics)
    with engine.begin() as conn:
        present = set(conn.execute(select(PortfolioTopic.topic_id)
                                   .where(PortfolioTopic.topic_id.in_(list(ids.values())))).scalars())
        absent = [n for n, i in ids.items() if i not in present]
        if absent:
            raise NotFound(f"not in the portfolio: {', '.join(absent)}")
        conn.execute(delete(PortfolioTopic).where(PortfolioTopic.topic_id.in_(list(ids.values()))))
    return list(ids)


def list_portfolio(engine: Engine) -> list[PortfolioEntry]:
    """The portfolio's topics by name."""
    stmt = (select(Topic.name, PortfolioTopic.added_at, PortfolioTopic.added_by)
            .join(Topic, Topic.id == PortfolioTopic.topic_id).order_by(Topic.name))
    with engine.connect() as conn:
        return [PortfolioEntry(str(n), at, str(by)) for n, at, by in conn.execute(stmt)]


class CalibrationInterrupted(Invalid):
    """Ctrl-C (or a progress callback's KeyboardInterrupt) stopped the replays: a partial calibration is not
    stored."""


def latest_calibration(engine: Engine) -> CalibrationRecord | None:
    """The newest calibration, or None when the portfolio was never calibrated."""
    with engine.connect() as conn:
        return evidence_calibration.latest_calibration(conn)


def calibrated_rules(design: str) -> tuple[str, ...]:
    """The rules a calibration replays under ``design``: those the engine marks heuristic or invalid (no
    guarantee of their own, or a one-look guarantee repeated), in the engine's order."""
    from reviewdepth.estimation.replay import RULES

    return tuple(name for name, info in RULES.items() if info.kind in CALIBRATED_KINDS and design in info.designs)


def calibration_plan(*, target: Target | str = DEFAULT_TARGET, confidence: float = DEFAULT_CONFIDENCE,
                     replicates: int = DEFAULT_REPLICATES, seed: int = DEFAULT_SEED, look_every: int = DEFAULT_LOOKS,
                     design: str = "none", sample_size: int = 0, every: int = 0) -> ReplayPlan:
    """The checked replay plan of a calibration (`Invalid` naming the option)."""
    from reviewdepth.services.simulation.simulate import build_plan

    return build_plan(design=design, rules=calibrated_rules(design), target=target, confidence=confidence,
                      look_every=look_every, replicates=replicates, seed=seed, sample_size=sample_size, every=every)


def calibrate(engine: Engine, *, target: Target | str = DEFAULT_TARGET, confidence: float = DEFAULT_CONFIDENCE,
              replicates: int = DEFAULT_REPLICATES, seed: int = DEFAULT_SEED, look_every: int = DEFAULT_LOOKS,
              design: str = "none", sample_size: int = 0, every: int = 0, workers: int = 1, reviewer: str = "cli",
              progress: Progress | None = None) -> CalibrationRecord:
    """Replay every portfolio topic (`services.simulation.simulate.run_simulation`) with the heuristic and invalid
    rules of
    the design and store one calibration: per rule, the failure rate = failures / stops (a failure: recall at the
    stop < τ) with its two-sided Clopper–Pearson interval at ``confidence``, and the median costs
    reviewed / d* and (reviewed + sampled) / d*, d* the oracle depth. An interrupted run stores nothing."""
    from reviewdepth.services.simulation.simulate import SimulationSource, queues_from_store, run_simulation

    reviewer = validation.reviewer_name(reviewer)
    plan = calibration_plan(target=target, confidence=confidence, replicates=replicates, seed=seed,
                            look_every=look_every, design=design, sample_size=sample_size, every=every)
    entries = list_portfolio(engine)
    if not entries:
        raise Invalid("the portfolio is empty: add completed topics first (reviewdepth portfolio add TOPIC…)")
    queues = queues_from_store(engine, [e.topic for e in entries])
    report = run_simulation(SimulationSource(tuple(queues), "portfolio"), plan, workers=workers, progress=progress)
    if report.partial:
        raise CalibrationInterrupted("the calibration was interrupted; nothing was stored")
    body = report.to_dict()
    settings: dict[str, Any] = body["settings"]
    tau = settings["target"]
    rules = [{**rule, "text": calibration_text(rule, tau, float(plan.confidence), int(settings["topics"]))}
             for rule in body["rules"]]
    now = utc_now()
    with engine.begin() as conn:
        new_id = conn.execute(insert(Calibration).values(
            target=tau, confidence=float(plan.confidence), topic_count=int(settings["topics"]),
            settings=json.dumps(settings, ensure_ascii=False), summary=json.dumps(rules, ensure_ascii=False),
            created_at=now, created_by=reviewer).returning(Calibration.id)).scalar_one()
    return CalibrationRecord(int(new_id), tau, float(plan.confidence), int(settings["topics"]), settings, rules, now,
                             reviewer)


def _percent(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f} %"


def _ratio(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}×"


def calibration_text(rule: dict[str, Any], target: str, confidence: float, topics: int) -> str:
    """One line for people: how often the rule stopped short of τ on the portfolio, its failure rate with the
    interval, its median cost relative to the oracle depth, and how many topics that rests on."""
    runs, stops, failures = int(rule["runs"]), int(rule["stops"]), int(rule["failures"])
    over = f"{runs:,} past reviews" if runs == topics else f"{runs:,} replays of {topics:,} past reviews"
    low, high = rule.get("failure_low"), rule.get("failure_high")
    interval = "—" if low is None or high is None else f"{100 * low:.1f}–{100 * high:.1f} %"
    rate = "no stop" if not stops else (f"failure {_percent(rule.get('failure_rate'))}, {100 * confidence:g} % CI "
                                        f"{interval}")
    never = f"; never stopped in {int(rule['never_stopped']):,}" if rule.get("never_stopped") else ""
    reviewed, total = rule.get("reviewed_ratio_median"), rule.get("total_ratio_median")
    sampled = "" if total == reviewed else f" ({_ratio(total)} with samples)"
    percent = float(100 * Fraction(target))
    return (f"stopped below {percent:g} % recall in {failures:,} of {over} ({stops:,} stops: {rate}{never});"
            f" median cost {_ratio(reviewed)} the oracle depth{sampled}; on {topics:,} topics")
