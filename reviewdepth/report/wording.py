"""Words a person reads beside the core's codes, written once for every door (report, monitor, their renderers)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from reviewdepth.estimation.assessment import NextStep

# a stopping rule's kind (`reviewdepth.estimation.rules.KINDS`) in words, wherever a report prints it, and in the
# terminal's short form (its table must fit 80 columns)
KIND_LABELS = {"certified": "certified", "heuristic": "heuristic (no guarantee)",
               "invalid": "invalid as used (one-look rule repeated)"}
SHORT_KINDS = {"certified": "cert.", "heuristic": "heur.", "invalid": "inv.*"}


def stop_label(kind: str, stop_now: bool | None) -> str:
    """A stopping rule's "stop now" in words: ``yes`` / ``no`` / ``—`` (not applicable, or not enough evidence),
    and for a rule with no guarantee (kind ``heuristic``, or anything not ``certified``) a "yes" that says so, so
    that it cannot be read as the certified rules' "yes" beside it."""
    if stop_now is None:
        return "—"
    if not stop_now:
        return "no"
    return "yes" if kind == "certified" else f"yes ({kind}, no guarantee)"


_COMMAND_WITH_TOPIC = re.compile(r"(reviewdepth [a-z][a-z -]*?) TOPIC\b")


def with_topic(text: str, topic: str) -> str:
    """``text`` with each ``reviewdepth <command> TOPIC`` naming ``topic`` (quoted for a shell when it needs it),
    so that a next step can be copied and run as it stands."""
    import shlex

    return _COMMAND_WITH_TOPIC.sub(lambda m: f"{m.group(1)} {shlex.quote(topic)}", text)


def next_step(step: NextStep | str | None, counts: tuple[int, ...] = ()) -> str | None:
    """The depth answer's next step (`reviewdepth.estimation.assessment.NextStep`) in words, its counts filled in;
    commands name the topic as ``TOPIC`` (`with_topic` puts the topic's name there)."""
    words = {
        "state recall": "to state recall after stopping, judge a fresh random sample of the rest",
        "certify floor": "certify: judge at least {0:,} more documents outside the reviewed set on the cheapest path "
                         "(reviewdepth plan TOPIC gives it, with its expected cost)",
        "certify": "certify: reviewdepth plan TOPIC gives the cheapest path and its expected cost",
        "screen more": "screen about {0:,} more in the same random order, then judge a fresh random sample of the "
                       "rest (reviewdepth sample plan TOPIC)",
        "review more": "review about {0:,} more (to rank {1:,}), then judge a fresh random sample of the rest "
                       "(reviewdepth sample plan TOPIC)",
        "review on": "review on; then judge a fresh sample of the rest, or use the sample plan",
        "draw sample": "draw a random sample of the unreviewed rest: reviewdepth sample plan TOPIC",
    }
    return None if step is None else words[str(step)].format(*counts)


# the commands a next step names, by code (a door's next step says which one and for which topic)
COMMANDS = {"start stream": "reviewdepth sample stream {topic} --every auto"}


def command(code: str, topic: str) -> str:
    """The command line ``code`` (:data:`COMMANDS`) for ``topic``, as a person copies it."""
    return COMMANDS[code].format(topic=topic)
