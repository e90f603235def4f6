"""Duplicate records through the store (issue 28, item 5), on SQLite and PostgreSQL: `import records`, `dedupe`
listing and `--apply` (the flags and the merged decisions in the judgment log), what a flagged record counts as
under every label policy, for agreement and conflicts, for PRISMA and the report, the withdrawal of a flag, and bad
input (one line naming the file, line and field; the database unchanged)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import Engine, func, select

from reviewdepth.services.answers.agreement import topic_agreement
from reviewdepth.services.answers.conflicts import list_conflicts
from reviewdepth.services.answers.prisma import topic_prisma
from reviewdepth.services.answers.queues import queue_labels
from reviewdepth.services.errors import Conflict
from reviewdepth.services.files.dedupe import (
    apply_duplicates,
    find_topic_duplicates,
    import_records,
    withdraw_duplicate,
)
from reviewdepth.services.files.imports import import_run
from reviewdepth.services.review.exports import topic_labels
from reviewdepth.services.review.judgments import list_judgments, record_judgment
from reviewdepth.store.labels import POLICIES
from reviewdepth.store.models import ImportRecord, Judgment, RecordFields, Topic

from ..cli.test_store_listing_cli import invoke, one_error_line

# d3 is d1 by DOI; d5 is d4 by a title one letter apart; d8 is d2 by title (d9's DOI differs from d8's: d9 stays
# apart, though its title is d2's too); d6/d7 are short titles of different first authors; d10 is alone
RECORDS = """record_id,title,year,doi,authors
d1,Deep learning for citation screening in systematic reviews,2020,10.1000/ABC,"Smith, J; Doe, A"
d2,Another paper entirely about the screening of cats,2019,,Brown
d3,"Deep Learning for Citation Screening in Systematic Reviews.",2020,https://doi.org/10.1000/abc,Smith J
d4,A randomised controlled trial of methylphenidate in adults,2018,,"Jones, K"
d5,A randomized controlled trial of methylphenidate in adults,2018,,"Jones, K."
d6,Editorial,2018,,"Lee, A"
d7,Editorial,2018,,"Kim, B"
d8,Another paper entirely about the screening of cats,2019,10.1/zzz,Brown
d9,Another paper entirely about the screening of cats,2019,10.1/yyy,Brown
d10,Unique,2017,,X
"""


def _topic(engine: Engine, tmp_path: Path) -> Path:
    run = tmp_path / "q.run"
    run.write_text("".join(f"T Q0 d{i} {i} {100 - i} s\n" for i in range(1, 11)))
    import_run(engine, str(run))
    records = tmp_path / "records.csv"
    records.write_text(RECORDS)
    return records


def _state(engine: Engine) -> tuple[object, ...]:
    with engine.connect() as conn:
        return (conn.execute(select(func.count()).select_from(Judgment)).scalar_one(),
                conn.execute(select(Topic.chain_length, Topic.chain_head)).all(),
                conn.execute(select(func.count()).select_from(RecordFields)).scalar_one(),
                conn.execute(select(func.count()).select_from(ImportRecord)).scalar_one())


def test_groups_listed_then_flagged_and_merged(engine: Engine, tmp_path: Path) -> None:
    records = _topic(engine, tmp_path)
    summary = import_records(engine, str(records), topic="T")
    assert (summary.stored, summary.with_title, summary.with_doi) == (10, 10, 4)
    for doc, label, who in [("d5", "1", "alice"), ("d5", "1", "bob"), ("d4", "0", "bob"), ("d3", "1", "alice")]:
        record_judgment(engine, "T", doc, label, reviewer=who)
    before = _state(engine)
    listed = find_topic_duplicates(engine, "T")
    assert _state(engine) == before  # listing writes nothing
    assert [(d.doc_id, d.kept, d.basis, d.flagged, d.decisions) for d in listed.duplicates] == [
        ("d3", "d1", "doi", False, 1), ("d8", "d2", "title", False, 0), ("d5", "d4", "title", False, 2)]
    assert 95 <= listed.duplicates[2].similarity < 100

    applied = apply_duplicates(engine, "T", reviewer="lead")
    assert (applied.flags_written, applied.decisions_merged) == (3, 2)
    log = [(j.doc_id, j.decision, j.reviewer, j.role, j.source, j.note) for j in list_judgments(engine, "T")][4:]
    assert log == [
        ("d3", "duplicate", "lead", "adjudication", "dedupe", "duplicate of d1 (doi)"),
        ("d8", "duplicate", "lead", "adjudication", "dedupe", "duplicate of d2 (title)"),
        ("d5", "duplicate", "lead", "adjudication", "dedupe",
         f"duplicate of d4 (title, {listed.duplicates[2].similarity:g} % similar)"),
        # alice's include of d5 joins the record kept; bob decided on d4 himself, so his d5 vote is not copied
        ("d4", "include", "alice", "review", "dedupe", "merged from duplicate d5 (judgment 1)"),
        ("d1", "include", "alice", "review", "dedupe", "merged from duplicate d3 (judgment 4)")]
    again = apply_duplicates(engine, "T", reviewer="lead")
    assert (again.flags_written, again.decisions_merged) == (0, 0) and all(d.flagged for d in again.duplicates)

    # every policy: the duplicates are judged not relevant, the work counts once in R
    for policy in POLICIES:
        _, labels = queue_labels(engine, "T", None, policy)
        assert labels.labels[[2, 4, 7]].tolist() == [0, 0, 0], policy  # d3, d5, d8 (ranks 3, 5, 8)
        assert labels.labels[0] == 1, policy  # d1 holds the include made on d3
        assert labels.relevant_total == int(np.count_nonzero(labels.labels == 1)) <= 2, policy
    # agreement and conflicts: d4 is alice's include against bob's exclude; the duplicate d5 takes no part
    assert [c.doc_id for c in list_conflicts(engine, "T")] == ["d4"]
    assert topic_agreement(engine, "T").documents == 1
    prisma = topic_prisma(engine, "T", policy="latest")
    assert (prisma.identified, prisma.duplicates_removed, prisma.after_duplicates_removed) == (10, 3, 7)
    assert (prisma.screened, prisma.included, prisma.excluded_by_reviewers) == (2, 2, 0)
    assert prisma.not_screened_review_stopped == 7 - 2
    assert prisma.reviewers_per_record == {1: 1, 2: 1}
    docs, labels_out = topic_labels(engine, "T")
    assert dict(zip(docs, labels_out, strict=True))["d5"] == 0

    # a wrong flag withdrawn: d3 counts in its own right again, its own include decides it
    withdraw_duplicate(engine, "T", "d3", reviewer="lead")
    _, labels = queue_labels(engine, "T", None, "latest")
    assert labels.labels[2] == 1
    assert topic_prisma(engine, "T", policy="latest").duplicates_removed == 2
    with pytest.raises(Conflict, match="not flagged"):
        withdraw_duplicate(engine, "T", "d3", reviewer="lead")


def test_prisma_says_not_recorded_until_fields_are_imported(engine: Engine, tmp_path: Path) -> None:
    records = _topic(engine, tmp_path)
    assert topic_prisma(engine, "T").duplicates_removed is None
    import_records(engine, str(records), topic="T")
    checked = topic_prisma(engine, "T")
    assert (checked.duplicates_removed, checked.after_duplicates_removed) == (0, 10)


def test_cli_lists_applies_and_the_report_counts_once(engine: Engine, empty_db_url: str, tmp_path: Path) -> None:
    db = ("--db", empty_db_url)
    records = _topic(engine, tmp_path)
    code, out, err = invoke("import", "records", str(records), "--topic", "T", *db)
    assert code == 0 and "stored the bibliographic fields of 10 records" in out, err
    code, out, _ = invoke("dedupe", "T", "--format", "json", *db)
    assert code == 0 and json.loads(out)["applied"] is False and len(json.loads(out)["duplicates"]) == 3
    record_judgment(engine, "T", "d3", "1", reviewer="alice")
    code, out, _ = invoke("dedupe", "T", "--apply", "--reviewer", "lead", *db)
    assert code == 0 and "flagged 3 now and merged 1 decisions" in out
    code, out, _ = invoke("report", "T", "--format", "json", *db)
    report = json.loads(out)
    assert report["prisma"]["duplicates_removed"] == 3 and report["prisma"]["included"] == 1


def test_bad_records_are_one_line_and_change_nothing(engine: Engine, empty_db_url: str, tmp_path: Path) -> None:
    db = ("--db", empty_db_url)
    _topic(engine, tmp_path)
    before = _state(engine)
    cases = [
        ("record_id,title,year\nd1,A,2020\nd99,B,2020\n",
         ("other.csv", "d99", "1 record is not a document of topic 'T'")),
        ("record_id,title,year\nd1,A,2020\nd1,B,2021\n", ("other.csv:3", "record_id", "also on line 2")),
        ("record_id,title,year\nd1,A,around then\n", ("other.csv:2", "year", "no four-digit year")),
        ("record_id,notes\nd1,x\n", ("other.csv:1", "no column of the header holds a title")),
    ]
    for text, parts in cases:
        bad = tmp_path / "other.csv"
        bad.write_text(text)
        code, _, err = invoke("import", "records", str(bad), "--topic", "T", *db)
        assert code == 2, err
        one_error_line(err, *parts)
        assert _state(engine) == before
    code, _, err = invoke("dedupe", "T", *db)
    assert code != 0
    one_error_line(err, "no bibliographic fields", "import records")
    code, _, err = invoke("dedupe", "T", "--not-duplicate", "d1", "--reviewer", "x", *db)
    assert code != 0
    one_error_line(err, "not flagged a duplicate")
    assert _state(engine) == before


def test_records_of_platform_exports_keep_the_ids_their_imports_gave(engine: Engine, tmp_path: Path) -> None:
    """A Covidence list export and a Rayyan articles.csv are read as records under the ids `import covidence`
    (``Covidence #``) and `import rayyan` (``key``) store, so their fields attach to the topic's documents."""
    from reviewdepth.services.files.covidence_import import import_covidence
    from reviewdepth.services.files.rayyan_import import import_rayyan

    screening = Path(__file__).resolve().parents[1] / "data" / "screening"
    lists = sorted((screening / "covidence").glob("review_4242_*.csv"))
    import_covidence(engine, [str(p) for p in lists], topic="C")
    summary = import_records(engine, str(lists[0]), topic="C")
    with engine.connect() as conn:
        stored = {str(doc): year for doc, year in conn.execute(select(RecordFields.doc_id, RecordFields.year))}
    assert summary.stored == len(stored) >= 1 and all(doc.startswith("#") for doc in stored)
    assert all(isinstance(year, int) for year in stored.values())
    import_rayyan(engine, str(screening / "rayyan_articles.csv"), topic="R")
    assert import_records(engine, str(screening / "rayyan_articles.csv"), topic="R").stored >= 1


def test_a_flag_is_no_review_out_of_queue_order(engine: Engine, tmp_path: Path) -> None:
    """A record flagged before anyone screened it is removed, not reviewed: the team that screened ranks 1-2 in
    queue order still stopped at rank 2 (a flag deeper in the queue is no document reviewed out of order)."""
    run = tmp_path / "q.run"
    run.write_text("".join(f"T Q0 d{i} {i} {100 - i} s\n" for i in range(1, 11)))
    import_run(engine, str(run))
    records = tmp_path / "records.csv"
    records.write_text("record_id,doi\nd1,10.1/one\nd9,https://doi.org/10.1/ONE\n")
    import_records(engine, str(records), topic="T")
    for doc in ("d1", "d2"):
        record_judgment(engine, "T", doc, "1", reviewer="ana")
    assert apply_duplicates(engine, "T", reviewer="lead").flags_written == 1
    prisma = topic_prisma(engine, "T", policy="latest")
    assert (prisma.stopped_at_rank, prisma.reviewed, prisma.screened) == (2, 2, 2)
    assert (prisma.duplicates_removed, prisma.not_screened_review_stopped) == (1, 10 - 1 - 2)
