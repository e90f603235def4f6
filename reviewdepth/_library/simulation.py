"""`simulate`: stopping rules replayed on fully judged rankings, the use case behind ``reviewdepth simulate``
(`reviewdepth.services.simulation.simulate`)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from reviewdepth._library.results import ReviewResult


def simulate(rankings: Any = None, *, qrels: str | os.PathLike[str] | None = None,
             run: str | os.PathLike[str] | None = None, order: str = "given", design: str = "none",
             rules: Sequence[str] = (), target: float | str = 0.95, confidence: float = 0.95, look_every: int = 100,
             replicates: int = 100, seed: int = 0, sample_size: int = 0, every: int = 0, review_cost: float = 1.0,
             sample_cost: float = 1.0, workers: int = 1) -> ReviewResult:
    """Replay stopping rules on fully judged rankings, as ``reviewdepth simulate`` does: per rule, how often it
    stopped short of the target recall, recall at stop and cost against the oracle depth.

    Args:
        rankings: the rankings' labels in review order (1 relevant, 0 not): one sequence or array, or a mapping
            of topic names to them. Leave it out to give ``qrels`` and ``run`` instead.
        qrels: a qrels file, with ``run``: replay the run's topics with these labels.
        run: a TREC or CLEF TAR run file.
        order: with ``run``: ``given`` (file order) or ``trec_eval`` (by score).
        design: ``none``, ``rest``, ``population``, ``audit`` or ``planned``.
        rules: the rules to replay (default: every rule of the design).
        target: target recall, strictly between 0 and 1.
        confidence: confidence level.
        look_every: the team looks after every K ranked documents.
        replicates: seeded replicates per topic.
        seed: seed (the same seed gives the same figures).
        sample_size: ``rest``/``population`` designs: documents in the sample.
        every: ``audit`` design: one audit document per K ranked documents.
        review_cost: cost of a document judged in review.
        sample_cost: cost of a document judged in a sample or audit.
        workers: worker processes (the figures do not depend on it).

    Returns:
        A `ReviewResult` of kind ``simulation``; ``.model`` is the CLI's `SimulationReport`.
    """
    import numpy as np

    from reviewdepth.formats.errors import InputError
    from reviewdepth.services.errors import ServiceError
    from reviewdepth.services.simulation.simulate import (
        NamedQueue,
        SimulationSource,
        build_plan,
        file_source,
        run_simulation,
    )

    if (rankings is None) == (qrels is None or run is None):
        raise ValueError("simulate: give rankings, or qrels and run (not both)")
    try:
        plan = build_plan(design=design, rules=rules, target=str(target), confidence=confidence,
                          look_every=look_every, replicates=replicates, seed=seed, sample_size=sample_size,
                          every=every, review_cost=review_cost, sample_cost=sample_cost)
        if rankings is None:
            assert qrels is not None and run is not None
            source = file_source(os.fspath(qrels), os.fspath(run), order=order)
        else:
            named = rankings if isinstance(rankings, Mapping) else {"topic": rankings}
            queues = []
            for name, labels in named.items():
                values = np.asarray(labels.to_list() if hasattr(labels, "to_list") else labels)
                if values.ndim != 1 or not np.isin(values, (0, 1)).all():
                    raise ValueError(f"rankings: topic {name!r}: labels must be 1 or 0 for every document")
                queues.append(NamedQueue(str(name), values.astype(np.int8), "labels given"))
            source = SimulationSource(tuple(queues), "rankings given as labels")
        report = run_simulation(source, plan, workers=workers)
    except InputError as exc:
        raise ValueError(exc.describe()) from None
    except ServiceError as exc:
        raise ValueError(str(exc)) from None
    return ReviewResult("simulation", report)
