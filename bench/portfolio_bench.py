"""Every stopping rule on the CLEF TAR 2017–2019 portfolio: each topic of each real submitted run, replayed as a
completed review (issue 17, Show 1), through the same service as ``reviewdepth simulate``.

Topic–run pairs: CLEF 2017 (abstract qrels; amc, ecnu, iiit, qut, waterloo A and B), CLEF 2018 task 1 (abstract
qrels; the three ECNU runs), CLEF 2019 task 2 (Sheffield's runs with their review type's abstract qrels; ILPS's
abstract runs with the four abstract qrels together, its document run with the four content qrels). A topic's
queue is the run's ranking in file order (CLEF's rule); a document without a qrels line counts as non-relevant; a
pair without a relevant document is left out (the report says which). Each pair is its own topic (named
``year/run/topic``), so a topic ranked by six runs counts six times: the portfolio is topic–run pairs.

Three designs, each with every rule it can replay (docs/estimation.md §5c):

* ``audit``: one audit document per 10 ranked documents — monitor, fixed, qbcb, target, knee, budget;
* ``rest``: a fresh sample of 100 of the unreviewed rest at every look — elusion, hypergeometric (knee and budget
  again: they read no sample);
* ``population``: one simple random sample of 300 of the whole queue before the review — qbcb, target, direct;
  pairs whose queue holds fewer than 600 documents are left out of this design (the sample would be most of it).

Looks every 100 ranked documents, target 0.95, confidence 0.95. Run from the repository root::

    python bench/portfolio_bench.py [--replicates 1000] [--workers 2] [--designs audit,rest,population] [--out F]

It prints each design's table (the ``reviewdepth simulate`` table) with the pair count and wall time, and writes
the same to ``--out`` (default ``bench/results/portfolio.txt``). Needs ``../shared/data`` beside the checkout.
"""

from __future__ import annotations

import argparse
import gzip
import sys
import tempfile
import time
from pathlib import Path

from reviewdepth.report.render import render
from reviewdepth.services.simulation.simulate import (
    NamedQueue,
    SimulationSource,
    build_plan,
    queues_from_files,
    run_simulation,
)

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
TYPES = ("dta", "intervention", "prognosis", "qualitative")
DESIGNS = {
    "audit": {"design": "audit", "every": 10},
    "rest": {"design": "rest", "sample_size": 100},
    "population": {"design": "population", "sample_size": 300},
}
POPULATION_MIN_QUEUE = 600


def _joined_qrels(paths: list[Path], directory: Path, name: str) -> Path:
    """Several qrels files as one (ILPS's runs cover the four 2019 review types)."""
    out = directory / name
    with out.open("wb") as sink:
        for path in paths:
            data = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
            sink.write(data if data.endswith(b"\n") else data + b"\n")
    return out


def pairs(directory: Path) -> list[tuple[str, Path, Path]]:
    """(label, qrels, run) for every real run of the three years."""
    y17, y18, y19 = DATA / "clef-tar-2017", DATA / "clef-tar-2018", DATA / "clef-tar-2019"
    out = [(f"2017/{run.name.removesuffix('.gz')}", y17 / "qrels" / "qrel_abs_test.txt.gz", run)
           for run in sorted((y17 / "runs").glob("*.gz"))]
    out += [(f"2018/{run.name.removesuffix('.task1.gz')}", y18 / "qrels" / "task1.test.abs.2018.qrels", run)
            for run in sorted((y18 / "runs").glob("*.gz"))]
    for run in sorted((y19 / "runs" / "sheffield").glob("*.gz")):
        kind = run.name.split("_", 1)[0].lower()
        out.append((f"2019/{run.name.removesuffix('.gz')}", y19 / "qrels" / f"full.test.{kind}.abs.2019.qrels.gz", run))
    joined = {level: _joined_qrels([y19 / "qrels" / f"full.test.{t}.{level}.2019.qrels.gz" for t in TYPES],
                                   directory, f"all.{level}.2019.qrels") for level in ("abs", "content")}
    for run in sorted((y19 / "runs" / "ilps").glob("*.gz")):
        out.append((f"2019/{run.name.removesuffix('.gz')}", joined["content" if run.name.startswith("doc") else "abs"],
                    run))
    return out


def portfolio(directory: Path) -> SimulationSource:
    queues: list[NamedQueue] = []
    for label, qrels, run in pairs(directory):
        for queue in queues_from_files(str(qrels), str(run)):
            queues.append(NamedQueue(f"{label}/{queue.name}", queue.labels, queue.origin, queue.unlabelled))
    return SimulationSource(tuple(queues), "CLEF TAR 2017–2019: every topic of every real run (topic–run pairs)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--replicates", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--designs", default="audit,rest,population")
    parser.add_argument("--out", default="bench/results/portfolio.txt")
    args = parser.parse_args()
    if not DATA.is_dir():
        sys.exit(f"portfolio_bench: {DATA} is missing (the CLEF data of ../shared)")
    lines: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        source = portfolio(Path(tmp))
    with_relevant = [q for q in source.queues if q.relevant > 0]
    head = (f"# python bench/portfolio_bench.py --replicates {args.replicates} --workers {args.workers} "
            f"--seed {args.seed} --designs {args.designs}\n"
            f"# {len(source.queues)} topic-run pairs, {len(with_relevant)} with a relevant document; "
            f"{sum(len(q.labels) for q in source.queues):,} ranked documents")
    print(head, flush=True)
    lines.append(head)
    for name in args.designs.split(","):
        settings = DESIGNS[name]
        chosen = source
        if name == "population":
            kept = tuple(q for q in source.queues if len(q.labels) >= POPULATION_MIN_QUEUE)
            chosen = SimulationSource(kept, f"{source.description}, queues of {POPULATION_MIN_QUEUE} or more")
        plan = build_plan(**settings, target="0.95", confidence=0.95, look_every=100,  # type: ignore[arg-type]
                          replicates=args.replicates, seed=args.seed)
        started = time.perf_counter()
        report = run_simulation(chosen, plan, workers=args.workers)
        seconds = time.perf_counter() - started
        pairs_used = sum(1 for q in chosen.queues if q.relevant > 0)
        block = (f"\n## design {name} ({pairs_used} pairs × {args.replicates} replicates, {seconds:,.0f} s wall, "
                 f"{pairs_used * args.replicates / seconds:,.0f} replicates/s with {args.workers} workers)\n"
                 + render(report, "table"))
        print(block, flush=True)
        lines.append(block)
    Path(args.out).write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
