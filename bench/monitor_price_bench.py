"""The price of validity at every look (docs/estimation.md §5d): on each CLEF topic of a run, how many more
documents the anytime-valid monitor judges than the one-look floor n_min, when the audit finds no relevant
document outside the reviewed prefix.

At a reviewed depth d holding F relevant documents of a queue of N, the monitor certifies τ after m stream
elements (`stop_plan.Certifier.elements_needed`, zero positives outside the prefix), of which m·(N − d)/N fall
outside the prefix and are judged; the one-look floor is n_min(F, N − d) (`count_bound.certification_floor`). The
ratio of the two is printed per topic at the hindsight-floor depth (the d minimising d + n_min(F(d), N − d) among
depths whose recall is at least τ) and at the oracle depth d* (the first depth holding ⌈τ·R⌉), with the median,
mean and range over topics. Pure core, no database.

    python bench/monitor_price_bench.py [--year 2017] [--run waterloo.A-rank-normal.gz] [--qrels qrel_abs_test.txt.gz]
                                        [--target 0.95] [--confidence 0.95]
"""

from __future__ import annotations

import argparse
import gzip
import math
import statistics
from collections import defaultdict
from fractions import Fraction
from pathlib import Path

import numpy as np

from reviewdepth.estimation.count_bound import certification_floor
from reviewdepth.estimation.stop_plan import Certifier

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"


def _read(year: str, run: str, qrels: str) -> dict[str, tuple[list[str], set[str]]]:
    relevant: dict[str, set[str]] = defaultdict(set)
    with gzip.open(SHARED / f"clef-tar-{year}" / "qrels" / qrels, "rt") as handle:
        for line in handle:
            f = line.split()
            if len(f) == 4 and f[3] != "0":
                relevant[f[0]].add(f[2])
    ranking: dict[str, list[str]] = defaultdict(list)
    with gzip.open(SHARED / f"clef-tar-{year}" / "runs" / run, "rt") as handle:
        for line in handle:
            f = line.split()
            if f:
                ranking[f[0]].append(f[2])
    return {t: (docs, relevant[t]) for t, docs in ranking.items() if relevant[t]}


def _ratio(found: int, depth: int, size: int, tau: Fraction, confidence: float) -> float | None:
    floor = certification_floor(found, size - depth, tau, confidence)
    needed = Certifier(size, tau, confidence).elements_needed(found, 0)
    if not floor or needed is None:
        return None
    return needed * (size - depth) / size / floor


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--year", default="2017")
    parser.add_argument("--run", default="waterloo.A-rank-normal.gz")
    parser.add_argument("--qrels", default="qrel_abs_test.txt.gz")
    parser.add_argument("--target", default="0.95")
    parser.add_argument("--confidence", type=float, default=0.95)
    args = parser.parse_args()
    tau = Fraction(args.target)
    at_floor: list[float] = []
    at_oracle: list[float] = []
    print(f"CLEF {args.year} {args.run} ({args.qrels}), target {args.target}, confidence {args.confidence:g}: "
          "monitor's judged audit documents / n_min, no positive outside the prefix")
    print(f"{'topic':12s} {'N':>6s} {'R':>4s} {'floor d':>8s} {'ratio':>6s} {'d*':>6s} {'ratio':>6s}")
    for topic, (docs, relevant) in sorted(_read(args.year, args.run, args.qrels).items()):
        size = len(docs)
        labels = np.fromiter((d in relevant for d in docs), dtype=bool, count=size)
        found = np.concatenate(([0], np.cumsum(labels)))
        total = int(found[-1])
        if total == 0:
            continue
        need = math.ceil(tau * total)
        oracle = int(np.searchsorted(found, need))
        best = min(range(oracle, size), key=lambda d: d + certification_floor(int(found[d]), size - d, tau,
                                                                              args.confidence))
        floor_ratio = _ratio(int(found[best]), best, size, tau, args.confidence)
        oracle_ratio = _ratio(int(found[oracle]), oracle, size, tau, args.confidence)
        if floor_ratio is not None:
            at_floor.append(floor_ratio)
        if oracle_ratio is not None:
            at_oracle.append(oracle_ratio)
        print(f"{topic:12s} {size:6,d} {total:4d} {best:8,d} {floor_ratio or float('nan'):6.3f} {oracle:6,d} "
              f"{oracle_ratio or float('nan'):6.3f}")
    for name, values in (("at the hindsight-floor depth", at_floor), ("at the oracle depth d*", at_oracle)):
        print(f"{name}: {len(values)} topics, median {statistics.median(values):.3f}, mean "
              f"{statistics.fmean(values):.3f}, range {min(values):.3f}–{max(values):.3f}")


if __name__ == "__main__":
    main()
