"""Every heuristic stopping rule of the rule table beside the certified rules on the CLEF TAR 2017–2019 portfolio
(issue 28, Show 2): failure rate per stop and per run, recall at the stop (median and 10th percentile) and cost in
documents judged.

The topic–run pairs are `portfolio_bench.py`'s (each topic of each real CLEF 2017–2019 run is one completed review,
named ``year/run/topic``). Each design's jobs are exactly those `reviewdepth simulate` runs
(`services.simulation.simulate.run_simulation`): one `replay_chunk` per (topic, chunk), keyed by `simulate.topic_key`
of the
pair's name, so every run is the one the command replays for the same name, seed and plan; the shared columns come
from the engine's own `summarise` (the command's table). The two columns the command does not print (recall's 10th
percentile, documents judged) are read from the same runs.

Designs, target 0.95, confidence 0.95, looks every 100 ranked documents:

* ``none``: every heuristic the design replays (knee, budget, N consecutive irrelevant at 50/100/250/500, 2399,
  batch precision, the point process), one replicate (a prefix rule stops at the same depth in every replicate);
* ``safe``: the design ``none`` with SAFE alone, which draws its random training set per replicate;
* ``population``: one sample of 300 of the queue (pairs of 600 documents or more): qbcb, target, direct;
* ``audit``: one audit document per 10 ranked: the anytime-valid monitor.

Quant and QuantCI are in the rule table but not replayable (a completed run's scores are its final model's); the
table says so. Run from the repository root::

    python bench/heuristics_bench.py [--replicates none=1,safe=100,population=200,audit=20] [--workers 2] [--seed 2026]
                                     [--runs SUBSTRING,…] [--out bench/results/heuristics.txt]

Not run in CI. Needs ../shared/data.
"""

from __future__ import annotations

import argparse
import multiprocessing
import resource
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
from portfolio_bench import DATA, POPULATION_MIN_QUEUE, portfolio

from reviewdepth.estimation import rules as rule_table
from reviewdepth.estimation.replay import (
    RULES,
    ReplayPlan,
    RuleRuns,
    chunk_count,
    concat_runs,
    replay_chunk,
    rules_for,
    summarise,
)
from reviewdepth.services.simulation.simulate import NamedQueue, build_plan, topic_key

DESIGNS: dict[str, dict[str, object]] = {
    # the prefix heuristics stop at the same depth in every replicate: one replicate is every replicate
    "none": {"design": "none", "rules": tuple(r for r in rules_for("none") if r != "safe")},
    "safe": {"design": "none", "rules": ("safe",)},
    "population": {"design": "population", "sample_size": 300,
                   "rules": ("qbcb", "target", "direct")},
    "audit": {"design": "audit", "every": 10, "rules": ("monitor",)},
}


@dataclass(frozen=True)
class Row:
    rule: str
    kind: str
    design: str
    pairs: int
    runs: int
    stops: int
    failures: int
    failure_rate: float
    failure_low: float
    failure_high: float
    false_stop_rate: float
    recall_p10: float
    recall_p50: float
    judged_median: float
    judged_mean: float
    cost_ratio_median: float


def _job(args: tuple[npt.NDArray[np.int8], ReplayPlan, int, tuple[int, ...], int]) -> tuple[int, int,
                                                                                               dict[str, RuleRuns]]:
    labels, plan, chunk, key, index = args
    return index, chunk, replay_chunk(labels, plan, chunk, key)


def replay_design(queues: list[NamedQueue], plan: ReplayPlan, workers: int) -> list[dict[str, RuleRuns]]:
    """Every (topic, chunk) job of ``plan``, as `run_simulation` runs them, joined per topic in chunk order."""
    jobs = [(q.labels, plan, chunk, topic_key(q.name), i) for chunk in range(chunk_count(plan))
            for i, q in enumerate(queues)]
    parts: dict[tuple[int, int], dict[str, RuleRuns]] = {}
    with multiprocessing.get_context("fork").Pool(workers) as pool:
        for index, chunk, part in pool.imap_unordered(_job, jobs, chunksize=4):
            parts[(index, chunk)] = part
    return [concat_runs([parts[(i, c)] for c in range(chunk_count(plan))]) for i in range(len(queues))]


