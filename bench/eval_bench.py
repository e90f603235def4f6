"""End-to-end speed and memory of ``reviewdepth eval`` against trec_eval and pytrec_eval, in one run.

Three tools, each run as a child process on the same qrels and run file, output to a file:

* ``reviewdepth eval QRELS RUN``: the installed console script beside ``sys.executable`` (else the one on PATH);
* ``$TREC_EVAL QRELS RUN``: a trec_eval binary (or ``--trec-eval PATH``); the targets assume 9.0.8 built with
  ``-O2``, see below;
* pytrec_eval (package ``pytrec-eval-terrier``), timed doing the whole job in a subprocess of ``sys.executable``:
  plain-Python parsing of both files, ``RelevanceEvaluator`` with trec_eval's default measures, aggregation of
  every per-query value (``PYTREC_PROG`` below).

A tool that is missing is skipped with a message. Workloads (``--workloads``, comma-separated):

* ``w1``: 1,000 queries x 1,000 retrieved docs, 200 judged per query (30 % relevant); 1 M run lines;
* ``w2s``: W2 shuffled: 1 query x 2 M docs, 245 k judgments; docnos in random order relative to the score and the
  run file's lines in random order (a permutation of ``w2``'s lines), so neither tool gets pre-sorted input;
* ``w2``: W2 as generated: the same lines as ``w2s`` but in descending score order (docnos still random);
  printed for comparison, not a target workload;
* ``clef``: real CLEF TAR data from ``../shared/data/clef-tar-2019``: the ten shipped Task 2 runs
  (369,272 lines) in one TREC run file, each run against its qrels (Sheffield: its review type's abstract
  qrels; ILPS: the abstract or content qrels of all 31 topics). Topic ids get a per-run suffix (``CD008874-3``)
  so the runs do not collide, and every line gets one run tag; docno, rank and score fields are kept as
  published. Skipped with a message when ``../shared`` is absent;
* ``s0.5 s1 s2 s4 s8`` (or ``--scaling``): the W1 shape with 500, 1,000, 2,000, 4,000 and 8,000 queries,
  i.e. 0.5 to 8 M run lines; ``s1`` is the same file as ``w1``. The 8 M file is 340 MB and takes a while.
  pytrec_eval is left out of the series unless ``--scaling-tools`` names it (it needs several GiB at 8 M);
  ``--tools`` likewise chooses the tools for the other workloads (default: all three).

Synthetic files are generated deterministically (numpy ``default_rng``, fixed seed) into the work directory
(default ``bench/data/``, git-ignored) and regenerated only when their ``.params.json`` differs; the CLEF file
likewise (keyed by the source files' names and sizes).

Timing: one untimed warm-up round per workload (``--warmup``; fills the page cache), then ``--pairs N`` (default
5) interleaved rounds: reviewdepth, trec_eval, pytrec_eval, reviewdepth, trec_eval, ... Each tool is started
by a small launcher process (``LAUNCHER``: ``os.posix_spawnp``, then ``os.wait4``) that reports wall seconds
from before the spawn to the reap, and the user and system CPU seconds and peak RSS (``ru_maxrss``) of the
tool's process. (Spawned straight from this script, a child's ``ru_maxrss`` would start at this script's own
peak; through the launcher it starts at the launcher's, about 8 MiB, printed at the start as the RSS floor.)
Printed: each tool's min/median/max wall seconds, median user and system CPU seconds, the largest peak RSS over
its runs in MiB and in MiB per million input lines, where input lines = run lines + qrels lines (the
run-lines-only figure is printed beside it); the ratio reviewdepth / peer of wall seconds computed per round,
with min/median/max over the rounds, and beside it the ratio of the median CPU seconds (load disturbs it less;
not used for the targets). For the scaling series: seconds per million input lines (median wall / M lines) per
size and its spread across sizes (max / min - 1).

Targets (printed with met / NOT met; verdicts use the median per-round ratio):

* reviewdepth <= 0.5x trec_eval 9.0.8 (-O2) on w1, w2s and clef;
* reviewdepth <= 0.33x pytrec_eval on the same workloads;
* seconds per million lines flat within +-15 % from 0.5 to 8 M lines (needs all five sizes), with two verdicts:
  every size within 15 % of the sizes' median (the target's words), and the stricter max / min - 1 <= 15 %;
  printed both as is and beyond start-up, i.e. (median s - the start-up run's s) / M lines, where the
  start-up run (``s0``, 1 query x 5 docs, timed with ``--scaling``) is the fixed cost of any run: at 0.5 M lines
  that fixed cost alone is a third of the time, so the plain figure falls with size even when the work per line
  is exactly linear; the growth the target guards against (page zeroing past 4 M lines) shows in both; and a
  third reading, the marginal cost of each doubling ((s of a size - s of the size before) / lines added), in
  which no fixed cost remains (the background scan hides part of a small input's work behind the start-up, so
  the beyond-start-up figure of 0.5 M lines is too low); the three are printed with their own verdicts;
* reviewdepth's peak RSS <= 100 MiB per million input lines, on every workload run;
* reviewdepth's peak RSS <= 1.0x trec_eval's on w1 and clef (the largest over each tool's runs; set for
  ``-m all_trec``, which computes every measure: run with ``-m all_trec``, see below);
* reviewdepth's output byte-identical to trec_eval's on every workload (warm-up and every timed round).

The machine's load average is printed at the start, before each workload and at the end; the tools' versions
and the working tree's commit at the start. ``--out FILE`` writes the whole report to FILE too. The script
always exits 0: it is a measurement, not a test.

Build trec_eval 9.0.8 with -O2 from its public source (the upstream Makefile compiles without optimisation and,
at the v9.0.8 tag, still says 9.0.7 in ``trec_eval -v``)::

    git clone https://github.com/usnistgov/trec_eval && cd trec_eval && git checkout v9.0.8 && \\
        make CFLAGS='-O2 -g -I. -Wall -DVERSIONID=\\"9.0.8\\"'       # produces ./trec_eval

Run (from the repository root, with reviewdepth and pytrec-eval-terrier installed in the active environment)::

    TREC_EVAL=/path/to/trec_eval python bench/eval_bench.py [--workloads w1,w2s,w2,clef] [--scaling]
        [--tools ...] [--scaling-tools ...] [--pairs 5] [--warmup 1] [--workdir bench/data]
        [--shared-data ../shared/data] [-m MEASURE ...] [--out FILE]

``-m all_trec`` (any ``-m``, repeatable) runs reviewdepth and trec_eval with those measures instead of the default
ones, pytrec_eval left out; the memory target of ``-m all_trec`` (peak RSS <= trec_eval's on w1 and clef) reads
the peak RSS columns of such a run::

    TREC_EVAL=/path/to/trec_eval python bench/eval_bench.py --workloads w1,clef -m all_trec

The defaults take about 10 minutes on a 2-core machine (pytrec_eval spends ~25 s per W2 run); ``--scaling``
adds about 5 (after a one-off minute generating the 8 M file).
"""

