"""Cost of a certified stop (issue 24, Show): on every CLEF topic of the chosen runs, how reliable and how dear
each certified way to stop is, against the hindsight floor.

Rules, all scored against the truth from the qrels (reliability = share of runs that stop with recall ≥ τ, with
a two-sided 95 % Clopper–Pearson interval; cost = documents judged — reviewed prefix ∪ sampled or audited — as a
share of the collection, the queue being the population):

- ``planned``: the plan followed at every look (`reviewdepth.estimation.stop_plan.PlannedPolicy` through the
  replay engine's ``planned`` design, as ``reviewdepth simulate --rule planned`` runs it): reviews on or audits,
  whichever it projects cheaper, stops when the anytime-valid monitor certifies;
- ``monitor K=10``: the audit stream at one audit document per 10 ranked, the monitor's stop (replay design audit);
- ``monitor K=plan``: the same at the K the plan chooses after the first look (`choose_audit_rate`);
- ``elusion@best``: one elusion test at the hindsight-best fixed cutoff d and sample size n (over a grid), computed
  exactly (no replicates): cost d + n, and N when the test fails (the team then reviews everything);
- ``qbcb``: one whole-queue sample drawn first (replay design population, hindsight-best size over a grid);
- ``target``: Cormack & Grossman's target method, K = ⌈ln α / ln τ⌉ random positives drawn first (every draw
  counted), then the ranking reviewed until all K are found (our implementation, as in certification-cost.md §3).

The hindsight floor of a topic is min over d of d + n_min(F(d), N − d) (`count_bound.certification_floor`), the
issue's definition; it includes depths whose recall is below τ, where a valid test almost never certifies, so on
weak rankings it is out of reach. The attainable floor takes the same minimum over the depths with recall ≥ τ.

    python bench/stop_cost_bench.py [--replicates 500] [--targets 0.8,0.9,0.95] [--sets all|2017w] [--workers 2]

Needs ../shared/data. Not run in CI (tests/estimation/test_stop_plan.py holds the short checks).
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import sys
import time
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import numpy as np
import numpy.typing as npt
from live_review_bench import relevant_docs, run_order_labels
from scipy import stats

from reviewdepth.estimation.count_bound import certification_floor
from reviewdepth.estimation.planning import _elusion_outcomes, missed_allowed
from reviewdepth.estimation.replay import Design, ReplayPlan, replay
from reviewdepth.estimation.stop_plan import Certifier, choose_audit_rate, project_yield
from reviewdepth.estimation.stopping import min_positives
from reviewdepth.formats.clef import read_clef_run

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
SETS: dict[str, list[tuple[str, str, str]]] = {
    "2017w": [("2017 waterloo.A", "clef-tar-2017/qrels/qrel_abs_test.txt.gz",
               "clef-tar-2017/runs/waterloo.A-rank-normal.gz")],
    "2017a": [("2017 amc", "clef-tar-2017/qrels/qrel_abs_test.txt.gz", "clef-tar-2017/runs/amc.run.gz")],
    "2018": [(f"2018 ECNU run{i}", "clef-tar-2018/qrels/task1.test.abs.2018.qrels",
              f"clef-tar-2018/runs/ECNU_TASK1_RUN{i}_{name}.task1.gz")
             for i, name in ((1, "BM25"), (2, "LR"), (3, "COMBINE"))],
    "2019": [("2019 sheffield intervention", "clef-tar-2019/qrels/full.test.intervention.abs.2019.qrels.gz",
              "clef-tar-2019/runs/sheffield/Intervention_sheffield-baseline.gz"),
             ("2019 sheffield dta", "clef-tar-2019/qrels/full.test.dta.abs.2019.qrels.gz",
              "clef-tar-2019/runs/sheffield/DTA_sheffield-baseline.gz")],
}
RULES = ("planned", "monitor K=10", "monitor K=plan", "elusion@best", "qbcb", "target")


@dataclass(frozen=True)
class Task:
    label: str
    topic: str
    labels: npt.NDArray[np.int8]
    tau: Fraction
    confidence: float
    replicates: int
    seed: int


def queues(run_path: Path, qrels_path: Path) -> dict[str, npt.NDArray[np.int8]]:
    """Each topic's run order (NS lines and repeats skipped), 1 = relevant in the qrels."""
    relevant = relevant_docs(qrels_path)
    run = read_clef_run(run_path)
    out: dict[str, npt.NDArray[np.int8]] = {}
    for topic in dict.fromkeys(run.topic.tolist()):
        lab = run_order_labels(run, topic, relevant.get(topic, set()))
        if lab.sum() > 0:
            out[topic.decode()] = lab
    return out


