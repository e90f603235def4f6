"""The result of ``reviewdepth eval --suite tar``: a result type below the services (which build it) and the
renderers (which print it), so neither imports the other."""

from __future__ import annotations

from dataclasses import dataclass, field

from reviewdepth.measures.tar_suite import Style, Value


@dataclass
class TarEvaluation:
    """Per-topic values (output order), the ``ALL`` line, the print layout and the scripts' notices.

    ``events`` lists, in output order, ``("topic", qid)`` blocks and the notices the official scripts print
    between them: ``("skip", "Skipping topic: X")`` and ``("duplicate", "X Duplicate DOC")``.
    """

    compat: str
    layout: list[tuple[str, str, Style]]
    per_query: dict[str, dict[str, Value]]
    summary: dict[str, Value]
    events: list[tuple[str, str]] = field(default_factory=list)
    run_id: str = ""
    # per evaluated topic: 1/0 per reviewed document in review order, and R (the gain curves of `plot --run`;
    # not printed)
    review_order: dict[str, tuple[list[int], int]] = field(default_factory=dict, repr=False)

    @property
    def measures(self) -> list[str]:
        return list(dict.fromkeys(key for _, key, _ in self.layout if key != "topic_id"))

    @property
    def notices(self) -> list[str]:
        return [text for kind, text in self.events if kind != "topic"]
