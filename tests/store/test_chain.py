"""The tamper-evident judgment log: every insert path links its rows; edits behind the application's back are
caught at the first broken row; concurrent writers keep one unbroken chain; migration 0004 links old rows."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from sqlalchemy import Engine, func, select, text, update
from typer.testing import CliRunner

from reviewdepth.cli.app import create_cli
from reviewdepth.services.files.imports import import_csv, import_qrels, import_run
from reviewdepth.services.review.audit import verify_chains
from reviewdepth.services.review.batches import BatchItem, record_batch
from reviewdepth.services.review.judgments import record_judgment, record_judgments
from reviewdepth.store import migrate
from reviewdepth.store.chain import genesis, link_hash
from reviewdepth.store.engine import create_engine_for
from reviewdepth.store.models import Judgment, Topic


def fill(engine: Engine, tmp_path: Path) -> None:
    """Judgments through every insert path, into two topics."""
    run = tmp_path / "q.run"
    run.write_text("".join(f"T Q0 d{i} {i} {10 - i} s\n" for i in range(1, 9)))
    import_run(engine, str(run))
    qrels = tmp_path / "q.qrels"
    qrels.write_text("T 0 d1 1\nT 0 d2 0\nU 0 x1 2\nT 0 d3 -1\n")
    import_qrels(engine, str(qrels))
    export = tmp_path / "export.csv"
    export.write_text("record_id,label,reviewer\nd4,include,ann\nd5,exclude,bob\n")
    import_csv(engine, str(export), topic="T")
    record_judgment(engine, "T", "d6", "1", reviewer="cy", note="ünïcode nöte")
    record_judgments(engine, "T", [("d7", "0"), ("d8", "yes")], reviewer="dee", role="sample")
    record_batch(engine, "T", [BatchItem("d1", "0", role="qc"), BatchItem("d2", "1", role="adjudication")],
                 reviewer="eve")


def test_every_insert_path_is_chained(engine: Engine, tmp_path: Path) -> None:
    fill(engine, tmp_path)
    checks = {c.topic: c for c in verify_chains(engine)}
    assert set(checks) == {"T", "U"}
    assert all(c.intact for c in checks.values())
    assert checks["T"].judgments == 10 and checks["U"].judgments == 1
    with engine.connect() as conn:
        rows = conn.execute(select(Judgment.id, Judgment.seq, Judgment.chain_hash, Judgment.doc_id)
                            .join(Topic, Topic.id == Judgment.topic_id).where(Topic.name == "T")
                            .order_by(Judgment.id)).all()
        length, head = conn.execute(select(Topic.chain_length, Topic.chain_head).where(Topic.name == "T")).one()
    assert [r.seq for r in rows] == list(range(1, 11))
    assert length == 10 and head == rows[-1].chain_hash == checks["T"].head
    # the first link starts from the topic's genesis hash and the documented canonical form
    with engine.connect() as conn:
        first = conn.execute(select(Judgment.__table__).where(Judgment.id == rows[0].id)).one()
    assert first.chain_hash == link_hash(genesis("T"), 1, first.doc_id, first.label, first.relevant, first.grade,
                                         first.reviewer, first.role, first.source, first.note, first.recorded_at,
                                         first.import_id)


@pytest.mark.parametrize("tamper, expected", [
    ("UPDATE judgments SET label = '1', relevant = {true} WHERE id = {victim}", "does not match its chain hash"),
    ("UPDATE judgments SET reviewer = 'mallory' WHERE id = {victim}", "does not match its chain hash"),
    ("UPDATE judgments SET recorded_at = recorded_at WHERE id = {victim}", None),  # a no-op write changes nothing
    ("UPDATE judgments SET chain_hash = '{fake}' WHERE id = {victim}", "does not match its chain hash"),
    ("DELETE FROM judgments WHERE id = {victim}", "is missing before judgment id"),
])
def test_edits_behind_the_applications_back_are_caught(engine: Engine, tmp_path: Path, tamper: str,
                                                         expected: str | None) -> None:
    fill(engine, tmp_path)
    with engine.connect() as conn:
        ids = conn.execute(select(Judgment.id).join(Topic, Topic.id == Judgment.topic_id)
                           .where(Topic.name == "T").order_by(Judgment.id)).scalars().all()
    victim = ids[3]
    true = "1" if engine.dialect.name == "sqlite" else "true"
    with engine.begin() as conn:
        conn.execute(text(tamper.format(victim=victim, true=true, fake="0" * 64)))
    [check] = verify_chains(engine, "T")
    if expected is None:
        assert check.intact
        return
    assert not check.intact and check.broken is not None
    assert expected in check.broken.reason
    # the first broken row is named: the edited row itself, or the row after a deleted one
    assert check.broken.judgment_id == (ids[4] if tamper.startswith("DELETE") else victim)
    assert check.broken.seq == 4
    assert verify_chains(engine, "U")[0].intact  # other topics are unaffected


def test_deleting_the_newest_rows_is_caught_by_the_head(engine: Engine, tmp_path: Path) -> None:
    fill(engine, tmp_path)
    with engine.begin() as conn:
        last = conn.execute(select(func.max(Judgment.id))).scalar_one()
        conn.execute(text(f"DELETE FROM judgments WHERE id = {last}"))
    [check] = verify_chains(engine, "T")
    assert not check.intact and check.broken is not None
    assert "deleted from the end" in check.broken.reason and check.judgments == 9


def test_audit_verify_command_exit_codes(engine: Engine, tmp_path: Path) -> None:
    fill(engine, tmp_path)
    url = engine.url.render_as_string(hide_password=False)
    runner = CliRunner()
    ok = runner.invoke(create_cli(), ["audit", "verify", "--db", url])
    assert ok.exit_code == 0, ok.output
    assert "T\tintact\t10 judgments" in ok.output
    with engine.begin() as conn:
        victim = conn.execute(select(func.min(Judgment.id)).where(Judgment.doc_id == "d6")).scalar_one()
        conn.execute(update(Judgment).where(Judgment.id == victim).values(note="edited"))
    bad = runner.invoke(create_cli(), ["audit", "verify", "T", "--db", url, "--format", "json"])
    assert bad.exit_code == 1
    assert f"judgment id {victim}" in bad.stderr
    assert '"intact": false' in bad.stdout


def test_concurrent_writers_keep_one_chain(engine: Engine, tmp_path: Path) -> None:
    run = tmp_path / "q.run"
    run.write_text("".join(f"T Q0 d{i} {i} 1 s\n" for i in range(1, 11)))
    import_run(engine, str(run))
    errors: list[BaseException] = []

    def writer(n: int) -> None:
        try:
            for i in range(40):
                if i % 2:
                    record_judgment(engine, "T", f"d{i % 10 + 1}", str(i % 2), reviewer=f"r{n}")
                else:
                    record_batch(engine, "T", [BatchItem(f"d{(i + k) % 10 + 1}", "1") for k in range(3)],
                                 reviewer=f"r{n}")
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    [check] = verify_chains(engine, "T")
    assert check.intact and check.judgments == 6 * (20 * 1 + 20 * 3)


def test_migration_links_judgments_stored_before_the_chain(empty_db_url: str) -> None:
    engine = create_engine_for(empty_db_url)
    try:
        migrate.upgrade(engine, "0003")
        with engine.begin() as conn:
            conn.execute(text("INSERT INTO topics (name, created_at) VALUES ('old', '2026-01-01 00:00:00')"))
            topic_id = conn.execute(text("SELECT id FROM topics WHERE name = 'old'")).scalar_one()
            for i in range(5):
                conn.execute(text(
                    "INSERT INTO judgments (topic_id, doc_id, label, relevant, grade, reviewer, role, source, note, "
                    "recorded_at) VALUES (:t, :d, '1', :r, 1, 'ann', 'review', 'cli', NULL, :w)"),
                    {"t": topic_id, "d": f"doc{i}", "r": i % 2 == 0, "w": f"2026-01-0{i + 1} 10:00:00.000123"})
        migrate.upgrade(engine)
        [check] = verify_chains(engine, "old")
        assert check.intact and check.judgments == 5
        record_judgment(engine, "old", "doc9", "0", reviewer="bob", allow_unqueued=True)  # continues the migrated chain
        [check] = verify_chains(engine, "old")
        assert check.intact and check.judgments == 6
        migrate.downgrade(engine, "0003")
        migrate.upgrade(engine)
        assert verify_chains(engine, "old")[0].intact
    finally:
        engine.dispose()
