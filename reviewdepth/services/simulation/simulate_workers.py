"""What a worker process of `reviewdepth.services.simulation.simulate` runs: kept apart so that a spawned worker
imports the
replay engine only (~0.3 s), not the store, formats and report layers the use case needs (~0.7 s)."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from reviewdepth.estimation.replay import ReplayPlan, RuleRuns, replay_chunk

_state: dict[str, Any] = {}


def start(labels: list[npt.NDArray[np.int8]], keys: list[tuple[int, ...]], plan: ReplayPlan) -> None:
    """A worker's start: the topics once (not with every job). Ctrl-C is the parent's to handle, so the workers
    ignore it (no traceback from each of them) and the parent cancels what is left."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _state.update(labels=labels, keys=keys, plan=plan)


def job(topic: int, chunk: int) -> dict[str, RuleRuns]:
    """One chunk of one topic (`replay_chunk`)."""
    return replay_chunk(_state["labels"][topic], _state["plan"], chunk, _state["keys"][topic])
