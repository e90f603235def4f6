"""A plain run file is imported in pieces cut at line ends (`reviewdepth.services.files.imports.RUN_BLOCK_BYTES`): the
same stored queues and the same errors, naming the file's line and field, whatever the piece size, and nothing
stored when a line is bad."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import Engine, func, select

from reviewdepth.formats.errors import InputError
from reviewdepth.formats.runs import parse_run, parse_run_blocks
from reviewdepth.formats.source import line_blocks
from reviewdepth.services.files import imports
from reviewdepth.store.models import ImportRecord, Queue, QueueEntry, Topic

BLOCK_SIZES = (1, 7, 40, 64, 1 << 30)  # 1 << 30: the whole file in one piece


def run_text() -> bytes:
    """Three topics; blank lines (one at the very start, some in a row), a line with extra fields, no final
    newline."""
    lines = [b""]
    for i in range(60):
        topic = (b"T1", b"T2", b"T3")[i % 3]
        extra = b" x y" if i == 17 else b""
        # longer doc ids and run tags late in the file: pieces scanned after the first are wider
        doc = b"doc-%03d" % i + (b"-long" * (i // 20))
        tag = b"runA" if i < 45 else b"runAB"
        lines.append(b"%s Q0 %s %d %.3f %s%s" % (topic, doc, i + 1, 100 - i * 1.5, tag, extra))
        if i in (5, 6, 30):
            lines.append(b"")
    return b"\n".join(lines)


def test_pieces_are_cut_after_a_newline_and_count_the_lines_before(tmp_path: Path) -> None:
    data = run_text() + b"\n" + b"x" * 300  # a last line longer than most pieces, without a newline
    path = tmp_path / "r.run"
    path.write_bytes(data)
    for size in BLOCK_SIZES:
        pieces = list(line_blocks(path, size))
        assert b"".join(p for p, _ in pieces) == data
        assert all(p.endswith(b"\n") for p, _ in pieces[:-1])
        assert [before for _, before in pieces] == [b"".join(p for p, _ in pieces[:k]).count(b"\n")
                                                    for k in range(len(pieces))]


def test_the_run_scanned_in_pieces_is_the_run_scanned_whole(tmp_path: Path) -> None:
    path = tmp_path / "r.run"
    path.write_bytes(run_text())
    whole = parse_run(run_text(), str(path), actions=True, tags=True)
    for size in BLOCK_SIZES:
        got = parse_run_blocks(line_blocks(path, size), str(path), records_at_most=run_text().count(b"\n") + 1,
                               actions=True, tags=True)
        assert got.qid.tobytes() == whole.qid.tobytes() and got.qid.dtype == whole.qid.dtype
        assert got.docno.values.tobytes() == whole.docno.values.tobytes()
        assert got.docno.values.dtype == whole.docno.values.dtype == np.dtype("S17")
        assert np.array_equal(got.docno.hashed(), whole.docno.hashed())
        assert got.scores().tobytes() == whole.scores().tobytes()
        assert got.action is not None and whole.action is not None and got.action.tolist() == whole.action.tolist()
        assert got.tag is not None and whole.tag is not None and got.tag.tolist() == whole.tag.tolist()
        assert got.line.tolist() == whole.line.tolist() and got.run_id == whole.run_id == "runAB"
    assert whole.line.tolist()[:8] == [2, 3, 4, 5, 6, 7, 9, 11]  # line 1 and lines 8, 10 are blank


def stored(engine: Engine, queue: str) -> list[tuple[str, int, str, float | None, str | None]]:
    with engine.connect() as conn:
        rows = conn.execute(select(Topic.name, QueueEntry.rank, QueueEntry.doc_id, QueueEntry.score, QueueEntry.flag)
                            .join(Queue, Queue.id == QueueEntry.queue_id).join(Topic, Topic.id == Queue.topic_id)
                            .where(Queue.name == queue).order_by(Topic.name, QueueEntry.rank)).all()
    return [tuple(r) for r in rows]  # type: ignore[misc]


def blobs(engine: Engine, queue: str) -> list[bytes]:
    with engine.connect() as conn:
        found = conn.execute(select(Queue.ranking_blob).where(Queue.name == queue).order_by(Queue.topic_id))
        return [bytes(b) for b in found.scalars()]


def test_import_in_pieces_stores_what_the_whole_file_does(engine: Engine, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "r.run"
    path.write_bytes(run_text())
    monkeypatch.setattr(imports, "RUN_BLOCK_BYTES", 1 << 30)
    first = imports.import_run(engine, str(path), queue_name="whole")
    for size in (7, 64):
        monkeypatch.setattr(imports, "RUN_BLOCK_BYTES", size)
        again = imports.import_run(engine, str(path), queue_name=f"pieces{size}", again=True)
        assert again.digest == first.digest and again.rows == first.rows == 60
        assert [r[:1] + r[2:] for r in stored(engine, f"pieces{size}")] == \
            [r[:1] + r[2:] for r in stored(engine, "whole")]
        assert blobs(engine, f"pieces{size}") == blobs(engine, "whole")
    assert len(stored(engine, "whole")) == 60


def test_a_plain_file_is_never_read_whole(engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "r.run"
    path.write_bytes(run_text())

    def refuse(name: object) -> bytes:
        raise AssertionError(f"{name} read whole")

    monkeypatch.setattr(imports, "read_bytes", refuse)
    monkeypatch.setattr(imports, "RUN_BLOCK_BYTES", 64)
    assert imports.import_run(engine, str(path)).rows == 60


def lines_of(text: bytes) -> list[bytes]:
    return text.split(b"\n")


def with_line(number: int, new: bytes) -> bytes:
    """The run text with its ``number``-th line (1-based) replaced."""
    lines = lines_of(run_text())
    lines[number - 1] = new
    return b"\n".join(lines)


# (file text, the expected message after the path): one bad line each, deep in the file so that small pieces put
# it several pieces after the first; the byte check comes before the scan, so a bad byte late in the file is named
# before a bad field earlier
BAD_FILES = [
    (with_line(50, b"T2 Q0 doc-x 5 not-a-number runA"), ":50: field score: score must be a number, found "
                                                         "'not-a-number'"),
    (with_line(44, b"T2 Q0 doc-y 5"), ":44: expected at least 6 whitespace-separated fields, found 4: "
                                       "'T2 Q0 doc-y 5'"),
    (with_line(61, b"T1 Q0 doc-\xff 5 1.0 runA"), ":61: field docno: is not valid UTF-8"),
    (with_line(12, b"T1 Q0 doc-x 5 bad runA").replace(b"T3 Q0 doc-059", b"T3 Q0 doc-\x00059"),
     ":64: field docno: "),
    (with_line(40, b"# a comment"), ":40: comment lines ('#') are not valid in trec_eval 9.0.8 input; "
                                    "use --trec-eval-version 10 to skip them"),
    (with_line(58, b"T1 Q0 doc-003 58 1.0 runA"), ":58: field docno: duplicate docno 'doc-003' for topic 'T1'"),
]


@pytest.mark.parametrize("case", range(len(BAD_FILES)))
def test_errors_name_the_same_line_in_pieces_and_nothing_is_stored(engine: Engine, tmp_path: Path, case: int,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    text, expected = BAD_FILES[case]
    path = tmp_path / "bad.run"
    path.write_bytes(text)
    messages = []
    for size in BLOCK_SIZES:
        monkeypatch.setattr(imports, "RUN_BLOCK_BYTES", size)
        with pytest.raises(InputError) as caught:
            imports.import_run(engine, str(path))
        messages.append(str(caught.value))
    assert messages == [messages[-1]] * len(BLOCK_SIZES)  # the last: the whole file in one piece
    assert messages[0].startswith(f"{path}{expected}")
    with engine.connect() as conn:
        for model in (Topic, Queue, QueueEntry, ImportRecord):
            assert conn.execute(select(func.count()).select_from(model)).scalar_one() == 0


@pytest.mark.parametrize("grown", [b"", b"\nT1 Q0 doc-new 99 1.0 runA" * 5])
def test_a_file_changed_between_the_two_reads_is_refused(engine: Engine, tmp_path: Path, grown: bytes,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "r.run"
    path.write_bytes(run_text())
    reads = []

    def rewritten_before_the_second_read(name: object, size: int) -> Iterator[tuple[bytes, int]]:
        reads.append(name)
        if len(reads) == 2:  # the scan's read: the file is rewritten (longer, or the same bytes anew)
            replacement = tmp_path / "new.run"
            replacement.write_bytes(run_text() + grown)
            replacement.replace(path)
        return line_blocks(path, size)

    monkeypatch.setattr(imports, "line_blocks", rewritten_before_the_second_read)
    monkeypatch.setattr(imports, "RUN_BLOCK_BYTES", 64)
    with pytest.raises(InputError) as caught:
        imports.import_run(engine, str(path))
    assert str(caught.value) == f"{path}: the file changed while it was being read; import it again"
    with engine.connect() as conn:
        for model in (Topic, Queue, QueueEntry, ImportRecord):
            assert conn.execute(select(func.count()).select_from(model)).scalar_one() == 0
