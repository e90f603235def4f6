"""The streamed one-topic run store (`reviewdepth.services.files.run_upload`) against `import_run`, the whole-file
reader
it replaces for uploads: same rows, same ranking index bytes, same queue row, same errors, whatever the chunking."""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest
from sqlalchemy import Engine, select

from reviewdepth.formats.errors import InputError
from reviewdepth.services.admin.topics import create_topic
from reviewdepth.services.files.imports import import_run
from reviewdepth.services.files.run_upload import line_chunks, store_run_stream
from reviewdepth.store.models import Queue, QueueEntry

# chunk sizes: one byte (every line its own chunk, longer lines carried), a few lines, the whole file
CHUNKS = (1, 64, 1 << 20)


def _write(tmp_path: Path, name: str, lines: list[str], newline_at_end: bool = True) -> str:
    path = tmp_path / name
    path.write_bytes(("\n".join(lines) + ("\n" if newline_at_end else "")).encode("utf-8"))
    return str(path)


def _stored(engine: Engine, queue: str) -> tuple[tuple[object, ...], list[tuple[object, ...]]]:
    with engine.connect() as conn:
        row = conn.execute(select(Queue.id, Queue.ordering, Queue.run_tag, Queue.threshold_rank, Queue.size,
                                  Queue.ranking_blob).where(Queue.name == queue)).one()
        entries = conn.execute(select(QueueEntry.rank, QueueEntry.doc_id, QueueEntry.score, QueueEntry.flag)
                               .where(QueueEntry.queue_id == row.id).order_by(QueueEntry.rank)).all()
    return tuple(row)[1:], [tuple(e) for e in entries]


def _both(engine: Engine, path: str, chunk: int, topic: str = "T") -> None:
    """Store ``path`` both ways (queues ``whole`` and ``stream``), in each order, and require the same queue and
    entries."""
    for order in ("given", "trec_eval"):
        import_run(engine, path, queue_name=f"whole-{order}", order=order, again=True)
        topic_id = engine.connect().execute(select(Queue.topic_id)).scalar()
        assert store_run_stream(engine, topic_id, topic, f"stream-{order}", path, order=order, chunk_bytes=chunk) > 0
        assert _stored(engine, f"stream-{order}") == _stored(engine, f"whole-{order}")


@pytest.mark.parametrize("chunk", CHUNKS)
def test_a_trec_run_is_stored_as_the_whole_file_reader_stores_it(engine: Engine, tmp_path: Path, chunk: int) -> None:
    composed = unicodedata.normalize("NFD", "café")  # NFC changes it: stored as the composed form
    # scores with ties (docno descending breaks them under trec_eval's order) and float32-equal ones
    lines = [f"T Q0 d{i} {i + 1} {10 - (i // 3) * 0.5} tagA" for i in range(9)] + ["T Q0 z 10 1.00000001 tagA",
                                                                                  "T Q0 y 11 1.00000002 tagA"]
    lines.insert(3, "")  # a blank line
    lines.append(f"T Q0 {composed} 12 0.25 tagB")  # a stray last tag: both readers keep tagA, most lines' tag
    _both(engine, _write(tmp_path, "run.txt", lines, newline_at_end=False), chunk)


@pytest.mark.parametrize("chunk", CHUNKS)
@pytest.mark.parametrize("actions", [["AF", "NF", "AF", "NS", "NS"], ["NS", "NS"], ["0", "1", "0", "1", "0"],
                                     ["0", "0"], ["AF", "1", "NS"]])
def test_clef_actions_give_the_same_flags_and_stopping_point(engine: Engine, tmp_path: Path, chunk: int,
                                                             actions: list[str]) -> None:
    lines = [f"T {a} doc{i} {i + 1} {(i * 7) % 5} run" for i, a in enumerate(actions)]  # not in score order
    _both(engine, _write(tmp_path, "clef.txt", lines), chunk)


def _error(call: object) -> tuple[int | None, str | None, str]:
    with pytest.raises(InputError) as caught:
        call()  # type: ignore[operator]
    return caught.value.line, caught.value.field, caught.value.message


BAD_FILES = {
    "score": ["T Q0 a 1 1.0 r", "T Q0 b 2 1.0 r", "T Q0 c 3 nope r"],
    "infinite score": ["T Q0 a 1 1.0 r", "T Q0 b 2 inf r"],
    "fields": ["T Q0 a 1 1.0 r", "T Q0 b 2 1.0"],
    "qid": ["T Q0 a 1 1.0 r", "T Q0 b 2 1.0 r", "U Q0 c 3 1.0 r"],
    "duplicate": ["T Q0 a 1 1.0 r", "T Q0 b 2 1.0 r", "T Q0 c 3 1.0 r", "T Q0 b 4 1.0 r", "T Q0 a 5 1.0 r"],
    "docno": ["T Q0 a 1 1.0 r", "T Q0 " + "x" * 301 + " 2 1.0 r"],
    "comment": ["T Q0 a 1 1.0 r", "# a comment", "T Q0 b 2 1.0 r"],
    "control byte": ["T Q0 a 1 1.0 r", "T Q0 b\x01 2 1.0 r"],
}


@pytest.mark.parametrize("chunk", CHUNKS)
@pytest.mark.parametrize("fault", sorted(BAD_FILES))
def test_a_refused_file_names_the_same_line_and_field_and_stores_nothing(engine: Engine, tmp_path: Path,
                                                                         chunk: int, fault: str) -> None:
    create_topic(engine, "T")
    path = _write(tmp_path, "bad.txt", BAD_FILES[fault])
    from reviewdepth.services.review.judgments import topic_id_of

    topic_id = topic_id_of(engine, "T")
    streamed = _error(lambda: store_run_stream(engine, topic_id, "T", "stream", path, chunk_bytes=chunk))
    assert _error(lambda: store_run_stream(engine, topic_id, "T", "stream", path, order="trec_eval",
                                           chunk_bytes=chunk)) == streamed
    if fault == "qid":  # import_run takes several topics; the upload's own check names the line
        assert streamed == (3, "qid", "topic 'U' is not 'T'; upload one topic's ranking")
    else:
        assert streamed == _error(lambda: import_run(engine, path, queue_name="whole", again=True))
    with engine.connect() as conn:
        assert conn.execute(select(Queue.id)).first() is None
        assert conn.execute(select(QueueEntry.rank)).first() is None


def test_two_doc_ids_equal_once_normalised_are_refused(engine: Engine, tmp_path: Path) -> None:
    create_topic(engine, "T")
    from reviewdepth.services.review.judgments import topic_id_of

    path = _write(tmp_path, "nfc.txt", ["T Q0 café 1 1.0 r", f"T Q0 {unicodedata.normalize('NFD', 'café')} 2 1.0 r"])
    streamed = _error(lambda: store_run_stream(engine, topic_id_of(engine, "T"), "T", "q", path, chunk_bytes=1))
    assert streamed == _error(lambda: import_run(engine, path, queue_name="whole", again=True))


def test_line_chunks_cover_the_file_on_line_boundaries(tmp_path: Path) -> None:
    data = b"a b\n\nlong line here\nx" + b"y" * 50 + b"\nlast"
    path = tmp_path / "f"
    path.write_bytes(data)
    for size in (1, 3, 8, 100):
        with path.open("rb") as handle:
            pieces = list(line_chunks(handle, size))
        assert b"".join(p for _, p in pieces) == data
        assert all(p.endswith(b"\n") for _, p in pieces[:-1])
        assert [c.line_offset for c, _ in pieces] == [data[:c.start].count(b"\n") for c, _ in pieces]
