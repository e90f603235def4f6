"""Duplicate flags on SYNERGY screening sets, through the store (issue 28, item 5, "Show"; not run in CI:
tests/services/test_dedupe.py checks the same path on a small set-up).

Two measurements, each against a truth the flags were not built from:

1. **Injected duplicates** (a clean set: every Cohen 2006 record has its own PMID and DOI). ``--inject`` records
   drawn at random (``--seed``) are copied, each copy written the way a second database would write it: the DOI
   as a resolver address in upper case and the PMID as ``PMID: N`` (a third of the copies), the DOI only (a
   third), or the PMID only (a third). The copy carries the original's label as a second reviewer's decision.
   Precision and recall of the flags against the injected pairs; and R (relevant records under the label policy)
   before injection, after injection, and after ``dedupe --apply``.
2. **Natural duplicates** (Appenzeller-Herzog 2019, whose rows repeat identifiers; rows are numbered 1, 2, …):
   the truth is "two rows share an OpenAlex id"; the flags are found from DOI and PMID only. Precision and recall
   of the flagged pairs (a group of k rows holds k - 1 duplicate rows) against it.

SYNERGY's files carry no titles, so the title path is not measured here; tests/formats/test_duplicates.py covers
it on constructed titles.

    python bench/dedupe_synergy.py [--inject 200] [--seed 2026]
"""

from __future__ import annotations

import argparse
import csv
import gzip
import io
import tempfile
from pathlib import Path

import numpy as np

from reviewdepth.services.answers.queues import queue_labels
from reviewdepth.services.files.dedupe import apply_duplicates, find_topic_duplicates, import_records
from reviewdepth.services.files.imports import import_qrels, import_run
from reviewdepth.store.engine import create_engine_for

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "synergy"


def _rows(name: str) -> list[dict[str, str]]:
    with gzip.open(DATA / f"{name}_ids.csv.gz", "rt", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def _store(workdir: Path, topic: str, docs: list[str], labels: dict[str, list[tuple[str, int]]],
           records: list[tuple[str, str, str]]):  # type: ignore[no-untyped-def]
    """A fresh store with the topic's queue (file order), its labels as qrels per reviewer and its records."""
    url = f"sqlite:///{workdir / (topic + '.db')}"
    from reviewdepth.services.admin.database import upgrade_database
    from reviewdepth.settings import Settings

    upgrade_database(Settings(database_url=url), "head")
    engine = create_engine_for(url)
    run = workdir / f"{topic}.run"
    run.write_text("".join(f"{topic} Q0 {d} {i} {len(docs) - i} file\n" for i, d in enumerate(docs, start=1)))
    import_run(engine, str(run))
    for reviewer, pairs in labels.items():
        qrels = workdir / f"{topic}.{reviewer}.qrels"
        qrels.write_text("".join(f"{topic} 0 {d} {label}\n" for d, label in pairs))
        import_qrels(engine, str(qrels), reviewer=reviewer)
    table = workdir / f"{topic}.records.csv"
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["record_id", "doi", "pmid"])
    writer.writerows(records)
    table.write_text(out.getvalue())
    import_records(engine, str(table), topic=topic)
    return engine


def _relevant(engine, topic: str) -> int:  # type: ignore[no-untyped-def]
    _, labels = queue_labels(engine, topic, None, "latest")
    return int(labels.relevant_total)


