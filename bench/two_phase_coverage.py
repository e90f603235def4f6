"""Coverage of the two-phase (TAR 1.0) figures on real CLEF TAR 2017 rankings (issue 29, item 2; not shipped, not
run in CI: tests/estimation/test_two_phase_coverage.py is the short version).

Scenario per topic (a run's ranking of the topic's documents, abstract-level qrels):

- phase 1: the first ``train`` ranks were coded in a review role, plus ``extra`` documents at fixed random ranks
  below them (a training set that is not only a prefix; some of them land below the cutoff);
- cutoff K: the rank at which the ranking has found ``cutoff_recall`` of the relevant documents; the produced set
  is every coded-relevant document and every uncoded document at or above K;
- per replicate: a simple random sample of ``n_produced`` from the frame ranks:1-K (restricted to its uncoded
  documents, as the service does) and one of ``n_discard`` from below-rank:K, drawn independently.

Every figure is the core's (`reviewdepth.estimation.two_phase.two_phase_estimate`); the truth is the qrels'.
Coverage of: the recall two-sided interval and one-sided lower bound, the production precision two-sided
interval and one-sided lower bound, and the two strata counts' two-sided intervals; for both exact methods.

    python bench/two_phase_coverage.py [--reps 2000] [--topics CD009579,CD008803,...] [--out FILE]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from reviewdepth.estimation.two_phase import (
    TWO_PHASE_METHODS,
    StratumSample,
    TwoPhaseCounts,
    TwoPhaseEstimate,
    two_phase_estimate,
)
from reviewdepth.formats.clef import read_clef_run
from reviewdepth.formats.trec import read_qrels

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
QRELS = "clef-tar-2017/qrels/qrel_abs_test.txt.gz"
RUN = "clef-tar-2017/runs/waterloo.A-rank-normal.gz"
FIGURES = ("recall two-sided", "recall one-sided lower", "precision two-sided", "precision one-sided lower",
           "found uncoded two-sided", "eluded two-sided")


@dataclass(frozen=True)
class Scenario:
    """A topic's ranking (``labels``: 1 = relevant, in rank order) and the two-phase set-up on it."""

    topic: str
    labels: npt.NDArray[np.int8]
    train: int
    extra: int
    cutoff_recall: float
    n_produced: int
    n_discard: int
    seed: int = 29

    @property
    def size(self) -> int:
        return len(self.labels)

    def coded(self) -> npt.NDArray[np.bool_]:
        """Phase 1's coded documents: the first ``train`` ranks and ``extra`` fixed random ranks after them."""
        coded = np.zeros(self.size, dtype=bool)
        coded[: self.train] = True
        rest = np.arange(self.train, self.size)
        picked = np.random.default_rng(self.seed).choice(rest, size=min(self.extra, len(rest)), replace=False)
        coded[picked] = True
        return coded

    def cutoff(self) -> int:
        relevant_ranks = np.flatnonzero(self.labels == 1) + 1
        needed = math.ceil(self.cutoff_recall * len(relevant_ranks))
        return max(int(relevant_ranks[needed - 1]), self.train + 1)


@dataclass(frozen=True)
class Truth:
    counts: TwoPhaseCounts  # without samples
    found_uncoded: int  # X_a
    eluded: int  # X_b
    recall: float
    precision: float
    produced_frame: int  # K: the frame ranks:1-K


def truth_of(s: Scenario) -> Truth:
    coded = s.coded()
    k = s.cutoff()
    rel = s.labels == 1
    above = np.arange(s.size) < k
    f = int(np.count_nonzero(coded & rel))
    na = int(np.count_nonzero(~coded & above))
    nb = int(np.count_nonzero(~coded & ~above))
    xa = int(np.count_nonzero(~coded & above & rel))
    xb = int(np.count_nonzero(~coded & ~above & rel))
    counts = TwoPhaseCounts(cutoff=k, coded=int(coded.sum()), coded_relevant=f,
                            coded_relevant_above=int(np.count_nonzero(coded & above & rel)), uncoded_above=na,
                            uncoded_below=nb)
    return Truth(counts, xa, xb, (f + xa) / (f + xa + xb), (f + xa) / (f + na), k)


