"""The trec_eval differential in figures: measures × options × files compared and mismatches (goal 0).

1. trec_eval's own regression outputs (9.0.8: ../shared/data/trec_eval-test-v9.0.8, 10.0: ../shared/data/
   trec_eval-test; the copies under tests/data/trec_eval are used when ../shared is absent): every printed line
   of ``reviewdepth eval`` against the file trec_eval wrote.
2. pytrec-eval-terrier 0.5.11 (trec_eval 9.0.8's C code) on random qrels and runs with ties, float32-close
   scores, graded and negative values, unjudged documents, queries in one file only, ``-c``, ``-M`` and ``-l 2``:
   every per-query and summary value of every measure pytrec_eval has, printed (``%6.4f``) and raw (1e-12).
3. With ``--trec-eval9`` / ``--trec-eval10`` (binaries built from usnistgov/trec_eval at v9.0.8 and at 10.0, as
   bench/eval_bench.py says): the same random cases written to files, ``-m all_trec -q`` plus parameterised
   utility, relstring and (10.0) rbp_resid, with their ``-c``, ``-M``, ``-l`` and a random ``-J`` and ``-N``; the
   whole printed output compared line by line (an error must be an error in both).

    python bench/trec_eval_differential.py [--cases 2000] [--seed 1] [--trec-eval9 PATH] [--trec-eval10 PATH]
"""

from __future__ import annotations

import argparse
import math
import random
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
COPIES = ROOT / "tests" / "data" / "trec_eval"

MEAS_PARAMS = ["-m", "iprec_at_recall..10,.20,.25,.75,.50", "-m", "P.5,7,3", "-m", "recall.20,2000",
               "-m", "Rprec_mult.5.0,0.2,0.35", "-m", "utility.2,-1,0,0", "-m", "11pt_avg..25,.5,.75",
               "-m", "ndcg.1=3,2=9,4=4.5", "-m", "ndcg_cut.10,20,23.4", "-m", "success.2,5,20"]
CASES = [
    ("out.test", "qrels.test", "results.test", []),
    ("out.test.a", "qrels.test", "results.test", ["-m", "all_trec"]),
    ("out.test.aq", "qrels.test", "results.test", ["-m", "all_trec", "-q"]),
    ("out.test.aqc", "qrels.test", "results.trunc", ["-m", "all_trec", "-q", "-c"]),
    ("out.test.aqcM", "qrels.test", "results.trunc", ["-m", "all_trec", "-q", "-c", "-M", "100"]),
    ("out.test.aql", "qrels.rel_level", "results.test", ["-m", "all_trec", "-m", "relstring.20", "-q", "-l", "2"]),
    ("out.test.meas_params", "qrels.test", "results.test", ["-q", *MEAS_PARAMS]),
]


def expected_outputs() -> None:
    from typer.testing import CliRunner

    from reviewdepth.cli.app import create_cli

    total_lines = total_bad = files = 0
    measures: set[str] = set()
    for version, folder, copy_prefix in ((9, "trec_eval-test-v9.0.8", "out"), (10, "trec_eval-test", "out10")):
        for expected, qrels, run, options in CASES:
            base = SHARED / folder
            want_path = base / expected
            if not base.exists():
                want_path = COPIES / expected.replace("out", copy_prefix, 1)
                base = COPIES
            if not want_path.exists():
                continue
            inputs = SHARED / "trec_eval-test" if (SHARED / "trec_eval-test").exists() else COPIES
            args = ["eval", *options, "--trec-eval-version", str(version), str(inputs / qrels), str(inputs / run)]
            result = CliRunner().invoke(create_cli(), args)
            ours = result.stdout.splitlines()
            want = want_path.read_text().splitlines()
            bad = sum(a != b for a, b in zip(ours, want, strict=False)) + abs(len(ours) - len(want))
            names = {line.split()[0] for line in want}
            measures |= names
            files += 1
            total_lines += len(want)
            total_bad += bad
            print(f"  {version:>2}  {expected:<22} {' '.join(options[:8]):<44} {len(names):>4} names "
                  f"{len(want):>5} lines  {bad} mismatched")
    print(f"expected outputs: {files} files, {len(measures)} distinct printed names, {total_lines} lines, "
          f"{total_bad} mismatched")


