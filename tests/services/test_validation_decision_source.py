"""The validation document's decision block is the topic's one decision (`answer.topic_status`) in words, not a
verdict of its own: given a report whose decision says something else than the answer's copies of it, the block
follows the decision."""

from __future__ import annotations

import dataclasses

from sqlalchemy import Engine

from reviewdepth.estimation.assessment import AnswerStatus
from reviewdepth.services.answers.report import ReportOptions, build_report
from reviewdepth.services.answers.validation import validation_of
from reviewdepth.services.review.samples import draw_sample

from .test_monitor_service import judge, topic_with_review


def test_the_decision_block_follows_the_topic_status(engine: Engine) -> None:
    topic_with_review(engine)
    judge(engine, draw_sample(engine, "T", 15, frame="unreviewed", seed=4).doc_ids, "sample")
    report = build_report(engine, "T", ReportOptions(targets=["0.8"]))
    decision = report.answer.topic_status
    block = validation_of(report, {}).decision
    assert (block.status, block.headline, block.next_step, block.status_text, block.decided_by) == (
        decision.status, decision.lead, decision.next_step, decision.text, decision.decided_by)
    # another decision on the same report: every word of the block moves with it, none stays with the answer's
    flipped = AnswerStatus.REACHED if decision.status != AnswerStatus.REACHED else AnswerStatus.NOT_REACHED
    other = dataclasses.replace(decision, status=flipped, headline=f"80 % recall: {flipped} (other)",
                                next_step="another step")
    moved = dataclasses.replace(report, answer=dataclasses.replace(report.answer, topic_status=other))
    block = validation_of(moved, {}).decision
    assert (block.status, block.headline, block.next_step, block.status_text) == (
        other.status, other.lead, other.next_step, other.text)
    assert block.status != report.answer.status and block.headline != report.answer.text
