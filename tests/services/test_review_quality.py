"""Several reviewers on one topic: conflicts and adjudication, agreement (checked against scikit-learn and the
krippendorff package), QC error rates, label-policy sensitivity and PRISMA counts; on SQLite and PostgreSQL."""

from __future__ import annotations

import json
from pathlib import Path

import krippendorff
import numpy as np
from sklearn.metrics import cohen_kappa_score
from sqlalchemy import Engine
from typer.testing import CliRunner

from reviewdepth.cli.app import create_cli
from reviewdepth.services.answers.agreement import topic_agreement
from reviewdepth.services.answers.conflicts import list_conflicts
from reviewdepth.services.answers.prisma import topic_prisma
from reviewdepth.services.answers.report import ReportOptions, build_report
from reviewdepth.services.files.imports import import_run
from reviewdepth.services.review.batches import BatchItem, record_batch
from reviewdepth.services.review.judgments import record_judgment
from reviewdepth.services.review.samples import draw_sample, load_samples


def make_queue(engine: Engine, tmp_path: Path, n: int = 60) -> None:
    run = tmp_path / "q.run"
    run.write_text("".join(f"T Q0 d{i:03d} {i} {1000 - i} s\n" for i in range(1, n + 1)))
    import_run(engine, str(run))


def test_conflicts_adjudication_and_reopening(engine: Engine, tmp_path: Path) -> None:
    make_queue(engine, tmp_path)
    record_batch(engine, "T", [BatchItem("d001", "1"), BatchItem("d002", "0"), BatchItem("d003", "1")],
                 reviewer="ann")
    record_batch(engine, "T", [BatchItem("d001", "1"), BatchItem("d002", "1"), BatchItem("d003", "0")],
                 reviewer="bob")
    # a reviewer changing their own mind is not a conflict with themselves
    record_judgment(engine, "T", "d004", "1", reviewer="cy")
    record_judgment(engine, "T", "d004", "0", reviewer="cy")
    found = list_conflicts(engine, "T")
    assert [(c.doc_id, c.status) for c in found] == [("d002", "open"), ("d003", "open")]
    assert [(v.reviewer, v.relevant) for v in found[0].votes] == [("ann", False), ("bob", True)]

    settle = record_judgment(engine, "T", "d002", "1", reviewer="judge", role="adjudication")
    after = {c.doc_id: c for c in list_conflicts(engine, "T")}
    assert after["d002"].status == "resolved" and after["d002"].adjudication is not None
    assert after["d002"].adjudication.judgment_id == settle.id
    assert [v.reviewer for v in after["d002"].votes] == ["ann", "bob"]  # the original votes are kept
    assert [c.doc_id for c in list_conflicts(engine, "T", status="open")] == ["d003"]

    # ann agrees with bob after the adjudication: d003 stays open, d002 is no longer a conflict
    record_judgment(engine, "T", "d002", "1", reviewer="ann")
    assert [c.doc_id for c in list_conflicts(engine, "T")] == ["d003"]
    # a vote changed after an adjudication re-opens the document
    record_judgment(engine, "T", "d003", "0", reviewer="judge", role="adjudication")
    record_judgment(engine, "T", "d003", "1", reviewer="bob")
    assert [c.doc_id for c in list_conflicts(engine, "T", status="open")] == []  # bob now agrees with ann
    record_judgment(engine, "T", "d003", "0", reviewer="ann")
    reopened = list_conflicts(engine, "T", status="open")
    assert [c.doc_id for c in reopened] == ["d003"]
    # as of the adjudication of d002, both d002 (resolved) and d003 (open) were conflicts
    then = list_conflicts(engine, "T", as_of=str(settle.id))
    assert [(c.doc_id, c.status) for c in then] == [("d002", "resolved"), ("d003", "open")]


def test_agreement_matches_independent_implementations(engine: Engine, tmp_path: Path) -> None:
    make_queue(engine, tmp_path, n=150)
    rng = np.random.default_rng(11)
    truth = rng.random(150) < 0.3
    reviewers = ["ann", "bob", "cy"]
    votes = np.full((3, 150), np.nan)
    for r, name in enumerate(reviewers):
        seen = rng.random(150) < 0.8
        noisy = np.where(rng.random(150) < 0.15, ~truth, truth)
        votes[r, seen] = noisy[seen]
        record_batch(engine, "T", [BatchItem(f"d{i + 1:03d}", str(int(votes[r, i])))
                                   for i in np.flatnonzero(seen)], reviewer=name)
    summary = topic_agreement(engine, "T")
    both = lambda a, b: ~np.isnan(votes[a]) & ~np.isnan(votes[b])  # noqa: E731
    pairs = {(p.reviewer_a, p.reviewer_b): p for p in summary.pairs}
    for a, b in ((0, 1), (0, 2), (1, 2)):
        mask = both(a, b)
        pair = pairs[(reviewers[a], reviewers[b])]
        assert pair.kappa.n == int(mask.sum())
        assert abs(pair.kappa.kappa - cohen_kappa_score(votes[a][mask], votes[b][mask])) < 1e-12
        assert pair.kappa.lower < pair.kappa.kappa < pair.kappa.upper
        assert pair.agreement.point == np.mean(votes[a][mask] == votes[b][mask])
    expected_alpha = krippendorff.alpha(reliability_data=votes, level_of_measurement="nominal")
    assert abs(summary.alpha.alpha - expected_alpha) < 1e-10
    multi = (~np.isnan(votes)).sum(axis=0) >= 2
    assert summary.documents == int(multi.sum())