def batch_of(size: int) -> int:
    return max(10, size // 200)


def hindsight_floor(labels: npt.NDArray[np.int8], tau: Fraction, confidence: float) -> tuple[int, int]:
    """(the issue's hindsight floor, min over every depth d of d + n_min(F(d), N − d); the attainable floor, the same
    over the depths whose recall is at least τ). The first counts depths where a valid test would fail (a sample
    finding none of the many relevant left is unlikely), so no method reaches it there; the second is what a
    planner that knew the labels and certified with one valid test could reach."""
    n = len(labels)
    found = np.concatenate([[0], np.cumsum(labels, dtype=np.int64)])
    costs = [d + certification_floor(int(found[d]), n - d, tau, confidence) for d in range(n + 1)]
    needed = math.ceil(tau * int(found[-1]))
    first = int(np.searchsorted(found, needed))  # the oracle depth: F(d) ≥ ⌈τ·R⌉ from here on
    return min(costs), min(costs[first:])


def elusion_best(labels: npt.NDArray[np.int8], tau: Fraction, confidence: float) -> tuple[float, float]:
    """Exact expected cost and reliability of one elusion test at the hindsight-best (d, n): n over n_min × {1, 1.1,
    1.25, 1.5, 2}, d over 200 cutoffs; a failed test means reviewing everything (recall 1)."""
    size = len(labels)
    found = np.concatenate([[0], np.cumsum(labels, dtype=np.int64)])
    total = int(found[-1])
    alpha = 1 - confidence
    best = (math.inf, 1.0)
    for d in sorted(set(np.linspace(0, size - 1, 200).astype(int).tolist())):
        f, rest = int(found[d]), size - d
        b = total - f
        low = certification_floor(f, rest, tau, confidence)
        if low == 0:
            ok = Fraction(f, total) >= tau
            cost = float(d)
            if cost < best[0]:
                best = (cost, 1.0 if ok else 0.0)
            continue
        k_max = missed_allowed(f, rest, tau)
        sizes = np.unique(np.minimum(rest, (np.array([1.0, 1.1, 1.25, 1.5, 2.0]) * low).astype(np.int64)))
        ks, _ = _elusion_outcomes(sizes, rest, k_max, b, alpha)
        for n, k in zip(sizes.tolist(), ks.tolist(), strict=True):
            passes = float(stats.hypergeom.cdf(k, rest, b, n)) if k >= 0 else 0.0
            cost = passes * (d + n) + (1 - passes) * size
            reliable = 1 - passes if Fraction(f, total) < tau else 1.0
            if cost < best[0]:
                best = (cost, reliable)
    return best[0] / size, best[1]


def target_method(labels: npt.NDArray[np.int8], tau: Fraction, confidence: float, replicates: int,
                  rng: np.random.Generator) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.bool_]]:
    size = len(labels)
    want = math.ceil(math.log(1 - confidence) / math.log(float(tau)))
    needed = math.ceil(tau * int(labels.sum()))
    found = np.cumsum(labels)
    costs = np.zeros(replicates, dtype=np.int64)
    ok = np.zeros(replicates, dtype=np.bool_)
    for r in range(replicates):
        order = rng.permutation(size)
        hits = np.flatnonzero(labels[order] == 1)
        if len(hits) < want:
            costs[r], ok[r] = size, True
            continue
        drawn = order[:hits[want - 1] + 1]
        depth = int(order[hits[:want]].max()) + 1
        costs[r] = depth + int(np.count_nonzero(drawn >= depth))
        ok[r] = found[depth - 1] >= needed
    return costs, ok