from __future__ import annotations

import argparse
import gzip
import importlib.metadata
import importlib.util
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import reduce
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

REPO = Path(__file__).resolve().parents[1]
SEED = 20240531
CHUNK = 250_000  # lines per vectorised write
TOOLS = ("reviewdepth", "trec_eval", "pytrec_eval")
TARGET_TREC = 0.5
TARGET_PYTREC = 0.33
TARGET_SPREAD = 0.15
TARGET_RSS_PER_M = 100.0
TARGET_WORKLOADS = ("w1", "w2s", "clef")
TARGET_RSS_PEER = 1.0  # reviewdepth's peak RSS / trec_eval's, set for -m all_trec (issue 30)
TARGET_RSS_PEER_WORKLOADS = ("w1", "clef")
SCALING = ("s0.5", "s1", "s2", "s4", "s8")
STARTUP = "s0"  # timed with the scaling series: the fixed start-up cost the per-line figures can be read beyond


@dataclass(frozen=True)
class Shape:
    """A synthetic workload: ``queries`` x ``docs`` run lines, ``judged`` qrels lines per query."""

    name: str
    queries: int
    docs: int
    judged: int
    rel_frac: float = 0.3
    shuffle_lines: bool = False

    def params(self) -> dict[str, Any]:
        p: dict[str, Any] = {"name": self.name, "queries": self.queries, "docs": self.docs, "judged": self.judged,
                             "rel_frac": self.rel_frac, "seed": SEED, "format": 1}
        if self.shuffle_lines:  # absent otherwise, so files generated before this key existed stay cached
            p["shuffle_lines"] = True
        return p


SHAPES: dict[str, Shape] = {
    "w1": Shape("1000x1000", 1000, 1000, 200),
    "w2s": Shape("1x2M-shuf", 1, 2_000_000, 245_000, shuffle_lines=True),
    "w2": Shape("1x2M", 1, 2_000_000, 245_000),
    **{f"s{q / 1000:g}": Shape(f"{q}x1000", q, 1000, 200) for q in (500, 1000, 2000, 4000, 8000)},
    STARTUP: Shape("1x5", 1, 5, 3),
}
LABELS = {
    "w1": "W1 1,000 queries x 1,000 docs, 200 judged/query",
    "w2s": "W2 shuffled: 1 query x 2 M docs, 245 k judged, docnos and lines in random order",
    "w2": "W2 as generated: 1 query x 2 M docs, 245 k judged, lines in score order (not a target)",
    "clef": "CLEF TAR 2019 Task 2, all 10 shipped runs in one file, each against its qrels",
    **{k: f"scaling {SHAPES[k].queries:,} queries x 1,000 docs, 200 judged/query" for k in SCALING},
    STARTUP: "start-up: 1 query x 5 docs, 3 judged (the fixed cost of a run)",
}
CLEF_TYPES = ("dta", "intervention", "prognosis", "qualitative")

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


