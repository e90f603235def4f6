"""Live-review bench: the report's depth/recall/stopping answer while the review goes on after a sample is drawn,
on real CLEF TAR 2017/2018/2019 topics and real runs, against the truth from the qrels; and the same numbers for
the report as it was at commit deac6fe (before samples were rolled forward).

Every figure of the current report comes from ``reviewdepth.estimation.assessment.assess`` (the function the report
prints), called per replicate by ``live_review_simulation.simulate_cell`` (bench/); the old figures come from
``live_review_simulation.old_behaviour``, which re-enacts ``git show deac6fe:reviewdepth/services/answers/report.py``
with the
core functions it called (stale elusion estimate at the draw cutoff c0 with the whole sample, two-sided; recall =
F(c1)/R̂; conservative depth from the two-sided upper bound).

A configuration is a topic's queue (the run's order of its lines; labels from the qrels, documents missing from the
qrels count as not relevant; population = queue). Design ``rest``: review to c0 in rank order, draw a simple random
sample of n of ranks c0+1…S, review on to c1 (c0; half-way to d*−1; d*−1, recall just below 0.95; d*; the last
relevant document), assess at each c1. Design ``population``: the sample is drawn from the whole queue at c0.

    python bench/live_review_bench.py [--replicates 2000] [--quick] [--seed 11] [--workers 2] [--only TEXT]

Not run in CI (``tests/estimation/test_live_review_coverage.py`` is the short version). Needs ../shared/data.
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from live_review_simulation import TARGET, CellResult, Count, Rates, needed_for, rates, simulate_cell
from scipy import stats

from reviewdepth.formats.clef import read_clef_run
from reviewdepth.formats.trec import read_qrels

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
ALPHA = 0.05


@dataclass(frozen=True)
class Config:
    """One topic of one real run; c0 at the rank of the ⌈draw_recall·R⌉-th relevant document unless given."""

    label: str
    qrels: str
    run: str
    topic: str
    n: int
    draw_recall: float = 0.7
    c0: int | None = None
    population: bool = False


Q17A, Q17C = "clef-tar-2017/qrels/qrel_abs_test.txt.gz", "clef-tar-2017/qrels/qrel_content_test.txt.gz"
WATERLOO, AMC = "clef-tar-2017/runs/waterloo.A-rank-normal.gz", "clef-tar-2017/runs/amc.run.gz"
Q18C, ECNU = "clef-tar-2018/qrels/task1.test.content.2018.qrels", "clef-tar-2018/runs/ECNU_TASK1_RUN1_BM25.task1.gz"
Q19I, Q19D = ("clef-tar-2019/qrels/full.test.intervention.abs.2019.qrels.gz",
              "clef-tar-2019/qrels/full.test.dta.abs.2019.qrels.gz")
SHEF_I, SHEF_D = ("clef-tar-2019/runs/sheffield/Intervention_sheffield-baseline.gz",
                  "clef-tar-2019/runs/sheffield/DTA_sheffield-baseline.gz")
ILPS = "clef-tar-2019/runs/ilps/abs-hh-ratio-ilps_at_uva.gz"

CONFIGS: tuple[Config, ...] = (
    # |R| < 30
    Config("2017 waterloo abs CD010775", Q17A, WATERLOO, "CD010775", 100),
    Config("2017 waterloo abs CD007431", Q17A, WATERLOO, "CD007431", 400),
    Config("2017 amc content CD009185", Q17C, AMC, "CD009185", 400, 0.5),
    Config("2018 ecnu-bm25 content CD011912", Q18C, ECNU, "CD011912", 100),
    Config("2018 ecnu-bm25 content CD008587", Q18C, ECNU, "CD008587", 400, 0.5),
    Config("2019 sheffield intervention abs CD010239", Q19I, SHEF_I, "CD010239", 100),
    Config("2019 sheffield dta abs CD009044", Q19D, SHEF_D, "CD009044", 1000, 0.6),
    # 30 ≤ |R| < 100
    Config("2017 waterloo abs CD008803", Q17A, WATERLOO, "CD008803", 1000, population=True),
    Config("2017 waterloo abs CD009647", Q17A, WATERLOO, "CD009647", 100, 0.8),
    Config("2018 ecnu-bm25 content CD012179", Q18C, ECNU, "CD012179", 400),
    Config("2019 sheffield intervention abs CD006468", Q19I, SHEF_I, "CD006468", 400, c0=1162, population=True),
    Config("2019 sheffield dta abs CD011686", Q19D, SHEF_D, "CD011686", 1000, 0.6),
    Config("2019 ilps abs-hh intervention CD010558", Q19I, ILPS, "CD010558", 1000),
    # |R| ≥ 100
    Config("2017 waterloo abs CD009925", Q17A, WATERLOO, "CD009925", 400, 0.8, population=True),
    Config("2019 sheffield intervention abs CD012069", Q19I, SHEF_I, "CD012069", 1000, 0.8, population=True),
    Config("2019 sheffield dta abs CD008874", Q19D, SHEF_D, "CD008874", 100, 0.8),
)
QUICK = (0, 3, 7, 10, 14)
POPULATION_N = 1000


def relevant_docs(path: Path) -> dict[bytes, set[bytes]]:
    qrels = read_qrels(path)
    out: dict[bytes, set[bytes]] = {}
    for topic, doc, rel in zip(qrels.qid.tolist(), qrels.docno.values.tolist(), qrels.rel.tolist(), strict=True):
        if rel > 0:
            out.setdefault(topic, set()).add(doc)
    return out


def queue_labels(config: Config, cache: dict[str, dict[bytes, set[bytes]]]) -> npt.NDArray[np.int8]:
    """The run's order of the topic's documents (lines marked NS skipped, repeats skipped), 1 = relevant."""
    if config.qrels not in cache:
        cache[config.qrels] = relevant_docs(DATA / config.qrels)
    relevant = cache[config.qrels].get(config.topic.encode(), set())
    return run_order_labels(read_clef_run(DATA / config.run), config.topic.encode(), relevant)


def run_order_labels(run: Any, topic: bytes, relevant: set[bytes]) -> npt.NDArray[np.int8]:
    """One topic of a read CLEF run in file order, lines marked NS and repeats skipped, 1 = in ``relevant``."""
    rows = np.flatnonzero(run.topic == topic)
    seen: set[bytes] = set()
    labels: list[int] = []
    for doc, action in zip(run.docno.values[rows].tolist(), run.action[rows].tolist(), strict=True):
        if action == b"NS" or doc in seen:
            continue
        seen.add(doc)
        labels.append(1 if doc in relevant else 0)
    return np.array(labels, dtype=np.int8)


def cutoffs(rel: npt.NDArray[np.int8], config: Config) -> tuple[int, list[int]]:
    ranks = np.flatnonzero(rel == 1) + 1
    r = len(ranks)
    d_star = int(ranks[needed_for(TARGET, r) - 1])
    c0 = config.c0 if config.c0 is not None else int(ranks[max(1, math.ceil(config.draw_recall * r)) - 1])
    c0 = min(c0, d_star - 1)
    c1s = sorted({c0, (c0 + d_star - 1) // 2, d_star - 1, d_star, int(ranks[-1])})
    return c0, [c for c in c1s if c0 <= c < len(rel)]


def run_task(task: tuple[int, str, npt.NDArray[np.int8], int, int, list[int], int, int]) -> tuple[int, str,
                                                                                                     CellResult,
                                                                                                     float]:
    index, design, rel, c0, n, c1s, replicates, seed = task
    start = time.process_time()
    cell = simulate_cell(rel, c0, n, c1s, design, replicates, [seed, index, 0 if design == "rest" else 1])
    return index, design, cell, time.process_time() - start


def clopper_pearson(count: Count) -> tuple[float, float]:
    """Two-sided 95 % Clopper–Pearson interval on a rate (scipy's beta quantiles)."""
    k, n = count.hits, count.trials
    if n == 0:
        return math.nan, math.nan
    lower = 0.0 if k == 0 else float(stats.beta.ppf(ALPHA / 2, k, n - k + 1))
    upper = 1.0 if k == n else float(stats.beta.ppf(1 - ALPHA / 2, k + 1, n - k))
    return lower, upper


def fmt_rate(count: Count) -> str:
    if count.trials == 0:
        return f"{'—':^19s}"
    lo, hi = clopper_pearson(count)
    return f"{count.rate:.3f} [{lo:.3f},{hi:.3f}]"


def fmt_ratio(median: float, p90: float) -> str:
    return f"{'—':^11s}" if math.isnan(median) else f"{median:5.2f}/{p90:5.2f}"


def row_text(label: str, design: str, cell: CellResult, c1: int, r: Rates, which: str) -> str:
    extra = (f"{fmt_rate(r.forward_contains)} {r.forward_given.rate:5.2f}" if which == "new"
             else f"{fmt_rate(r.point_false_reached)}")
    population = ""
    if design == "population":
        population = (f" | direct {fmt_rate(r.cover_direct)} one {fmt_rate(r.cover_direct_one)}"
                      f" | QBCB fail {fmt_rate(r.certified_fail)} cost {r.certified_ratio_median:5.2f}")
    return (f"{label:44s} {design[:4]:4s} {cell.n:5d} {cell.c0:5d} {c1:5d} {r.true_recall:5.3f} | "
            f"{fmt_rate(r.cover_r)} {fmt_rate(r.cover_recall)} {fmt_rate(r.cover_recall_one)} | "
            f"{r.reached.rate:5.3f} {fmt_rate(r.false_reached)} | "
            f"{fmt_ratio(r.conservative_ratio_median, r.conservative_ratio_p90)} "
            f"{fmt_ratio(r.projected_ratio_median, r.projected_ratio_p90)} | {extra} | {r.incoherent.rate:5.3f}"
            + population)


def header(which: str) -> str:
    extra = f"{'fwd range holds depth':19s} given" if which == "new" else f"{'old point-reached false':19s}"
    return (f"{'configuration':44s} {'dsgn':4s} {'n':>5s} {'c0':>5s} {'c1':>5s} {'recall':6s}| "
            f"{'cover R (2-sided)':19s} {'cover recall (2-s)':19s} {'recall >= lower(1-s)':19s} | "
            f"{'P(rch)':5s} {'false reached':19s} | {'cons/d* med/p90':11s} {'proj/d* med/p90':11s} | {extra} | "
            "incoh")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=2000)
    parser.add_argument("--quick", action="store_true", help="5 configurations, 200 replicates unless given")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--only", default="", help="only configurations whose label contains this text")
    args = parser.parse_args()
    if not DATA.exists():
        sys.exit(f"CLEF TAR data not found at {DATA}")
    replicates = args.replicates
    chosen = list(range(len(CONFIGS)))
    if args.quick:
        chosen = list(QUICK)
        if replicates == parser.get_default("replicates"):
            replicates = 200
    chosen = [i for i in chosen if args.only in CONFIGS[i].label]
    started = time.perf_counter()
    qrels_cache: dict[str, dict[bytes, set[bytes]]] = {}
    tasks = []
    facts: dict[int, str] = {}
    for index in chosen:
        config = CONFIGS[index]
        rel = queue_labels(config, qrels_cache)
        c0, c1s = cutoffs(rel, config)
        relevant_count = int(rel.sum())
        d_star = int((np.flatnonzero(rel == 1) + 1)[needed_for(TARGET, relevant_count) - 1])
        facts[index] = f"S = {len(rel):,}, R = {relevant_count}, d*(0.95) = {d_star:,}"
        tasks.append((index, "rest", rel, c0, min(config.n, len(rel) - c0), c1s, replicates, args.seed))
        if config.population:
            tasks.append((index, "population", rel, c0, min(POPULATION_N, len(rel)), c1s, replicates, args.seed))
    # the slowest cells first, so two workers finish together
    tasks.sort(key=lambda t: -(len(t[2]) * len(t[5]) * (2 if t[1] == "population" else 1)))
    results: dict[tuple[int, str], tuple[CellResult, float]] = {}
    if args.workers > 1:
        with multiprocessing.get_context("fork").Pool(args.workers) as pool:
            for index, design, cell, seconds in pool.imap_unordered(run_task, tasks):
                results[(index, design)] = (cell, seconds)
                print(f"  done {CONFIGS[index].label} {design} in {seconds:.0f} s CPU", file=sys.stderr,
                      flush=True)
    else:
        for task in tasks:
            index, design, cell, seconds = run_task(task)
            results[(index, design)] = (cell, seconds)
    elapsed = time.perf_counter() - started

    print(f"Live-review bench: {replicates} replicates per cell, seed {args.seed}, target 0.95, confidence 0.95, "
          "interval hypergeometric")
    print("Rates with two-sided 95 % Clopper–Pearson intervals. cons/d*: the rank of the conservative_needed-th "
          "relevant document over d*; proj/d*: the forward depth (c1 when reached) over d*; fwd range holds depth: "
          "forward_low ≤ max(d*, c1) ≤ forward_high, over replicates with a range ('given' share). incoh: an R "
          "lower bound below the relevant judged or a recall outside [0, 1].")
    print("Configurations: " + "; ".join(f"{CONFIGS[i].label}: {facts[i]}" for i in chosen))
    cells = [(i, d) for i in chosen for d in ("rest", "population") if (i, d) in results]
    summary: dict[str, dict[str, list[tuple[Count, str]]]] = {"new": {}, "old": {}}
    ratios: dict[str, dict[str, list[float]]] = {"new": {}, "old": {}}
    for which in ("new", "old"):
        title = ("CURRENT REPORT (assess)" if which == "new"
                 else "OLD REPORT (deac6fe re-enacted: stale elusion at c0, two-sided conservative bound)")
        print()
        print(title)
        print(header(which))
        for index, design in cells:
            cell, _ = results[(index, design)]
            for c1 in cell.c1s:
                r = rates(cell, c1, which)
                where = f"{CONFIGS[index].label} {design} n={cell.n} c1={c1}"
                print(row_text(CONFIGS[index].label, design, cell, c1, r, which))
                for name, count in (("cover R", r.cover_r), ("cover recall", r.cover_recall),
                                    ("recall >= one-sided lower", r.cover_recall_one),
                                    ("direct recall two-sided", r.cover_direct),
                                    ("direct recall one-sided", r.cover_direct_one)):
                    if count.trials:
                        summary[which].setdefault(name, []).append((count, where))
                if r.true_recall < float(TARGET):
                    summary[which].setdefault("false reached", []).append((r.false_reached, where))
                    if which == "old":
                        summary[which].setdefault("false point-reached", []).append((r.point_false_reached, where))
                if r.certified_fail.trials:
                    summary[which].setdefault("QBCB certified fail", []).append((r.certified_fail, where))
                summary[which].setdefault("incoherent", []).append((r.incoherent, where))
                if c1 == cell.c0:
                    for name, value in (("conservative/d* median", r.conservative_ratio_median),
                                        ("conservative/d* p90", r.conservative_ratio_p90),
                                        ("projected/d* median", r.projected_ratio_median),
                                        ("projected/d* p90", r.projected_ratio_p90)):
                        if not math.isnan(value):
                            ratios[which].setdefault(name, []).append(value)
                if which == "new" and r.forward_contains.trials:
                    summary[which].setdefault("forward range holds depth", []).append((r.forward_contains, where))
    print()
    print("SUMMARY (worst cell per figure; coverage figures: lowest; failure figures: highest)")
    for which in ("new", "old"):
        print(f"  {'current' if which == 'new' else 'old (deac6fe)'}:")
        for name, entries in summary[which].items():
            failure = name in ("false reached", "false point-reached", "QBCB certified fail", "incoherent")
            count, where = (max if failure else min)(entries, key=lambda e: e[0].rate)
            print(f"    {name:28s} {fmt_rate(count)}  ({count.hits}/{count.trials}; {len(entries)} cells; {where})")
        for name, values in ratios[which].items():
            print(f"    {name:28s} median over cells at c1 = c0: {float(np.median(values)):.3f} "
                  f"(range {min(values):.3f}–{max(values):.3f}, {len(values)} cells)")
    calls = sum(cell.assess_calls for cell, _ in results.values())
    evaluations = sum(cell.replicates * len(cell.c1s) for cell, _ in results.values())
    cpu = sum(seconds for _, seconds in results.values())
    print(f"\n{len(results)} cells, {evaluations:,} evaluations, {calls:,} distinct assess calls; "
          f"{elapsed:.0f} s wall with {args.workers} workers ({cpu:.0f} s CPU in the cells)")


if __name__ == "__main__":
    main()
