"""Time ``reviewdepth eval --suite tar`` against ``--suite trec`` on every shipped CLEF TAR 2019 run.

Both suites run as subprocesses of the installed ``reviewdepth`` console script (process start to last line),
each run against its qrels (Sheffield runs: their review type's abstract qrels; ILPS runs: all 31 topics'
abstract or content qrels, concatenated into a temporary file). Prints per-run times and the ratio of the
totals (tar / trec; the issue's budget is 2x). Usage::

    python bench/tar_bench.py [--repeat 3] [--compat clef2019] [--data ../shared/data/clef-tar-2019]
"""

from __future__ import annotations

import argparse
import gzip
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "clef-tar-2019"
TYPES = ("dta", "intervention", "prognosis", "qualitative")


def executable() -> str:
    local = Path(sys.executable).parent / "reviewdepth"
    found = str(local) if local.exists() else shutil.which("reviewdepth")
    if not found:
        sys.exit("the reviewdepth console script is not installed")
    return found


def pairs(data: Path, tmp: Path) -> list[tuple[str, Path, Path]]:
    """(name, qrels, run) for every run."""
    qrels = data / "qrels"
    combined: dict[str, Path] = {}
    for level in ("abs", "content"):
        target = tmp / f"all.{level}.qrels"
        with target.open("wb") as out:
            for kind in TYPES:
                out.write(gzip.decompress((qrels / f"full.test.{kind}.{level}.2019.qrels.gz").read_bytes()))
        combined[level] = target
    out_pairs: list[tuple[str, Path, Path]] = []
    for run in sorted((data / "runs" / "sheffield").glob("*.gz")):
        kind = run.name.split("_", 1)[0].lower()
        out_pairs.append((f"sheffield/{run.stem}", qrels / f"full.test.{kind}.abs.2019.qrels.gz", run))
    for run in sorted((data / "runs" / "ilps").glob("*.gz")):
        level = "abs" if run.name.startswith("abs-") else "content"
        out_pairs.append((f"ilps/{run.stem}", combined[level], run))
    return out_pairs


def timed(args: list[str], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        done = subprocess.run(args, capture_output=True, check=False)
        times.append(time.perf_counter() - start)
        if done.returncode != 0:
            sys.exit(f"failed: {' '.join(args)}\n{done.stderr.decode()}")
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--compat", default="clef2019")
    ns = parser.parse_args()
    if not ns.data.exists():
        sys.exit(f"CLEF TAR 2019 data not found at {ns.data}")
    exe = executable()
    total_tar = total_trec = 0.0
    with tempfile.TemporaryDirectory() as tmpdir:
        for name, qrels, run in pairs(ns.data, Path(tmpdir)):
            trec = timed([exe, "eval", str(qrels), str(run)], ns.repeat)
            tar = timed([exe, "eval", str(qrels), str(run), "--suite", "tar", "--compat", ns.compat], ns.repeat)
            total_trec += trec
            total_tar += tar
            print(f"{name:55s} trec {trec:6.3f} s   tar {tar:6.3f} s   ratio {tar / trec:5.2f}")
    print(f"{'total':55s} trec {total_trec:6.3f} s   tar {total_tar:6.3f} s   ratio {total_tar / total_trec:5.2f}")


if __name__ == "__main__":
    main()