@dataclass
class Tally:
    hits: int = 0
    trials: int = 0
    width: float = 0.0

    def add(self, hit: bool, width: float = 0.0) -> None:
        self.hits += int(hit)
        self.trials += 1
        self.width += width

    @property
    def rate(self) -> float:
        return self.hits / self.trials if self.trials else float("nan")


def covered(est: TwoPhaseEstimate, t: Truth) -> dict[str, tuple[bool, float]]:
    """Per figure: (does it hold the truth, its width or its distance to the point)."""
    r, p, a, b = est.recall, est.precision, est.found_uncoded, est.eluded
    assert r is not None and p is not None and a is not None and b is not None
    return {
        "recall two-sided": (r.lower <= t.recall <= r.upper, r.upper - r.lower),
        "recall one-sided lower": (r.lower_one_sided <= t.recall, r.point - r.lower_one_sided),
        "precision two-sided": (p.lower <= t.precision <= p.upper, p.upper - p.lower),
        "precision one-sided lower": (p.lower_one_sided <= t.precision, p.point - p.lower_one_sided),
        "found uncoded two-sided": (a.lower <= t.found_uncoded <= a.upper, a.upper - a.lower),
        "eluded two-sided": (b.lower <= t.eluded <= b.upper, b.upper - b.lower),
    }


def simulate(s: Scenario, reps: int, rng: np.random.Generator, confidence: float = 0.95,
             methods: tuple[str, ...] = TWO_PHASE_METHODS) -> tuple[Truth, dict[str, dict[str, Tally]]]:
    """``reps`` replicates of the two samples; per method, per figure, how often it held the truth.

    The produced-set sample is drawn from the frame ranks:1-K (K documents, N_a of them uncoded): the number
    landing among the uncoded is Hypergeometric(N_a, K − N_a, n) and, given it, the relevant among them is
    Hypergeometric(X_a, N_a − X_a, ·) — the same law as drawing the documents and restricting."""
    t = truth_of(s)
    c = t.counts
    k, na, nb = t.produced_frame, c.uncoded_above, c.uncoded_below
    n_a = min(s.n_produced, k)
    n_b = min(s.n_discard, nb)
    landed = rng.hypergeometric(na, k - na, n_a, size=reps)
    rel_a = np.array([rng.hypergeometric(t.found_uncoded, na - t.found_uncoded, int(m)) if m else 0
                      for m in landed])
    rel_b = rng.hypergeometric(t.eluded, nb - t.eluded, n_b, size=reps)
    tallies = {m: {f: Tally() for f in FIGURES} for m in methods}
    cache: dict[tuple[str, int, int, int], dict[str, tuple[bool, float]]] = {}
    for m_in, ya, yb in zip(landed.tolist(), rel_a.tolist(), rel_b.tolist(), strict=True):
        for method in methods:
            key = (method, m_in, ya, yb)
            if key not in cache:
                counts = TwoPhaseCounts(c.cutoff, c.coded, c.coded_relevant, c.coded_relevant_above, na, nb,
                                        StratumSample(m_in, ya), StratumSample(n_b, yb))
                cache[key] = covered(two_phase_estimate(counts, confidence, method), t)
            for figure, (hit, width) in cache[key].items():
                tallies[method][figure].add(hit, width)
    return t, tallies


def relevant_docs(path: Path) -> dict[bytes, set[bytes]]:
    qrels = read_qrels(path)
    out: dict[bytes, set[bytes]] = {}
    for topic, doc, rel in zip(qrels.qid.tolist(), qrels.docno.values.tolist(), qrels.rel.tolist(), strict=True):
        if rel > 0:
            out.setdefault(topic, set()).add(doc)
    return out


