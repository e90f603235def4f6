"""Screening decisions (issue 28, item 2), on SQLite and PostgreSQL: maybe and skip through the CLI, judge files
and import csv; what a maybe counts as under every label policy, for agreement and for PRISMA; exclusion reasons
from a per-topic list; screening stages; the conflict rules (rayyan, strict). Bad input is one line naming the
field (exit 2) and leaves the database unchanged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import Engine, func, select

from reviewdepth.services.answers.agreement import topic_agreement
from reviewdepth.services.answers.conflicts import list_conflicts
from reviewdepth.services.answers.prisma import topic_prisma
from reviewdepth.services.answers.queues import queue_labels
from reviewdepth.services.answers.report import ReportOptions, build_report
from reviewdepth.services.errors import Conflict, Invalid
from reviewdepth.services.files.imports import import_csv, import_run
from reviewdepth.services.review.audit_stream import next_documents
from reviewdepth.services.review.judgments import list_judgments, record_judgment
from reviewdepth.services.review.screening import screening_settings
from reviewdepth.store.labels import POLICIES
from reviewdepth.store.models import Judgment, Topic, TopicReason

from ..cli.test_store_listing_cli import invoke, one_error_line

REASONS = ["wrong population", "wrong design"]


def _topic(engine: Engine, tmp_path: Path, size: int = 12) -> None:
    run = tmp_path / "q.run"
    run.write_text("".join(f"T Q0 d{i} {i} {size + 1 - i} s\n" for i in range(1, size + 1)))
    import_run(engine, str(run))
    screening_settings(engine, "T", add=REASONS)


def _state(engine: Engine) -> tuple[object, ...]:
    """Everything a refused write must leave as it was."""
    with engine.connect() as conn:
        return (conn.execute(select(func.count()).select_from(Judgment)).scalar_one(),
                conn.execute(select(Topic.chain_length, Topic.chain_head, Topic.conflict_rule)).all(),
                conn.execute(select(TopicReason.reason).order_by(TopicReason.id)).scalars().all())


def test_each_decision_kind_through_the_cli(engine: Engine, empty_db_url: str, tmp_path: Path) -> None:
    db = ("--db", empty_db_url)
    _topic(engine, tmp_path)
    code, out, _ = invoke("judge", "T", "d1", "Maybe", "--reviewer", "ana", *db)
    assert code == 0 and "(maybe: decides no label)" in out
    code, out, _ = invoke("judge", "T", "d2", "skip", "--reviewer", "ana", *db)
    assert code == 0 and "(skipped: not screened)" in out
    code, out, _ = invoke("judge", "T", "d3", "exclude", "--reviewer", "ana", "--reason", "wrong design",
                          "--stage", "full-text", *db)
    assert code == 0 and "(not relevant, wrong design, full-text)" in out
    code, out, _ = invoke("judgments", "T", "--format", "json", *db)
    rows = json.loads(out)
    assert [(r["doc_id"], r["decision"], r["relevant"], r["reason"], r["stage"]) for r in rows] == [
        ("d1", "maybe", None, None, "title-abstract"), ("d2", "skip", None, None, "title-abstract"),
        ("d3", "exclude", False, "wrong design", "full-text")]

    before = _state(engine)
    for args, parts in [
        (("d4", "include", "--reason", "wrong design"), ("reason", "only an exclude carries a reason")),
        (("d4", "maybe", "--reason", "wrong design"), ("reason", "'maybe'")),
        (("d4", "0", "--reason", "off topic"), ("reason", "'off topic' is not an exclusion reason of topic 'T'")),
        (("d4", "0", "--stage", "abstract"), ("stage", "must be one of title-abstract, full-text")),
        (("d4", "perhaps"), ("label", "nor a maybe (maybe, uncertain, undecided, unsure)")),
    ]:
        code, _, err = invoke("judge", "T", *args, "--reviewer", "ana", *db)
        assert code == 2
        one_error_line(err, *parts)
    assert _state(engine) == before


def test_judge_files_and_exports_carry_decisions(engine: Engine, tmp_path: Path, empty_db_url: str) -> None:
    _topic(engine, tmp_path)
    sheet = tmp_path / "j.csv"
    sheet.write_text("doc,label,reason,stage\nd1,maybe,,\nd2,skip,,\nd3,exclude,wrong population,full-text\n"
                     "d4,include,,full-text\n")
    assert invoke("judge", "T", "--file", str(sheet), "--reviewer", "ana", "--db", empty_db_url)[0] == 0
    export = tmp_path / "export.csv"
    export.write_text("record_id,label\nd5,Maybe\nd6,Excluded\nd7,\n")
    import_csv(engine, str(export), topic="T")
    got = {(j.doc_id, j.decision, j.reason, j.stage) for j in list_judgments(engine, "T")}
    assert got == {("d1", "maybe", None, "title-abstract"), ("d2", "skip", None, "title-abstract"),
                   ("d3", "exclude", "wrong population", "full-text"), ("d4", "include", None, "full-text"),
                   ("d5", "maybe", None, "title-abstract"), ("d6", "exclude", None, "title-abstract")}

    before = _state(engine)
    for text, parts in [
        ("doc,label,reason\nd8,0,\nd9,1,wrong design\n", (":3: field reason: only an exclude carries a reason",)),
        ("doc,label,reason\nd8,0,\nd9,0,off topic\n", (":3: field reason: 'off topic' is not an exclusion reason",)),
        ("doc,label,stage\nd8,0,screening\n", (":2: field stage: must be one of title-abstract, full-text",)),
    ]:
        bad = tmp_path / f"bad{len(text)}.csv"
        bad.write_text(text)
        code, _, err = invoke("judge", "T", "--file", str(bad), "--reviewer", "ana", "--db", empty_db_url)
        assert code == 2
        one_error_line(err, str(bad), *parts)
    assert _state(engine) == before


def test_a_maybe_is_unjudged_under_every_policy_and_never_withdraws_a_decision(engine: Engine,
                                                                                  tmp_path: Path) -> None:
    _topic(engine, tmp_path, 5)
    record_judgment(engine, "T", "d1", "maybe", reviewer="ana")              # only a maybe: unjudged
    record_judgment(engine, "T", "d2", "maybe", reviewer="ana")
    record_judgment(engine, "T", "d2", "1", reviewer="ana", stage="full-text")  # decided later: include
    record_judgment(engine, "T", "d3", "0", reviewer="ana")
    record_judgment(engine, "T", "d3", "maybe", reviewer="bob")              # does not withdraw the exclude
    record_judgment(engine, "T", "d4", "skip", reviewer="ana")               # a skip: unscreened
    for policy in POLICIES:
        _, labels = queue_labels(engine, "T", None, policy)
        assert labels.labels.tolist() == [-1, 1, 0, -1, -1], policy
        assert (labels.relevant_total, labels.nonrelevant_total) == (1, 1), policy


def test_prisma_counts_maybes_reasons_and_stages(engine: Engine, tmp_path: Path) -> None:
    size = 12
    _topic(engine, tmp_path, size)
    # (doc, label, reason, stage) in recording order, one reviewer
    log = [("d1", "1", None, None), ("d1", "1", None, "full-text"),            # included at full text
           ("d2", "1", None, None), ("d2", "0", "wrong design", "full-text"),  # excluded at full text, a reason
           ("d3", "0", "wrong population", None),                              # excluded at title-abstract
           ("d4", "0", None, None),                                            # excluded, no reason
           ("d5", "maybe", None, None),                                        # screened, undecided
           ("d6", "maybe", None, None), ("d6", "0", "wrong population", "full-text"),
           ("d7", "skip", None, None),                                         # not screened
           ("d8", "maybe", None, "full-text"),                                 # reached full text, undecided
           ("d9", "0", "wrong population", None), ("d9", "1", None, None)]    # the reason no longer decides
    for doc, label, reason, stage in log:
        record_judgment(engine, "T", doc, label, reviewer="ana", reason=reason, stage=stage)
    # the expected counts from the log itself: each document's latest include/exclude decides
    final: dict[str, tuple[str, str | None, str | None]] = {}
    maybe_docs, full_text_docs = set(), set()
    for doc, label, reason, stage in log:
        if label in ("0", "1"):
            final[doc] = (label, reason, stage)
        if label == "maybe":
            maybe_docs.add(doc)
        if stage == "full-text" and label != "skip":
            full_text_docs.add(doc)
    excluded = {d: v for d, v in final.items() if v[0] == "0"}
    per_reason: dict[str, int] = {}
    for _, reason, stage in excluded.values():
        if reason is not None:
            key = f"{stage or 'title-abstract'}: {reason}"
            per_reason[key] = per_reason.get(key, 0) + 1
    undecided = len(maybe_docs - set(final))

    counts = topic_prisma(engine, "T", policy="latest")
    assert counts.included == sum(v[0] == "1" for v in final.values())
    assert counts.excluded_by_reviewers == len(excluded)
    assert counts.screened_undecided == undecided == 2
    assert counts.screened == len(final) + undecided
    assert counts.not_screened_review_stopped == size - counts.screened
    assert counts.stages_recorded and counts.full_text_assessed == len(full_text_docs)
    assert counts.excluded_full_text == sum(v[2] == "full-text" for v in excluded.values())
    assert counts.excluded_per_reason == dict(sorted(per_reason.items()))
    assert counts.as_dict()["excluded_per_reason"] == counts.excluded_per_reason


def test_records_judged_outside_the_identified_set_enter_no_stage_or_reason_count(engine: Engine,
                                                                                  tmp_path: Path) -> None:
    """A record in no queue of the topic is counted apart (``judged_outside_queue``) and in no other box: its
    full-text exclusion with a reason, or its maybe, must not reach the stage, reason or undecided counts."""
    _topic(engine, tmp_path, 6)
    record_judgment(engine, "T", "d1", "0", reviewer="ana", reason="wrong design", stage="full-text")
    record_judgment(engine, "T", "x1", "0", reviewer="ana", reason="wrong population", stage="full-text",
                    allow_unqueued=True)
    record_judgment(engine, "T", "x2", "maybe", reviewer="ana", stage="full-text", allow_unqueued=True)
    for counts in (topic_prisma(engine, "T", policy="latest"),
                   build_report(engine, "T", ReportOptions()).prisma):
        assert counts is not None
        assert (counts.judged_outside_queue, counts.screened, counts.excluded_by_reviewers) == (1, 1, 1)
        assert (counts.full_text_assessed, counts.excluded_full_text) == (1, 1)
        assert counts.excluded_per_reason == {"full-text: wrong design": 1}
        assert counts.screened_undecided == 0


def test_another_topics_reasons_and_stages_leave_this_topic_alone(engine: Engine, tmp_path: Path) -> None:
    """The screening rows are read with their topic: ``topic_id = ? AND (decision … OR reason … OR stage …)``.
    Without the parentheses, AND bound to the first term only, so a reason or a stage recorded in another topic
    counted here (a document excluded with a reason in topic U was held back from ``next`` in topic T, and its
    PRISMA reasons were read for T's records of the same id)."""
    _topic(engine, tmp_path, 6)
    run = tmp_path / "u.run"
    run.write_text("".join(f"U Q0 d{i} {i} {7 - i} s\n" for i in range(1, 7)))
    import_run(engine, str(run))
    screening_settings(engine, "U", add=REASONS)
    record_judgment(engine, "U", "d1", "0", reviewer="ana", reason="wrong design", stage="full-text")
    record_judgment(engine, "U", "d2", "maybe", reviewer="ana", stage="full-text")
    served = next_documents(engine, "T", count=3)
    assert [d.doc_id for d in served.documents] == ["d1", "d2", "d3"]
    record_judgment(engine, "T", "d1", "1", reviewer="ana")
    counts = topic_prisma(engine, "T", policy="latest")
    assert (counts.stages_recorded, counts.full_text_assessed, counts.excluded_per_reason) == (False, None, {})
    assert counts.screened == 1


def test_prisma_without_stages_or_maybes_is_as_before(engine: Engine, tmp_path: Path) -> None:
    _topic(engine, tmp_path, 4)
    record_judgment(engine, "T", "d1", "1", reviewer="ana")
    record_judgment(engine, "T", "d2", "0", reviewer="ana")
    counts = topic_prisma(engine, "T", policy="latest")
    assert (counts.screened, counts.screened_undecided, counts.stages_recorded) == (2, 0, False)
    assert (counts.full_text_assessed, counts.excluded_full_text, counts.excluded_per_reason) == (None, None, {})


def test_conflict_rules_know_maybe(engine: Engine, tmp_path: Path, empty_db_url: str) -> None:
    _topic(engine, tmp_path, 8)
    pairs = {"d1": ("1", "0"), "d2": ("0", "maybe"), "d3": ("1", "maybe"), "d4": ("maybe", "maybe"),
             "d5": ("0", "0"), "d6": ("maybe", "uncertain")}
    for doc, (a, b) in pairs.items():
        record_judgment(engine, "T", doc, a, reviewer="ana")
        record_judgment(engine, "T", doc, b, reviewer="bob")
    record_judgment(engine, "T", "d7", "maybe", reviewer="ana")
    record_judgment(engine, "T", "d7", "1", reviewer="ana")  # ana decided: her maybe is no position any more
    record_judgment(engine, "T", "d7", "0", reviewer="bob")

    def position(label: str) -> str:
        return {"1": "include", "0": "exclude"}.get(label, "maybe")

    want = {"rayyan": set(), "strict": set()}
    for doc, (a, b) in [*pairs.items(), ("d7", ("1", "0"))]:
        mine = {position(a), position(b)}
        if len(mine) > 1:
            want["strict"].add(doc)
        if "include" in mine and len(mine) > 1:
            want["rayyan"].add(doc)
    assert want["rayyan"] < want["strict"]  # the rules differ on this data
    assert screening_settings(engine, "T").conflict_rule == "rayyan"
    assert {c.doc_id for c in list_conflicts(engine, "T")} == want["rayyan"]
    assert topic_prisma(engine, "T").conflicts == len(want["rayyan"])
    code, out, _ = invoke("topic", "conflict-rule", "T", "strict", "--db", empty_db_url)
    assert (code, out) == (0, "T: conflict rule strict\n")
    assert {c.doc_id for c in list_conflicts(engine, "T")} == want["strict"]
    assert topic_prisma(engine, "T").conflicts == len(want["strict"])
    d2 = next(c for c in list_conflicts(engine, "T") if c.doc_id == "d2").as_dict()
    assert (d2["relevant_votes"], d2["not_relevant_votes"], d2["maybe_votes"]) == (0, 1, 1)
    # agreement counts include/exclude votes only: the documents both voted on are d1, d5 and d7
    summary = topic_agreement(engine, "T")
    assert summary.documents == 3 and summary.pairs[0].agreement.successes == 1
    before = _state(engine)
    code, _, err = invoke("topic", "conflict-rule", "T", "lenient", "--db", empty_db_url)
    assert code == 2
    one_error_line(err, "conflict_rule: must be one of rayyan, strict")
    assert _state(engine) == before


def test_the_reason_list(engine: Engine, tmp_path: Path, empty_db_url: str) -> None:
    db = ("--db", empty_db_url)
    _topic(engine, tmp_path, 3)
    code, out, _ = invoke("topic", "reasons", "T", "--add", "no full text", *db)
    assert code == 0 and out.splitlines() == ["T: 3 exclusion reasons", *(f"  {r}" for r in REASONS),
                                              "  no full text"]
    record_judgment(engine, "T", "d1", "0", reviewer="ana", reason="wrong design")
    before = _state(engine)
    for args, message in [(("--add", "wrong design"), "already an exclusion reason"),
                          (("--remove", "wrong design"), "carried by 1 judgment"),
                          (("--remove", "nope"), "'nope' is not an exclusion reason"),
                          (("--add", "a", "--add", "a"), "added twice"),
                          (("--add", " "), "reason: must not be empty")]:
        code, _, err = invoke("topic", "reasons", "T", *args, *db)
        assert code == 2
        one_error_line(err, message)
    assert _state(engine) == before
    assert screening_settings(engine, "T", remove=["no full text"]).reasons == REASONS
    with pytest.raises(Conflict):
        screening_settings(engine, "T", add=["wrong population"])
    with pytest.raises(Invalid):
        record_judgment(engine, "T", "d2", "0", reviewer="ana", reason="no full text")


def test_a_conflict_with_a_maybe_alone_reaches_prisma_and_the_report(engine: Engine, tmp_path: Path) -> None:
    """No document has two include/exclude votes, one has an include and a maybe: the report and PRISMA still
    find that conflict (rayyan), and agreement has nothing to measure."""
    from reviewdepth.services.answers.report import ReportOptions, build_report

    _topic(engine, tmp_path, 6)
    record_judgment(engine, "T", "d1", "1", reviewer="ana")
    record_judgment(engine, "T", "d1", "maybe", reviewer="bob")
    record_judgment(engine, "T", "d2", "0", reviewer="ana")
    record_judgment(engine, "T", "d2", "maybe", reviewer="bob")
    assert [c.doc_id for c in list_conflicts(engine, "T")] == ["d1"]
    assert topic_prisma(engine, "T").conflicts == 1
    quality = build_report(engine, "T", ReportOptions()).review_quality
    assert (quality.conflicts, quality.documents_with_several_reviewers, quality.agreement) == (1, 0, None)


def test_a_skipped_or_maybe_document_is_served_after_the_others(engine: Engine, tmp_path: Path) -> None:
    """Serving the queue (no audit stream): a skip moves on, a maybe waits; both come back once every other
    unjudged document is served, and a decision ends that."""
    from reviewdepth.services.review.audit_stream import next_documents

    _topic(engine, tmp_path, 5)
    assert [d.doc_id for d in next_documents(engine, "T", count=5).documents] == ["d1", "d2", "d3", "d4", "d5"]
    record_judgment(engine, "T", "d1", "skip", reviewer="ana")
    record_judgment(engine, "T", "d2", "maybe", reviewer="ana")
    record_judgment(engine, "T", "d3", "0", reviewer="ana")
    served = next_documents(engine, "T", count=5)
    assert [d.doc_id for d in served.documents] == ["d4", "d5", "d1", "d2"]
    assert served.reviewed == 1  # d3 alone: the skipped d1 and the undecided d2 are not in the reviewed set
    record_judgment(engine, "T", "d2", "1", reviewer="ana")
    assert [d.doc_id for d in next_documents(engine, "T", count=5).documents] == ["d4", "d5", "d1"]


def test_positions_are_compared_within_a_stage(engine: Engine, tmp_path: Path) -> None:
    """Two reviewers who pass a record at title and abstract do not disagree when one of them excludes it in full
    text; two full-text readings that differ do conflict, at that stage."""
    _topic(engine, tmp_path, 6)
    for doc in ("d1", "d2"):
        record_judgment(engine, "T", doc, "1", reviewer="ana")
        record_judgment(engine, "T", doc, "1", reviewer="bob")
    record_judgment(engine, "T", "d1", "0", reviewer="ana", stage="full-text")  # a full-text exclusion, no conflict
    record_judgment(engine, "T", "d2", "0", reviewer="ana", stage="full-text")
    record_judgment(engine, "T", "d2", "1", reviewer="bob", stage="full-text")  # a full-text disagreement
    conflicts = list_conflicts(engine, "T")
    assert [(c.doc_id, c.stage) for c in conflicts] == [("d2", "full-text")]
    assert conflicts[0].as_dict()["stage"] == "full-text"
    assert topic_prisma(engine, "T").conflicts == 1


def test_a_maybe_counts_its_reviewer_among_those_who_screened(engine: Engine, tmp_path: Path) -> None:
    _topic(engine, tmp_path, 6)
    record_judgment(engine, "T", "d1", "0", reviewer="ana")
    record_judgment(engine, "T", "d1", "maybe", reviewer="bob")
    record_judgment(engine, "T", "d2", "1", reviewer="ana")
    record_judgment(engine, "T", "d3", "skip", reviewer="bob")  # a skip screens nothing
    assert topic_prisma(engine, "T").reviewers_per_record == {1: 1, 2: 1}
