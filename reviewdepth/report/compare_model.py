"""The result of ``reviewdepth compare``: every run's mean per measure over the queries they share, and each
run's paired test against the baseline (the first run). Rendered by `report.render.render` (table, json, csv,
latex, markdown)."""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field


@dataclass(frozen=True)
class ComparisonCell:
    """One run on one measure. The baseline's own cell has no test (``p_value`` etc. None). ``difference`` is
    mean(run − baseline) over the shared queries, ``effect_size`` the paired d_z, ``p_adjusted`` the p-value
    after the correction over the measure's comparisons; ``significant`` is ``p_adjusted < alpha``."""

    measure: str
    run: str
    mean: float
    difference: float | None = None
    effect_size: float | None = None
    statistic: float | None = None
    p_value: float | None = None
    p_adjusted: float | None = None
    significant: bool = False


@dataclass
class Comparison:
    """Runs (labels in the order given, the first the baseline), measures, and one cell per (measure, run)."""

    suite: str
    test: str
    correction: str
    alpha: float
    runs: list[str]
    measures: list[str]
    queries: list[str]
    cells: list[ComparisonCell]
    permutations: int | None = None
    seed: int | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def baseline(self) -> str:
        return self.runs[0]

    def cell(self, measure: str, run: str) -> ComparisonCell:
        for c in self.cells:
            if c.measure == measure and c.run == run:
                return c
        raise KeyError((measure, run))

    def method(self) -> str:
        """One sentence saying what was tested, as every format prints it."""
        if self.test == "randomization":
            test = (f"two-sided paired randomization test ({self.permutations or 0:,} permutations, seed "
                    f"{self.seed}; exact when 2^n is fewer)")
        else:
            test = {"t": "paired two-sided t test", "wilcoxon": "two-sided Wilcoxon signed-rank test"}[self.test]
        unit = "topics" if self.suite == "tar" else "queries"
        correction = {"holm": "Holm", "bonferroni": "Bonferroni", "none": "no"}[self.correction]
        return (f"{test} of each run against the baseline {self.baseline} over {len(self.queries)} {unit}, "
                f"{correction} correction over each measure's {len(self.runs) - 1} comparisons; "
                f"* = significant at alpha {self.alpha:g}; effect size d_z = mean difference / sd of differences")

    def to_dict(self) -> dict[str, object]:
        def clean(value: object) -> object:
            return None if isinstance(value, float) and not math.isfinite(value) else value

        return {"suite": self.suite, "baseline": self.baseline, "runs": self.runs, "measures": self.measures,
                "test": self.test, "correction": self.correction, "alpha": self.alpha,
                "permutations": self.permutations, "seed": self.seed, "queries": self.queries,
                "method": self.method(), "notes": self.notes,
                "cells": [{k: clean(v) for k, v in asdict(c).items()} for c in self.cells]}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2) + "\n"
