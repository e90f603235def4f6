"""The one decision of a topic (`reviewdepth.report.status_model.TopicStatus`), from the report's assessment (its
random samples, read once) and the audit stream's monitor (anytime-valid). The report, ``watch``, the monitor route
and the dashboard call :func:`topic_status` with what they computed, so the same evidence gives the same words.
Pure: codes in (`AnswerStatus`, `Basis`, `Validity`), the decision's words out; no service reads the words back."""

from __future__ import annotations

from reviewdepth.estimation.assessment import AnswerStatus, Assessment, Basis
from reviewdepth.estimation.percent import percent
from reviewdepth.estimation.target import Target
from reviewdepth.report.status_model import AUDIT_BASIS, StatusFigure, TopicStatus, Validity
from reviewdepth.report.wording import with_topic

__all__ = ["AUDIT_BASIS", "audit_figure", "sample_figure", "topic_status"]
NO_BOUND = ("no random sample and no audit stream, so recall has no bound: draw a sample of the rest or start an "
            "audit stream (reviewdepth plan TOPIC compares the paths)")
NO_AUDIT = "no audit stream, so no anytime-valid bound"
NO_BOUND_STEP = ("draw a random sample of the unreviewed rest (reviewdepth sample plan TOPIC) or start an audit "
                 "stream (reviewdepth sample stream start TOPIC --every auto); reviewdepth plan TOPIC compares the "
                 "paths")

BEFORE_REVIEW_STEP = ("nothing is reviewed yet: draw a richness sample of the collection and judge it (reviewdepth "
                      "plan TOPIC gives its size), then reviewdepth plan TOPIC prices reviewing in ranked order "
                      "against a cutoff chosen now; or start reviewing in rank order")


def sample_figure(assessment: Assessment) -> StatusFigure | None:
    """The report's figure for its basis (None when no random sample or known R bounds recall)."""
    basis = assessment.basis.method
    if basis == Basis.JUDGED:
        return None
    figure = next((r for r in assessment.recall if r.basis == basis), None)
    reached = assessment.headline.status == AnswerStatus.REACHED
    if basis == Basis.KNOWN:
        value = None if figure is None else figure.point
        return StatusFigure(Basis.KNOWN, "R known", Validity.EXACT, value, 1.0, reached)
    uses = {u.sample_id: u for u in assessment.samples}
    if basis == Basis.ELUSION and assessment.rest_sample is not None:
        use = uses.get(assessment.rest_sample)
        held = f", {use.in_rest:,} documents of the unreviewed rest" if use is not None else ""
        evidence = f"rest sample {assessment.rest_sample}{held}"
    elif basis == Basis.SRS and assessment.population_sample is not None:
        evidence = f"whole-queue sample {assessment.population_sample}"
    elif basis == Basis.SCREENED:
        evidence = f"the {assessment.reviewed:,} screened documents, declared screened in random order"
    elif basis == Basis.STRATIFIED:
        evidence = "rank-band samples covering the rest"
    else:
        evidence = "random sample"
    lower = None if figure is None else figure.lower_one_sided
    return StatusFigure(basis, evidence, Validity.ONE_LOOK, lower, assessment.headline.confidence, reached)


def audit_figure(stream_id: int, judged: int, recall_lower: float, confidence: float,
                 certified: bool, missed_at_most: int | None = None, unreviewed: int | None = None) -> StatusFigure:
    """The audit stream's monitor as a figure."""
    return StatusFigure(AUDIT_BASIS, f"stream {stream_id}, {judged:,} audit documents judged", Validity.ANYTIME_VALID,
                        recall_lower, confidence, certified, missed_at_most, unreviewed)


def topic_status(target: Target, confidence: float, reviewed: int, relevant_found: int, *,
                 sample: StatusFigure | None, sample_status: AnswerStatus | None, audit: StatusFigure | None,
                 sample_headline: str | None = None, sample_next: str | None = None,
                 audit_next: str | None = None, topic: str | None = None) -> TopicStatus:
    """The decision on one basis fixed in advance: the audit stream when there is one, else the samples' answer
    (``sample_status``, with its ``sample_headline`` and ``sample_next`` step); module docstring of `status_model`
    for why not both. ``audit_next``: the monitor's next step, the decision's when the audit stream decides.
    The headline and next step always come from the evidence that decided, so no door can pair one basis's
    status with another's next step."""
    figures = [f for f in (audit, sample) if f is not None]
    missing: list[str] = []
    headline: str | None = None
    next_step: str | None = None
    if sample is not None and sample.validity == Validity.EXACT:  # R known: nothing to estimate
        status, decided = (sample_status or AnswerStatus.UNKNOWN), sample.basis
        headline, next_step = sample_headline, sample_next
    elif audit is not None:
        status, decided = (AnswerStatus.REACHED if audit.certifies else AnswerStatus.NOT_REACHED), AUDIT_BASIS
        next_step = audit_next
    elif sample is not None:
        status, decided = (sample_status or AnswerStatus.UNKNOWN), sample.basis
        headline, next_step = sample_headline, sample_next
        if sample.validity != Validity.EXACT:
            missing.append(NO_AUDIT)
    else:
        status, decided = AnswerStatus.UNKNOWN, None
        missing.append(NO_BOUND)
        next_step = BEFORE_REVIEW_STEP if reviewed == 0 else NO_BOUND_STEP
    if headline is None or (not headline.endswith(status) and f": {status}" not in headline):
        # the deciding evidence gave no sentence of its own (or one for another status): the status word alone
        headline = f"{_percent_recall(target)}: {status}"
    if topic is not None:
        # every sentence names the topic, ready to run, at every door (the listing printed "plan TOPIC")
        missing = [with_topic(m, topic) for m in missing]
        headline = with_topic(headline, topic)
        next_step = None if next_step is None else with_topic(next_step, topic)
    return TopicStatus(target.text, confidence, status, decided, reviewed, relevant_found, figures, missing,
                       headline, next_step)


def _percent_recall(target: Target) -> str:
    return f"recall {target.text}" if target.written_as_fraction else f"{percent(float(target))} recall"
