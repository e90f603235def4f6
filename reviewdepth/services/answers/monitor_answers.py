"""The answers of ``GET /topics/{topic}/monitor`` kept per process while their topic is unchanged.

A monitor polled every few seconds by a dashboard or a script is computed again only when something it rests on
moved. What "moved" means is `topic_marker`: the topic's own change marker (`reviewdepth.services.answers.monitor.
change_markers`: its judgment chain, newest judgment, queue and sample, its audit streams' positions and state,
its screening order and conflict rule), its population size, and the length of the evidence chain (every stored
or changed topic, queue, sample or audit stream of any topic lengthens it). Any write to the topic changes one of
them, so a kept answer is never served after a write it does not reflect; a write elsewhere at most costs one
recomputation.

The marker is read before the monitor is built: a write in between makes the kept answer newer than its marker,
and the next request, which reads the newer marker, builds it again — never the reverse."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import Any

from sqlalchemy import Engine, select

from reviewdepth.services.answers.monitor import change_markers
from reviewdepth.store.models import EvidenceChain, Topic

ANSWERS_KEPT = 256  # monitor answers kept per process (one per topic and set of parameters), least recent dropped


def topic_marker(engine: Engine, topic: str) -> Hashable | None:
    """What changes whenever anything the topic's monitor reads changes; None for an unknown topic."""
    with engine.connect() as conn:
        row = conn.execute(select(Topic.id, Topic.population_size).where(Topic.name == topic)).first()
        if row is None:
            return None
        topic_id, population = int(row[0]), row[1]
        evidence = conn.execute(select(EvidenceChain.length, EvidenceChain.head)).first()
        marker = change_markers(conn, [topic_id]).get(topic_id)
    return (topic_id, population, None if evidence is None else tuple(evidence), marker)


class MonitorAnswers:
    """Monitor answers (the JSON object) per request key, each with the `topic_marker` it was built under;
    thread-safe, at most ``entries`` kept."""

    def __init__(self, entries: int = ANSWERS_KEPT) -> None:
        self._kept: OrderedDict[Hashable, tuple[Hashable, dict[str, Any]]] = OrderedDict()
        self._size = entries
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get(self, key: Hashable, marker: Hashable) -> dict[str, Any] | None:
        with self._lock:
            found = self._kept.get(key)
            if found is None or found[0] != marker:
                self.misses += 1
                return None
            self._kept.move_to_end(key)
            self.hits += 1
            return found[1]

    def put(self, key: Hashable, marker: Hashable, answer: dict[str, Any]) -> None:
        with self._lock:
            self._kept[key] = (marker, answer)
            self._kept.move_to_end(key)
            while len(self._kept) > self._size:
                self._kept.popitem(last=False)
