"""`depth`, `assess`, `plan` and `monitor`: the depth report, the stop plan and the monitor's status of one review
given as labels in review order.

The labels go into a scratch store — a SQLite file in a temporary folder, migrated as ``reviewdepth db upgrade``
migrates one — through the same use cases the CLI's imports call (a ranking, the reviewer's judgments, a random
sample drawn by the store and coded from the labels), and the result is built by the use case the CLI's command
calls (``report``, ``plan``, ``watch``). The figures are therefore those of the CLI on the same judgments; the
scratch store is deleted before the function returns."""

from __future__ import annotations

import math
import os
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reviewdepth._library.results import ReviewResult

if TYPE_CHECKING:
    from sqlalchemy import Engine

TOPIC = "topic"
QUEUE = "queue"
REVIEWER = "reviewer"
SAMPLER = "sampler"

Labels = Any  # a sequence, numpy array, pandas or polars Series of 1/0/True/False, None or NaN (not judged)


@dataclass(frozen=True)
class _Review:
    labels: tuple[int | None, ...]
    doc_ids: tuple[str, ...]
    reviewed: int


def _label(value: Any, position: int) -> int | None:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if isinstance(value, bool):
        return int(value)
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = math.nan
    if number in (0.0, 1.0):
        return int(number)
    raise ValueError(f"labels: position {position}: {value!r} is not 1, 0 or None (not judged)")


def _review(labels: Labels, reviewed: int | None, doc_ids: Sequence[str] | None) -> _Review:
    values = list(labels.to_list() if hasattr(labels, "to_list") else labels)
    if not values:
        raise ValueError("labels: empty; give one label per document of the ranking, in review order")
    checked = tuple(_label(v, i) for i, v in enumerate(values, start=1))
    if reviewed is None:
        reviewed = next((i for i, v in enumerate(checked) if v is None), len(checked))
    if not 0 <= reviewed <= len(checked):
        raise ValueError(f"reviewed: must lie in 0..{len(checked)} (the documents ranked), not {reviewed}")
    unjudged = [i + 1 for i, v in enumerate(checked[:reviewed]) if v is None]
    if unjudged:
        raise ValueError(f"labels: position {unjudged[0]} is within the first {reviewed} (reviewed) but has no label")
    ids = tuple(str(d) for d in doc_ids) if doc_ids is not None else tuple(f"d{i}" for i in range(1, len(checked) + 1))
    if len(ids) != len(checked):
        raise ValueError(f"doc_ids: {len(ids)} ids for {len(checked)} labels")
    if len(set(ids)) != len(ids):
        raise ValueError("doc_ids: an id is repeated")
    return _Review(checked, ids, reviewed)


@lru_cache(maxsize=1)
def _template() -> Path:
    """A migrated, empty SQLite store, made once per process (migrating costs more than the rest of a report)."""
    from reviewdepth.store import migrate
    from reviewdepth.store.engine import create_engine_for

    folder = Path(tempfile.mkdtemp(prefix="reviewdepth-template-"))
    path = folder / "template.sqlite3"
    engine = create_engine_for(f"sqlite:///{path}")
    try:
        migrate.upgrade(engine)
    finally:
        engine.dispose()
    return path


def _unlabelled(rank: int, what: str) -> ValueError:
    return ValueError(f"labels: the {what} holds rank {rank}, which has no label; give the labels of the ranks it "
                      "draws (or of the whole ranking)")


def _served_review(engine: Engine, review: _Review, every: int, seed: int | None) -> None:
    """The review as a team does it with an audit stream (``sample stream start --every K``, then ``next`` and
    ``judge``): batches served by the store, review documents in rank order with the stream's audit documents
    between them, each judged from the labels in its role, until ``review.reviewed`` documents are judged in review."""
    from reviewdepth.services.review.audit_stream import create_stream, next_documents
    from reviewdepth.services.review.judgments import record_judgments

    create_stream(engine, TOPIC, every=every, seed=seed, reviewer=SAMPLER)
    done = 0
    while done < review.reviewed:
        # at most the review documents still to judge: audit documents take places in a batch, so no batch serves a
        # review document beyond the reviewed prefix (none is left served and unjudged)
        batch = next_documents(engine, TOPIC, count=min(1000, review.reviewed - done))
        if not batch.documents:
            break
        judged: dict[str, list[tuple[str, str]]] = {"review": [], "audit": []}
        for served in batch.documents:
            rank = served.rank if served.rank is not None else review.doc_ids.index(served.doc_id) + 1
            label = review.labels[rank - 1]
            if label is None:
                raise _unlabelled(rank, "audit stream" if served.role == "audit" else "review")
            judged[served.role].append((served.doc_id, str(label)))
            done += served.role == "review"
        for role, items in judged.items():
            if items:
                record_judgments(engine, TOPIC, items, reviewer=REVIEWER if role == "review" else SAMPLER, role=role,
                                 source="library")


