"""A two-phase (TAR 1.0) scenario on a real CLEF run, through the store and the validation document (issue 29,
item 2, "Show"; not run in CI: tests/report/test_two_phase_validation.py checks the same path on a smaller set-up).

CLEF 2017 CD009579, Waterloo's A ranking, abstract qrels as the truth. Phase 1 codes the first 50 ranks and 100
random documents of the rest (a training set). The team produces every document ranked 1..CUTOFF (the rank where
the ranking passes 85 % recall, unless --cutoff), draws 150 documents from ranks:1-CUTOFF and 400 from
below-rank:CUTOFF, and a senior reviewer codes them (role sample). Prints the true recall and precision beside the
document's two-phase section, and writes the document.

    python bench/two_phase_demo.py --db sqlite:////tmp/two_phase.db [--pdf FILE] [--html FILE]
"""

from __future__ import annotations

import argparse
import gzip
import math
import tempfile
from pathlib import Path

import numpy as np

from reviewdepth.report.validation_render import render_document
from reviewdepth.services.answers.report import ReportOptions
from reviewdepth.services.answers.validation import build_validation
from reviewdepth.services.files.imports import import_run
from reviewdepth.services.review.judgments import record_judgments
from reviewdepth.services.review.samples import draw_sample
from reviewdepth.store.engine import create_engine_for

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "clef-tar-2017"
TOPIC = "CD009579"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", required=True, help="a database URL for a fresh store")
    parser.add_argument("--cutoff", type=int, default=None)
    parser.add_argument("--produced-size", type=int, default=150)
    parser.add_argument("--discard-size", type=int, default=400)
    parser.add_argument("--pdf", type=Path, default=None)
    parser.add_argument("--html", type=Path, default=None)
    args = parser.parse_args(argv)
    with gzip.open(DATA / "runs" / "waterloo.A-rank-normal.gz", "rt") as f:
        lines = [line for line in f if line.split()[0] == TOPIC]
    with gzip.open(DATA / "qrels" / "qrel_abs_test.txt.gz", "rt") as f:
        truth = {p[2]: p[3] for p in (line.split() for line in f) if p and p[0] == TOPIC}
    docs = [line.split()[2] for line in lines]
    rel = np.array([truth.get(d, "0") == "1" for d in docs])
    ranks_rel = np.flatnonzero(rel) + 1
    cutoff = args.cutoff or int(ranks_rel[math.ceil(0.85 * len(ranks_rel)) - 1])
    engine = create_engine_for(args.db)
    from reviewdepth.store.migrate import upgrade

    upgrade(engine)
    with tempfile.TemporaryDirectory() as tmp:
        run = Path(tmp) / "run.txt"
        run.write_text("".join(lines))
        import_run(engine, str(run))
    coded = set(range(1, 51)) | {int(r) for r in np.random.default_rng(1).choice(np.arange(51, len(docs) + 1), 100,
                                                                                  replace=False)}
    record_judgments(engine, TOPIC, [(docs[r - 1], truth.get(docs[r - 1], "0")) for r in sorted(coded)],
                     reviewer="alice")
    for frame, size, seed in ((f"ranks:1-{cutoff}", args.produced_size, 101),
                              (f"below-rank:{cutoff}", args.discard_size, 102)):
        s = draw_sample(engine, TOPIC, size, frame=frame, seed=seed)
        record_judgments(engine, TOPIC, [(d, truth.get(d, "0")) for d in s.doc_ids], reviewer="senior",
                         role="sample")
    above = np.arange(1, len(docs) + 1) <= cutoff
    is_coded = np.isin(np.arange(1, len(docs) + 1), sorted(coded))
    found = rel & (is_coded | above)
    produced = (is_coded & rel) | (~is_coded & above)
    print(f"{TOPIC}: N={len(docs)} R={int(rel.sum())} cutoff={cutoff} coded={len(coded)}; true recall "
          f"{found.sum() / rel.sum():.4f}, true production precision {(produced & rel).sum() / produced.sum():.4f} "
          f"({int(produced.sum())} produced)")
    document = build_validation(engine, TOPIC, ReportOptions(targets=["0.8"]), produce_to=cutoff)
    t = document.two_phase
    assert t is not None
    for name, figure in (("recall", t.recall), ("precision", t.precision)):
        if figure is not None:
            print(f"{name}: point {figure.point:.4f}, two-sided 95% [{figure.lower:.4f}, {figure.upper:.4f}], "
                  f"one-sided 95% lower {figure.lower_one_sided:.4f} (strata at {figure.stratum_confidence:.4f})")
    for name, count in (("relevant uncoded produced", t.found_uncoded), ("eluded", t.eluded)):
        if count is not None:
            print(f"{name}: sample {count.sample_relevant}/{count.sample_size} of {count.stratum}; estimate "
                  f"{count.point:.1f}, 95% range {count.lower:g} to {count.upper:g}")
    if args.pdf is not None:
        args.pdf.write_bytes(render_document(document, "pdf"))
    if args.html is not None:
        args.html.write_bytes(render_document(document, "html"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
