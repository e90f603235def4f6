"""End-to-end speed of ``reviewdepth eval`` against trec_eval 9.0.8 and pytrec_eval.

Two synthetic shapes are generated deterministically (numpy ``default_rng``, fixed seed) into the work
directory (default ``bench/data/``, git-ignored); generation is skipped when the files already exist with
the same parameters:

* ``a`` / ``1000x1000``: 1,000 queries x 1,000 retrieved docs, 200 judged docs per query (30% relevant);
* ``b`` / ``1x2M``: one query x 2,000,000 retrieved docs, 245,000 judged docs (30% relevant).

Each tool is timed from process start to last output line (``time.perf_counter`` around
``subprocess.run``), ``--repeat`` times (default 3); the median is reported. pytrec_eval is timed doing the
whole job in a subprocess: plain-Python parsing of both files, ``RelevanceEvaluator`` with trec_eval's
default measure set, and aggregation of every per-query value.

Build trec_eval 9.0.8 (the reference binary)::

    # clone usnistgov/trec_eval (GitHub) into /tmp/te, then:
    cd /tmp/te && git checkout v9.0.8 && make      # produces /tmp/te/trec_eval

Run the bench (from the repository root, with reviewdepth and optionally pytrec_eval installed)::

    TREC_EVAL=/tmp/te/trec_eval python bench/eval_bench.py [--shapes a,b] [--repeat 3] [--workdir DIR]

Targets: reviewdepth >= 1.5x faster than trec_eval 9.0.8 and >= 3x faster than pytrec_eval. The script
always exits 0: it is a measurement, not a test.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from functools import reduce
from pathlib import Path

import numpy as np

SEED = 20240531
CHUNK = 250_000  # lines per vectorised write
SHAPES: dict[str, dict[str, int | float | str]] = {
    "a": {"name": "1000x1000", "queries": 1000, "docs": 1000, "judged": 200, "rel_frac": 0.3},
    "b": {"name": "1x2M", "queries": 1, "docs": 2_000_000, "judged": 245_000, "rel_frac": 0.3},
}
TARGETS = {"trec_eval": 1.5, "pytrec_eval": 3.0}
LABELS = {"trec_eval": "trec_eval 9.0.8", "pytrec_eval": "pytrec_eval"}
# trec_eval's default measure set (runid and num_q are not per-query measures in pytrec_eval).
PYTREC_PROG = r"""
import sys, pytrec_eval
qrels = {}
with open(sys.argv[1]) as f:
    for line in f:
        qid, _, docno, rel = line.split()
        qrels.setdefault(qid, {})[docno] = int(rel)
run = {}
with open(sys.argv[2]) as f:
    for line in f:
        qid, _, docno, _, score, _ = line.split()
        run.setdefault(qid, {})[docno] = float(score)
measures = {"map", "gm_map", "Rprec", "bpref", "recip_rank", "iprec_at_recall", "P",
            "num_ret", "num_rel", "num_rel_ret"}
res = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
per_query = list(res.values())
for key in sorted(per_query[0]):
    value = pytrec_eval.compute_aggregated_measure(key, [q[key] for q in per_query])
    print(f"{key:<22}\tall\t{value:.4f}")
