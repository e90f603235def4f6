"""The answer of ``reviewdepth simulate``: how each stopping rule did when completed reviews were replayed. Plain data
for the renderers (`reviewdepth.report.simulation_render`) and both doors; `reviewdepth.services.simulation.simulate`
fills
it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from reviewdepth.report.model import JsonResult

QUANTILES = ("p05", "p25", "p50", "p75", "p95")
DesignKind = Literal["none", "rest", "population", "audit", "planned"]
RuleKind = Literal["certified", "heuristic", "invalid"]


def _doc(text: str) -> dict[str, str]:
    """A field's description for the API document (`reviewdepth.api.schemas.dataclass_model` reads it)."""
    return {"doc": text}


@dataclass(frozen=True)
class SimulationSettings:
    """What was replayed: the source, the design (kind, sample size, audit rate), the rules, the target and
    confidence, the looks, the replicates asked and done, the seed and the number of topics."""

    source: str
    design: str  # a DesignKind
    sample_size: int
    every: int
    rules: list[str]
    target: str
    confidence: float
    looks_every: int
    replicates: int
    replicates_done: int
    seed: int
    topics: int
    partial: bool
    review_cost: float = field(default=1.0, metadata=_doc("Cost of a document judged in first-pass review."))
    sample_cost: float = field(default=1.0, metadata=_doc(
        "Cost of a document judged in a sample or audit (often a senior reviewer's)."))
    produce_cost: float = field(default=1.0, metadata=_doc(
        "Cost of a document produced without being reviewed: recorded; a replayed review is one-phase (it stops "
        "and withholds the rest), so no run produces one."))


@dataclass(frozen=True)
class RecallQuantiles:
    """Quantiles of recall at the stop over every run (a run that never stopped has recall 1)."""

    p05: float | None
    p25: float | None
    p50: float | None
    p75: float | None
    p95: float | None


@dataclass(frozen=True)
class SimulationRule:
    """One rule over every replicate of every topic."""

    rule: str
    kind: str  # a RuleKind
    description: str
    topics: int
    runs: int
    stops: int
    never_stopped: int
    failures: int
    failure_rate: float | None = field(metadata=_doc("failures / stops; null with no stop."))
    failure_low: float | None
    failure_high: float | None
    recall_at_stop: RecallQuantiles
    reviewed_ratio_median: float | None
    total_ratio_median: float | None
    false_stop_rate: float | None = field(metadata=_doc(
        "failures / runs, every run counted: what a certified rule's guarantee bounds by 1 − confidence."))
    false_stop_low: float | None
    false_stop_high: float | None
    cost_ratio_median: float | None = field(default=None, metadata=_doc(
        "Median over every run of (review cost × reviewed + sample cost × sampled) / (review cost × oracle "
        "depth): the total_ratio_median at the settings' per-role costs."))


@dataclass(frozen=True)
class SimulationTopic:
    """One replayed topic: its size, R, the relevant documents the target needs, the oracle depth, and the
    documents taken as non-relevant without a judgment."""

    topic: str
    origin: str
    size: int
    relevant: int
    needed: int | None
    oracle_depth: int | None
    unlabelled: int


@dataclass(frozen=True)
class SimulationChart:
    """A rule's (cost, recall) points of its stopped runs (at most 400, evenly spaced)."""

    rule: str
    cost: list[float]
    recall: list[float]


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

    settings: SimulationSettings
    failure_meaning: str
    rules: list[SimulationRule]
    topics: list[SimulationTopic]
    charts: list[SimulationChart] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def partial(self) -> bool:
        return self.settings.partial
