"""The headline is codes and numbers in the core (`assessment.Headline`) and one sentence in `report.wording`: each
next step's sentence, with its counts, range and scope where it names them."""

from __future__ import annotations

from dataclasses import replace

from reviewdepth.estimation.assessment import AnswerStatus, Basis, Headline, NextStep, ReachedBy
from reviewdepth.report.wording import headline

NOT_REACHED = Headline(0.95, AnswerStatus.NOT_REACHED, 0.95, None, reviewed=1_200)


def test_every_headline_in_words() -> None:
    cases = [
        (replace(NOT_REACHED, status=AnswerStatus.REACHED, step=NextStep.STATE_RECALL,
                 reached_by=ReachedBy(Basis.ELUSION, 0.95)),
         "95% recall: reached, by the elusion test (one-sided 95%)"),
        (replace(NOT_REACHED, step=NextStep.CERTIFY_FLOOR, step_counts=(476,), upper=126.6),
         "95% recall: not reached (not certified: the point estimate is met; R ≤ 127 at 95% one-sided); to "
         "certify: at least 476 more judged documents"),
        (replace(NOT_REACHED, step=NextStep.CERTIFY, upper=40.0),
         "95% recall: not reached (not certified: the point estimate is met; R ≤ 40 at 95% one-sided)"),
        (replace(NOT_REACHED, step=NextStep.REVIEW_MORE, step_counts=(1_500, 2_700), more_range=(900, 3_100)),
         "95% recall: not reached; about 1,500 more documents [900–3,100] after the 1,200 reviewed, to rank 2,700"),
        (replace(NOT_REACHED, step=NextStep.SCREEN_MORE, step_counts=(1_500,)),
         "95% recall: not reached; about 1,500 more documents after the 1,200 screened, in the same random order"),
        (replace(NOT_REACHED, step=NextStep.REVIEW_ON, scope="queue"),
         "95% recall of the queue's relevant documents: not reached"),
        (replace(NOT_REACHED, status=AnswerStatus.UNKNOWN, step=NextStep.DRAW_SAMPLE, guess=2_000),
         "95% recall: unknown (no random sample); heuristic guess: 2,000 more documents"),
        (replace(NOT_REACHED, status=AnswerStatus.UNKNOWN, no_target=True), "unknown: no target"),
    ]
    for figures, words in cases:
        assert headline(figures) == words
    assert {c.step for c, _ in cases} >= set(NextStep)


def test_the_certification_cost_takes_the_floors_place() -> None:
    floor = replace(NOT_REACHED, step=NextStep.CERTIFY_FLOOR, step_counts=(476,), upper=126.6)
    words = headline(floor, "about 3,293 more judged documents")
    assert words.endswith("one-sided); to certify: about 3,293 more judged documents")
    assert "at least 476" not in words
