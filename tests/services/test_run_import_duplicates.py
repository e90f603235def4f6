"""`import_run`'s duplicate-docno check rides on the ranking blob's hash order: with no two equal docno hashes in a
topic no docno repeats; a hash shared by two lines takes the exact check. Here every hash is forced equal (as a
64-bit collision would make two), so the exact check decides: distinct docnos import, a repeat is refused at the
earliest line that repeats an earlier one, in file order whatever the ranking order."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import Engine, func, select

from reviewdepth.formats.errors import InputError
from reviewdepth.formats.runs import Run, parse_run
from reviewdepth.formats.scan import StringColumn
from reviewdepth.services.files import imports
from reviewdepth.services.files.imports import import_run
from reviewdepth.store.models import QueueEntry
from reviewdepth.store.ranking_blob import decode_ranking


def colliding(data: bytes, path: str, **options: object) -> Run:
    run = parse_run(data, path, **options)  # type: ignore[arg-type]
    return Run(**{**run.__dict__, "docno": StringColumn(run.docno.values, np.zeros_like(run.docno.hashes))})


@pytest.fixture
def every_hash_equal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(imports, "parse_run", colliding)


@pytest.mark.usefixtures("every_hash_equal")
def test_distinct_docnos_sharing_a_hash_import(engine: Engine, tmp_path: Path) -> None:
    run = tmp_path / "shared.run"
    run.write_text("q Q0 a 1 3 s\nq Q0 b 2 2 s\nq Q0 c 3 1 s\nr Q0 a 1 1 s\n")
    import_run(engine, str(run))
    with engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(QueueEntry)).scalar_one() == 4


@pytest.mark.usefixtures("every_hash_equal")
@pytest.mark.parametrize("order", ["given", "trec_eval"])
def test_a_repeat_among_shared_hashes_is_refused_at_its_first_line(engine: Engine, tmp_path: Path,
                                                                   order: str) -> None:
    run = tmp_path / "dup.run"
    # in trec_eval order line 5 ranks before line 4; the earliest repeating line in the file is still line 4
    run.write_text("q Q0 a 1 1 s\nq Q0 b 2 2 s\nq Q0 c 3 3 s\nq Q0 b 4 4 s\nq Q0 a 5 5 s\n")
    with pytest.raises(InputError, match=r"dup.run:4: field docno: duplicate docno 'b' for topic 'q'"):
        import_run(engine, str(run), order=order)


def test_blob_of_an_import_matches_the_blob_sorted_afresh(engine: Engine, tmp_path: Path) -> None:
    run = tmp_path / "r.run"
    run.write_text("".join(f"q Q0 d{i % 7}x{i} {i + 1} {1 / (i + 1)!r} s\n" for i in range(300)))
    import_run(engine, str(run), order="trec_eval")
    with engine.connect() as conn:
        blob = conn.execute(select(imports.Queue.ranking_blob)).scalar_one()
        docs = conn.execute(select(QueueEntry.doc_id).order_by(QueueEntry.rank)).scalars().all()
    assert blob == imports.encode_ranking(list(docs))
    index = decode_ranking(blob)
    assert index is not None and [d.decode() for d in index.doc_ids.tolist()] == docs
