"""The answer of ``reviewdepth simulate``: how each stopping rule did when completed reviews were replayed. Plain data
for the renderers (`reviewdepth.report.simulation_render`) and both doors; `reviewdepth.services.simulate` fills
it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from reviewdepth.report.model import JsonResult

QUANTILES = ("p05", "p25", "p50", "p75", "p95")


@dataclass
class SimulationReport(JsonResult):
    """Per rule, over every replicate of every topic: runs (= topics × replicates done), stops, runs that never
    stopped, failures (stops with recall < target) and their rate failures / stops with its two-sided
    Clopper–Pearson interval at the confidence level, the quantiles of recall at stop, and the medians of the cost
    relative to the oracle depth (the smallest depth whose prefix holds ceil(target × R) relevant documents):
    reviewed / oracle and (reviewed + sampled) / oracle.

    ``settings``: source, design (kind, sample_size, every), rules, target, confidence, looks_every, replicates
    asked and done, seed, topics, partial. ``charts``: per rule, the (cost, recall) points of its stopped runs (at
    most 400, evenly spaced). ``topics``: size, R, the relevant needed, the oracle depth, documents taken as
    non-relevant without a judgment."""

    settings: dict[str, Any]
    failure_meaning: str
    rules: list[dict[str, Any]]
    topics: list[dict[str, Any]]
    charts: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def partial(self) -> bool:
        return bool(self.settings.get("partial"))
