"""The PRISMA 2020 diagram of a screened SYNERGY review with duplicates, two reviewers, conflicts, maybes, two
stages and exclusion reasons (issue 28, "Show"; not run in CI: tests/api/test_prisma_diagram_doors.py and
tests/services/test_dedupe.py check the same paths on smaller set-ups).

Cohen 2006 ADHD (851 records, 20 included) plus ``--copies`` records copied as a second database would export them
(the DOI in upper case under a resolver address), in a random order (``--seed``). Before screening: ``import
records`` and ``dedupe --apply``. Title and abstract: ana and ben screen ranks 1..``--stop`` (the flagged records
skipped, as ``next`` skips them); ben answers maybe on every 25th record and flips every 40th decision, carol
adjudicates the flips.
Every truly included record and every 12th excluded one are included at title and abstract and go to full text,
where carol includes the truly included and excludes the rest with one of three reasons in turn.

Writes ``OUT.svg``, ``OUT.png`` and ``OUT.json`` and checks that every count in the SVG is the JSON field it names.

    python bench/prisma_synergy_demo.py --out /tmp/adhd_prisma [--stop 500] [--copies 40] [--seed 28]
"""

from __future__ import annotations

import argparse
import csv
import gzip
import json
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

from reviewdepth.report.prisma_diagram import render_diagram
from reviewdepth.report.prisma_model import prisma_flow
from reviewdepth.services.admin.topics import create_topic
from reviewdepth.services.answers.prisma import topic_prisma
from reviewdepth.services.files.dedupe import apply_duplicates, import_records
from reviewdepth.services.files.rankings import RankedDocument, store_ranking
from reviewdepth.services.review.batches import BatchItem, record_batch
from reviewdepth.services.review.screening import screening_settings
from reviewdepth.store.engine import create_engine_for

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "synergy"
REASONS = ("wrong population", "wrong outcome", "wrong study design")
SVG = "{http://www.w3.org/2000/svg}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True, help="path prefix of the .svg, .png and .json written")
    parser.add_argument("--stop", type=int, default=500)
    parser.add_argument("--copies", type=int, default=40)
    parser.add_argument("--seed", type=int, default=28)
    parser.add_argument("--workdir", default=None, help="keep the store here (default: a temporary folder)")
    args = parser.parse_args(argv)
    with gzip.open(DATA / "Cohen_2006_ADHD_ids.csv.gz", "rt", encoding="utf-8") as source:
        rows = list(csv.DictReader(source))
    truth = {r["pmid"].rsplit("/", 1)[-1]: r["label_included"] for r in rows}
    doi = {r["pmid"].rsplit("/", 1)[-1]: r["doi"] for r in rows}
    docs = list(truth)
    rng = np.random.default_rng(args.seed)
    copied = [docs[i] for i in rng.choice(len(docs), size=args.copies, replace=False)]
    copies = {f"copy-{d}": d for d in copied}
    order = [*docs, *copies]
    order = [order[i] for i in rng.permutation(len(order))]
    with tempfile.TemporaryDirectory() as tmp:
        tmp = args.workdir or tmp
        from reviewdepth.services.admin.database import upgrade_database
        from reviewdepth.settings import Settings

        url = f"sqlite:///{Path(tmp) / 'adhd.db'}"
        upgrade_database(Settings(database_url=url), "head")
        engine = create_engine_for(url)
        create_topic(engine, "ADHD")
        store_ranking(engine, "ADHD", "random", [RankedDocument(d) for d in order])
        screening_settings(engine, "ADHD", add=list(REASONS))
        records = Path(tmp) / "records.csv"
        with records.open("w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(["record_id", "pmid", "doi"])
            writer.writerows([(d, d, doi[d]) for d in docs])
            writer.writerows([(c, "", doi[d].upper()) for c, d in copies.items() if doi[d]])
        import_records(engine, str(records), topic="ADHD")
        applied = apply_duplicates(engine, "ADHD", reviewer="lead")
        flagged = applied.flags_written
        removed = {d.doc_id for d in applied.duplicates}
        # the team screens what the queue serves: every record but those flagged (a copy whose original has no
        # DOI was not found, and is screened as a record of its own)
        screened = [d for d in order[:args.stop] if d not in removed]
        truth.update({c: truth[d] for c, d in copies.items()})
        flipped, maybes = set(screened[::40]), set(screened[5::25])
        to_full_text = [d for i, d in enumerate(screened) if truth[d] == "1" or i % 12 == 0]
        label = {d: "1" if d in to_full_text else "0" for d in screened}
        record_batch(engine, "ADHD", [BatchItem(d, label[d]) for d in screened], reviewer="ana", source="demo")
        record_batch(engine, "ADHD", [BatchItem(d, "maybe" if d in maybes else str(1 - int(label[d]))
                                                if d in flipped else label[d]) for d in screened],
                     reviewer="ben", source="demo")
        record_batch(engine, "ADHD", [BatchItem(d, label[d], role="adjudication") for d in flipped],
                     reviewer="carol", source="demo")
        full_text = [BatchItem(d, truth[d], role="adjudication", stage="full-text",
                               reason=None if truth[d] == "1" else REASONS[i % 3])
                     for i, d in enumerate(to_full_text)]
        record_batch(engine, "ADHD", full_text, reviewer="carol", source="demo")
        counts = topic_prisma(engine, "ADHD", policy="adjudicated")
        engine.dispose()
    flow = prisma_flow("ADHD", counts)
    out = Path(args.out)
    svg = render_diagram(flow, "svg")
    out.with_suffix(".svg").write_bytes(svg)
    out.with_suffix(".png").write_bytes(render_diagram(flow, "png"))
    data = counts.as_dict()
    out.with_suffix(".json").write_text(json.dumps(data, indent=2) + "\n")
    checked = 0
    for span in ET.fromstring(svg).iter(f"{SVG}tspan"):
        if span.get("class") != "count":
            continue
        name, _, key = (span.get("data-field") or "").partition(".")
        want = data[name][key] if key else data[name]
        assert int((span.text or "").replace(",", "")) == want, (name, key, span.text, want)
        checked += 1
    print(f"{len(order):,} records ({args.copies} copies; {flagged} flagged by dedupe), ranks 1..{args.stop} "
          f"screened by two reviewers")
    print(json.dumps({k: data[k] for k in ("identified", "duplicates_removed", "after_duplicates_removed",
                                           "screened", "screened_undecided", "excluded_by_reviewers",
                                           "excluded_full_text", "not_screened_review_stopped", "stopped_at_rank",
                                           "full_text_assessed", "excluded_per_reason", "included",
                                           "reviewers_per_record", "conflicts", "conflicts_resolved")}))
    print(f"{checked} counts in the SVG, each equal to the JSON field it names; wrote {out}.svg, .png, .json")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
