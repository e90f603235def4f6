"""The depth answer's next step is a code in the core and words in `report.wording`: every code has its words, and
the counts land where the sentence names them."""

from __future__ import annotations

from reviewdepth.estimation.assessment import NextStep
from reviewdepth.report.wording import next_step, with_topic


def test_every_next_step_code_has_words() -> None:
    for step in NextStep:
        assert next_step(step, (1_234, 5_678))
    assert next_step(None) is None


def test_counts_and_the_topic_are_filled_in() -> None:
    words = next_step(NextStep.REVIEW_MORE, (1_234, 5_678))
    assert words == ("review about 1,234 more (to rank 5,678), then judge a fresh random sample of the rest "
                     "(reviewdepth sample plan TOPIC)")
    assert with_topic(words, "CD 1").endswith("(reviewdepth sample plan 'CD 1')")
    assert "at least 59 more documents" in str(next_step(NextStep.CERTIFY_FLOOR, (59,)))