QIDS = ["1", "01", "10", "9", "a", "B"]
DOCS = ["d1", "d10", "d9", "D2", "a", "b", "x-1", "x_2", "zz", "d100", "e", "f", "g", "h"]
SCORES = [1.0, 1.00000001, 1.00000002, 0.5, -0.5, 0.0, 2.5, 1e-3, 3.0, 10.0, -1e6, 0.25]
RELS = [-1, 0, 0, 1, 1, 2, 3, 4]


def random_case(rng: random.Random) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]], bool,
                                              int | None, int]:
    qrels: dict[str, dict[str, int]] = {}
    for qid in rng.sample(QIDS, rng.randint(1, 4)):
        docs = rng.sample(DOCS, rng.randint(1, 12))
        rels = {d: rng.choice(RELS) for d in docs}
        if all(v < 0 for v in rels.values()):
            rels[docs[0]] = 0
        qrels[qid] = rels
    run_qids = rng.sample(QIDS, rng.randint(1, 4))
    if not set(run_qids) & set(qrels):
        run_qids.append(next(iter(qrels)))
    run = {q: {d: rng.choice(SCORES) for d in rng.sample(DOCS, rng.randint(1, 14))} for q in run_qids}
    return qrels, run, rng.random() < 0.5, rng.choice([None, None, 1, 2, 3, 5]), rng.choice([1, 1, 2])


def pytrec_eval_differential(cases: int, seed: int) -> None:
    import pytrec_eval

    from reviewdepth.formats.trec import parse_qrels, parse_run
    from reviewdepth.services.evaluation.evaluate import EvalOptions, evaluate_columns

    oracle_measures = set(pytrec_eval.supported_measures) - {"runid", "num_q", "relstring"}
    counts = {"num_ret", "num_rel", "num_rel_ret", "num_q", "num_nonrel_judged_ret"}
    geometric = {"gm_map", "gm_bpref"}
    rng = random.Random(seed)
    values = bad = 0
    names: set[str] = set()
    option_sets: set[tuple[bool, int | None, int]] = set()
    for _ in range(cases):
        qrels, run, complete, max_docs, level = random_case(rng)
        option_sets.add((complete, max_docs, level))
        qtext = "".join(f"{q} 0 {d} {r}\n" for q, docs in qrels.items() for d, r in docs.items()).encode()
        rtext = "".join(f"{q} Q0 {d} {i} {s!r} t\n" for q, docs in run.items()
                        for i, (d, s) in enumerate(docs.items())).encode()
        ours = evaluate_columns(parse_qrels(qtext), parse_run(rtext), EvalOptions(
            measures=["all"], complete=complete, max_docs=max_docs, relevance_level=level))
        if max_docs is not None:
            run = {q: dict(sorted(docs.items(), key=lambda kv: (float(np.float32(kv[1])), kv[0].encode()),
                                  reverse=True)[:max_docs]) for q, docs in run.items()}
        oracle = pytrec_eval.RelevanceEvaluator(qrels, oracle_measures, relevance_level=level).evaluate(run)

        def fmt(name: str, value: float) -> str:
            return "%ld" % int(value) if name in counts else "%6.4f" % value

        def check(name: str, got: object, want: float) -> None:
            nonlocal values, bad
            values += 1
            names.add(name)
            if not isinstance(got, int | float) or abs(got - want) > 1e-12 or fmt(name, got) != fmt(name, want):
                bad += 1
                print("  mismatch", name, got, want, file=sys.stderr)

        for qid, row in ours.per_query.items():
            for name, value in row.items():
                if not name.startswith("relstring"):
                    check(name, value, oracle[qid][name])
        qids = sorted(oracle, key=lambda q: q.encode())
        missing = [q for q in qrels if q not in oracle] if complete else []
        num_q = len(qids) + len(missing)
        for name in ours.measures:
            if name in ("runid", "num_q"):
                continue
            if name in geometric:
                total = 0.0
                for q in qids:
                    total += oracle[q][name]
                want = math.exp((total + len(missing) * math.log(1e-5)) / num_q)
            elif name == "num_rel" and complete:
                want = sum(1 for docs in qrels.values() for r in docs.values() if r > 0)
            elif name in counts:
                want = sum(oracle[q][name] for q in qids)
            else:
                total = 0.0
                for q in qids:
                    total += oracle[q][name]
                want = total / num_q
            check(name, ours.summary[name], want)
    print(f"pytrec_eval 0.5.11: {cases} random cases, {len(option_sets)} option combinations (-c × -M × -l), "
          f"{len(names)} printed names, {values} values, {bad} mismatched")


