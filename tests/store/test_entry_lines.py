"""A queue's COPY lines written from a parsed file's arrays (`reviewdepth.store.ingest.insert_entry_arrays`): the
compiled scanner's ``entry_lines`` and the pure-Python `entry_lines_python` write the same bytes, and on both
databases every path (compiled, pure Python, the string path `insert_entries`) stores the same rows."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import Engine, insert, select

from reviewdepth.formats.scan import compiled
from reviewdepth.store.ingest import CHUNK, SMALL, entry_lines_python, insert_entries, insert_entry_arrays, utc_now
from reviewdepth.store.models import Queue, QueueEntry, Topic

# COPY's escape character and the characters it escapes, non-ASCII text, an id as wide as the widest
DOCS = [b"d1", b"a\\b", b"c\\\\n\\", "ünï".encode(), b"x\tz", b"q\nr\rs", b"w" * 40]
SCORES = [1e-300, -1e300, 0.1, -0.0, 123456789.123456789, 2.0**-1074, 1 / 3, 1e16, 1e22, -5e-324]
FLAGS = [b"AF", b"NF", b"NS", b"0", b"1", b"a\\b"]
NULL = "\\N"  # COPY's null field


def escaped(text: str) -> str:
    """``text`` as a field of COPY's text format (PostgreSQL's documentation: backslash, tab, newline, return)."""
    return "".join({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"}.get(c, c) for c in text)


needs_compiled = pytest.mark.skipif(compiled is None, reason="the compiled scanner is not built")


def compiled_lines(prefix: bytes, first_rank: int, docs: np.ndarray, scores: np.ndarray, flags: np.ndarray | None,
                   start: int, stop: int) -> bytes:
    assert compiled is not None
    return bytes(compiled.entry_lines(prefix, first_rank, docs, docs.dtype.itemsize, scores, flags,
                                      0 if flags is None else flags.dtype.itemsize, start, stop))


@needs_compiled
@pytest.mark.parametrize("with_flags", [False, True])
def test_compiled_and_python_lines_are_the_same_bytes(with_flags: bool) -> None:
    n = 50
    docs = np.array([DOCS[i % len(DOCS)] + str(i).encode() for i in range(n)])
    scores = np.array([SCORES[i % len(SCORES)] for i in range(n)], dtype=np.float64)
    flags = np.array([FLAGS[i % len(FLAGS)] for i in range(n)]) if with_flags else None
    for start, stop in ((0, n), (3, 17), (n - 1, n), (5, 5)):
        python = entry_lines_python(b"42\t", 7, docs, scores, flags, start, stop)
        assert compiled_lines(b"42\t", 7, docs, scores, flags, start, stop) == python
    # the lines of COPY's text format for the same values, built here from the values themselves
    expected = "".join(f"42\t{7 + i}\t{escaped(docs[i].decode())}\t{float(scores[i])!r}\t"
                       f"{NULL if flags is None else escaped(flags[i].decode())}\n" for i in range(n))
    assert entry_lines_python(b"42\t", 7, docs, scores, flags, 0, n) == expected.encode()


@needs_compiled
@given(st.lists(st.tuples(st.binary(min_size=1, max_size=12).filter(lambda b: b"\0" not in b),
                          st.floats(allow_nan=False), st.sampled_from(FLAGS)), min_size=1, max_size=30))
def test_compiled_matches_python_on_any_values(rows: list[tuple[bytes, float, bytes]]) -> None:
    docs = np.array([r[0] for r in rows])
    scores = np.array([r[1] for r in rows], dtype=np.float64)
    flags = np.array([r[2] for r in rows])
    for flag_array in (None, flags):
        assert (compiled_lines(b"1\t", 1, docs, scores, flag_array, 0, len(rows))
                == entry_lines_python(b"1\t", 1, docs, scores, flag_array, 0, len(rows)))


@needs_compiled
def test_compiled_refuses_rows_past_its_buffers() -> None:
    assert compiled is not None
    docs = np.array([b"a", b"b"])
    with pytest.raises(ValueError, match="shorter"):
        compiled.entry_lines(b"1\t", 1, docs, 1, np.zeros(2), None, 0, 0, 3)


@pytest.mark.parametrize("n", [SMALL - 1, 2 * SMALL + 3, CHUNK + 11])
def test_every_path_stores_the_same_rows(engine: Engine, n: int) -> None:
    docs = [DOCS[i % len(DOCS)].decode() + str(i) for i in range(n)]
    scores = [SCORES[i % len(SCORES)] for i in range(n)]
    flags = [FLAGS[i % len(FLAGS)].decode() for i in range(n)]
    doc_array = np.array([d.encode() for d in docs])
    paths = {"strings": None, "python": False, **({"compiled": True} if compiled is not None else {})}
    with engine.begin() as conn:
        topic = int(conn.execute(insert(Topic).values(name="T", created_at=utc_now()).returning(Topic.id))
                    .scalar_one())
        queues: dict[tuple[str, bool], int] = {}
        for path, use_compiled in paths.items():
            for with_flags in (False, True):
                queue_id = int(conn.execute(insert(Queue).values(
                    topic_id=topic, name=f"{path}-{with_flags}", ordering="given", size=n, source="test",
                    created_at=utc_now()).returning(Queue.id)).scalar_one())
                queues[path, with_flags] = queue_id
                if use_compiled is None:
                    insert_entries(conn, queue_id, docs, scores, flags if with_flags else None)
                else:
                    insert_entry_arrays(conn, queue_id, doc_array, np.array(scores),
                                        np.array([f.encode() for f in flags]) if with_flags else None,
                                        use_compiled=use_compiled)
    with engine.connect() as conn:
        def stored(queue_id: int) -> list[tuple[object, ...]]:
            return [tuple(r) for r in conn.execute(
                select(QueueEntry.rank, QueueEntry.doc_id, QueueEntry.score, QueueEntry.flag)
                .where(QueueEntry.queue_id == queue_id).order_by(QueueEntry.rank))]

        for with_flags in (False, True):
            expected = [(i + 1, docs[i], scores[i], flags[i] if with_flags else None) for i in range(n)]
            for path in paths:
                assert stored(queues[path, with_flags]) == expected, (path, with_flags)