def ranking_labels(run: object, topic: bytes, relevant: set[bytes]) -> npt.NDArray[np.int8]:
    """One topic of a read CLEF run in file order (lines marked NS and repeats skipped), 1 = relevant."""
    rows = np.flatnonzero(run.topic == topic)  # type: ignore[attr-defined]
    seen: set[bytes] = set()
    labels: list[int] = []
    for doc, action in zip(run.docno.values[rows].tolist(), run.action[rows].tolist(),  # type: ignore[attr-defined]
                           strict=True):
        if action == b"NS" or doc in seen:
            continue
        seen.add(doc)
        labels.append(1 if doc in relevant else 0)
    return np.array(labels, dtype=np.int8)


def load_topics(topics: list[str] | None, data: Path = DATA) -> dict[str, npt.NDArray[np.int8]]:
    relevant = relevant_docs(data / QRELS)
    run = read_clef_run(data / RUN)
    names = topics or sorted({t.decode() for t in set(run.topic.tolist())})
    return {name: ranking_labels(run, name.encode(), relevant.get(name.encode(), set())) for name in names}


def scenario_for(topic: str, labels: npt.NDArray[np.int8], n_produced: int = 150, n_discard: int = 400,
                 cutoff_recall: float = 0.85) -> Scenario:
    """The bench's set-up: phase 1 codes the first 50 ranks and 100 random documents after them (the training
    set); the cutoff is where the ranking reaches ``cutoff_recall``; 150 sampled from ranks:1-K, 400 from
    below-rank:K."""
    return Scenario(topic, labels, train=50, extra=100, cutoff_recall=cutoff_recall, n_produced=n_produced,
                    n_discard=n_discard)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--topics", default=None, help="comma-separated topics (default: every topic of the run)")
    parser.add_argument("--confidence", type=float, default=0.95)
    parser.add_argument("--seed", type=int, default=2029)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    topics = load_topics(args.topics.split(",") if args.topics else None)
    rng = np.random.default_rng(args.seed)
    lines = [f"two-phase coverage, {RUN} with {QRELS}, {args.reps} replicates a topic, confidence "
             f"{args.confidence}; coverage per figure (nominal {args.confidence})"]
    pooled = {m: {f: Tally() for f in FIGURES} for m in TWO_PHASE_METHODS}
    worst = {m: {f: (2.0, "") for f in FIGURES} for m in TWO_PHASE_METHODS}
    for name, labels in topics.items():
        if int(labels.sum()) < 5 or len(labels) < 600:
            lines.append(f"{name}: skipped ({len(labels)} documents, {int(labels.sum())} relevant)")
            continue
        s = scenario_for(name, labels)
        t, tallies = simulate(s, args.reps, rng, args.confidence)
        c = t.counts
        lines.append(f"{name}: N={s.size} R={int(labels.sum())} K={c.cutoff} coded={c.coded} F={c.coded_relevant} "
                     f"N_a={c.uncoded_above} X_a={t.found_uncoded} N_b={c.uncoded_below} X_b={t.eluded} "
                     f"recall={t.recall:.4f} precision={t.precision:.4f}")
        for method in TWO_PHASE_METHODS:
            cells = []
            for figure in FIGURES:
                tally = tallies[method][figure]
                cells.append(f"{figure} {tally.rate:.4f} (w {tally.width / tally.trials:.3g})")
                p = pooled[method][figure]
                p.hits, p.trials, p.width = p.hits + tally.hits, p.trials + tally.trials, p.width + tally.width
                if tally.rate < worst[method][figure][0]:
                    worst[method][figure] = (tally.rate, name)
            lines.append(f"  {method}: " + "; ".join(cells))
    lines.append("pooled over topics (coverage, lowest topic):")
    for method in TWO_PHASE_METHODS:
        for figure in FIGURES:
            p = pooled[method][figure]
            low, where = worst[method][figure]
            lines.append(f"  {method:16s} {figure:26s} {p.rate:.4f} over {p.trials} samples; lowest {low:.4f} "
                         f"({where})")
    lines.append(f"elapsed {time.perf_counter() - started:.1f} s")
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    if args.out is not None:
        args.out.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