@contextmanager
def _scratch_store(review: _Review, *, sample_size: int = 0, seed: int | None = None, audit_every: int = 0,
                   audit_seed: int | None = None) -> Iterator[Engine]:
    """An engine on a scratch store holding the review: the ranking as the topic's queue, the first ``reviewed``
    documents judged in review order (with ``audit_every``, served with an audit stream's documents between them,
    `_served_review`) and, with ``sample_size``, a random sample of the unreviewed rest drawn by the store
    (``sample draw --frame unreviewed``) and coded from the labels."""
    from reviewdepth.services.files.imports import import_run
    from reviewdepth.services.review.judgments import record_judgments
    from reviewdepth.services.review.samples import draw_sample
    from reviewdepth.store.engine import create_engine_for

    folder = Path(tempfile.mkdtemp(prefix="reviewdepth-"))
    try:
        path = folder / "review.sqlite3"
        shutil.copyfile(_template(), path)
        run = folder / "ranking.run"
        size = len(review.doc_ids)
        run.write_text("".join(f"{TOPIC} Q0 {doc} {rank} {size - rank + 1} ranking\n"
                               for rank, doc in enumerate(review.doc_ids, start=1)), encoding="utf-8")
        engine = create_engine_for(f"sqlite:///{path}")
        try:
            import_run(engine, os.fspath(run), queue_name=QUEUE)
            if audit_every:
                _served_review(engine, review, audit_every, audit_seed)
            elif review.reviewed:
                record_judgments(engine, TOPIC, [(d, str(label)) for d, label in
                                                 zip(review.doc_ids[:review.reviewed], review.labels, strict=False)],
                                 reviewer=REVIEWER, source="library")
            if sample_size:
                drawn = draw_sample(engine, TOPIC, sample_size, frame="unreviewed", seed=seed)
                missing = [rank for rank in drawn.ranks if review.labels[rank - 1] is None]
                if missing:
                    raise ValueError(f"labels: the sample drawn with seed {drawn.seed} holds rank {missing[0]}, which "
                                     f"has no label ({len(missing)} drawn documents unlabelled); label every drawn "
                                     f"rank (`sample_ranks`) or give the labels of the whole ranking")
                record_judgments(engine, TOPIC, [(review.doc_ids[r - 1], str(review.labels[r - 1]))
                                                 for r in drawn.ranks], reviewer=SAMPLER, role="sample",
                                 source="library")
            yield engine
        finally:
            engine.dispose()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _problem(exc: Exception) -> ValueError:
    describe = getattr(exc, "describe", None)
    return ValueError(describe() if callable(describe) else str(exc))


@contextmanager
def _errors() -> Iterator[None]:
    from reviewdepth.formats.errors import InputError
    from reviewdepth.services.errors import ServiceError

    try:
        yield
    except (InputError, ServiceError) as exc:
        raise _problem(exc) from None


def _targets(target: float | str | Sequence[float | str]) -> list[str]:
    values = [target] if isinstance(target, (str, int, float)) else list(target)
    return [str(t) for t in values]


def depth(labels: Labels, target: float | str | Sequence[float | str] = (0.80, 0.90, 0.95, 0.99), *,
          confidence: float = 0.95, doc_ids: Sequence[str] | None = None) -> ReviewResult:
    """The depth report of a completed review: every document of the ranking judged, ``labels`` in review order
    (1 relevant, 0 not). The same report as ``reviewdepth report``: for each target recall the depth that reaches
    it, with the stopping evidence.

    Args:
        labels: 1/0 (or True/False) per document, in review order: a list, numpy array, or pandas/polars Series.
        target: the target recall, or several.
        confidence: the confidence level of the intervals.
        doc_ids: the documents' ids in the same order (default ``d1``, ``d2``, …).

    Returns:
        A `ReviewResult` of kind ``report``; ``.model`` is the CLI's `Report`.
    """
    review = _review(labels, None, doc_ids)
    if review.reviewed < len(review.labels):
        raise ValueError(f"labels: position {review.reviewed + 1} has no label; `depth` is for a completed review "
                         "(use `assess` for one in progress)")
    return assess(labels, target=target, confidence=confidence, doc_ids=doc_ids)


