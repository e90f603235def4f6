"""Voiding a sample: logged once in the judgment chain (role void), refused twice, and invisible to every count of
judgments of documents (labels, votes, conflicts, agreement, QC, PRISMA, queue summaries, reviewers per record);
through the service and the CLI, on SQLite and PostgreSQL."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, select
from typer.testing import CliRunner

from reviewdepth.cli.app import create_cli
from reviewdepth.services.admin.topics import get_topic
from reviewdepth.services.answers.agreement import topic_agreement
from reviewdepth.services.answers.conflicts import list_conflicts
from reviewdepth.services.answers.prisma import topic_prisma
from reviewdepth.services.answers.queues import queue_labels, queue_summary
from reviewdepth.services.errors import Conflict, Invalid, NotFound
from reviewdepth.services.files.imports import import_run
from reviewdepth.services.review.audit import verify_chains
from reviewdepth.services.review.batches import BatchItem, record_batch
from reviewdepth.services.review.judgments import list_judgments, record_judgment
from reviewdepth.services.review.sample_void import void_sample
from reviewdepth.services.review.samples import draw_sample, load_samples
from reviewdepth.store.models import Judgment, Sample
from reviewdepth.store.votes import load_votes, reviewers_per_document


def make_queue(engine: Engine, tmp_path: Path, n: int = 40) -> None:
    run = tmp_path / "q.run"
    run.write_text("".join(f"T Q0 d{i:03d} {i} {1000 - i} s\n" for i in range(1, n + 1)))
    import_run(engine, str(run))


def review(engine: Engine) -> tuple[int, int]:
    """Two reviewers with conflicts, an adjudication, a rest sample judged with role sample and a QC sample
    checked: (rest sample id, QC sample id)."""
    record_batch(engine, "T", [BatchItem(f"d{i:03d}", str(int(i % 3 == 1))) for i in range(1, 21)], reviewer="ann")
    record_batch(engine, "T", [BatchItem(f"d{i:03d}", str(int(i % 4 == 1))) for i in range(1, 11)], reviewer="bob")
    record_judgment(engine, "T", "d002", "1", reviewer="judge", role="adjudication")
    rest = draw_sample(engine, "T", 6, frame="unreviewed", seed=3)
    record_batch(engine, "T", [BatchItem(d, str(int(r % 2 == 0)), role="sample") for d, r in
                               zip(rest.doc_ids, rest.ranks, strict=True)], reviewer="cy")
    qc = draw_sample(engine, "T", 4, frame="judged", seed=4)
    record_batch(engine, "T", [BatchItem(d, "1", role="qc") for d in qc.doc_ids], reviewer="qc-lead")
    return rest.id, qc.id


def outputs(engine: Engine) -> dict[str, Any]:
    """Every output that counts judgments of documents."""
    _, labels = queue_labels(engine, "T", None)
    topic_id = get_topic(engine, "T").id
    with engine.connect() as conn:
        per_record = reviewers_per_document(conn, topic_id)
        votes = [(d.doc_id, [(v.reviewer, v.relevant) for v in d.votes], d.adjudication is not None)
                 for d in load_votes(conn, topic_id)]
    agreement = topic_agreement(engine, "T")
    return {
        "labels": labels.labels.tolist(),
        "totals": (labels.relevant_total, labels.nonrelevant_total, labels.judged_total),
        "summary": queue_summary(engine, "T").as_dict(),
        "prisma": topic_prisma(engine, "T").as_dict(),
        "reviewers_per_record": per_record,
        "votes": votes,
        "conflicts": [c.as_dict() for c in list_conflicts(engine, "T")],
        "agreement": (agreement.documents, [(p.reviewer_a, p.reviewer_b, p.kappa.n) for p in agreement.pairs]),
        "topic_judgments": get_topic(engine, "T").judgments,
        "samples": [(s.id, s.labels, s.complete) for s in load_samples(engine, "T")],
    }


def test_void_is_logged_in_the_chain_and_changes_no_count(engine: Engine, tmp_path: Path) -> None:
    make_queue(engine, tmp_path)
    rest_id, qc_id = review(engine)
    before = outputs(engine)
    log_before = [j.as_dict() for j in list_judgments(engine, "T")]
    judged_rows = len(log_before)

    voided = void_sample(engine, "T", rest_id, reason="  drawn from the wrong queue  ", reviewer="lead")
    assert voided.voided and voided.void_reason == "drawn from the wrong queue"

    after = outputs(engine)
    assert after.pop("samples") == before.pop("samples")  # labels of its documents are unchanged too
    assert after == before
    assert before["topic_judgments"] == judged_rows  # the topic's judgment count never included the void

    log_after = list_judgments(engine, "T")
    assert [j.as_dict() for j in log_after[:-1]] == log_before
    void_row = log_after[-1]
    assert (void_row.doc_id, void_row.label, void_row.relevant, void_row.grade, void_row.reviewer, void_row.role,
            void_row.note) == (f"sample:{rest_id}", "void", None, None, "lead", "void", "drawn from the wrong queue")
    with engine.connect() as conn:
        stored = conn.execute(select(Sample.void_judgment_id, Sample.voided_by, Sample.void_reason,
                                     Sample.voided_at).where(Sample.id == rest_id)).one()
        assert conn.execute(select(Judgment.seq).where(Judgment.id == stored[0])).scalar_one() == judged_rows + 1
    assert stored[:3] == (void_row.id, "lead", "drawn from the wrong queue") and stored[3] is not None
    [check] = verify_chains(engine, "T")
    assert check.intact and check.judgments == judged_rows + 1

    by_id = {s.id: s for s in load_samples(engine, "T")}
    assert by_id[rest_id].voided and not by_id[qc_id].voided and by_id[qc_id].void_reason is None
    # as of a judgment before the void, the sample was not voided yet
    earlier = {s.id: s for s in load_samples(engine, "T", as_of=void_row.id - 1)}
    assert not earlier[rest_id].voided and earlier[rest_id].void_reason is None
    assert load_samples(engine, "T", as_of=void_row.id, sample_id=rest_id)[0].voided


def test_void_refusals_leave_the_database_unchanged(engine: Engine, tmp_path: Path) -> None:
    make_queue(engine, tmp_path)
    sample = draw_sample(engine, "T", 5, seed=1)
    for reason, error in (("", Invalid), ("   ", Invalid)):
        with pytest.raises(error, match="reason"):
            void_sample(engine, "T", sample.id, reason=reason, reviewer="lead")
    with pytest.raises(NotFound, match="no sample 999"):
        void_sample(engine, "T", 999, reason="x", reviewer="lead")
    with pytest.raises(NotFound, match="unknown topic"):
        void_sample(engine, "U", sample.id, reason="x", reviewer="lead")
    assert list_judgments(engine, "T") == []
    void_sample(engine, "T", sample.id, reason="test draw", reviewer="lead")
    with pytest.raises(Conflict, match="already voided by 'lead'"):
        void_sample(engine, "T", sample.id, reason="again", reviewer="bob")
    assert [j.role for j in list_judgments(engine, "T")] == ["void"]
    assert verify_chains(engine, "T")[0].intact
    with engine.connect() as conn:
        assert conn.execute(select(Sample.void_reason).where(Sample.id == sample.id)).scalar_one() == "test draw"


def test_void_role_cannot_be_given_by_users(engine: Engine, tmp_path: Path) -> None:
    make_queue(engine, tmp_path)
    with pytest.raises(Invalid, match="role: must be one of review, sample, qc, adjudication"):
        record_judgment(engine, "T", "d001", "1", reviewer="ann", role="void")
    with pytest.raises(Invalid, match=r"judgments\[0\].role"):
        record_batch(engine, "T", [BatchItem("d001", "1", role="void")], reviewer="ann")
    assert list_judgments(engine, "T") == []


def test_sample_void_command(engine: Engine, tmp_path: Path) -> None:
    make_queue(engine, tmp_path)
    sample = draw_sample(engine, "T", 5, seed=2)
    db = engine.url.render_as_string(hide_password=False)
    runner = CliRunner()

    def run(*args: str) -> tuple[int, str, str]:
        result = runner.invoke(create_cli(), [*args, "--db", db])
        return result.exit_code, result.stdout, result.stderr

    code, _, err = run("sample", "void", "T", str(sample.id), "--reason", " ")
    assert code == 2 and "reason" in err
    code, _, err = run("sample", "void", "T", "77", "--reason", "typo")
    assert code == 2 and "no sample 77" in err
    code, out, _ = run("sample", "void", "T", str(sample.id), "--reason", "3-document test draw", "--reviewer",
                       "lead", "--format", "json")
    assert code == 0, out
    shown = json.loads(out)
    assert shown["voided"] is True and shown["void_reason"] == "3-document test draw" and shown["id"] == sample.id
    code, _, err = run("sample", "void", "T", str(sample.id), "--reason", "again")
    assert code == 2 and "already voided" in err
    code, out, _ = run("sample", "show", "T", str(sample.id))
    assert code == 0 and "voided: 3-document test draw" in out
    code, out, _ = run("judgments", "T", "--format", "json")
    assert [(j["doc_id"], j["role"], j["reviewer"]) for j in json.loads(out)] == [
        (f"sample:{sample.id}", "void", "lead")]
