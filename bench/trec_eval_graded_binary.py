"""Graded measures and -J/-N against the real trec_eval 9.0.8 binary, line for line.

pytrec-eval-terrier cannot take gain parameters (``-m ndcg.1=3,2=1`` makes it report "malformed pair parameters"
or crash), so this compares ``reviewdepth eval`` with trec_eval 9.0.8 itself on random graded qrels (values −1 … 4,
some queries with gaps between levels) and runs with ties, under every combination of ``-J``, ``-l 1/2``,
``-M``, ``-c``, ``-N`` and a random set of gain parameters (integer, fractional and less-than-1-apart gains,
negative and zero gains, levels absent from the qrels, the −1 level of documents absent from the qrels). Every
printed line of ``-q -m all_trec`` plus the gain-parameter measures must be equal.

Build the binary (see bench/eval_bench.py)::

    cd /tmp/te && git checkout v9.0.8 && make      # NIST usnistgov/trec_eval

    TREC_EVAL=/tmp/te/trec_eval python bench/trec_eval_graded_binary.py [--cases 300] [--seed 1]
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import tempfile
from pathlib import Path

from reviewdepth.report.render import render
from reviewdepth.services.evaluation.evaluate import EvalOptions, evaluate_files

GRADED = ("ndcg", "ndcg_rel", "Rndcg", "G", "binG", "ndcg_cut")


def random_files(rng: random.Random, directory: Path) -> tuple[Path, Path]:
    qrels, run = [], []
    for q in rng.sample(["1", "2", "10", "9", "a"], rng.randint(1, 4)):
        docs = [f"d{i}" for i in range(rng.randint(1, 40))]
        levels = rng.choice([[0, 1], [0, 1, 2, 3], [0, 2, 4], [-1, 0, 1, 3, 4], [1, 2]])
        judged = rng.sample(docs, rng.randint(1, len(docs)))
        values = {d: rng.choice(levels) for d in judged}
        if all(v < 0 for v in values.values()):
            values[judged[0]] = 0
        qrels += [f"{q} 0 {d} {v}\n" for d, v in values.items()]
        if rng.random() < 0.9:
            for d in rng.sample([*docs, "x1", "x2", "x3"], rng.randint(1, len(docs) + 3)):
                run.append(f"{q} Q0 {d} 0 {rng.choice([1.0, 2.0, 3.5, 0.25, 7.0, -1.0])} t\n")
    if not run:
        q = qrels[0].split()[0]
        run.append(f"{q} Q0 d0 0 1.0 t\n")
    qpath, rpath = directory / "qrels", directory / "run"
    qpath.write_text("".join(qrels))
    rpath.write_text("".join(run))
    return qpath, rpath


def random_gains(rng: random.Random) -> str:
    levels = rng.sample([-1, 0, 1, 2, 3, 4, 5], rng.randint(1, 3))
    gains = [rng.choice(["3", "0.5", "0.7", "1.2", "9", "0", "-2", "2.5", "1"]) for _ in levels]
    return ",".join(f"{level}={gain}" for level, gain in zip(levels, gains, strict=True))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=300)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    binary = os.environ.get("TREC_EVAL", "/tmp/te/trec_eval")
    rng = random.Random(args.seed)
    lines = mismatched = runs = 0
    names: set[str] = set()
    combos: set[tuple[object, ...]] = set()
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.cases):
            qrels, run = random_files(rng, Path(tmp))
            judged, level = rng.random() < 0.5, rng.choice([1, 2])
            max_docs, complete = rng.choice([None, 3, 10]), rng.random() < 0.3
            num_docs = rng.choice([None, 500])
            gains = random_gains(rng)
            measures = ["all_trec"] + [f"{m}.{gains}" for m in GRADED if m not in ("binG", "ndcg_cut")]
            measures.append("ndcg_cut." + ",".join(str(k) for k in sorted(rng.sample(range(1, 40), 3))))
            flags = ["-q", "-l", str(level)] + (["-J"] if judged else []) + (["-c"] if complete else [])
            flags += [] if max_docs is None else ["-M", str(max_docs)]
            flags += [] if num_docs is None else ["-N", str(num_docs)]
            combos.add((judged, level, max_docs is not None, complete, num_docs is not None))
            cmd = [binary, *flags, *(x for m in measures for x in ("-m", m)), str(qrels), str(run)]
            done = subprocess.run(cmd, capture_output=True, text=True, check=False)
            if done.returncode != 0:
                continue  # trec_eval refuses the case (e.g. no query in both files); not compared
            runs += 1
            ours = render(evaluate_files(qrels, run, EvalOptions(
                measures=measures, relevance_level=level, judged_only=judged, complete=complete,
                max_docs=max_docs, num_docs=num_docs)), "trec", per_query=True).splitlines()
            want = done.stdout.splitlines()
            graded_want = [w for w in want if w.split()[0].startswith(GRADED)]
            names |= {w.split()[0] for w in graded_want}
            lines += len(want)
            if ours != want:
                bad = [(o, w) for o, w in zip(ours, want, strict=False) if o != w]
                mismatched += max(len(bad), abs(len(ours) - len(want)))
                print("MISMATCH", " ".join(cmd), bad[:3])
    print(f"trec_eval 9.0.8 binary: {runs} random cases compared ({args.cases} drawn), "
          f"{len(combos)} option combinations (-J × -l × -M × -c × -N), {len(names)} distinct graded printed "
          f"names, {lines} lines (all_trec + gain parameters), {mismatched} mismatched")


if __name__ == "__main__":
    main()
