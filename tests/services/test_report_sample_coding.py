"""The report says how each sample's documents were coded (issue 39, item 2's last part): a sample may be coded
through `judge --role sample`, or through any other door after the draw (an export imported with role left at
review, the API), and the store counts every one as the sample's coding. The samples section gives, per sample,
the documents by the role, time (after or before the draw) and door of their latest decision, and how many are not
coded yet: in the JSON (``coding``, ``uncoded``, ``coded``), the table, the CSV and the HTML page."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from sqlalchemy import Engine

from reviewdepth.report.render import render
from reviewdepth.services.answers.report import ReportOptions, build_report
from reviewdepth.services.files.imports import import_csv, import_run
from reviewdepth.services.review.judgments import record_judgments
from reviewdepth.services.review.samples import draw_sample

# what the test does to the sample's 30 documents, in draw order: 12 judged --role sample at the command line,
# 10 in a CSV export imported with the default role review, 3 through the API in role review, 5 left uncoded
PLAN = (("sample", "cli", None, 12), ("review", "import", "csv", 10), ("review", "api", None, 3))
UNCODED = 5


def test_each_sample_says_how_its_documents_were_coded(engine: Engine, tmp_path: Path) -> None:
    run = tmp_path / "q.run"
    run.write_text("".join(f"t Q0 d{i} {i + 1} {200 - i} q\n" for i in range(100)))
    import_run(engine, str(run))
    record_judgments(engine, "t", [(f"d{i}", "1" if i % 4 == 0 else "0") for i in range(20)], reviewer="ana")
    sample = draw_sample(engine, "t", 30, frame="unreviewed", seed=5)
    docs = list(sample.doc_ids)
    first = 0
    for role, door, _, n in PLAN:
        part = docs[first:first + n]
        first += n
        if door == "import":
            export = tmp_path / "export.csv"
            export.write_text("doc,label\n" + "".join(f"{d},0\n" for d in part))
            import_csv(engine, str(export), topic="t")
        else:
            record_judgments(engine, "t", [(d, "0") for d in part], reviewer="bo", role=role, source=door)
    assert len(docs) - first == UNCODED

    report = build_report(engine, "t", ReportOptions(targets=["0.8"]))
    [row] = json.loads(report.to_json())["samples"]
    assert row["coding"] == [{"role": role, "after_draw": True, "door": door, "import_kind": kind, "documents": n}
                             for role, door, kind, n in PLAN]
    assert row["uncoded"] == UNCODED
    sentence = ("coded: 12 with role sample after the draw (one by one at the command line), 10 with role review "
                "after the draw (import csv), 3 with role review after the draw (one by one through the API); "
                "5 not yet coded")
    assert row["coded"] == sentence

    table = " ".join(render(report, "table", width=400).split())
    assert f"sample {sample.id} {sentence}" in table
    rows = {(r[1], r[2]): r[3] for r in csv.reader(io.StringIO(render(report, "csv"))) if r[0] == "samples"}
    assert rows[(str(sample.id), "coding.sample_after_draw_cli")] == "12"
    assert rows[(str(sample.id), "coding.review_after_draw_import_csv")] == "10"
    assert rows[(str(sample.id), "coding.review_after_draw_api")] == "3"
    assert rows[(str(sample.id), "uncoded")] == "5"
    assert sentence in render(report, "html")


def test_documents_coded_before_the_draw_are_told_apart(engine: Engine, tmp_path: Path) -> None:
    """A band of ranks the review has passed: its documents were coded before the draw."""
    run = tmp_path / "q.run"
    run.write_text("".join(f"t Q0 d{i} {i + 1} {200 - i} q\n" for i in range(40)))
    import_run(engine, str(run))
    record_judgments(engine, "t", [(f"d{i}", "0") for i in range(10)], reviewer="ana")
    sample = draw_sample(engine, "t", 20, frame="ranks:1-20", seed=2)
    coded_before = sum(int(d[1:]) < 10 for d in sample.doc_ids)  # the oracle: the drawn ids of the reviewed band
    report = build_report(engine, "t", ReportOptions(targets=["0.8"]))
    [row] = json.loads(report.to_json())["samples"]
    assert row["coding"] == [{"role": "review", "after_draw": False, "door": "cli", "import_kind": None,
                              "documents": coded_before}]
    assert row["uncoded"] == 20 - coded_before