class Report:
    """Prints each line at once and keeps it for ``--out``."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def say(self, text: str = "") -> None:
        print(text, flush=True)
        self.lines.extend(text.split("\n"))

    def write(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(self.lines) + "\n", encoding="utf-8")


# ---------------------------------------------------------------------------------------------------- data


def _cat(*parts: NDArray[Any] | str) -> NDArray[Any]:
    """Element-wise string concatenation (vectorised, numpy >= 2)."""
    return reduce(np.strings.add, parts)  # type: ignore[arg-type,return-value]


def _zfill(values: NDArray[Any], width: int) -> NDArray[Any]:
    return np.strings.zfill(values.astype(str), width)


def _write_lines(path: Path, n: int, build: Callable[[slice], NDArray[Any]]) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    with tmp.open("w", encoding="ascii", newline="\n") as fh:
        for lo in range(0, n, CHUNK):
            fh.write("".join(build(slice(lo, min(lo + CHUNK, n))).tolist()))
    tmp.replace(path)  # an interrupted generation leaves no half file behind under the final name


def _cached(meta: Path, params: dict[str, Any], *files: Path) -> bool:
    if not (meta.exists() and all(f.exists() for f in files)):
        return False
    try:
        return bool(json.loads(meta.read_text()) == params)
    except ValueError:
        return False


def generate(workdir: Path, shape: Shape, report: Report) -> tuple[Path, Path]:
    """Write ``<name>.qrels`` and ``<name>.run`` for ``shape`` unless they already exist with its parameters."""
    nq, nd, nj = shape.queries, shape.docs, shape.judged
    qrels, run, meta = (workdir / f"{shape.name}{ext}" for ext in (".qrels", ".run", ".params.json"))
    params = shape.params()
    if _cached(meta, params, qrels, run):
        return qrels, run
    t0 = time.perf_counter()
    workdir.mkdir(parents=True, exist_ok=True)
    meta.unlink(missing_ok=True)
    rng = np.random.default_rng(SEED)
    qids = np.repeat(np.arange(1, nq + 1), nd)
    # Docno index per rank: a random permutation per query, i.e. random order relative to score.
    doc_idx = rng.permuted(np.tile(np.arange(nd, dtype=np.int64), (nq, 1)), axis=1).ravel()
    # Scores in micro-units (6 decimals), sorted descending within each query; ties are possible.
    micro = -np.sort(-rng.integers(0, 10**9, size=(nq, nd), dtype=np.int64), axis=1).ravel()
    ranks = np.tile(np.arange(1, nd + 1), nq)
    # Judged docs: a random subset of each query's retrieved docs; exactly rel_frac of them relevant.
    judged = rng.permuted(np.tile(np.arange(nd, dtype=np.int64), (nq, 1)), axis=1)[:, :nj].copy()
    rel = np.zeros((nq, nj), dtype=np.int64)
    rel[:, : round(nj * shape.rel_frac)] = 1
    rel = rng.permuted(rel, axis=1)
    # Drawn last, so the shuffled file holds exactly the unshuffled one's lines (rank column kept).
    order = rng.permutation(nq * nd) if shape.shuffle_lines else None

    def run_lines(s: slice) -> NDArray[Any]:
        idx: slice | NDArray[Any] = s if order is None else order[s]
        m, q = micro[idx], qids[idx].astype(str)
        score = _cat((m // 10**6).astype(str), ".", _zfill(m % 10**6, 6))
        docno = _cat("DOC", q, "-", _zfill(doc_idx[idx], 7))
        return _cat(q, " Q0 ", docno, " ", ranks[idx].astype(str), " ", score, " bench\n")

    j_idx, j_rel = judged.ravel(), rel.ravel()
    j_q = np.repeat(np.arange(1, nq + 1), nj)

    def qrels_lines(s: slice) -> NDArray[Any]:
        q = j_q[s].astype(str)
        return _cat(q, " 0 ", _cat("DOC", q, "-", _zfill(j_idx[s], 7)), " ", j_rel[s].astype(str), "\n")

    _write_lines(run, nq * nd, run_lines)
    _write_lines(qrels, nq * nj, qrels_lines)
    meta.write_text(json.dumps(params))
    report.say(f"  generated {shape.name} in {time.perf_counter() - t0:.1f}s -> {workdir}")
    return qrels, run


def clef_sources(data: Path) -> list[tuple[Path, list[Path]]]:
    """(run, its qrels files) for every shipped CLEF TAR 2019 run, in a fixed order."""
    qdir = data / "qrels"
    out: list[tuple[Path, list[Path]]] = []
    for run in sorted((data / "runs" / "sheffield").glob("*.gz")):
        kind = run.name.split("_", 1)[0].lower()
        out.append((run, [qdir / f"full.test.{kind}.abs.2019.qrels.gz"]))
    for run in sorted((data / "runs" / "ilps").glob("*.gz")):
        level = "abs" if run.name.startswith("abs-") else "content"
        out.append((run, [qdir / f"full.test.{t}.{level}.2019.qrels.gz" for t in CLEF_TYPES]))
    return out


def build_clef(shared: Path, workdir: Path, report: Report) -> tuple[Path, Path] | str:
    """The combined CLEF TAR 2019 qrels and run in the work directory, or why not."""
    data = shared / "clef-tar-2019"
    if not data.is_dir():
        return f"{data} not found (no ../shared here?): skipping the CLEF workload"
    sources = clef_sources(data)
    missing = [str(p) for run, qs in sources for p in (run, *qs) if not p.is_file()]
    if not sources or missing:
        return f"CLEF TAR 2019 files missing under {data}: {missing[:3] or 'no runs'}; skipping the CLEF workload"
    qrels, run, meta = (workdir / f"clef2019-all{ext}" for ext in (".qrels", ".run", ".params.json"))
    params = {"format": 1, "sources": [[str(p.relative_to(data)), p.stat().st_size]
                                       for r, qs in sources for p in (r, *qs)]}
    if _cached(meta, params, qrels, run):
        return qrels, run
    workdir.mkdir(parents=True, exist_ok=True)
    meta.unlink(missing_ok=True)
    with (run.open("w", encoding="ascii", newline="\n") as r_out,
          qrels.open("w", encoding="ascii", newline="\n") as q_out):
        for k, (run_src, qrels_srcs) in enumerate(sources):
            with gzip.open(run_src, "rt", encoding="ascii") as fh:
                for line in fh:
                    f = line.split()
                    if f:  # topic flag docno rank score [tag]; the tag is replaced by one for the whole file
                        r_out.write(f"{f[0]}-{k} {f[1]} {f[2]} {f[3]} {f[4]} clef2019\n")
            for q_src in qrels_srcs:
                with gzip.open(q_src, "rt", encoding="ascii") as fh:
                    for line in fh:
                        f = line.split()  # also drops the CRLF of the Intervention files
                        if f:
                            q_out.write(f"{f[0]}-{k} {f[1]} {f[2]} {f[3]}\n")
    meta.write_text(json.dumps(params))
    report.say(f"  built {run.name} and {qrels.name} from {len(sources)} CLEF TAR 2019 runs -> {workdir}")
    return qrels, run


def count_lines(path: Path) -> int:
    n = 0
    with path.open("rb") as fh:
        while block := fh.read(1 << 24):
            n += block.count(b"\n")
    return n


# ------------------------------------------------------------------------------------------------- timing


@dataclass
class Sample:
    wall: float
    user: float
    sys: float
    rss_mib: float


@dataclass
class ToolRuns:
    samples: list[Sample] = field(default_factory=list)
    failed: str | None = None


# A child's ru_maxrss starts at the resident set of the process that spawned it (Linux records the old address
# space's high-water mark at exec, for fork and vfork alike), so children spawned by this process would all show
# at least its own peak (hundreds of MiB after generating data). A small launcher (python -I -S, ~8 MiB) spawns
# the tool instead and reports the tool's wall time, CPU and ru_maxrss; LAUNCH_FLOOR_MIB is measured at start.
LAUNCHER = r"""
import os, sys, time
out = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
t0 = time.perf_counter()
pid = os.posix_spawnp(sys.argv[2], sys.argv[2:], os.environ, file_actions=[(os.POSIX_SPAWN_DUP2, out, 1)])
_, status, usage = os.wait4(pid, 0)
wall = time.perf_counter() - t0
print(wall, usage.ru_utime, usage.ru_stime, usage.ru_maxrss, os.waitstatus_to_exitcode(status))
"""


def run_child(cmd: Sequence[str], out: Path) -> Sample | str:
    """Run ``cmd`` with stdout to ``out``; the child's wall time, CPU and peak RSS, or why it failed."""
    done = subprocess.run([sys.executable, "-I", "-S", "-c", LAUNCHER, str(out), *cmd], capture_output=True,
                          stdin=subprocess.DEVNULL, check=False)
    try:
        wall, user, system, maxrss_kib, code = done.stdout.decode().split()
    except ValueError:
        return f"launcher failed (exit {done.returncode}): {done.stderr.decode(errors='replace').strip()[-300:]}"
    if int(code) != 0:
        tail = done.stderr.decode(errors="replace").strip().splitlines()[-3:]
        return f"exit {code}: " + " | ".join(tail)
    return Sample(float(wall), float(user), float(system), int(maxrss_kib) / 1024)  # ru_maxrss: KiB on Linux