def rows_for(design: str, per_topic: list[dict[str, RuleRuns]], confidence: float) -> list[Row]:
    out: list[Row] = []
    for s in summarise(per_topic, confidence):
        runs = [t[s.rule] for t in per_topic]
        recall = np.concatenate([r.recall for r in runs])
        judged = np.concatenate([r.reviewed_total for r in runs]).astype(np.float64)
        out.append(Row(s.rule, s.kind, design, len(runs), s.runs, s.stops, s.failures, s.failure_rate,
                       s.failure_low, s.failure_high, s.false_stop_rate, float(np.quantile(recall, 0.10)),
                       float(np.quantile(recall, 0.5)), float(np.median(judged)), float(judged.mean()),
                       s.cost_ratio_median))
    return out


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _pct(value: float) -> str:
    return "—" if value != value else f"{100 * value:.1f} %"


def table(rows: list[Row]) -> str:
    head = ("| rule | kind | design | pairs × replicates | stops | failure / stop [95 % CI] | failure / run | "
            "recall p50 | recall p10 | documents judged: median (mean) | cost / d* (median) |")
    lines = [head, "|" + "---|" * 11]
    for r in rows:
        interval = f"[{100 * r.failure_low:.1f}–{100 * r.failure_high:.1f}]" if r.stops else ""
        lines.append(f"| `{r.rule}` | {r.kind} | {r.design} | {r.pairs} × {r.runs // max(r.pairs, 1)} | "
                     f"{r.stops:,} | {_pct(r.failure_rate)} {interval} | {_pct(r.false_stop_rate)} | "
                     f"{r.recall_p50:.3f} | {r.recall_p10:.3f} | {r.judged_median:,.0f} ({r.judged_mean:,.0f}) | "
                     f"{r.cost_ratio_median:.2f}× |")
    for name in ("quant", "quant-ci"):
        info = rule_table.BY_NAME[name]
        lines.append(f"| `{name}` | {info.kind} | — | not replayed: {info.not_replayed} |" + " |" * 7)
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--replicates", default="none=1,safe=100,population=200,audit=20")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--runs", default="", help="keep only pairs whose year/run contains one of these")
    parser.add_argument("--out", default="bench/results/heuristics.txt")
    args = parser.parse_args()
    if not DATA.is_dir():
        sys.exit(f"heuristics_bench: {DATA} is missing (the CLEF data of ../shared)")
    replicates = {k: int(v) for k, v in (item.split("=") for item in args.replicates.split(","))}
    with tempfile.TemporaryDirectory() as tmp:
        source = portfolio(Path(tmp))
    wanted = [w for w in args.runs.split(",") if w]
    queues = [q for q in source.queues if q.relevant > 0 and (not wanted or any(w in q.name for w in wanted))]
    lines = [f"# python bench/heuristics_bench.py --replicates {args.replicates} --workers {args.workers} "
             f"--seed {args.seed}" + (f" --runs {args.runs}" if wanted else ""),
             f"# {len(queues)} topic-run pairs with a relevant document; "
             f"{sum(len(q.labels) for q in queues):,} ranked documents"]
    print("\n".join(lines), flush=True)
    rows: list[Row] = []
    for name, settings in DESIGNS.items():
        if name not in replicates:
            continue
        chosen = [q for q in queues if name != "population" or len(q.labels) >= POPULATION_MIN_QUEUE]
        plan = build_plan(**settings, target="0.95", confidence=0.95, look_every=100,  # type: ignore[arg-type]
                          replicates=replicates[name], seed=args.seed)
        started, cpu = time.perf_counter(), _children_cpu()
        per_topic = replay_design(chosen, plan, args.workers)
        line = (f"# design {name}: {len(chosen)} pairs × {replicates[name]} replicates, rules "
                f"{', '.join(plan.rules)}; {time.perf_counter() - started:,.0f} s wall, "
                f"{_children_cpu() - cpu:,.0f} s CPU in the workers")
        print(line, flush=True)
        lines.append(line)
        rows += rows_for(str(settings["design"]), per_topic, plan.confidence)
    order = {rule: i for i, rule in enumerate(RULES)}
    rows.sort(key=lambda r: (r.kind != "certified", order[r.rule]))
    text = table(rows)
    print(text)
    lines.append(text)
    Path(args.out).write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
