"""The queue a judgment was served from, and the refusal of judgments for documents in no queue of the topic.

Every writer of judgments (``judge``, ``judge --file``, ``import csv``, the API) records the queue each judgment
was served from: the one named, else the topic's newest queue (highest id) at the time of writing, else none
(NULL: the topic has no queue). A judgment of a document that no queue of its topic contains is refused, unless
the caller allows it (``--allow-unqueued``, ``"allow_unqueued": true``), because such a judgment would count as
"screened" beyond what was "identified" (PRISMA) and was never served by a ranking. ``import qrels`` is exempt:
qrels are pooled judgments that often lie outside any run.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from sqlalchemy import Connection

from reviewdepth.estimation.plural import noun
from reviewdepth.services.errors import Conflict
from reviewdepth.store.queue_membership import documents_in_no_queue, topic_queues

CLI_HINT = "pass --allow-unqueued"
API_HINT = 'send "allow_unqueued": true'


class ServedQueues:
    """The queues of one topic inside a writer's transaction (queues are never changed once stored)."""

    def __init__(self, conn: Connection, topic_id: int, topic: str, queues: list[tuple[int, str]] | None = None,
                 queued: set[str] | None = None) -> None:
        """``queues`` and ``queued`` (documents known to be in a queue of the topic), when the caller read them
        already (`reviewdepth.store.queue_membership.topic_and_queued`)."""
        self.conn = conn
        self.topic_id = topic_id
        self.topic = topic
        self.queues = topic_queues(conn, topic_id) if queues is None else queues
        self.by_name = {name: queue_id for queue_id, name in self.queues}
        self.queued = queued

    @property
    def newest(self) -> int | None:
        return self.queues[-1][0] if self.queues else None

    def queue_id(self, name: str | None, where: str | None = None) -> int | None:
        """The id of queue ``name`` (None: the newest queue, or None when the topic has none); ``where`` names the
        field in the error."""
        if name is None or name == "":
            return self.newest
        found = self.by_name.get(name)
        if found is None:
            known = ", ".join(n for _, n in self.queues) or "none"
            message = f"topic {self.topic!r} has no queue {name!r} (its queues: {known})"
            raise Conflict(message if where is None else f"{where}: {message}")
        return found

    def require_queued(self, doc_ids: Sequence[str], *, allow_unqueued: bool, hint: str = CLI_HINT,
                       refuse: Callable[[int, str], Exception] | None = None) -> None:
        """Refuse the batch when a document is in no queue of the topic: ``refuse(position, message)`` makes the
        error for the first such document (default: `Conflict` with the message: the request is well formed, the
        topic's queues refuse it)."""
        if allow_unqueued or not doc_ids:
            return
        if not self.queues:
            raise Conflict(f"topic {self.topic!r} has no queue; import one first or {hint}")
        if self.queued is not None and self.queued.issuperset(doc_ids):
            return
        missing = documents_in_no_queue(self.conn, self.topic_id, doc_ids)
        if not missing:
            return
        position = next(i for i, d in enumerate(doc_ids) if d in missing)
        others = len(missing) - 1
        more = f" ({others:,} more such {noun(others, 'document')} in this batch)" if others else ""
        message = (f"document {doc_ids[position]!r} is in no queue of topic {self.topic!r}{more}; {hint} to "
                   "record it anyway")
        raise Conflict(message) if refuse is None else refuse(position, message)