def first_difference(a: bytes, b: bytes) -> str:
    la, lb = a.decode(errors="replace").splitlines(), b.decode(errors="replace").splitlines()
    for i, (x, y) in enumerate(zip(la, lb, strict=False), 1):
        if x != y:
            return f"line {i}: reviewdepth {x.strip()!r} vs trec_eval {y.strip()!r}"
    return f"line counts {len(la)} vs {len(lb)}"


@dataclass
class Result:
    key: str
    run_lines: int
    qrels_lines: int
    tools: dict[str, ToolRuns]
    ratios: dict[str, list[float]]
    identical: tuple[int, int] | None  # (identical comparisons, comparisons)
    difference: str | None

    @property
    def m_lines(self) -> float:
        return (self.run_lines + self.qrels_lines) / 1e6

    def median(self, tool: str) -> float | None:
        runs = self.tools.get(tool)
        return statistics.median(s.wall for s in runs.samples) if runs and runs.samples else None

    def peak_rss(self, tool: str) -> float | None:
        runs = self.tools.get(tool)
        return max(s.rss_mib for s in runs.samples) if runs and runs.samples else None


class Measurement:
    """The rounds of one workload so far: each tool's runs, reviewdepth's per-round ratios to its peers, and
    whether its output matched trec_eval's."""

    def __init__(self, key: str, qrels: Path, run: Path, cmds: dict[str, list[str]], outdir: Path) -> None:
        outdir.mkdir(parents=True, exist_ok=True)
        self.key, self.qrels, self.run, self.cmds = key, qrels, run, cmds
        self.outs = {tool: outdir / f"{key}.{tool}.txt" for tool in cmds}
        self.tools = {tool: ToolRuns() for tool in cmds}
        self.ratios: dict[str, list[float]] = {peer: [] for peer in cmds if peer != "reviewdepth"}
        self.same = self.compared = 0
        self.difference: str | None = None

    def one_round(self, timed: bool) -> None:
        walls: dict[str, float] = {}
        for tool, cmd in self.cmds.items():
            if self.tools[tool].failed:
                continue
            got = run_child(cmd, self.outs[tool])
            if isinstance(got, str):
                self.tools[tool].failed = got
                continue
            walls[tool] = got.wall
            if timed:
                self.tools[tool].samples.append(got)
        if "reviewdepth" in walls:
            if timed:
                for peer in self.ratios:
                    if peer in walls:
                        self.ratios[peer].append(walls["reviewdepth"] / walls[peer])
            if "trec_eval" in walls:
                a, b = self.outs["reviewdepth"].read_bytes(), self.outs["trec_eval"].read_bytes()
                self.compared += 1
                self.same += a == b
                if a != b and self.difference is None:
                    self.difference = first_difference(a, b)

    def result(self) -> Result:
        return Result(self.key, count_lines(self.run), count_lines(self.qrels), self.tools, self.ratios,
                      (self.same, self.compared) if self.compared else None, self.difference)


