"""The label loader's fast path (judgments and ranking index read a slice at a time) against the row-by-row path."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import Engine

from reviewdepth.services.answers.queues import find_queue
from reviewdepth.services.files.imports import import_run
from reviewdepth.services.review.judgments import record_judgments
from reviewdepth.store import loaders
from reviewdepth.store.labels import POLICIES
from reviewdepth.store.loaders import QueueLabels, load_queue_labels


def both_paths(engine: Engine, monkeypatch: pytest.MonkeyPatch, topic: str, policy: str,
               as_of: int | None = None, *, fast_path_taken: bool = True) -> tuple[QueueLabels, QueueLabels]:
    """(loaded as the store does, loaded with the chunked fast path switched off), after checking the second
    against the path without the hash index."""
    topic_id, row = find_queue(engine, topic, None)
    taken: list[bool] = []
    packed = loaders._chunked_path

    def spy(*args: object) -> object:
        result = packed(*args)  # type: ignore[arg-type]
        taken.append(result is not None)
        return result

    with monkeypatch.context() as patch:
        patch.setattr(loaders, "_chunked_path", spy)
        with engine.connect() as conn:
            fast = load_queue_labels(conn, row.id, topic_id, int(row.size), policy, as_of)
    assert taken == [fast_path_taken]
    with monkeypatch.context() as patch:
        patch.setattr(loaders, "_chunked_path", lambda *args: None)
        with engine.connect() as conn:
            plain = load_queue_labels(conn, row.id, topic_id, int(row.size), policy, as_of)
        patch.setattr(loaders, "_hashed_path", lambda *args: None)  # the dictionary and the join in SQL
        with engine.connect() as conn:
            joined = load_queue_labels(conn, row.id, topic_id, int(row.size), policy, as_of)
    assert_same(plain, joined)
    return fast, plain


def assert_same(a: QueueLabels, b: QueueLabels) -> None:
    assert a.labels.dtype == b.labels.dtype and a.labels.tolist() == b.labels.tolist()
    assert (a.size, a.relevant_total, a.nonrelevant_total, a.judged_total, a.policy, a.as_of) == \
        (b.size, b.relevant_total, b.nonrelevant_total, b.judged_total, b.policy, b.as_of)


def test_fast_path_matches_the_row_path(engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(11)
    run = tmp_path / "q.run"
    run.write_text("".join(f"T Q0 d{i} {i} {500 - i} s\n" for i in range(1, 301)))
    import_run(engine, str(run))
    docs = [f"d{i}" for i in rng.integers(1, 340, 400)]  # repeats, and documents outside the queue
    labels = [str(v) for v in rng.choice(["1", "0", "-1", "2"], len(docs))]  # -1: no decision
    ids: list[int] = []
    for start, role in ((0, "review"), (150, "adjudication"), (200, "review"), (330, "sample")):
        chunk = slice(start, {0: 150, 150: 200, 200: 330, 330: 400}[start])
        ids += record_judgments(engine, "T", list(zip(docs[chunk], labels[chunk], strict=True)),
                                reviewer=f"r{start}", role=role, allow_unqueued=True)
    for policy in POLICIES:
        for as_of in (None, ids[0], ids[170], ids[-2]):
            fast, plain = both_paths(engine, monkeypatch, "T", policy, as_of)
            assert_same(fast, plain)
    fast, _ = both_paths(engine, monkeypatch, "T", "latest")
    assert fast.judged_total > 0 and np.count_nonzero(fast.labels >= 0) > 0


def test_no_judgments_and_doc_ids_the_fast_path_refuses(engine: Engine, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    run = tmp_path / "q.run"
    run.write_text("".join(f"T Q0 d{i} {i} {10 - i} s\n" for i in range(1, 6)))
    import_run(engine, str(run))
    fast, plain = both_paths(engine, monkeypatch, "T", "latest")
    assert_same(fast, plain)
    assert fast.judged_total == 0 and fast.labels.tolist() == [-1] * 5
    # a judged id with a space (or, stored before the validation vocabulary refused them, a newline) cannot be
    # joined by hash: both paths fall back to the SQL join
    record_judgments(engine, "T", [("d2", "1"), ("x y", "1"), ("a b", "0"), ("d4", "0")], reviewer="ana",
                     allow_unqueued=True)
    fast, plain = both_paths(engine, monkeypatch, "T", "latest", fast_path_taken=False)
    assert_same(fast, plain)
    assert fast.labels.tolist() == [-1, 1, -1, 0, -1] and fast.relevant_total == 2 and fast.judged_total == 4
