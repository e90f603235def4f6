"""Screening decisions in the chain and the schema (issue 28): a judgment without a maybe/skip, a reason or a stage
has the canonical form it had before revision 0015, so old rows stay verifiable; the new fields enter the hash only
when set, and an edit of any of them behind the application's back is caught; migration 0015 goes up and down on
SQLite and PostgreSQL with the log intact."""

from __future__ import annotations

from datetime import UTC, datetime
from hashlib import sha256
from pathlib import Path

from sqlalchemy import Engine, inspect, select, text

from reviewdepth.services.files.imports import import_run
from reviewdepth.services.files.judgment_files import record_judgment_file
from reviewdepth.services.review.audit import verify_chains
from reviewdepth.services.review.judgments import record_judgment, record_judgments
from reviewdepth.services.review.screening import screening_settings
from reviewdepth.store import migrate
from reviewdepth.store.chain import canonical, genesis, link_hash
from reviewdepth.store.engine import create_engine_for
from reviewdepth.store.models import Judgment

WHEN = datetime(2026, 12, 4, 17, 0, 0, 123456, tzinfo=UTC)


def test_the_canonical_form_grows_only_when_a_new_field_is_set() -> None:
    when = "2026-12-04T17:00:00.123456+00:00"
    # the form of revision 0004, written out by hand (module docstring of reviewdepth.store.chain)
    old = f"7|2:d1|7:include|1|~|3:ana|6:review|3:cli|~|{when}|~"
    assert canonical(7, "d1", "include", True, None, "ana", "review", "cli", None, when, None) == old
    assert link_hash("p", 7, "d1", "include", True, None, "ana", "review", "cli", None, WHEN, None) == \
        sha256(f"p\n{old}".encode()).hexdigest()
    maybe = canonical(7, "d1", "maybe", None, None, "ana", "review", "cli", None, when, None, "maybe")
    assert maybe == f"7|2:d1|5:maybe|~|~|3:ana|6:review|3:cli|~|{when}|~|5:maybe|~|~"
    excluded = canonical(7, "d1", "0", False, 0, "ana", "review", "cli", None, when, 3, None, "wrong design",
                         "full-text")
    assert excluded == f"7|2:d1|1:0|0|0|3:ana|6:review|3:cli|~|{when}|3|~|12:wrong design|9:full-text"
    # each new field changes the hash
    base = ("p", 7, "d1", "0", False, 0, "ana", "review", "cli", None, WHEN, None)
    hashes = {link_hash(*base), link_hash(*base, None, "r"), link_hash(*base, None, None, "full-text"),
              link_hash(*base, "maybe")}
    assert len(hashes) == 4


def _queue(engine: Engine, tmp_path: Path, size: int = 8) -> None:
    run = tmp_path / "q.run"
    run.write_text("".join(f"T Q0 d{i} {i} {size + 1 - i} s\n" for i in range(1, size + 1)))
    import_run(engine, str(run))


def _tables_and_columns(engine: Engine) -> tuple[set[str], set[str], set[str]]:
    inspector = inspect(engine)
    return (set(inspector.get_table_names()), {c["name"] for c in inspector.get_columns("judgments")},
            {c["name"] for c in inspector.get_columns("topics")})


def test_migration_0015_round_trip_keeps_old_rows_verifiable(empty_db_url: str, tmp_path: Path) -> None:
    engine = create_engine_for(empty_db_url)
    try:
        migrate.upgrade(engine)
        _queue(engine, tmp_path)
        record_judgments(engine, "T", [("d1", "1"), ("d2", "0"), ("d3", "yes")], reviewer="ana")
        before = [(c.topic, c.intact, c.head) for c in verify_chains(engine)]
        migrate.downgrade(engine, "0014")
        tables, judgment_columns, topic_columns = _tables_and_columns(engine)
        assert "exclusion_reasons" not in tables
        assert not {"decision", "reason", "stage"} & judgment_columns and "conflict_rule" not in topic_columns
        migrate.upgrade(engine)
        tables, judgment_columns, topic_columns = _tables_and_columns(engine)
        assert "exclusion_reasons" in tables and {"decision", "reason", "stage"} <= judgment_columns
        assert [(c.topic, c.intact, c.head) for c in verify_chains(engine)] == before
        # new rows beside the old ones: the chain goes on and verifies
        screening_settings(engine, "T", add=["wrong population"])
        record_judgment(engine, "T", "d4", "maybe", reviewer="bob")
        record_judgment(engine, "T", "d5", "exclude", reviewer="bob", reason="wrong population", stage="full-text")
        record_judgment(engine, "T", "d6", "skip", reviewer="bob")
        [check] = verify_chains(engine)
        assert check.intact and check.judgments == 6
    finally:
        engine.dispose()