def measure(key: str, qrels: Path, run: Path, cmds: dict[str, list[str]], pairs: int, warmup: int,
            outdir: Path) -> Result:
    """``warmup`` untimed then ``pairs`` timed rounds of one workload, one after the other."""
    m = Measurement(key, qrels, run, cmds, outdir)
    for round_no in range(warmup + pairs):
        m.one_round(round_no >= warmup)
    return m.result()


def measure_together(workloads: dict[str, tuple[Path, Path, dict[str, list[str]]]], pairs: int, warmup: int,
                     outdir: Path) -> dict[str, Result]:
    """The scaling series: each round runs every size in turn, so a drift of the machine's speed over the minutes
    the series takes falls on every size alike instead of on whichever sizes ran last (run one size after the
    other, the same 8 M-line file measured 1.84 to 2.32 s in four series on this VM)."""
    runs = {key: Measurement(key, qrels, run, cmds, outdir) for key, (qrels, run, cmds) in workloads.items()}
    for round_no in range(warmup + pairs):
        for m in runs.values():
            m.one_round(round_no >= warmup)
    return {key: m.result() for key, m in runs.items()}


# ------------------------------------------------------------------------------------------------ printing


def spread3(values: Iterable[float], fmt: str = ".3f") -> str:
    v = list(values)
    if not v:
        return "-"
    return f"{min(v):{fmt}} / {statistics.median(v):{fmt}} / {max(v):{fmt}}"


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def print_result(res: Result, report: Report) -> None:
    m = res.m_lines
    report.say(f"  input: run {res.run_lines:,} lines + qrels {res.qrels_lines:,} lines = {m:.3f} M lines")
    head = (f"  {'tool':<12} {'wall s min / median / max':>27} {'user s':>7} {'sys s':>6} "
            f"{'peak RSS MiB':>13} {'MiB/M in':>9} {'MiB/M run':>10}")
    report.say(head)
    report.say("  " + "-" * (len(head) - 2))
    for tool, runs in res.tools.items():
        if not runs.samples:
            report.say(f"  {tool:<12} FAILED {runs.failed or ''}")
            continue
        s = runs.samples
        rss = max(x.rss_mib for x in s)
        report.say(f"  {tool:<12} {spread3(x.wall for x in s):>27} {statistics.median(x.user for x in s):>7.3f} "
                   f"{statistics.median(x.sys for x in s):>6.3f} {rss:>13.1f} {rss / m:>9.1f} "
                   f"{rss / (res.run_lines / 1e6):>10.1f}")
        if runs.failed:
            report.say(f"  {'':<12} (failed later: {runs.failed})")
    for peer, values in res.ratios.items():
        if values:
            # CPU seconds move less with machine load than wall seconds; printed beside, not used for targets.
            cpu = [statistics.median(x.user + x.sys for x in res.tools[t].samples) for t in ("reviewdepth", peer)]
            report.say(f"  reviewdepth / {peer:<12} wall per round min / median / max: {spread3(values, '.2f')}"
                       f"  ({len(values)} round{'s' if len(values) != 1 else ''});"
                       f"  CPU (user+sys) medians: {cpu[0] / cpu[1]:.2f}")
    if res.identical is None:
        report.say("  output identity reviewdepth vs trec_eval: not compared (a tool is missing or failed)")
    else:
        same, n = res.identical
        verdict = "identical" if same == n else f"DIFFERENT ({res.difference})"
        report.say(f"  output identity reviewdepth vs trec_eval: {verdict} in {same}/{n} runs (warm-up included)")


def verdict(ok: bool) -> str:
    return "met" if ok else "NOT met"