def replayed(labels: npt.NDArray[np.int8], design: Design, rule: str, task: Task) -> tuple[npt.NDArray[np.int64],
                                                                                             npt.NDArray[np.bool_]]:
    plan = ReplayPlan(design, (rule,), task.tau, task.confidence, batch_of(len(labels)), task.replicates, task.seed)
    runs = replay(labels, plan)[rule]
    return runs.reviewed_total, ~runs.failed


def run_task(task: Task) -> tuple[str, str, str, dict[str, tuple[npt.NDArray[np.int64], npt.NDArray[np.bool_]]],
                                  tuple[int, int], float]:
    start = time.process_time()
    labels, size = task.labels, len(task.labels)
    out: dict[str, tuple[npt.NDArray[np.int64], npt.NDArray[np.bool_]]] = {}
    out["planned"] = replayed(labels, Design("planned"), "planned", task)
    out["monitor K=10"] = replayed(labels, Design("audit", every=10), "monitor", task)
    batch = batch_of(size)
    certifier = Certifier(size, task.tau, task.confidence)
    projection = project_yield(labels[:batch], size - batch)
    k = choose_audit_rate(int(labels[:batch].sum()), batch, certifier, projection, step=max(1, size // 400))
    out["monitor K=plan"] = replayed(labels, Design("audit", every=k), "monitor", task)
    cost, reliable = elusion_best(labels, task.tau, task.confidence)
    out["elusion@best"] = (np.array([cost * size]), np.array([reliable]))  # exact figures, no replicates
    prevalence = max(labels.mean(), 1 / size)
    r_min = min_positives(task.tau, 1 - task.confidence)
    best: tuple[float, tuple[npt.NDArray[np.int64], npt.NDArray[np.bool_]] | None] = (math.inf, None)
    for factor in (1.0, 1.5, 2.0, 3.0):
        n = min(size, max(1, math.ceil(factor * r_min / prevalence)))
        got = replayed(labels, Design("population", sample_size=n), "qbcb", task)
        if got[0].mean() < best[0]:
            best = (float(got[0].mean()), got)
    assert best[1] is not None
    out["qbcb"] = best[1]
    out["target"] = target_method(labels, task.tau, task.confidence, task.replicates,
                                  np.random.default_rng([task.seed, size]))
    floor = hindsight_floor(labels, task.tau, task.confidence)
    return task.label, task.topic, str(task.tau), out, floor, time.process_time() - start


def interval(hits: int, trials: int) -> str:
    lo = stats.beta.ppf(0.025, hits, trials - hits + 1) if hits else 0.0
    hi = stats.beta.ppf(0.975, hits + 1, trials - hits) if hits < trials else 1.0
    return f"{hits / trials:.3f} [{lo:.3f}, {hi:.3f}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--replicates", type=int, default=500)
    parser.add_argument("--targets", default="0.8,0.9,0.95")
    parser.add_argument("--confidence", type=float, default=0.95)
    parser.add_argument("--sets", default="all", help="comma-separated of " + ", ".join(SETS) + ", or all")
    parser.add_argument("--topics", type=int, default=0, help="at most this many topics per run (0: all)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=24)
    args = parser.parse_args()
    chosen = list(SETS) if args.sets == "all" else args.sets.split(",")
    tasks: list[Task] = []
    for name in chosen:
        for label, qrels, run in SETS[name]:
            topics = queues(DATA / run, DATA / qrels)
            items = list(topics.items())[: args.topics or None]
            for tau_text in args.targets.split(","):
                for topic, labels in items:
                    tasks.append(Task(label, topic, labels, Fraction(tau_text), args.confidence, args.replicates,
                                      args.seed))
    print(f"stop_cost_bench: {len(tasks)} (run, topic, target) cells, {args.replicates} replicates each, "
          f"confidence {args.confidence}", flush=True)
    results: dict[tuple[str, str], list[tuple[str, dict[str, tuple[npt.NDArray[np.int64], npt.NDArray[np.bool_]]],
                                              tuple[int, int], int]]] = {}
    started = time.time()
    with multiprocessing.Pool(args.workers) as pool:
        for done, (label, topic, tau, out, floors, _cpu) in enumerate(pool.imap_unordered(run_task, tasks), 1):
            size = next(len(t.labels) for t in tasks if t.label == label and t.topic == topic)
            results.setdefault((label, tau), []).append((topic, out, floors, size))
            if done % 20 == 0:
                print(f"  {done}/{len(tasks)} cells, {time.time() - started:.0f} s", file=sys.stderr, flush=True)
    for (label, tau), rows in sorted(results.items()):
        print(f"\n{label}, target {float(Fraction(tau)):g}, confidence {args.confidence}: {len(rows)} topics")
        floor = float(np.mean([f[0] / n for _, _, f, n in rows]))
        attainable = float(np.mean([f[1] / n for _, _, f, n in rows]))
        print(f"  hindsight floor: mean {floor:.3f} of the collection (over every depth); attainable floor "
              f"{attainable:.3f} (over the depths whose recall is ≥ τ)")
        target_cost = float(np.mean([out["target"][0].mean() / n for _, out, _, n in rows]))
        print(f"  {'rule':<16}{'reliability [95% CI]':<28}{'mean cost':>10}{'median':>8}{'/floor':>8}"
              f"{'/attain':>9}{'/target':>9}  worst topic reliability")
        for rule in RULES:
            costs = [out[rule][0] / n for _, out, _, n in rows]
            oks = np.concatenate([out[rule][1] for _, out, _, _ in rows])
            shown = (interval(int(oks.sum()), len(oks)) if rule != "elusion@best"
                     else f"{float(oks.mean()):.3f} (exact)")
            mean = float(np.mean([c.mean() for c in costs]))
            median = float(np.median(np.concatenate(costs)))
            worst = min(((out[rule][1].mean(), topic) for topic, out, _, _ in rows))
            note = "" if rule != "elusion@best" else "  (exact, hindsight-best d and n)"
            print(f"  {rule:<16}{shown:<28}{mean:>10.3f}{median:>8.3f}"
                  f"{mean / floor:>8.2f}{mean / attainable:>9.2f}{mean / target_cost:>9.2f}  {worst[0]:.3f} "
                  f"({worst[1]}){note}")
        planned = float(np.mean([out["planned"][0].mean() / n for _, out, _, n in rows]))
        goals = [("mean cost ≤ 1.3 × floor", planned <= 1.3 * floor),
                 ("mean cost ≤ 1.3 × attainable floor", planned <= 1.3 * attainable),
                 ("mean cost ≤ 0.92 × target method", planned <= 0.92 * target_cost)]
        # per topic: a shortfall is a topic whose exact two-sided 95 % upper bound on reliability is below 1 − α
        # (a topic at exactly 1 − α reads below it about half the time by chance)
        short = [topic for topic, out, _, _ in rows
                 if float(stats.beta.ppf(0.975, out["planned"][1].sum() + 1, len(out["planned"][1])
                                         - out["planned"][1].sum())) < args.confidence
                 and out["planned"][1].sum() < len(out["planned"][1])]
        goals.append((f"reliability ≥ {args.confidence:g} on every topic (no exact upper bound below it)", not short))
        if short:
            print(f"  topics with a reliability shortfall: {', '.join(short)}")
        print("  planned goals: " + "; ".join(f"{g}: {'met' if ok else 'MISSED'}" for g, ok in goals))
        whole = [topic for topic, _, f, n in rows if f[0] >= 0.9 * n]
        if whole:
            print(f"  topics whose floor is ≥ 90 % of the collection (no valid method can be cheap): "
                  f"{', '.join(sorted(whole))}")


if __name__ == "__main__":
    main()
