"""Write a small ``.asreview`` project with the ``asreview`` package itself, and what ASReview reports for it.

Run: ``python tests/data/asreview/make_project.py OUT_DIR`` (needs ``pip install asreview``). It writes
``OUT_DIR/small.asreview`` (ASReview's own ``Project.export``) and ``OUT_DIR/small.expected.json``: the project
read back through ASReview's API (``Project.load`` and ``Database``), the independent side of the round-trip
test (``tests/services/test_asreview_import.py``). Run in a subprocess: importing asreview registers a
SQLAlchemy connect listener on every engine of the process.

The review: 12 records (two of them duplicates, one group), 2 prior labels, a model ranking written with
``add_last_ranking``, 5 records screened in that order by user 1 (one pending), one decision changed by user 2
(kept by ASReview in ``decision_changes``), the rest never screened.
"""

from __future__ import annotations

import csv
import json
import sys
import tempfile
import time
from pathlib import Path

import asreview

RECORDS = [
    ("Deep learning for screening", "Neural ranking of abstracts."),
    ("Active learning in reviews", "Screening prioritisation with SVMs."),
    ("A cohort study of knees", "Orthopaedic outcomes."),
    ("Stopping rules for TAR", "When to stop screening."),
    ("Gardening in spring", "Tulips and roses."),
    ("Recall estimation", "Sampling the unreviewed documents."),
    ("Deep learning for screening", "Neural ranking of abstracts."),  # duplicate of the first
    ("Technology-assisted review", "Continuous active learning."),
    ("Cooking pasta", "Water, salt, time."),
    ("Citation screening at scale", "Millions of records."),
    ("Bird migration", "Swallows fly south."),
    ("Inclusion criteria", "Eligibility of trials."),
]


def write_project(out: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        dataset = Path(tmp, "records.csv")
        with dataset.open("w", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(["title", "abstract"])
            writer.writerows(RECORDS)
        project = asreview.Project.create(Path(tmp, "small"), project_id="small", project_name="small")
        project.add_dataset(dataset)
        project.add_review(status="review")
        db = project.db
        ids = sorted(int(i) for i in db.input.get_df()["record_id"])
        db.label_record(ids[0], 1)  # prior knowledge: no model, no user
        db.label_record(ids[4], 0)
        ranking = [ids[i] for i in (3, 5, 7, 2, 9, 11, 1, 8, 10, 0, 4, 6)]
        db.add_last_ranking(ranking, "nb", "max", "balanced", "tfidf", training_set=2)
        for label in (1, 1, 0, 1, 0):
            time.sleep(0.01)  # distinct decision times
            record = int(db.query_top_ranked(user_id=1)["record_id"].iloc[0])
            db.label_record(record, label, user_id=1)
        db.query_top_ranked(user_id=1)  # shown, not yet decided
        time.sleep(0.01)
        db.update_result(ranking[2], label=1, user_id=2)  # a changed decision
        project.update_review(status="review")
        project.export(out / "small.asreview")
        project.close()


def _user(value: object) -> int | None:
    """An integer column's value (user id, label), None where ASReview stores NULL."""
    import pandas as pd

    return None if pd.isna(value) else int(value)  # type: ignore[call-overload]


def reported(asreview_file: Path) -> dict[str, object]:
    """What ASReview reports for the project file: records, labels with times and users, history, order."""
    import pandas as pd

    with tempfile.TemporaryDirectory() as tmp:
        project = asreview.Project.load(asreview_file, tmp)
        db = project.db
        results = db.get_results_table(groups=True, pending=True)
        labelled = results[results["label"].notna()]
        pending = results[results["label"].isna()]
        changes = db.get_decision_changes()
        report = {
            "project": project.config["name"],
            "records": sorted(int(i) for i in db.input.get_df()["record_id"]),
            "labels": [{"record_id": int(r.record_id), "label": int(r.label), "time": float(r.time),
                        "user_id": _user(r.user_id)}
                       for r in labelled.itertuples()],
            "pending": [int(i) for i in pending["record_id"]],
            "decision_changes": [{"record_id": int(r.record_id), "label": _user(r.label),
                                  "time": None if pd.isna(r.time) else float(r.time),
                                  "user_id": _user(r.user_id)}
                                 for r in changes.itertuples()],
            "last_ranking": [int(i) for i in db.get_last_ranking_table().sort_values("ranking")["record_id"]],
            "unlabelled_in_ranking_order": [int(i) for i in db.get_unlabeled(groups=True)],
        }
        project.close()
    return report


if __name__ == "__main__":
    target = Path(sys.argv[1])
    target.mkdir(parents=True, exist_ok=True)
    write_project(target)
    (target / "small.expected.json").write_text(json.dumps(reported(target / "small.asreview"), indent=1) + "\n")