def print_scaling(results: dict[str, Result], report: Report) -> None:
    sizes = [k for k in SCALING if k in results and results[k].median("reviewdepth") is not None]
    if not sizes:
        return
    report.say("\n== Scaling (reviewdepth; s/M and MiB/M per million input lines = run + qrels lines)")
    has_te = any(results[k].median("trec_eval") is not None for k in sizes)
    head = (f"  {'size':<5} {'run lines':>10} {'in M':>6} {'median s':>9} {'s/M':>7} {'vs med':>7} "
            f"{'RSS MiB':>8} {'MiB/M':>6}")
    if has_te:
        head += f" {'trec_eval s/M':>14} {'MiB/M':>6}"
    report.say(head)
    per_m = {k: (results[k].median("reviewdepth") or 0.0) / results[k].m_lines for k in sizes}
    centre = statistics.median(per_m.values())
    for k in sizes:
        r = results[k]
        rss = r.peak_rss("reviewdepth") or 0.0
        line = (f"  {k:<5} {r.run_lines:>10,} {r.m_lines:>6.2f} {r.median('reviewdepth') or 0.0:>9.3f} "
                f"{per_m[k]:>7.3f} {per_m[k] / centre - 1:>+7.1%} {rss:>8.1f} {rss / r.m_lines:>6.1f}")
        te, te_rss = r.median("trec_eval"), r.peak_rss("trec_eval")
        if has_te and te is not None and te_rss is not None:
            line += f" {te / r.m_lines:>14.3f} {te_rss / r.m_lines:>6.1f}"
        report.say(line)
    if len(sizes) > 1:
        spread = max(per_m.values()) / min(per_m.values()) - 1
        report.say(f"  spread of s/M across {', '.join(sizes)} (max/min - 1): {spread:.1%}")
    beyond = beyond_startup(results)
    if beyond:
        base = results[STARTUP]
        report.say(f"  beyond start-up (the {STARTUP} run: {base.median('reviewdepth') or 0.0:.3f} s, "
                   f"{base.peak_rss('reviewdepth') or 0.0:.1f} MiB): (median s - start-up s) / M lines and "
                   "(peak RSS - start-up RSS) / M lines")
        for k, (sec_m, mib_m) in beyond.items():
            report.say(f"  {k:<5} {sec_m:>7.3f} s/M   {mib_m:>6.1f} MiB/M")
        per = [v[0] for v in beyond.values()]
        report.say(f"  spread of s/M beyond start-up (max/min - 1): {max(per) / min(per) - 1:.1%}")
    steps = marginal_cost(results)
    if steps:
        report.say("  marginal cost: (median s of a size - median s of the size before) / (M lines added)")
        for (smaller, larger), sec_m in steps.items():
            report.say(f"  {smaller:>4} -> {larger:<4} {sec_m:>7.3f} s/M")
        per = list(steps.values())
        report.say(f"  spread of the marginal s/M (max/min - 1): {max(per) / min(per) - 1:.1%}")


def say_flatness(report: Report, what: str, values: list[float]) -> None:
    """The flatness target read two ways, each with its verdict: every value within +-15 % of their median (the
    target's words), and the stricter max / min - 1 <= 15 % (this bench's reading since issue 16 was filed)."""
    centre = statistics.median(values)
    deviation = max(abs(v / centre - 1) for v in values)
    spread = max(values) / min(values) - 1
    report.say(f"  {what} flat within +-{TARGET_SPREAD:.0%} over 0.5-8 M (largest deviation from the median): "
               f"{deviation:.1%}  {verdict(deviation <= TARGET_SPREAD)}")
    report.say(f"  {what} flat, strict reading (max/min - 1 <= {TARGET_SPREAD:.0%}): {spread:.1%}  "
               f"{verdict(spread <= TARGET_SPREAD)}")


def marginal_cost(results: dict[str, Result]) -> dict[tuple[str, str], float]:
    """Seconds per million input lines that each doubling of the scaling series adds: a third reading of
    linearity, with no fixed cost in it at all (the start-up cancels out, and so does the part of the scan the
    background threads hide behind it, which the beyond-start-up reading over-corrects at 0.5 M lines)."""
    sizes = [k for k in SCALING if k in results and results[k].median("reviewdepth") is not None]
    out: dict[tuple[str, str], float] = {}
    for smaller, larger in pairwise(sizes):
        a, b = results[smaller], results[larger]
        out[(smaller, larger)] = ((b.median("reviewdepth") or 0.0) - (a.median("reviewdepth") or 0.0)) / (
            b.m_lines - a.m_lines)
    return out


def beyond_startup(results: dict[str, Result]) -> dict[str, tuple[float, float]]:
    """Per scaling size, seconds and MiB per million input lines once the start-up run's time and memory are
    taken off: the cost that grows with the input, which is what must stay linear."""
    base = results.get(STARTUP)
    if base is None or base.median("reviewdepth") is None or base.peak_rss("reviewdepth") is None:
        return {}
    t0, m0 = base.median("reviewdepth") or 0.0, base.peak_rss("reviewdepth") or 0.0
    out: dict[str, tuple[float, float]] = {}
    for k in SCALING:
        r = results.get(k)
        if r is None or r.median("reviewdepth") is None:
            continue
        lines = r.m_lines - base.m_lines
        out[k] = (((r.median("reviewdepth") or 0.0) - t0) / lines, ((r.peak_rss("reviewdepth") or 0.0) - m0) / lines)
    return out


