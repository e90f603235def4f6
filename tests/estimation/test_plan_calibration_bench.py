"""The plan's calibration bench (bench/plan_calibration_bench.py) on one CLEF state, so it cannot rot: a decision
state is planned, followed on the true labels, and scored; the true chance of a one-look path is the exact
hypergeometric probability at the true counts (checked here against scipy directly)."""

from __future__ import annotations

import importlib.util
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from reviewdepth.estimation.stopping import elusion_rule

from ..conftest import shared_data

BENCH = Path(__file__).resolve().parents[2] / "bench" / "plan_calibration_bench.py"


def _bench():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("plan_calibration_bench", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_one_state_is_planned_followed_and_scored() -> None:
    shared_data("clef-tar-2017", "runs", "waterloo.A-rank-normal.gz")  # skips without the shared data
    bench = _bench()
    (topic, labels), = bench.queues("clef-tar-2017", "waterloo.A-rank-normal.gz", "qrel_abs_test.txt.gz", 1)
    outcome = bench.one_state(("2017 waterloo A", topic, labels, "0.9", 0.2, 2, 0))
    assert outcome is not None and outcome.topic == topic
    assert outcome.realised_cost > 0 and outcome.cheapest_realised <= outcome.realised_cost + 1e-9
    assert outcome.stated_low <= outcome.stated_cost <= outcome.stated_high


@pytest.mark.parametrize("missed", [0, 3, 12])
def test_the_true_chance_is_the_exact_hypergeometric_one(missed: int) -> None:
    bench = _bench()
    rest = np.zeros(2000, dtype=np.int8)
    rest[:missed] = 1
    found, size, tau = 150, 600, Fraction("0.9")
    best = max(y for y in range(size + 1) if elusion_rule(found, 2000, size, y, tau, 0.05).stop_now) if \
        elusion_rule(found, 2000, size, 0, tau, 0.05).stop_now else -1
    expected = 0.0 if best < 0 else stats.hypergeom.cdf(best, 2000, missed, size)
    assert bench._true_chance(found, rest, size, tau) == pytest.approx(expected)
