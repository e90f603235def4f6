"""`rd.evaluate` (``import reviewdepth as rd``) against the Python evaluation libraries a researcher calls from a
notebook — ir_measures, ranx and pytrec_eval — on the same pandas DataFrames, and `rd.evaluate` against
``reviewdepth eval`` on the same data (their trec_eval lines must be identical).

Workloads: ``w1``, the W1 shape of bench/eval_bench.py built in memory (1,000 queries x 1,000 retrieved docs, 200
judged per query, 30 % of them relevant; 1 M run rows), and ``clef``, CLEF 2017 TAR's abstract qrels with the
Waterloo A run (../shared/data/clef-tar-2017). Each call starts from the DataFrames and includes whatever the
library needs to turn them into its own input (nested dicts for pytrec_eval, ``Qrels.from_df`` for ranx). The
measures: AP, P@10, recall@1000 and nDCG over the whole ranking (trec_eval's ``map``, ``P_10``, ``recall_1000``,
``ndcg``).

Rounds are interleaved (every tool once per round, the order rotating), after one untimed warm-up round (ranx
compiles its numba functions then); the ratio is rd.evaluate's time over the peer's in the same round.

The peers are not dependencies of reviewdepth: ``pip install ir-measures ranx pytrec-eval-terrier``.

    python bench/library_bench.py [--rounds 5] [--data ../shared/data] [--out bench/results/library.txt]
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

import reviewdepth as rd

SEED = 20261205
MEASURES = ["map", "P_10", "recall_1000", "ndcg"]


def w1_frames() -> tuple[pd.DataFrame, pd.DataFrame]:
    """The W1 shape (as bench/eval_bench.py draws it: random docnos per rank, descending 6-decimal scores with
    possible ties, a random judged subset per query with exactly 30 % relevant)."""
    nq, nd, nj = 1000, 1000, 200
    rng = np.random.default_rng(SEED)
    qids = np.repeat(np.arange(1, nq + 1), nd).astype(str)
    doc_idx = rng.permuted(np.tile(np.arange(nd), (nq, 1)), axis=1).ravel()
    micro = -np.sort(-rng.integers(0, 10**9, size=(nq, nd)), axis=1).ravel()
    docnos = np.char.add(np.char.add(np.char.add("DOC", qids), "-"), np.char.zfill(doc_idx.astype(str), 7))
    run = pd.DataFrame({"query_id": qids, "doc_id": docnos, "score": micro / 10**6, "run_id": "bench"})
    judged = rng.permuted(np.tile(np.arange(nd), (nq, 1)), axis=1)[:, :nj]
    rel = np.zeros((nq, nj), dtype=np.int64)
    rel[:, : nj * 3 // 10] = 1
    rel = rng.permuted(rel, axis=1)
    jq = np.repeat(np.arange(1, nq + 1), nj).astype(str)
    jdoc = np.char.add(np.char.add(np.char.add("DOC", jq), "-"), np.char.zfill(judged.ravel().astype(str), 7))
    qrels = pd.DataFrame({"query_id": jq, "doc_id": jdoc, "relevance": rel.ravel()})
    return qrels, run


def clef_frames(data: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    clef = data / "clef-tar-2017"
    qrels = pd.read_csv(clef / "qrels" / "qrel_abs_test.txt.gz", sep=r"\s+", header=None,
                        names=["query_id", "iteration", "doc_id", "relevance"],
                        dtype={"query_id": str, "doc_id": str})
    run = pd.read_csv(clef / "runs" / "waterloo.A-rank-normal.gz", sep=r"\s+", header=None, usecols=range(6),
                      names=["query_id", "action", "doc_id", "rank", "score", "run_id"],
                      dtype={"query_id": str, "doc_id": str, "run_id": str, "score": np.float64})
    return qrels, run


# ---- the tools, each from the same two DataFrames to the four summary values --------------------------------------

def with_rd(qrels: pd.DataFrame, run: pd.DataFrame) -> dict[str, float]:
    summary = rd.evaluate(qrels, run, measures=MEASURES).summary
    return {m: float(summary[m]) for m in MEASURES}


def with_ir_measures(qrels: pd.DataFrame, run: pd.DataFrame) -> dict[str, float]:
    import ir_measures
    from ir_measures import AP, P, R, nDCG

    names = {AP: "map", P @ 10: "P_10", R @ 1000: "recall_1000", nDCG: "ndcg"}
    values = ir_measures.calc_aggregate(list(names), qrels[["query_id", "doc_id", "relevance"]],
                                        run[["query_id", "doc_id", "score"]])
    return {names[m]: float(v) for m, v in values.items()}


def with_ranx(qrels: pd.DataFrame, run: pd.DataFrame) -> dict[str, float]:
    from ranx import Qrels, Run, evaluate

    # ranx asks for object (not pandas 3's str) id columns
    ids = {"query_id": object, "doc_id": object}
    ranx_qrels = Qrels.from_df(qrels.astype(ids), q_id_col="query_id", doc_id_col="doc_id", score_col="relevance")
    ranx_run = Run.from_df(run.astype(ids), q_id_col="query_id", doc_id_col="doc_id", score_col="score")
    values = evaluate(ranx_qrels, ranx_run, ["map", "precision@10", "recall@1000", "ndcg"])
    names = {"map": "map", "precision@10": "P_10", "recall@1000": "recall_1000", "ndcg": "ndcg"}
    return {names[k]: float(v) for k, v in values.items()}


def with_pytrec_eval(qrels: pd.DataFrame, run: pd.DataFrame) -> dict[str, float]:
    import pytrec_eval

    qrels_dict: dict[str, dict[str, int]] = {}
    for q, d, r in zip(qrels["query_id"].tolist(), qrels["doc_id"].tolist(), qrels["relevance"].tolist(),
                       strict=True):
        qrels_dict.setdefault(q, {})[d] = int(r)
    run_dict: dict[str, dict[str, float]] = {}
    for q, d, s in zip(run["query_id"].tolist(), run["doc_id"].tolist(), run["score"].tolist(), strict=True):
        run_dict.setdefault(q, {})[d] = float(s)
    per_query = pytrec_eval.RelevanceEvaluator(qrels_dict, {"map", "P", "recall", "ndcg"}).evaluate(run_dict)
    names = {"map": "map", "P_10": "P_10", "recall_1000": "recall_1000", "ndcg": "ndcg"}
    return {name: float(np.mean([v[key] for v in per_query.values()])) for key, name in names.items()}


TOOLS: dict[str, Callable[[pd.DataFrame, pd.DataFrame], dict[str, float]]] = {
    "rd.evaluate": with_rd, "ir_measures": with_ir_measures, "ranx": with_ranx, "pytrec_eval": with_pytrec_eval}


def timed(tool: Callable[..., dict[str, float]], qrels: pd.DataFrame, run: pd.DataFrame
          ) -> tuple[float, dict[str, float]]:
    gc.collect()
    start = time.perf_counter()
    values = tool(qrels, run)
    return time.perf_counter() - start, values


def versions() -> str:
    from importlib.metadata import version

    return ", ".join(f"{name} {version(dist)}" for name, dist in (
        ("reviewdepth", "reviewdepth"), ("ir_measures", "ir_measures"), ("ranx", "ranx"),
        ("pytrec_eval", "pytrec-eval-terrier"), ("pandas", "pandas"), ("numpy", "numpy")))


def cli_identity(qrels: pd.DataFrame, run: pd.DataFrame, out: list[str]) -> None:
    """rd.evaluate's trec_eval lines (``-q``, all_trec) against ``reviewdepth eval``'s on the same data written as
    files."""
    with tempfile.TemporaryDirectory() as folder:
        qrels_path, run_path = Path(folder) / "qrels", Path(folder) / "run"
        qrels[["query_id", "doc_id", "relevance"]].assign(iteration="0")[
            ["query_id", "iteration", "doc_id", "relevance"]].to_csv(qrels_path, sep=" ", header=False, index=False)
        run.assign(q0="Q0", rank=run.groupby("query_id").cumcount() + 1)[
            ["query_id", "q0", "doc_id", "rank", "score", "run_id"]].to_csv(run_path, sep=" ", header=False,
                                                                             index=False)
        library = rd.evaluate(qrels, run, measures=["all_trec"], per_query=True).to_trec()
        command = subprocess.run([sys.executable, "-m", "reviewdepth.cli.app", "eval", "-q", "-m", "all_trec",
                                  str(qrels_path), str(run_path)], capture_output=True, text=True, check=True)
    lines = library.count("\n")
    verdict = "identical" if library == command.stdout else "DIFFERENT"
    out.append(f"  rd.evaluate vs reviewdepth eval (-q -m all_trec): {verdict}, {lines:,} lines")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[1].parent / "shared" / "data")
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "results" / "library.txt")
    parser.add_argument("--workloads", default="w1,clef")
    args = parser.parse_args()

    out: list[str] = []

    def say(line: str = "") -> None:
        print(line, flush=True)
        out.append(line)

    say(f"library_bench  {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}  on {platform.node()} "
        f"({os.cpu_count()} CPUs, Python {platform.python_version()})")
    say(f"versions: {versions()}")
    say(f"rounds: 1 warm-up (untimed) + {args.rounds} timed, interleaved, the order rotating each round")
    say(f"load average at start (1/5/15 min): {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for key in args.workloads.split(","):
        qrels, run = w1_frames() if key == "w1" else clef_frames(args.data)
        say("")
        say(f"== {key}: qrels {len(qrels):,} rows, run {len(run):,} rows, {run['query_id'].nunique():,} queries"
            f"   (load {os.getloadavg()[0]:.2f})")
        names = list(TOOLS)
        times: dict[str, list[float]] = {name: [] for name in names}
        ratios: dict[str, list[float]] = {name: [] for name in names[1:]}
        values: dict[str, dict[str, float]] = {}
        for round_number in range(args.rounds + 1):
            order = names[round_number % len(names):] + names[:round_number % len(names)]
            this_round: dict[str, float] = {}
            for name in order:
                seconds, values[name] = timed(TOOLS[name], qrels, run)
                this_round[name] = seconds
            if round_number == 0:
                continue  # the warm-up
            for name in names:
                times[name].append(this_round[name])
            for name in names[1:]:
                ratios[name].append(this_round["rd.evaluate"] / this_round[name])
        say(f"  {'tool':<13} {'wall s min / median / max':>27}   " + "  ".join(f"{m:>11}" for m in MEASURES))
        for name in names:
            t = times[name]
            say(f"  {name:<13} {min(t):8.3f} / {statistics.median(t):6.3f} / {max(t):6.3f}   "
                + "  ".join(f"{values[name][m]:11.6f}" for m in MEASURES))
        for name in names[1:]:
            r = ratios[name]
            say(f"  rd.evaluate / {name:<12} per round min / median / max: {min(r):.2f} / "
                f"{statistics.median(r):.2f} / {max(r):.2f}  ({len(r)} rounds)")
        cli_identity(qrels, run, out)
        print(out[-1], flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(out) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