def binary_differential(binary: str, version: int, cases: int, seed: int) -> None:
    import subprocess
    import tempfile

    from reviewdepth.formats.errors import InputError
    from reviewdepth.formats.trec import parse_qrels, parse_run
    from reviewdepth.report.render import render
    from reviewdepth.services.evaluation.evaluate import EvalOptions, evaluate_columns

    rng = random.Random(seed)
    lines = bad = errors = 0
    names: set[str] = set()
    with tempfile.TemporaryDirectory() as tmp:
        qpath, rpath = Path(tmp) / "qrels", Path(tmp) / "run"
        for _ in range(cases):
            qrels, run, complete, max_docs, level = random_case(rng)
            qtext = "".join(f"{q} 0 {d} {r}\n" for q, docs in qrels.items() for d, r in docs.items()).encode()
            rtext = "".join(f"{q} Q0 {d} {i} {s!r} t\n" for q, docs in run.items()
                            for i, (d, s) in enumerate(docs.items())).encode()
            qpath.write_bytes(qtext)
            rpath.write_bytes(rtext)
            judged_only = rng.random() < 0.25
            num_docs = rng.choice([None, None, 0, 50])
            extra = ["utility.1,-1,-2,0.5", "relstring.5"] + (["rbp_resid.p=0.5"] if version >= 10 else [])
            args = [binary, "-m", "all_trec", *(x for m in extra for x in ("-m", m)), "-q", "-l", str(level)] + (
                ["-c"] if complete else []) + ([f"-M{max_docs}"] if max_docs else []) + (
                ["-J"] if judged_only else []) + ([f"-N{num_docs}"] if num_docs is not None else []) + [
                str(qpath), str(rpath)]
            done = subprocess.run(args, capture_output=True, text=True, check=False)
            try:
                ours = render(evaluate_columns(parse_qrels(qtext), parse_run(rtext), EvalOptions(
                    measures=["all_trec", *extra], complete=complete, max_docs=max_docs,
                    relevance_level=level, version=version, judged_only=judged_only, num_docs=num_docs)), "trec",
                    per_query=True).splitlines()
            except InputError:
                ours = None
            if done.returncode != 0 or ours is None:
                errors += 1
                if (done.returncode != 0) != (ours is None):
                    bad += 1
                    print("  error in one only", done.returncode, done.stderr.strip(), file=sys.stderr)
                continue
            want = done.stdout.splitlines()
            names |= {line.split()[0] for line in want}
            lines += len(want)
            wrong = [(a, b) for a, b in zip(ours, want, strict=False) if a != b]
            wrong += [("(missing)", b) for b in want[len(ours):]] + [(a, "(extra)") for a in ours[len(want):]]
            bad += len(wrong)
            for a, b in wrong[:3]:
                print(f"  {version}: ours {a!r} trec_eval {b!r}", file=sys.stderr)
    print(f"trec_eval {'9.0.8' if version == 9 else '10.0'} binary: {cases} random cases ({errors} refused by "
          f"both), {len(names)} printed names, {lines} lines, {bad} mismatched")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--trec-eval9", help="a trec_eval 9.0.8 binary")
    parser.add_argument("--trec-eval10", help="a trec_eval 10.0 binary")
    args = parser.parse_args()
    expected_outputs()
    pytrec_eval_differential(args.cases, args.seed)
    for binary, version in ((args.trec_eval9, 9), (args.trec_eval10, 10)):
        if binary:
            binary_differential(binary, version, args.cases, args.seed)


if __name__ == "__main__":
    main()