def print_targets(results: dict[str, Result], report: Report) -> None:
    report.say("\n== Targets (verdict on the median per-round ratio; [min - max] over rounds)")
    for peer, target in (("trec_eval", TARGET_TREC), ("pytrec_eval", TARGET_PYTREC)):
        for key in TARGET_WORKLOADS:
            label = f"  reviewdepth <= {f'{target}x':<5} {peer:<11} on {key:<5}:"
            values = results[key].ratios.get(peer) if key in results else None
            if not values:
                report.say(f"{label} n/a (not run)")
                continue
            med = statistics.median(values)
            report.say(f"{label} {med:.2f}x [{min(values):.2f} - {max(values):.2f}]  {verdict(med <= target)}")
    per_m = {k: (results[k].median("reviewdepth") or 0.0) / results[k].m_lines
             for k in SCALING if k in results and results[k].median("reviewdepth") is not None}
    if len(per_m) == len(SCALING):
        say_flatness(report, "s/M lines", list(per_m.values()))
    else:
        report.say(f"  s/M lines flat within +-{TARGET_SPREAD:.0%} over 0.5-8 M: n/a (needs all of "
                   f"{', '.join(SCALING)}: --scaling)")
    beyond = beyond_startup(results)
    if len(beyond) == len(SCALING):
        say_flatness(report, "s/M lines beyond start-up", [v[0] for v in beyond.values()])
        steps = marginal_cost(results)
        if len(steps) == len(SCALING) - 1:
            say_flatness(report, "marginal s/M (each doubling)", list(steps.values()))
        worst = max(v[1] for v in beyond.values())
        report.say(f"  peak RSS beyond start-up <= {TARGET_RSS_PER_M:.0f} MiB per M input lines, every size: "
                   f"largest {worst:.1f} MiB/M  {verdict(worst <= TARGET_RSS_PER_M)}")
    for key, res in results.items():
        rss = res.peak_rss("reviewdepth")
        if rss is not None and key != STARTUP:
            per = rss / res.m_lines
            report.say(f"  peak RSS <= {TARGET_RSS_PER_M:.0f} MiB per M input lines on {key:<5}: "
                       f"{per:.1f} MiB/M ({rss:.1f} MiB)  {verdict(per <= TARGET_RSS_PER_M)}")
    for key in TARGET_RSS_PEER_WORKLOADS:
        ours, theirs = (results[key].peak_rss(t) if key in results else None for t in ("reviewdepth", "trec_eval"))
        label = f"  peak RSS <= {TARGET_RSS_PEER:.1f}x trec_eval's on {key:<5}:"
        if ours is None or theirs is None:
            report.say(f"{label} n/a (not run)")
            continue
        ratio = ours / theirs
        report.say(f"{label} {ratio:.2f}x ({ours:.1f} vs {theirs:.1f} MiB, largest over the runs)  "
                   f"{verdict(ratio <= TARGET_RSS_PEER)}")
    for key, res in results.items():
        if res.identical is not None:
            same, n = res.identical
            report.say(f"  output byte-identical to trec_eval on {key:<5}: {same}/{n} runs  {verdict(same == n)}")


# ---------------------------------------------------------------------------------------------------- main


