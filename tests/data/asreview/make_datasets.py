"""Read ASReview's own test datasets with the ``asreview`` package and write what it reads, for the tests of
``reviewdepth import records`` and ``import ris`` (``tests/formats/test_asreview_datasets.py``).

Run: ``python tests/data/asreview/make_datasets.py`` (needs ``pip install asreview``; not a dependency of
reviewdepth). For each file of ``demo_data/`` (copied unchanged from ASReview's repository: see
``tests/data/README.md``) it writes ``demo_data/<file>.expected.json``: the number of records ASReview reads, the
``record_id`` it gives each (in file order), each record's label (``included``: 1, 0 or null) and how many
records have a title, as ``asreview.load_dataset`` reads them. It also writes ``demo_data/generic_labels.xlsx``
with ASReview's own Excel writer (``asreview.data.ExcelWriter``) from ``generic_labels.csv`` as ASReview's CSV
reader reads it (ASReview's repository holds no small workbook), and its expected reading likewise.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import asreview
import pandas as pd
from asreview.data import CSVReader, ExcelWriter

HERE = Path(__file__).parent / "demo_data"
SUFFIXES = (".csv", ".tsv", ".ris", ".xlsx")


def expected(path: Path) -> dict[str, object]:
    """What ASReview reads from ``path``: records, record ids, labels, titled records."""
    db = asreview.load_dataset(str(path))
    frame = db.input.get_df()
    labels = [None if pd.isna(value) else int(value) for value in frame["included"].tolist()] \
        if "included" in frame else [None] * len(frame)
    titles = [None if pd.isna(t) else t for t in frame["title"].tolist()] if "title" in frame else []
    return {
        "file": path.name,
        "asreview": asreview.__version__,
        "records": len(frame),
        "record_ids": [int(v) for v in frame["record_id"].tolist()],
        "labels": labels,
        "titled": sum(1 for t in titles if isinstance(t, str) and t.strip()),
    }


def main() -> None:
    ExcelWriter.write_data(CSVReader.read_data(HERE / "generic_labels.csv"), HERE / "generic_labels.xlsx")
    for path in sorted(HERE.iterdir()):
        if path.suffix in SUFFIXES:
            out = path.with_name(path.name + ".expected.json")
            out.write_text(json.dumps(expected(path), indent=1) + "\n")
            print(out, file=sys.stderr)


if __name__ == "__main__":
    main()
