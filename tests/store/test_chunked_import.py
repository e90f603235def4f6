"""`import run` in bounded memory stores exactly what it stored whole: the ranking index written in slices
(`store_ranking_blob`) is `encode_ranking`'s bytes, and the entries inserted a chunk at a time
(`insert_entry_arrays`) are `insert_entries`' rows. Slices and chunks made tiny here so that every boundary is
crossed. SQLite and PostgreSQL."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import Engine, text

from reviewdepth.services.files.imports import import_run
from reviewdepth.store import ingest, ranking_blob


def docs_of(n: int) -> list[str]:
    return [f"D{i:05d}é" if i % 7 else f"x{i}" for i in range(n)]


@pytest.mark.parametrize("order", ["given", "trec_eval"])
def test_a_run_imported_in_slices_stores_what_encode_ranking_and_insert_entries_give(
        engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, order: str) -> None:
    monkeypatch.setattr(ranking_blob, "WRITE_ROWS", 37)
    monkeypatch.setattr(ingest, "CHUNK", 53)
    docs = docs_of(1_000)
    path = tmp_path / "r.run"
    # two topics, interleaved for B (its rows are not one block of the file), one block for A
    lines = [f"A Q0 {d} {i + 1} {(1000 - i) / 3:.3f} tagA\n" for i, d in enumerate(docs)]
    lines += [f"B Q0 {d} {i + 1} {(i % 10) / 7:.4f} tagB\n" for i, d in enumerate(docs[:300])]
    path.write_text("".join(lines[:900] + [x for pair in zip(lines[900:1000], lines[1000:1100], strict=True)
                                            for x in pair] + lines[1100:]))
    import_run(engine, str(path), order=order)
    with engine.connect() as conn:
        stored = {name: (bytes(blob), [tuple(r) for r in conn.execute(text(
            "SELECT e.rank, e.doc_id, e.score, e.flag FROM queue_entries e WHERE e.queue_id = :q ORDER BY e.rank"),
            {"q": queue_id})]) for queue_id, name, blob in conn.execute(
            text("SELECT q.id, t.name, q.ranking_blob FROM queues q JOIN topics t ON t.id = q.topic_id"))}
    for topic, count in (("A", 1_000), ("B", 300)):
        blob, entries = stored[topic]
        ranked = [doc for _, doc, _, _ in entries]
        assert sorted(ranked) == sorted(docs[:count]) and len(entries) == count
        assert [rank for rank, _, _, _ in entries] == list(range(1, count + 1))
        assert blob == bytes(ranking_blob.encode_ranking(ranked) or b"")
        assert all(flag is None for _, _, _, flag in entries)
    if order == "given":
        assert [doc for _, doc, _, _ in stored["A"][1]] == docs
        assert [score for _, _, score, _ in stored["A"][1]] == [float(f"{(1000 - i) / 3:.3f}") for i in range(1000)]


def test_the_ranking_index_is_never_made_whole_on_either_database(engine: Engine, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    # PostgreSQL took the whole index as one parameter (held twice in the client) before it was written in parts
    from reviewdepth.services.files import imports
    def refuse(*args: object, **kwargs: object) -> bytearray:
        raise AssertionError("the ranking index was made whole")

    monkeypatch.setattr(imports, "encode_ranking", refuse)
    monkeypatch.setattr(ranking_blob, "WRITE_ROWS", 37)
    docs = docs_of(500)
    path = tmp_path / "r.run"
    path.write_text("".join(f"A Q0 {d} {i + 1} {500 - i} tagA\n" for i, d in enumerate(docs)))
    import_run(engine, str(path))
    with engine.connect() as conn:
        blob = conn.execute(text("SELECT ranking_blob FROM queues")).scalar_one()
    assert bytes(blob) == bytes(ranking_blob.encode_ranking(docs) or b"")