def test_qc_error_rates_sensitivity_and_prisma_in_the_report(engine: Engine, tmp_path: Path) -> None:
    make_queue(engine, tmp_path, n=60)
    truth = {f"d{i:03d}": int(i % 4 == 1) for i in range(1, 41)}  # ranks 1..40 screened by ann
    record_batch(engine, "T", [BatchItem(d, str(v)) for d, v in truth.items()], reviewer="ann")
    sample = draw_sample(engine, "T", 20, frame="judged", seed=5)
    assert not sample.complete and len(sample.missing) == 20  # judged documents still await their QC review
    flipped = sample.doc_ids[:3]  # the QC reviewer disagrees with ann on three documents
    record_batch(engine, "T", [BatchItem(d, str(1 - truth[d] if d in flipped else truth[d]), role="qc")
                               for d in sample.doc_ids], reviewer="qc-lead")
    assert load_samples(engine, "T", sample_id=sample.id)[0].complete
    report = build_report(engine, "T", ReportOptions(policy="latest", independent=True))
    quality = report.review_quality
    [qc] = quality.qc_samples
    assert qc.checked == 20 and qc.missing == 0
    original = np.array([truth[d] for d in sample.doc_ids])
    false_neg = sum(1 for d in flipped if truth[d] == 0)
    false_pos = sum(1 for d in flipped if truth[d] == 1)
    rates = qc.error_rates
    assert rates.disagreements == 3
    assert rates.false_negative_rate.successes == false_neg
    assert rates.false_negative_rate.trials == int((original == 0).sum())
    assert rates.false_positive_rate.successes == false_pos
    assert set(qc.by_original_reviewer) == {"ann"}

    # the QC judgments are votes: each flipped document is a conflict between ann and the QC reviewer
    assert quality.conflicts == 3 and quality.conflicts_open == 3
    policies = [row.policy for row in quality.policy_sensitivity]
    assert policies[:4] == ["latest", "adjudicated", "majority", "any_relevant"]
    assert policies[4].startswith("latest, corrected by QC sample")
    by_policy = {row.policy: row for row in quality.policy_sensitivity}
    relevant_ann = sum(truth.values())
    latest_relevant = relevant_ann - false_pos + false_neg  # the QC vote is the latest judgment
    assert by_policy["latest"].relevant_judged == latest_relevant
    assert by_policy["any_relevant"].relevant_judged == relevant_ann + false_neg
    assert by_policy["majority"].relevant_judged == latest_relevant  # 1-1 ties go to the latest

    prisma = report.prisma
    assert prisma.identified == 60 and prisma.screened == 40
    assert prisma.included == latest_relevant and prisma.excluded_by_reviewers == 40 - latest_relevant
    assert prisma.not_screened_review_stopped == 20 and prisma.stopped_at_rank == 40
    assert prisma.reviewers_per_record == {1: 20, 2: 20}
    assert prisma.independent is True
    # the prisma service and command give the same counts as the report
    assert topic_prisma(engine, "T", policy="latest", independent=True).as_dict() == prisma.as_dict()
    url = engine.url.render_as_string(hide_password=False)
    result = CliRunner().invoke(create_cli(), ["prisma", "T", "--policy", "latest", "--independent", "--format",
                                               "json", "--db", url])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == prisma.as_dict()
    # every renderer carries the new sections
    from reviewdepth.report.depth_render import render_csv, render_html

    assert "prisma,not_screened_review_stopped,value,20" in render_csv(report)
    assert "Review quality and PRISMA 2020 counts" in render_html(report)


def test_report_as_of_reproduces_review_quality_sections(engine: Engine, tmp_path: Path) -> None:
    from reviewdepth.report.depth_render import render_html

    make_queue(engine, tmp_path, n=30)
    record_batch(engine, "T", [BatchItem(f"d{i:03d}", str(int(i % 3 == 1))) for i in range(1, 21)], reviewer="ann")
    last = record_batch(engine, "T", [BatchItem(f"d{i:03d}", str(int(i % 5 == 1))) for i in range(1, 21)],
                        reviewer="bob").ids[-1]
    options = ReportOptions(policy="adjudicated", as_of=last)
    before = build_report(engine, "T", options)
    assert before.review_quality.conflicts_open > 0
    # more judgments arrive: adjudications, a QC sample and its checks
    for conflict in list_conflicts(engine, "T"):
        record_judgment(engine, "T", conflict.doc_id, "1", reviewer="judge", role="adjudication")
    qc = draw_sample(engine, "T", 5, frame="judged", seed=1)
    record_batch(engine, "T", [BatchItem(d, "0", role="qc") for d in qc.doc_ids], reviewer="qc")
    now = build_report(engine, "T", ReportOptions(policy="adjudicated"))
    assert now.review_quality.conflicts_resolved > 0 and now.review_quality.qc_samples
    assert now.to_json() != before.to_json()
    again = build_report(engine, "T", options)
    assert again.to_json() == before.to_json()
    assert render_html(again) == render_html(before)
    assert again.provenance.sample_seeds == [] and now.provenance.sample_seeds == [1]