def tool_version(cmd: list[str]) -> str:
    try:
        done = subprocess.run(cmd, capture_output=True, check=False, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"unknown ({exc})"
    return (done.stdout + done.stderr).decode(errors="replace").strip().replace("\n", " ") or "unknown"


def tree_state() -> str:
    """The commit measured, and whether the code under test differs from it (others edit the tree meanwhile)."""
    git = ["git", "-C", str(REPO)]
    try:
        head = subprocess.run([*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True)
        dirty = subprocess.run([*git, "status", "--porcelain", "--", "reviewdepth", "cli", "setup.py"],
                               capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return "unknown (not a git checkout?)"
    changed = len(dirty.stdout.splitlines())
    return head.stdout.strip() + (f" + {changed} uncommitted path(s) under reviewdepth/, cli/, setup.py" if changed
                                  else " (clean under reviewdepth/, cli/, setup.py)")


def compile_bytecode() -> str:
    """Compile reviewdepth's modules to cached bytecode first, as any installation has them: with
    PYTHONDONTWRITEBYTECODE set (this sandbox sets it) and an editable install, every start would otherwise
    compile the package from source, a cost no user pays."""
    import compileall

    dirs: list[str] = []
    for name in ("reviewdepth", "reviewdepth.cli"):
        spec = importlib.util.find_spec(name)
        dirs += list(spec.submodule_search_locations or []) if spec else []
    ok = all(compileall.compile_dir(d, quiet=1) for d in dirs)
    return f"compiled for {', '.join(dirs)}" if ok and dirs else "could not compile (starts may include compiling)"


def find_reviewdepth() -> str | None:
    exe = Path(sys.executable).parent / "reviewdepth"
    return str(exe) if exe.exists() else shutil.which("reviewdepth")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workloads", default="w1,w2s,w2,clef",
                    help="comma-separated subset of: " + ",".join([*SHAPES, "clef"]) + " (empty: none)")
    ap.add_argument("--scaling", action="store_true", help="add the scaling series " + ",".join(SCALING))
    ap.add_argument("--tools", default=",".join(TOOLS), help="tools timed on the other workloads (default: all)")
    ap.add_argument("--scaling-tools", default="reviewdepth,trec_eval",
                    help="tools timed on the scaling series (default: reviewdepth,trec_eval)")
    ap.add_argument("--pairs", type=int, default=5, help="timed interleaved rounds per workload (default 5)")
    ap.add_argument("--warmup", type=int, default=1, help="untimed rounds before them (default 1)")
    ap.add_argument("--trec-eval", default=os.environ.get("TREC_EVAL"), help="trec_eval binary (default $TREC_EVAL)")
    ap.add_argument("--workdir", type=Path, default=REPO / "bench" / "data")
    ap.add_argument("--shared-data", type=Path, default=REPO.parent / "shared" / "data")
    ap.add_argument("-m", "--measure", action="append", default=[],
                    help="a -m given to reviewdepth and trec_eval alike (repeatable, e.g. -m all_trec); pytrec_eval, "
                         "which computes the default measures, is then left out")
    ap.add_argument("--out", type=Path, help="also write the whole report to this file")
    args = ap.parse_args(argv)
    report = Report()
    keys = [k.strip() for k in args.workloads.split(",") if k.strip()]
    if args.scaling:
        keys += [k for k in (STARTUP, *SCALING) if k not in keys]
    main_tools = {t.strip() for t in args.tools.split(",") if t.strip()}
    scale_tools = {t.strip() for t in args.scaling_tools.split(",") if t.strip()}
    unknown = [k for k in keys if k not in SHAPES and k != "clef"] + sorted((main_tools | scale_tools) - set(TOOLS))
    if unknown:
        report.say(f"unknown workload(s) or tool(s) {unknown}; workloads: {[*SHAPES, 'clef']}, tools: {TOOLS}")
        return 0

    rd = find_reviewdepth()
    compiled = compile_bytecode()
    te: str | None = args.trec_eval
    te_missing = "not given (TREC_EVAL or --trec-eval): skipped"
    if te and not (Path(te).is_file() and os.access(te, os.X_OK)):
        te_missing, te = f"{te} is not an executable file: skipped", None
    has_pytrec = importlib.util.find_spec("pytrec_eval") is not None
    pytrec_version = importlib.metadata.version("pytrec-eval-terrier") if has_pytrec else "not importable: skipped"

    report.say(f"eval_bench  {datetime.now(UTC):%Y-%m-%d %H:%M:%S} UTC  on {platform.node()} ({os.cpu_count()} "
               f"CPUs, {platform.machine()}, Python {platform.python_version()}, numpy {np.__version__})")
    report.say(f"working tree: {tree_state()}")
    report.say(f"reviewdepth:  {rd or 'NOT FOUND: skipped'}" + (f"  ({tool_version([rd, '--version'])})" if rd else ""))
    report.say(f"trec_eval:    {te or te_missing}"
               + (f"  ({tool_version([te, '-v'])}; the targets assume 9.0.8 built with -O2)" if te else ""))
    report.say(f"pytrec_eval:  {pytrec_version}  (in a subprocess of {sys.executable})")
    report.say(f"bytecode:     {compiled}")
    report.say(f"rounds:       {args.warmup} warm-up (untimed) + {args.pairs} timed, interleaved in the order "
               + ", ".join(TOOLS) + "; the scaling series round by round over its sizes")
    (args.workdir / "out").mkdir(parents=True, exist_ok=True)
    floor = run_child(["true"], args.workdir / "out" / "floor.txt")
    report.say("RSS floor:    " + (f"{floor.rss_mib:.1f} MiB (peak RSS of `true` through the launcher)"
                                   if isinstance(floor, Sample) else f"unknown ({floor})"))
    report.say(f"load average at start (1/5/15 min): {load()}")

    measures = [x for m in args.measure for x in ("-m", m)]
    if measures:
        report.say(f"measures:     {' '.join(measures)} (reviewdepth and trec_eval; pytrec_eval left out)")
    commands: dict[str, Callable[[Path, Path], list[str]]] = {}
    if rd:
        commands["reviewdepth"] = lambda q, r: [rd, "eval", *measures, str(q), str(r)]
    if te:
        commands["trec_eval"] = lambda q, r: [te, *measures, str(q), str(r)]
    if has_pytrec and not measures:
        commands["pytrec_eval"] = lambda q, r: [sys.executable, "-c", PYTREC_PROG, str(q), str(r)]

    results: dict[str, Result] = {}
    series: dict[str, tuple[Path, Path, dict[str, list[str]]]] = {}
    for key in keys:
        in_series = key in (STARTUP, *SCALING)
        if not in_series:
            report.say(f"\n== {key}: {LABELS[key]}   (load {load()})")
        if key == "clef":
            built = build_clef(args.shared_data, args.workdir, report)
            if isinstance(built, str):
                report.say(f"  {built}")
                continue
            qrels, run = built
        else:
            qrels, run = generate(args.workdir, SHAPES[key], report)
        chosen = {t: c(qrels, run) for t, c in commands.items() if t in (scale_tools if in_series else main_tools)}
        if not chosen:
            report.say(f"  {key}: no tool to run")
            continue
        if in_series:
            series[key] = (qrels, run, chosen)
            continue
        results[key] = res = measure(key, qrels, run, chosen, args.pairs, args.warmup, args.workdir / "out")
        print_result(res, report)
    if series:
        report.say(f"\n== the scaling series {', '.join(series)}, every size in each round   (load {load()})")
        for key, res in measure_together(series, args.pairs, args.warmup, args.workdir / "out").items():
            results[key] = res
            report.say(f"\n== {key}: {LABELS[key]}")
            print_result(res, report)

    print_scaling(results, report)
    print_targets(results, report)
    report.say(f"\nload average at end (1/5/15 min): {load()}")
    if args.out:
        report.write(args.out)
        print(f"report written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
