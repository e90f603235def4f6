"""The bulk insert paths (SQLite ``executemany``; PostgreSQL ``COPY`` of lines formatted by the store) on both
databases: every value stored exactly as given (backslashes, tabs and newlines in notes, non-ASCII, extreme
scores), every judgment linked into its topic's chain, and a bad file or a write refused by the database leaving
the database as it was."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import Engine, func, select, text

from reviewdepth.formats.errors import InputError
from reviewdepth.services.files.imports import import_csv, import_qrels, import_run
from reviewdepth.services.review.audit import verify_chains
from reviewdepth.services.review.batches import BatchItem, record_batch
from reviewdepth.store.chain import ChainBroken
from reviewdepth.store.ingest import SMALL
from reviewdepth.store.models import ImportRecord, Judgment, Queue, QueueEntry, Topic

ROWS = 2 * SMALL + 7  # past the size where PostgreSQL switches from INSERT to COPY
SCORES = [1e-300, -1e300, 0.1, -0.0, 123456789.123456789, 2.0**-1074, 1 / 3]


def counts(engine: Engine) -> dict[str, int]:
    with engine.connect() as conn:
        out = {model.__tablename__: int(conn.execute(select(func.count()).select_from(model)).scalar_one())
               for model in (Topic, Queue, QueueEntry, Judgment, ImportRecord)}
        out["chain_length"] = int(conn.execute(select(func.coalesce(func.sum(Topic.chain_length), 0))).scalar_one())
    return out


def doc(i: int) -> str:
    # backslashes (COPY's escape character) and non-ASCII text among plain ids
    return [f"d{i}", f"a\\b{i}", f"c\\\\n{i}\\", f"ünï{i}", f"x\\t{i}"][i % 5]


def test_bulk_imports_store_every_value_exactly_and_chained(engine: Engine, tmp_path: Path) -> None:
    run = tmp_path / "big.run"
    run.write_text("".join(f"T Q0 {doc(i)} {i + 1} {SCORES[i % len(SCORES)]!r} tag\n" for i in range(ROWS)),
                   encoding="utf-8")
    import_run(engine, str(run))
    qrels = tmp_path / "big.qrels"
    # topics interleaved, grades negative to 3
    lines = [(["T", "U", "V"][i % 3], doc(i), i % 5 - 1) for i in range(ROWS)]
    qrels.write_text("".join(f"{t} 0 {d} {g}\n" for t, d, g in lines), encoding="utf-8")
    import_qrels(engine, str(qrels), level=2)
    with engine.connect() as conn:
        entries = conn.execute(select(QueueEntry.doc_id, QueueEntry.score, QueueEntry.flag)
                               .order_by(QueueEntry.rank)).all()
        stored = conn.execute(select(Topic.name, Judgment.doc_id, Judgment.label, Judgment.relevant, Judgment.grade,
                                     Judgment.reviewer, Judgment.note, Judgment.import_id)
                              .join(Topic, Topic.id == Judgment.topic_id).order_by(Judgment.id)).all()
    assert [e.doc_id for e in entries] == [doc(i) for i in range(ROWS)]
    assert [e.score for e in entries] == [SCORES[i % len(SCORES)] for i in range(ROWS)]
    assert {e.flag for e in entries} == {None}
    assert [(s.name, s.doc_id, s.label, s.relevant, s.grade) for s in stored] == [
        (t, d, str(g), None if g < 0 else g >= 2, g) for t, d, g in lines]
    assert {(s.reviewer, s.note) for s in stored} == {("qrels", None)} and None not in {s.import_id for s in stored}
    checks = verify_chains(engine)
    assert {c.topic: c.judgments for c in checks} == {t: sum(1 for x in lines if x[0] == t) for t in "TUV"}
    assert all(c.intact for c in checks)


def test_a_big_batch_with_notes_and_queues_is_stored_exactly(engine: Engine, tmp_path: Path) -> None:
    run = tmp_path / "q.run"
    run.write_text("".join(f"T Q0 {doc(i)} {i + 1} 1 tag\n" for i in range(ROWS)), encoding="utf-8")
    import_run(engine, str(run))
    notes = ["tab\there", "line\nbreak\r\nend", "back\\slash\\", "plain", None]
    items = [BatchItem(doc(i), ["1", "0", "yes"][i % 3], note=notes[i % len(notes)]) for i in range(ROWS)]
    ids = record_batch(engine, "T", items, reviewer="ann").ids
    export = tmp_path / "export.csv"
    export.write_text("record_id,label,reviewer\n" + "".join(f"d{i},{i % 2},r{i % 4}\n" for i in range(0, ROWS, 5)),
                      encoding="utf-8")
    import_csv(engine, str(export), topic="T", mapping="doc=record_id,label=label,reviewer=reviewer")
    with engine.connect() as conn:
        got = conn.execute(select(Judgment.id, Judgment.doc_id, Judgment.label, Judgment.note, Judgment.queue_id,
                                  Judgment.reviewer).order_by(Judgment.id)).all()
    assert [g.id for g in got[:ROWS]] == ids
    assert [(g.doc_id, g.label, g.note) for g in got[:ROWS]] == [(i.doc_id, i.label, i.note) for i in items]
    assert [(g.doc_id, g.reviewer) for g in got[ROWS:]] == [(f"d{i}", f"r{i % 4}") for i in range(0, ROWS, 5)]
    assert len({g.queue_id for g in got}) == 1 and got[0].queue_id is not None
    [check] = verify_chains(engine, "T")
    assert check.intact and check.judgments == len(got)


def test_a_bad_last_line_of_a_big_file_leaves_the_database_unchanged(engine: Engine, tmp_path: Path) -> None:
    import_qrels(engine, str(_qrels(tmp_path, "first.qrels", "A")))
    before = counts(engine)
    bad = tmp_path / "bad.qrels"
    bad.write_text(_qrels(tmp_path, "ok.qrels", "B").read_text() + "B 0 last 1.5\n")
    with pytest.raises(InputError, match=rf"bad.qrels:{ROWS + 1}: field rel"):
        import_qrels(engine, str(bad))
    assert counts(engine) == before


def test_a_big_import_the_database_refuses_midway_leaves_it_unchanged(engine: Engine, tmp_path: Path) -> None:
    """A row added behind the application's back holds the seq the import would give its 151st judgment: the
    import is refused (a broken chain) and nothing of it stays, whichever statement finds the clash."""
    import_qrels(engine, str(_qrels(tmp_path, "first.qrels", "A")))
    with engine.begin() as conn:
        topic_id = conn.execute(select(Topic.id).where(Topic.name == "A")).scalar_one()
        conn.execute(text("INSERT INTO judgments (topic_id, doc_id, label, reviewer, role, source, recorded_at, seq, "
                          "chain_hash) VALUES (:t, 'sneaky', '1', 'x', 'review', 'x', CURRENT_TIMESTAMP, :s, 'x')"),
                     {"t": topic_id, "s": ROWS + 151})
    before = counts(engine)
    with pytest.raises(ChainBroken, match="beyond"):
        import_qrels(engine, str(_qrels(tmp_path, "second.qrels", "A", prefix="e")))
    assert counts(engine) == before


def _qrels(folder: Path, name: str, topic: str, prefix: str = "d") -> Path:
    path = folder / name
    path.write_text("".join(f"{topic} 0 {prefix}{i} {i % 2}\n" for i in range(ROWS)))
    return path


def test_a_big_batch_of_one_role_is_linked_as_columns_with_its_queues(engine: Engine, tmp_path: Path) -> None:
    run = tmp_path / "q.run"
    run.write_text("".join(f"T Q0 {doc(i)} {i + 1} 1 tag\n" for i in range(ROWS)), encoding="utf-8")
    import_run(engine, str(run))
    record_batch(engine, "T", [BatchItem("d0", "1")], reviewer="ann")  # a chain to extend
    items = [BatchItem(doc(i), ["1", "0", "3"][i % 3], role="qc") for i in range(1, ROWS)]
    ids = record_batch(engine, "T", items, reviewer="bob").ids
    with engine.connect() as conn:
        got = conn.execute(select(Judgment.id, Judgment.doc_id, Judgment.label, Judgment.grade, Judgment.role,
                                  Judgment.seq, Judgment.queue_id).order_by(Judgment.id)).all()
    assert [g.id for g in got[1:]] == ids
    assert [(g.doc_id, g.label, g.role, g.seq) for g in got[1:]] == [
        (i.doc_id, i.label, "qc", n) for n, i in enumerate(items, start=2)]
    assert [g.grade for g in got[1:]] == [int(i.label) for i in items] and len({g.queue_id for g in got}) == 1
    [check] = verify_chains(engine, "T")
    assert check.intact and check.judgments == ROWS


@pytest.mark.parametrize("rows", [0, 3, 4, 8, 9, 13])
def test_bulk_insert_writes_every_row_across_chunk_boundaries_and_reports_progress(
        engine: Engine, rows: int, monkeypatch: pytest.MonkeyPatch) -> None:
    # chunks of 4: a file that ends exactly on a chunk boundary, one past it, and shorter than a chunk; on SQLite
    # the rows after the first chunk go to the driver straight from the iterator and are counted by the driver
    from reviewdepth.store import ingest

    monkeypatch.setattr(ingest, "CHUNK", 4)
    monkeypatch.setattr(ingest, "SMALL", 2)
    seen: list[int] = []
    with engine.begin() as conn:
        conn.execute(text("CREATE TABLE scratch (n INTEGER, word VARCHAR(20))"))
        if conn.dialect.name == "sqlite":
            [(cache_before,)] = conn.execute(text("PRAGMA cache_size")).all()
        written = ingest.bulk_insert(conn, "scratch", ("n", "word"), ((i, f"w{i}") for i in range(rows)),
                                     seen.append)
        stored = conn.execute(text("SELECT n, word FROM scratch ORDER BY n")).all()
        if conn.dialect.name == "sqlite":
            # the larger page cache of a big insert is the insert's own: the pooled connection gets its own back
            assert conn.execute(text("PRAGMA cache_size")).all() == [(cache_before,)]
        conn.execute(text("DROP TABLE scratch"))
    assert written == rows
    assert [tuple(r) for r in stored] == [(i, f"w{i}") for i in range(rows)]
    assert seen == sorted(seen) and (seen[-1] if seen else 0) == rows
    assert len(seen) == len(set(seen))