def assess(labels: Labels, *, reviewed: int | None = None, sample_size: int = 0, seed: int | None = None,
           target: float | str | Sequence[float | str] = (0.80, 0.90, 0.95, 0.99), confidence: float = 0.95,
           interval: str = "hypergeometric", doc_ids: Sequence[str] | None = None) -> ReviewResult:
    """The depth report of a review in progress, as ``reviewdepth report`` computes it: how deep to review for each
    target recall, how sure that is, and whether the evidence says stop.

    Args:
        labels: one value per document of the ranking, in review order: 1/0 (True/False) when judged, None or NaN
            when not.
        reviewed: the documents reviewed in order (default: the labels before the first unjudged one).
        sample_size: draw a random sample of this many unreviewed documents (``sample draw --frame unreviewed``)
            and code it from ``labels``, which must then hold every drawn rank (`sample_ranks` lists them).
        seed: the sample's seed (the same seed draws the same ranks).
        target: target recall, or several.
        confidence: confidence level.
        interval: ``hypergeometric`` (exact) or ``clopper-pearson``.
        doc_ids: the documents' ids (default ``d1``, ``d2``, …).

    Returns:
        A `ReviewResult` of kind ``report``; ``.model`` is the CLI's `Report`, ``.status`` its decision.
    """
    from reviewdepth.services.answers.report import ReportOptions, build_report

    review = _review(labels, reviewed, doc_ids)
    with _errors(), _scratch_store(review, sample_size=sample_size, seed=seed) as engine:
        report = build_report(engine, TOPIC, ReportOptions(targets=_targets(target), confidence=confidence,
                                                           interval=interval))
    return ReviewResult("report", report)


def plan(labels: Labels, *, reviewed: int | None = None, sample_size: int = 0, seed: int | None = None,
         target: float | str = 0.95, confidence: float = 0.95, power: float = 0.8, review_cost: float = 1.0,
         sample_cost: float = 1.0, produce_cost: float | None = None,
         doc_ids: Sequence[str] | None = None) -> ReviewResult:
    """The cheapest defensible stop, as ``reviewdepth plan`` computes it: the floor, the certified paths open now
    with their expected cost and chance, and the recommended one.

    Args:
        labels: the labels in review order, as `assess` takes them.
        reviewed: the documents reviewed in order, as `assess` takes it.
        sample_size: a random sample of the unreviewed rest, as `assess` draws it.
        seed: the sample's seed.
        doc_ids: the documents' ids (default ``d1``, ``d2``, …).
        target: the target recall to certify, strictly between 0 and 1.
        confidence: confidence level.
        power: least chance a one-look sample path must have of certifying to be recommended.
        review_cost: cost of a document judged in review.
        sample_cost: cost of a document judged in a sample.
        produce_cost: cost of a document produced unreviewed (offers the production-cutoff path).

    Returns:
        A `ReviewResult` of kind ``plan``; ``.model`` is the CLI's `TopicStopPlan`.
    """
    from reviewdepth.services.answers.stop_plan import topic_stop_plan

    review = _review(labels, reviewed, doc_ids)
    with _errors(), _scratch_store(review, sample_size=sample_size, seed=seed) as engine:
        result = topic_stop_plan(engine, TOPIC, target=str(target), confidence=confidence, power=power,
                                 review_cost=review_cost, sample_cost=sample_cost, produce_cost=produce_cost)
    return ReviewResult("plan", result)


def monitor(labels: Labels, *, reviewed: int | None = None, sample_size: int = 0, seed: int | None = None,
            audit_every: int = 0, audit_seed: int | None = None, target: float | str = 0.95,
            confidence: float = 0.95, doc_ids: Sequence[str] | None = None) -> ReviewResult:
    """The monitor's status of the review, as ``reviewdepth watch`` computes it: the topic status (one decision)
    with the lower bound on recall the evidence certifies.

    Args:
        labels: the labels in review order, as `assess` takes them.
        reviewed: the documents reviewed in order, as `assess` takes it.
        sample_size: a random sample of the unreviewed rest, as `assess` draws it.
        seed: the sample's seed.
        doc_ids: the documents' ids (default ``d1``, ``d2``, …).
        audit_every: review with an audit stream of one audit document per this many reviewed
            (``sample stream start --every K``): the store serves the review in rank order with the stream's random
            audit documents between them, each coded from ``labels`` (which must hold every audited rank).
        audit_seed: the audit stream's seed.
        target: the target recall.
        confidence: confidence level.

    Returns:
        A `ReviewResult` of kind ``monitor``; ``.model`` is the CLI's `MonitorReport`.
    """
    from reviewdepth.services.answers.monitor import build_monitor

    review = _review(labels, reviewed, doc_ids)
    with _errors(), _scratch_store(review, sample_size=sample_size, seed=seed, audit_every=audit_every,
                                   audit_seed=audit_seed) as engine:
        result = build_monitor(engine, TOPIC, target=str(target), confidence=confidence)
    return ReviewResult("monitor", result)


def sample_ranks(labels: Labels, sample_size: int, seed: int, *, reviewed: int | None = None) -> list[int]:
    """The ranks (1-based) a sample of ``sample_size`` unreviewed documents drawn with ``seed`` holds: the ones to
    code before `assess`, `plan` or `monitor` with the same sample size and seed."""
    from reviewdepth.services.review.samples import draw_sample

    review = _review(labels, reviewed, None)
    blank = _Review(review.labels[:review.reviewed] + (0,) * (len(review.labels) - review.reviewed), review.doc_ids,
                    review.reviewed)
    with _errors(), _scratch_store(blank) as engine:
        return list(draw_sample(engine, TOPIC, sample_size, frame="unreviewed", seed=seed).ranks)
