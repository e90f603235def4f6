"""`reviewdepth compare` against ranx's `compare` on the same qrels and runs: per-measure means and the paired
p-values of each run against the first (the baseline).

ranx (``pip install ranx``; not a dependency of reviewdepth) computes its own measures from the files; both sides
use the queries every run has (ranx is given the qrels of those queries only). ranx's tests: ``student``
(scipy's ``ttest_rel``) and ``fisher`` (a Monte Carlo randomization test on numba's random numbers, p = count /
permutations); ranx has no Wilcoxon test, so the Wilcoxon p-values are checked against ``scipy.stats.wilcoxon``
applied to ranx's per-query scores. The randomization p-values can agree only to Monte Carlo error.

    python bench/compare_ranx.py ../shared/data/clef-tar-2017/qrels/qrel_abs_test.txt.gz \
        ../shared/data/clef-tar-2017/runs/*.gz
"""

from __future__ import annotations

import gzip
import json
import math
import subprocess
import sys

# reviewdepth's measure name -> ranx's
MEASURES = {"map": "map", "Rprec": "r-precision", "bpref": "bpref", "P_10": "precision@10",
            "recall_1000": "recall@1000"}


def read_lines(path: str) -> list[list[str]]:
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:  # type: ignore[operator]
        return [line.split() for line in f if line.strip()]


def reviewdepth_compare(qrels: str, runs: list[str], test: str, extra: list[str]) -> dict[str, object]:
    args = ["reviewdepth", "compare", qrels, *runs, "--format", "json", "--test", test, "--correction", "none"]
    for m in MEASURES:
        args += ["-m", m]
    out = subprocess.run(args + extra, check=True, capture_output=True, text=True).stdout
    return json.loads(out)  # type: ignore[no-any-return]


def main(qrels_path: str, run_paths: list[str]) -> None:
    import numpy as np
    from ranx import Qrels, Run, compare, evaluate
    from scipy import stats

    ours = reviewdepth_compare(qrels_path, run_paths, "t", [])
    queries = set(ours["queries"])  # type: ignore[arg-type]
    labels: list[str] = ours["runs"]  # type: ignore[assignment]
    qrels_dict: dict[str, dict[str, int]] = {}
    for qid, _, docno, rel in read_lines(qrels_path):
        if qid in queries:
            qrels_dict.setdefault(qid, {})[docno] = int(rel)
    ranx_runs = []
    for label, path in zip(labels, run_paths, strict=True):
        run_dict: dict[str, dict[str, float]] = {}
        for fields in read_lines(path):
            if fields[0] in queries:
                run_dict.setdefault(fields[0], {})[fields[2]] = float(fields[4])
        ranx_runs.append(Run(run_dict, name=label))
    ranx_qrels = Qrels(qrels_dict)
    metrics = list(MEASURES.values())

    worst = {"student": 0.0, "wilcoxon": 0.0, "fisher": 0.0, "mean": 0.0}
    print(f"{'measure':<12} {'run':<28} {'mean rd':>8} {'mean ranx':>9} {'p_t rd':>8} {'p_t ranx':>8} "
          f"{'p_w rd':>8} {'p_w scipy':>9} {'p_r rd':>8} {'p_r ranx':>8}")
    wilcoxon = reviewdepth_compare(qrels_path, run_paths, "wilcoxon", [])
    randomization = reviewdepth_compare(qrels_path, run_paths, "randomization", ["--permutations", "100000"])
    student = compare(ranx_qrels, ranx_runs, metrics, stat_test="student", max_p=0.05)
    fisher = compare(ranx_qrels, ranx_runs, metrics, stat_test="fisher", n_permutations=100_000, max_p=0.05)
    per_query = {r.name: {m: np.asarray(evaluate(ranx_qrels, r, m, return_mean=False)) for m in metrics}
                 for r in ranx_runs}

    def cell(result: dict[str, object], measure: str, run: str) -> dict[str, float]:
        for c in result["cells"]:  # type: ignore[attr-defined]
            if c["measure"] == measure and c["run"] == run:
                return c  # type: ignore[no-any-return]
        raise KeyError((measure, run))

    for ours_name, ranx_name in MEASURES.items():
        for run in labels[1:]:
            pair = frozenset([labels[0], run])
            p_t = float(student.comparisons[pair][ranx_name]["p_value"])
            p_r = float(fisher.comparisons[pair][ranx_name]["p_value"])
            d = per_query[run][ranx_name] - per_query[labels[0]][ranx_name]
            p_w = float(stats.wilcoxon(d).pvalue) if np.any(d) else 1.0
            c_t, c_w, c_r = cell(ours, ours_name, run), cell(wilcoxon, ours_name, run), cell(randomization,
                                                                                             ours_name, run)
            mean_ranx = float(np.mean(per_query[run][ranx_name]))
            worst["mean"] = max(worst["mean"], abs(c_t["mean"] - mean_ranx))
            worst["student"] = max(worst["student"], abs(c_t["p_value"] - p_t))
            worst["wilcoxon"] = max(worst["wilcoxon"], abs(c_w["p_value"] - p_w))
            worst["fisher"] = max(worst["fisher"], abs(c_r["p_value"] - p_r))
            print(f"{ours_name:<12} {run[:28]:<28} {c_t['mean']:8.4f} {mean_ranx:9.4f} {c_t['p_value']:8.4f} "
                  f"{p_t:8.4f} {c_w['p_value']:8.4f} {p_w:9.4f} {c_r['p_value']:8.4f} {p_r:8.4f}")
    # the tests alone: ranx's own test functions on reviewdepth's per-query values (so that a difference in a
    # measure's per-query values, e.g. ranx breaking score ties otherwise than trec_eval, does not count)
    from ranx.statistical_tests import fisher_randomization_test, paired_student_t_test

    from reviewdepth.services.evaluation.evaluate import EvalInput, EvalRequest, evaluate

    qids = list(ours["queries"])  # type: ignore[call-overload]
    evaluations = [evaluate(EvalInput(qrels_path), EvalInput(p), EvalRequest(measures=list(MEASURES)))
                   for p in run_paths]
    same = {"student": 0.0, "fisher": 0.0}
    for ours_name in MEASURES:
        base = np.array([float(evaluations[0].per_query[q][ours_name]) for q in qids])
        for run, evaluation in zip(labels[1:], evaluations[1:], strict=True):
            other = np.array([float(evaluation.per_query[q][ours_name]) for q in qids])
            same["student"] = max(same["student"], abs(cell(ours, ours_name, run)["p_value"]
                                                       - float(paired_student_t_test(base, other)[0])))
            same["fisher"] = max(same["fisher"], abs(cell(randomization, ours_name, run)["p_value"]
                                                     - float(fisher_randomization_test(base, other, 100_000)[0])))
    print()
    for name, value in worst.items():
        print(f"max |difference| {name:<9} {value:.2e}")
    for name, value in same.items():
        print(f"max |difference| {name:<9} {value:.2e} (ranx's test on reviewdepth's per-query values)")
    print(f"(Monte Carlo standard error of a randomization p at 100,000 permutations <= "
          f"{math.sqrt(0.25 / 100_000):.4f} per side)")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
