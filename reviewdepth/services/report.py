"""Build the depth report for a stored topic and queue: evidence from the store, numbers from the pure core."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import numpy as np
from sqlalchemy import Engine, exists, func, select

from reviewdepth import __version__
from reviewdepth.estimation import intervals, relevant, stopping
from reviewdepth.estimation.agreement import corrected_relevant_count
from reviewdepth.estimation.depth_unknown import depth_under_unknown_r
from reviewdepth.measures import tar
from reviewdepth.measures.depth import depth_to_recall
from reviewdepth.measures.suite import MeasureSpec, evaluate_ranked
from reviewdepth.measures.tar_suite import TopicRun, clean_topic
from reviewdepth.report.model import Report
from reviewdepth.services.agreement import agreement_of
from reviewdepth.services.conflicts import conflicts_of
from reviewdepth.services.errors import Invalid
from reviewdepth.services.judgments import topic_id_of
from reviewdepth.services.prisma import prisma_counts
from reviewdepth.services.qc import qc_result
from reviewdepth.services.queues import find_queue, queue_labels, ranked_from_labels
from reviewdepth.services.samples import SampleRecord, load_samples, reviewed_prefix
from reviewdepth.store.labels import POLICIES
from reviewdepth.store.loaders import QueueLabels
from reviewdepth.store.models import ImportRecord, Judgment, Topic
from reviewdepth.store.votes import load_votes, reviewers_per_document

DEFAULT_TARGETS = ("0.80", "0.90", "0.95", "0.99")
MAX_CURVE_POINTS = 800
PREFIX_CUTOFFS = (5, 10, 20, 50, 100, 200, 500, 1000)


@dataclasses.dataclass
class ReportOptions:
    """The settings a report is computed with; all of them are printed in it."""

    queue: str | None = None
    targets: Sequence[str] = DEFAULT_TARGETS
    confidence: float = 0.95
    interval: str = "clopper-pearson"
    policy: str = "latest"
    as_of: int | None = None
    target_rule: str = "ceil"
    known_relevant: int | None = None
    scores_are_probabilities: bool = False
    # whether reviewers screened blind and independently (PRISMA); reviewdepth cannot observe it
    independent: bool | None = None

    def validate(self) -> None:
        for t in self.targets:
            try:
                value = Fraction(str(t))
            except (ValueError, ZeroDivisionError):
                raise Invalid(f"target {t!r} is not a number") from None
            if not 0 < value <= 1:
                raise Invalid(f"target recall must be in (0, 1], not {t}")
        if not 0 < self.confidence < 1:
            raise Invalid(f"confidence must be in (0, 1), not {self.confidence}")
        if self.interval not in intervals.INTERVAL_METHODS:
            raise Invalid(f"interval must be one of {', '.join(intervals.INTERVAL_METHODS)}, not {self.interval!r}")
        if self.policy not in POLICIES:
            raise Invalid(f"policy must be one of {', '.join(POLICIES)}, not {self.policy!r}")
        if self.target_rule not in ("ceil", "tar_eval", "asreview"):
            raise Invalid("target rule must be ceil, tar_eval or asreview")


def _thin(n: int) -> np.ndarray:
    """Indices 0..n-1 thinned to at most MAX_CURVE_POINTS, always keeping the last."""
    if n <= MAX_CURVE_POINTS:
        return np.arange(n)
    return np.unique(np.concatenate((np.linspace(0, n - 1, MAX_CURVE_POINTS).round().astype(np.int64), [n - 1])))


def _estimate_dict(estimate: relevant.Estimate) -> dict[str, Any]:
    out = dataclasses.asdict(estimate)
    out["assumptions"] = list(estimate.assumptions)
    return out


def _latest(samples: list[SampleRecord], frames: tuple[str, ...]) -> SampleRecord | None:
    complete = [s for s in samples if s.frame in frames and s.complete]
    return complete[-1] if complete else None


def build_report(engine: Engine, topic: str, options: ReportOptions) -> Report:
    """Collect the evidence (labels as of a judgment id, samples) and compute every section of the report."""
    options.validate()
    topic_id = topic_id_of(engine, topic)
    _, row = find_queue(engine, topic, options.queue)
    with engine.connect() as conn:
        last_id = conn.execute(select(func.max(Judgment.id)).where(Judgment.topic_id == topic_id)).scalar_one()
        population_size = conn.execute(select(Topic.population_size).where(Topic.id == topic_id)).scalar_one()
    as_of = options.as_of if options.as_of is not None else (int(last_id) if last_id is not None else None)
    _, labels = queue_labels(engine, topic, row.name, options.policy, None if as_of is None else str(as_of))
    samples = load_samples(engine, topic, row.name, labels=labels, as_of=as_of)

    fig = _figures(labels, samples, population_size, options)
    size, population, reviewed, rel_queue = fig.size, fig.population, fig.reviewed, fig.rel_queue
    found_prefix, found_topic, judged_ranks, fully_judged = (fig.found_prefix, fig.found_topic, fig.judged_ranks,
                                                             fig.fully_judged)
    estimates, basis, targets, depth_rows, current = fig.estimates, fig.basis, fig.targets, fig.depth_rows, fig.current
    srs, elusion, confidence = fig.srs, fig.elusion, options.confidence

    evidence = _stopping(labels.labels[:reviewed], reviewed, population, targets, confidence, srs, elusion,
                         found_prefix, rel_queue)

    # measures over the reviewed prefix (unjudged = non-relevant, as trec_eval; R = judged relevant of the topic)
    measures: dict[str, Any] = {}
    if reviewed:
        prefix = dataclasses.replace(labels, size=reviewed, labels=labels.labels[:reviewed])
        spec = MeasureSpec.parse(["map", "Rprec", "recip_rank", "P." + ",".join(map(str, PREFIX_CUTOFFS)),
                                  "recall." + ",".join(map(str, PREFIX_CUTOFFS))])
        result = evaluate_ranked(ranked_from_labels(prefix, topic), spec, run_id=row.run_tag or row.name)
        measures = {k: v for k, v in result.summary.items() if k not in ("runid", "num_q")}
    completed = None
    if fully_judged:
        values = clean_topic(TopicRun.plain(topic, rel_queue.astype(np.int64), population, found_topic)).values
        completed = {k: v for k, v in values.items()}

    summary = {
        "queue_size": size, "population": population,
        "population_source": "topic" if population_size else "queue size",
        "ordering": row.ordering, "reviewed": reviewed, "judged": len(judged_ranks),
        "relevant_found": int(np.count_nonzero(rel_queue)), "relevant_found_in_reviewed": found_prefix,
        "relevant_judged_in_topic": found_topic,
        "deepest_judged_rank": int(judged_ranks[-1]) + 1 if len(judged_ranks) else None,
        "last_relevant_rank": tar.last_rel(rel_queue[:reviewed].astype(np.int64)) if found_prefix else None,
        "run_threshold_rank": row.threshold_rank, "fully_judged": fully_judged,
    }
    sample_rows = [{"id": s.id, "frame": s.frame, "frame_definition": s.frame_definition, "size": s.size,
                    "frame_size": s.frame_size, "seed": s.seed, "complete": s.complete, "missing": len(s.missing),
                    "relevant": s.relevant if s.complete else None} for s in samples]
    settings = {"targets": targets, "stopping_target": stopping_target(targets), "confidence": confidence,
                "interval": options.interval, "independent_screening": options.independent,
                "label_policy": options.policy, "ordering": row.ordering, "as_of_judgment": as_of,
                "target_rule": options.target_rule, "depth_basis": basis.method}
    provenance = {"software": f"reviewdepth {__version__}", "queue_source": row.source,
                  "input_digests": _digests(engine, topic_id, as_of), "sample_seeds": [s.seed for s in samples]}
    gain, pr = _curves(labels.labels[:reviewed], basis, depth_rows)
    quality, prisma = _review_quality(engine, topic, topic_id, row.name, labels, samples, fig, population_size,
                                      options, as_of)
    return Report(topic=topic, queue=row.name, summary=summary, estimates=[_estimate_dict(e) for e in estimates],
                  depth_basis=basis.method, depth=depth_rows, current=current,
                  stopping=[_evidence_dict(e) for e in evidence], measures=measures, completed_review=completed,
                  samples=sample_rows, settings=settings, provenance=provenance, gain=gain, precision_recall=pr,
                  review_quality=quality, prisma=prisma)


@dataclasses.dataclass
class _Figures:
    """The depth figures of one labelling of the queue (the report's policy, or another for the sensitivity)."""

    size: int
    population: int
    reviewed: int
    rel_queue: np.ndarray
    found_prefix: int
    found_topic: int
    judged_ranks: np.ndarray
    fully_judged: bool
    estimates: list[relevant.Estimate]
    basis: relevant.Estimate
    targets: list[str]
    depth_rows: list[dict[str, Any]]
    current: dict[str, Any]
    srs: SampleRecord | None
    elusion: SampleRecord | None


def _figures(labels: QueueLabels, samples: list[SampleRecord], population_size: int | None,
             options: ReportOptions) -> _Figures:
    size = labels.size
    population = int(population_size) if population_size else size
    reviewed = reviewed_prefix(labels)
    rel_queue = labels.labels == 1
    prefix_rel_ranks = np.flatnonzero(rel_queue[:reviewed]) + 1
    found_prefix = len(prefix_rel_ranks)
    found_topic = labels.relevant_total
    judged_ranks = np.flatnonzero(labels.labels >= 0)
    fully_judged = labels.judged_total >= population and len(judged_ranks) == size and population == size
    confidence = options.confidence

    # |R| estimates by every method the evidence allows
    estimates: list[relevant.Estimate] = [relevant.estimate_judged(found_topic)]
    known = options.known_relevant if options.known_relevant is not None else (found_topic if fully_judged else None)
    if known is not None:
        estimates.append(relevant.estimate_known(known))
    srs = _latest(samples, ("all",))
    if srs is not None:
        estimates.append(relevant.estimate_srs(srs.relevant, srs.size, srs.frame_size, found=found_topic,
                                               confidence=confidence, method=options.interval))
    elusion = _latest(samples, ("unreviewed", "below-rank"))
    if elusion is not None and elusion.below_rank is not None and elusion.below_rank <= reviewed:
        found_above = int(np.count_nonzero(rel_queue[:elusion.below_rank]))
        estimates.append(relevant.estimate_elusion(found_above, population - elusion.below_rank, elusion.size,
                                                   elusion.relevant, confidence=confidence))
    strata = _strata(samples, reviewed, rel_queue, size, population)
    if strata is not None:
        estimates.append(relevant.estimate_stratified(strata, confidence=confidence))
    if srs is not None and srs.relevant > 0:
        positives = np.array(srs.positive_ranks, dtype=np.int64)
        estimates.append(relevant.direct_recall(int(np.count_nonzero(positives <= reviewed)), len(positives),
                                                confidence=confidence))

    basis = _choose(estimates)
    targets = [str(t) for t in options.targets]
    if basis.method == "known":
        rel_ranks_all = np.flatnonzero(rel_queue) + 1
        rows = depth_to_recall(rel_ranks_all, int(basis.point), targets, population=population,
                               rule=options.target_rule)
        depth_rows = [dict(dataclasses.asdict(r), reached=r.depth is not None and r.depth <= reviewed)
                      for r in rows]
    else:
        sample_positives = np.array(srs.positive_ranks, dtype=np.int64) if srs is not None else None
        unknown = depth_under_unknown_r(prefix_rel_ranks, reviewed, basis, [float(Fraction(t)) for t in targets],
                                        sample_positive_ranks=sample_positives, confidence=confidence)
        depth_rows = [dataclasses.asdict(u) for u in unknown]

    # recall and precision at the current depth
    current: dict[str, Any] = {"depth": reviewed, "relevant_found": found_prefix,
                               "precision": found_prefix / reviewed if reviewed else None,
                               "recall_basis": basis.method}
    if basis.upper is not None and basis.point > 0:
        current["recall"] = found_prefix / basis.point
        current["recall_lower"] = found_prefix / basis.upper if basis.upper else None
        current["recall_upper"] = found_prefix / basis.lower if basis.lower else None
    if reviewed:
        lo, hi = intervals.proportion_interval(found_prefix, reviewed, confidence, options.interval)
        current["precision_lower"], current["precision_upper"] = lo, hi

    return _Figures(size, population, reviewed, rel_queue, found_prefix, found_topic, judged_ranks, fully_judged,
                    estimates, basis, targets, depth_rows, current, srs, elusion)


def _review_quality(engine: Engine, topic: str, topic_id: int, queue: str, labels: QueueLabels,
                    samples: list[SampleRecord], fig: _Figures, population_size: int | None, options: ReportOptions,
                    as_of: int | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """Several reviewers and QC: conflicts, agreement, QC error rates, the figures under every label policy, and
    the PRISMA counts. Documents judged by one reviewer only cost one grouped count."""
    with engine.connect() as conn:
        per_record = reviewers_per_document(conn, topic_id, as_of)
        multi = load_votes(conn, topic_id, as_of, min_reviewers=2) if max(per_record, default=0) >= 2 else []
        qc = [qc_result(conn, topic_id, s, options.policy, as_of, options.confidence, options.interval)
              for s in samples if s.frame == "judged"]
    conflicts = conflicts_of(multi)
    resolved = sum(c.status == "resolved" for c in conflicts)
    quality: dict[str, Any] = {
        "documents_with_several_reviewers": len(multi), "conflicts": len(conflicts), "conflicts_open":
        len(conflicts) - resolved, "conflicts_resolved": resolved,
        "agreement": agreement_of(multi, options.confidence).as_dict() if multi else None,
        "qc_samples": [q.as_dict() for q in qc],
    }
    sensitivity: list[dict[str, Any]] = []
    if multi or qc:
        tau = float(Fraction(stopping_target(fig.targets)))
        for policy in POLICIES:
            figures = fig
            if policy != options.policy:
                _, other = queue_labels(engine, topic, queue, policy, None if as_of is None else str(as_of))
                other_samples = load_samples(engine, topic, queue, labels=other, as_of=as_of)
                figures = _figures(other, other_samples, population_size, dataclasses.replace(options, policy=policy))
            sensitivity.append(_sensitivity_row(policy, figures, tau))
        rated = [q for q in qc if q.rates is not None]
        if rated:
            rates = rated[-1].rates
            assert rates is not None
            point, lower, upper = corrected_relevant_count(fig.found_topic, labels.nonrelevant_total, rates)
            in_prefix = corrected_relevant_count(fig.found_prefix, fig.reviewed - fig.found_prefix, rates)
            sensitivity.append({
                "policy": f"{options.policy}, corrected by QC sample {rated[-1].sample_id}",
                "relevant_judged": point, "relevant_judged_lower": lower, "relevant_judged_upper": upper,
                "relevant_in_reviewed": in_prefix[0], "note": "expected relevant among the judged documents if the "
                "QC error rates hold for every judged document (the QC reviewer taken as right); depths not "
                "recomputed"})
    quality["policy_sensitivity"] = sensitivity
    prisma = prisma_counts(
        population=fig.population, population_stated=bool(population_size), included=labels.relevant_total,
        excluded=labels.nonrelevant_total, reviewed_prefix=fig.reviewed, reviewers_per_record=per_record,
        conflicts=len(conflicts), conflicts_resolved=resolved, independent=options.independent,
        policy=options.policy)
    return quality, prisma.as_dict()


def _sensitivity_row(policy: str, fig: _Figures, tau: float) -> dict[str, Any]:
    row = next((r for r in fig.depth_rows if abs(float(r["target"]) - tau) < 1e-12), {})
    return {"policy": policy, "relevant_judged": fig.found_topic, "relevant_in_reviewed": fig.found_prefix,
            "depth_basis": fig.basis.method, "relevant_estimate": fig.basis.point,
            "relevant_lower": fig.basis.lower, "relevant_upper": fig.basis.upper,
            "recall": fig.current.get("recall"), "recall_lower": fig.current.get("recall_lower"),
            "recall_upper": fig.current.get("recall_upper"), "target": tau,
            "depth": row.get("depth", row.get("point_depth")), "conservative_depth": row.get("conservative_depth")}


def _choose(estimates: list[relevant.Estimate]) -> relevant.Estimate:
    """The |R| estimate depths are computed from: known > elusion > stratified > SRS > judged (lower bound)."""
    order = ["known", "elusion", "stratified", "srs", "judged"]
    usable = [e for e in estimates if e.method in order]
    return min(usable, key=lambda e: order.index(e.method))


def _strata(samples: list[SampleRecord], reviewed: int, rel_queue: np.ndarray, size: int,
            population: int) -> list[relevant.Stratum] | None:
    """Reviewed prefix (exact) plus complete rank-band samples, when together they cover the whole queue."""
    bands = sorted((s for s in samples if s.frame == "ranks" and s.complete), key=lambda s: s.from_rank or 0)
    if not bands or population != size:
        return None
    strata = [relevant.Stratum("reviewed", reviewed, reviewed, int(np.count_nonzero(rel_queue[:reviewed])),
                               reviewed=True, found=True)] if reviewed else []
    covered = reviewed
    for s in bands:
        assert s.from_rank is not None and s.to_rank is not None
        if s.from_rank != covered + 1:
            return None
        strata.append(relevant.Stratum(f"ranks {s.from_rank}-{s.to_rank}", s.frame_size, s.size, s.relevant,
                                       reviewed=False, found=False))
        covered = s.to_rank
    return strata if covered == size else None


def stopping_target(targets: list[str]) -> str:
    """The target the stopping rules are evaluated for: 0.95 when asked for, else the largest target below 1."""
    below_one = [t for t in targets if Fraction(t) < 1]
    if "0.95" in targets or not below_one:
        return "0.95"
    return max(below_one, key=Fraction)


def _stopping(prefix_labels: np.ndarray, reviewed: int, population: int, targets: list[str], confidence: float,
              srs: SampleRecord | None, elusion: SampleRecord | None, found_prefix: int,
              rel_queue: np.ndarray) -> list[stopping.StoppingEvidence]:
    tau = stopping_target(targets)
    alpha = 1 - confidence
    rel = (prefix_labels == 1).astype(np.int64)
    positives = np.array(srs.positive_ranks if srs is not None else [], dtype=np.int64)
    out = [
        stopping.target_method(positives, reviewed, tau=tau, alpha=alpha),
        stopping.qbcb(positives, reviewed, tau=tau, alpha=alpha),
        stopping.direct_recall_rule(positives, reviewed, tau=tau, alpha=alpha),
    ]
    if elusion is not None and elusion.below_rank is not None and elusion.below_rank <= reviewed:
        cut = elusion.below_rank
        urn = np.array([1 if label == 1 else 0 for label in elusion.labels], dtype=np.int64)
        labels = np.concatenate(((rel_queue[:cut]).astype(np.int64), urn))
        out.append(stopping.hypergeometric_test(labels, population, tau=tau, alpha=alpha, urn_start=cut))
        out.append(stopping.elusion_rule(int(rel_queue[:cut].sum()), population - cut, elusion.size,
                                         elusion.relevant, tau=tau, alpha=alpha, reviewed=cut))
    else:
        out.append(stopping.hypergeometric_test(rel, population, tau=tau, alpha=alpha))
    out.append(stopping.knee_method(rel))
    out.append(stopping.budget_method(rel, population))
    return out


def _evidence_dict(evidence: stopping.StoppingEvidence) -> dict[str, Any]:
    out = dataclasses.asdict(evidence)
    out["assumptions"] = list(evidence.assumptions)
    return out


def _digests(engine: Engine, topic_id: int, as_of: int | None) -> list[str]:
    # EXISTS per import (few) over ix_judgments_import_id, rather than a join over every judgment of the topic
    used = exists().where(Judgment.import_id == ImportRecord.id, Judgment.topic_id == topic_id)
    if as_of is not None:
        used = used.where(Judgment.id <= as_of)
    stmt = select(ImportRecord.digest).where(used).distinct()
    with engine.connect() as conn:
        return sorted(str(d) for d in conn.execute(stmt).scalars())


def _curves(prefix_labels: np.ndarray, basis: relevant.Estimate,
            depth_rows: list[dict[str, Any]]) -> tuple[dict[str, Any], dict[str, Any]]:
    n = len(prefix_labels)
    cg = np.cumsum(prefix_labels == 1)
    keep = _thin(n)
    r_point = basis.point if basis.point > 0 else None
    gain: dict[str, Any] = {"depth": (keep + 1).tolist(), "found": cg[keep].tolist(), "relevant_estimate": r_point,
                            "relevant_lower": basis.lower, "relevant_upper": basis.upper,
                            "markers": [{"target": r.get("target"), "depth": r.get("depth", r.get("point_depth")),
                                         "conservative": r.get("conservative_depth")} for r in depth_rows]}
    pr: dict[str, Any] = {}
    if n and r_point:
        ranks = np.arange(1, n + 1, dtype=np.float64)
        precision = cg / ranks
        interpolated = np.maximum.accumulate(precision[::-1])[::-1]
        pr = {"recall": (cg[keep] / r_point).tolist(), "precision": precision[keep].tolist(),
              "interpolated_precision": interpolated[keep].tolist()}
    return gain, pr
