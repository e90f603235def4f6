"""Words a person reads beside the core's codes, written once for every door (report, monitor, their renderers)."""

from __future__ import annotations


def stop_label(kind: str, stop_now: bool | None) -> str:
    """A stopping rule's "stop now" in words: ``yes`` / ``no`` / ``—`` (not applicable, or not enough evidence),
    and for a rule with no guarantee (kind ``heuristic``, or anything not ``certified``) a "yes" that says so, so
    that it cannot be read as the certified rules' "yes" beside it."""
    if stop_now is None:
        return "—"
    if not stop_now:
        return "no"
    return "yes" if kind == "certified" else f"yes ({kind}, no guarantee)"