def injected(workdir: Path, count: int, seed: int) -> None:
    rows = _rows("Cohen_2006_ADHD")
    rng = np.random.default_rng(seed)
    docs = [str(i) for i in range(1, len(rows) + 1)]
    records = [(d, r["doi"], r["pmid"]) for d, r in zip(docs, rows, strict=True)]
    originals = {d: int(r["label_included"]) for d, r in zip(docs, rows, strict=True)}
    chosen = rng.choice(len(rows), size=count, replace=False)
    # the relevant records are few (20 of 851): inject a copy of each of them too, so R's inflation shows
    relevant_rows = [i for i, d in enumerate(docs) if originals[d] == 1]
    chosen = np.unique(np.concatenate([chosen, np.array(relevant_rows)]))
    truth: set[tuple[str, str]] = set()
    copies: list[str] = []
    for k, i in enumerate(chosen.tolist()):
        copy = f"copy{k + 1}"
        doi, pmid = rows[i]["doi"], rows[i]["pmid"]
        digits = pmid.rstrip("/").rsplit("/", 1)[-1]
        form = k % 3
        records.append((copy, doi.upper() if form != 2 else "", f"PMID: {digits}" if form != 1 else ""))
        truth.add((copy, docs[i]))
        copies.append(copy)
        originals[copy] = originals[docs[i]]
    order = docs + copies
    rng.shuffle(order)
    before_copies = sum(v for d, v in originals.items() if not d.startswith("copy"))
    labels = {"first": [(d, originals[d]) for d in docs], "second": [(c, originals[c]) for c in copies]}
    engine = _store(workdir, "ADHD", order, labels, records)
    inflated = _relevant(engine, "ADHD")
    listed = find_topic_duplicates(engine, "ADHD")
    # each flag (duplicate, kept) is a hit when the two are a copy and its original, either way round
    flagged = {(d.doc_id, d.kept) for d in listed.duplicates}
    hits = sum((a, b) in truth or (b, a) in truth for a, b in flagged)
    # a copy written "DOI only" of a record that has no DOI carries no identifier of its original: no title
    # either (SYNERGY has none), so nothing could find it
    identifiers = {d: (doi, pmid) for d, doi, pmid in records}
    findable = sum(bool(identifiers[c][0] and identifiers[o][0]) or bool(identifiers[c][1]) for c, o in truth)
    apply_duplicates(engine, "ADHD", reviewer="dedupe-bench")
    after = _relevant(engine, "ADHD")
    print(f"injected: Cohen 2006 ADHD, {len(rows):,} records + {len(copies):,} copies (seed {seed}; every "
          f"relevant record copied, the rest at random)")
    print(f"  flags {len(flagged):,}: precision {hits / max(len(flagged), 1):.4f}, recall {hits / len(truth):.4f} "
          f"({hits:,} of {len(truth):,} injected pairs; {findable:,} of them share an identifier with their original)")
    print(f"  R (relevant records, policy latest): {before_copies} before injection, {inflated} with the copies, "
          f"{after} after dedupe --apply")
    engine.dispose()


def natural(workdir: Path) -> None:
    rows = _rows("Appenzeller-Herzog_2019")
    docs = [str(i) for i in range(1, len(rows) + 1)]
    records = [(d, r.get("doi", ""), r.get("pmid", "")) for d, r in zip(docs, rows, strict=True)]
    labels = {"synergy": [(d, int(r["label_included"])) for d, r in zip(docs, rows, strict=True)]}
    engine = _store(workdir, "AH", docs, labels, records)
    listed = find_topic_duplicates(engine, "AH")
    by_openalex: dict[str, list[str]] = {}
    for d, r in zip(docs, rows, strict=True):
        if r.get("openalex_id"):
            by_openalex.setdefault(r["openalex_id"], []).append(d)
    openalex_of = {d: r.get("openalex_id") or None for d, r in zip(docs, rows, strict=True)}
    true_duplicates = sum(len(g) - 1 for g in by_openalex.values())
    flagged = [(d.doc_id, d.kept) for d in listed.duplicates]
    same = sum(openalex_of[a] is not None and openalex_of[a] == openalex_of[b] for a, b in flagged)
    unknown = sum(openalex_of[a] is None or openalex_of[b] is None for a, b in flagged)
    print(f"natural: Appenzeller-Herzog 2019, {len(rows):,} rows; {true_duplicates:,} rows repeat another row's "
          f"OpenAlex id")
    print(f"  flags {len(flagged):,} (from DOI and PMID): {same:,} share the OpenAlex id of the record kept "
          f"(precision {same / max(len(flagged) - unknown, 1):.4f} over the {len(flagged) - unknown:,} flags whose "
          f"two rows both have one), recall {same / max(true_duplicates, 1):.4f}")
    engine.dispose()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--inject", type=int, default=200)
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        injected(Path(tmp), args.inject, args.seed)
        natural(Path(tmp))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