"""


def _cat(*parts: np.ndarray | str) -> np.ndarray:
    """Element-wise string concatenation (vectorised, numpy >= 2)."""
    return reduce(np.strings.add, parts)  # type: ignore[arg-type]


def _write_lines(path: Path, n: int, build: Callable[[slice], np.ndarray]) -> None:
    with path.open("w", encoding="ascii", newline="\n") as fh:
        for lo in range(0, n, CHUNK):
            fh.write("".join(build(slice(lo, min(lo + CHUNK, n))).tolist()))


def generate(workdir: Path, key: str) -> tuple[Path, Path]:
    """Write ``<name>.qrels`` and ``<name>.run`` for shape ``key`` unless they already exist."""
    p = SHAPES[key]
    name, nq, nd, nj = str(p["name"]), int(p["queries"]), int(p["docs"]), int(p["judged"])
    qrels, run, meta = (workdir / f"{name}{ext}" for ext in (".qrels", ".run", ".params.json"))
    params = {**p, "seed": SEED, "format": 1}
    if qrels.exists() and run.exists() and meta.exists() and json.loads(meta.read_text()) == params:
        return qrels, run
    t0 = time.perf_counter()
    workdir.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(SEED)
    qids = np.repeat(np.arange(1, nq + 1), nd)
    prefix = np.repeat(np.array([f"DOC{q}-" for q in range(1, nq + 1)]), nd)
    # Docno index per rank: a random permutation per query, i.e. random order relative to score.
    doc_idx = rng.permuted(np.tile(np.arange(nd, dtype=np.int64), (nq, 1)), axis=1).ravel()
    # Scores in micro-units (6 decimals), sorted descending within each query; ties are possible.
    micro = -np.sort(-rng.integers(0, 10**9, size=(nq, nd), dtype=np.int64), axis=1).ravel()
    ranks = np.tile(np.arange(1, nd + 1), nq)

    def run_lines(s: slice) -> np.ndarray:
        frac = np.strings.zfill((micro[s] % 10**6).astype(str), 6)
        score = _cat((micro[s] // 10**6).astype(str), ".", frac)
        docno = _cat(prefix[s], np.strings.zfill(doc_idx[s].astype(str), 7))
        return _cat(qids[s].astype(str), " Q0 ", docno, " ", ranks[s].astype(str), " ", score, " bench\n")

    # Judged docs: a random subset of each query's retrieved docs; exactly rel_frac of them relevant.
    judged = rng.permuted(np.tile(np.arange(nd, dtype=np.int64), (nq, 1)), axis=1)[:, :nj]
    rel = np.zeros((nq, nj), dtype=np.int64)
    rel[:, : round(nj * float(p["rel_frac"]))] = 1
    rel = rng.permuted(rel, axis=1)
    j_idx, j_rel = judged.ravel(), rel.ravel()
    j_q = np.repeat(np.arange(1, nq + 1), nj)
    j_prefix = np.repeat(np.array([f"DOC{q}-" for q in range(1, nq + 1)]), nj)

    def qrels_lines(s: slice) -> np.ndarray:
        docno = _cat(j_prefix[s], np.strings.zfill(j_idx[s].astype(str), 7))
        return _cat(j_q[s].astype(str), " 0 ", docno, " ", j_rel[s].astype(str), "\n")

    _write_lines(run, nq * nd, run_lines)
    _write_lines(qrels, nq * nj, qrels_lines)
    meta.write_text(json.dumps(params))
    print(f"generated {name} in {time.perf_counter() - t0:.1f}s -> {workdir}", flush=True)
    return qrels, run


def time_cmd(cmd: list[str], out: Path, repeat: int) -> float | None:
    """Median wall time of ``cmd`` (stdout to ``out``); None when it fails."""
    times = []
    for _ in range(repeat):
        with out.open("wb") as fh:
            t0 = time.perf_counter()
            proc = subprocess.run(cmd, stdout=fh, stderr=subprocess.PIPE, check=False)
            times.append(time.perf_counter() - t0)
        if proc.returncode != 0:
            err = proc.stderr.decode(errors="replace").strip().splitlines()[-5:]
            print(f"  FAILED ({proc.returncode}): {' '.join(cmd[:2])} ...\n    " + "\n    ".join(err))
            return None
    return statistics.median(times)


def find_reviewdepth() -> str | None:
    exe = Path(sys.executable).parent / "reviewdepth"
    return str(exe) if exe.exists() else shutil.which("reviewdepth")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--workdir", type=Path, default=Path(__file__).resolve().parent / "data")
    ap.add_argument("--shapes", default="a,b", help="comma-separated subset of: " + ",".join(SHAPES))
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    shapes = [s.strip() for s in args.shapes.split(",") if s.strip()]
    if unknown := [s for s in shapes if s not in SHAPES]:
        print(f"unknown shape(s) {unknown}; choose from {list(SHAPES)}")
        return 0
    rd = find_reviewdepth()
    te = os.environ.get("TREC_EVAL")
    if te and not Path(te).is_file():
        print(f"TREC_EVAL={te} is not a file; skipping trec_eval")
        te = None
    has_pytrec = importlib.util.find_spec("pytrec_eval") is not None
    print(f"reviewdepth: {rd or 'NOT FOUND'}\ntrec_eval:   {te or 'not set (TREC_EVAL)'}")
    print(f"pytrec_eval: {'yes' if has_pytrec else 'not importable'}\nrepeat:      {args.repeat} (median)\n")
    outdir = args.workdir / "out"
    results: dict[str, dict[str, float | None]] = {}
    for key in shapes:
        qrels, run = generate(args.workdir, key)
        outdir.mkdir(parents=True, exist_ok=True)
        name = str(SHAPES[key]["name"])
        cmds: dict[str, list[str]] = {}
        if rd:
            cmds["reviewdepth"] = [rd, "eval", str(qrels), str(run)]
        if te:
            cmds["trec_eval"] = [te, str(qrels), str(run)]
        if has_pytrec:
            cmds["pytrec_eval"] = [sys.executable, "-c", PYTREC_PROG, str(qrels), str(run)]
        results[name] = {}
        for tool, cmd in cmds.items():
            print(f"timing {name} / {tool} ...", flush=True)
            results[name][tool] = time_cmd(cmd, outdir / f"{name}.{tool}.txt", args.repeat)
        if rd and te and results[name]["reviewdepth"] is not None and results[name]["trec_eval"] is not None:
            got, want = (outdir / f"{name}.{t}.txt" for t in ("reviewdepth", "trec_eval"))
            same = got.read_bytes() == want.read_bytes()
            print(f"  {name}: identical output (reviewdepth vs trec_eval): {'yes' if same else 'no'}")
    print(f"\n{'shape':<11} {'tool':<12} {'median s':>9} {'tool / reviewdepth':>19}")
    print("-" * 54)
    for name, row in results.items():
        base = row.get("reviewdepth")
        for tool, sec in row.items():
            ratio = f"{sec / base:.2f}x" if sec is not None and base else "-"
            print(f"{name:<11} {tool:<12} {'failed' if sec is None else f'{sec:.3f}':>9} {ratio:>19}")
    print("\ntargets (how many times faster reviewdepth is):")
    for name, row in results.items():
        base = row.get("reviewdepth")
        for tool, target in TARGETS.items():
            sec = row.get(tool)
            if sec is None or not base:
                print(f"  {name:<11} vs {LABELS[tool]:<18} >= {target}x: n/a")
                continue
            met = "met" if sec / base >= target else "NOT met"
            print(f"  {name:<11} vs {LABELS[tool]:<18} >= {target}x: {sec / base:.2f}x {met}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