def test_an_edit_of_a_new_field_is_caught(engine: Engine, tmp_path: Path) -> None:
    _queue(engine, tmp_path)
    screening_settings(engine, "T", add=["wrong population", "wrong design"])
    record_judgment(engine, "T", "d1", "1", reviewer="ana")
    record_judgment(engine, "T", "d2", "maybe", reviewer="ana")
    record_judgment(engine, "T", "d3", "0", reviewer="ana", reason="wrong population", stage="full-text")
    assert all(c.intact for c in verify_chains(engine))
    for tamper, undo in [
        # a maybe turned into a non-decision; a field set on an old-style row; a reason, a stage changed
        ("UPDATE judgments SET decision = NULL WHERE doc_id = 'd2'",
         "UPDATE judgments SET decision = 'maybe' WHERE doc_id = 'd2'"),
        ("UPDATE judgments SET decision = 'maybe' WHERE doc_id = 'd1'",
         "UPDATE judgments SET decision = NULL WHERE doc_id = 'd1'"),
        ("UPDATE judgments SET reason = 'wrong design' WHERE doc_id = 'd3'",
         "UPDATE judgments SET reason = 'wrong population' WHERE doc_id = 'd3'"),
        ("UPDATE judgments SET stage = NULL WHERE doc_id = 'd3'",
         "UPDATE judgments SET stage = 'full-text' WHERE doc_id = 'd3'"),
    ]:
        with engine.begin() as conn:
            conn.execute(text(tamper))
        [check] = verify_chains(engine)
        assert check.broken is not None and "does not match its chain hash" in check.broken.reason, tamper
        with engine.begin() as conn:
            conn.execute(text(undo))
        assert all(c.intact for c in verify_chains(engine)), undo


def test_every_bulk_path_links_the_new_fields(engine: Engine, tmp_path: Path) -> None:
    """A judge file of 150 lines (over the COPY threshold on PostgreSQL) mixing every decision kind, reasons and
    stages: stored as given and verifiable, each row's hash the one `link_hash` gives."""
    _queue(engine, tmp_path, 160)
    screening_settings(engine, "T", add=["wrong population"])
    kinds = ["1", "0", "maybe", "skip", "Uncertain"]
    lines = ["doc,label,reason,stage"]
    for i in range(1, 151):
        label = kinds[i % 5]
        reason = "wrong population" if label == "0" and i % 2 else ""
        stage = "full-text" if i % 3 == 0 else ("title-abstract" if i % 3 == 1 else "")
        lines.append(f"d{i},{label},{reason},{stage}")
    sheet = tmp_path / "j.csv"
    sheet.write_text("\n".join(lines) + "\n")
    record_judgment_file(engine, "T", str(sheet), reviewer="ana")
    with engine.connect() as conn:
        rows = conn.execute(select(Judgment.__table__).order_by(Judgment.seq)).all()
    assert len(rows) == 150
    head = genesis("T")
    for row in rows:
        head_next = link_hash(head, row.seq, row.doc_id, row.label, row.relevant, row.grade, row.reviewer, row.role,
                              row.source, row.note, row.recorded_at, row.import_id, row.decision, row.reason,
                              row.stage)
        assert row.chain_hash == head_next
        head = head_next
    by_doc = {r.doc_id: r for r in rows}
    assert (by_doc["d2"].decision, by_doc["d2"].relevant) == ("maybe", None)
    assert (by_doc["d3"].decision, by_doc["d4"].decision, by_doc["d5"].decision) == ("skip", "maybe", None)
    assert by_doc["d6"].relevant is False and by_doc["d6"].reason is None  # even line: no reason given
    assert by_doc["d1"].reason == by_doc["d11"].reason == "wrong population" and by_doc["d5"].relevant is True
    assert (by_doc["d3"].stage, by_doc["d4"].stage, by_doc["d5"].stage) == ("full-text", None, None)
    assert all(c.intact for c in verify_chains(engine))
