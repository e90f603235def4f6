"""Scans started on background threads (`prescan.start`) stand in for the reader's own scan only when they are
the same scan, and give exactly what the reader would have given: columns, errors, comment-line refusals."""

from __future__ import annotations

import gzip
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from reviewdepth.formats import prescan
from reviewdepth.formats import scan as scan_module
from reviewdepth.formats.errors import InputError
from reviewdepth.formats.runs import parse_run
from reviewdepth.formats.trec import parse_qrels

pytestmark = pytest.mark.skipif(scan_module.compiled is None, reason="the C scanner is not built")

RUN = "".join(f"q{i // 50} Q0 d{i:06d} {i % 50 + 1} {100 - (i % 50) * 0.25:.2f} tag\n" for i in range(5000)).encode()


def _started(tmp_path: Path, name: str, data: bytes, layout: tuple[str, int, int],
             skip_comments: bool = False, hashes: bool = True) -> prescan.PrescannedMap:
    path = tmp_path / name
    path.write_bytes(data)
    mapped = prescan.start(str(path), layout, skip_comments, hashes)
    assert mapped is not None and mapped.pending is not None
    return mapped


def test_prescanned_run_equals_the_readers_own_scan(tmp_path: Path) -> None:
    mapped = _started(tmp_path, "r.run", RUN, prescan.RUN_LAYOUT)
    pending = mapped.pending
    assert pending is not None
    got, want = parse_run(mapped, "r.run"), parse_run(RUN, "r.run")
    for a, b in ((got.qid, want.qid), (got.docno.values, want.docno.values), (got.docno.hashes, want.docno.hashes),
                 (got.scores(), want.scores()), (got.line, want.line)):
        assert np.array_equal(a, b)
    # the pending scan handed its result over and keeps nothing (the columns may be freed after the join)
    assert pending.result is None and pending.data is None


def test_prescanned_qrels_and_a_layout_that_does_not_match(tmp_path: Path) -> None:
    data = b"1 0 a 1\n1 0 b 0\n2 0 a 2\n"
    qrels = parse_qrels(_started(tmp_path, "q", data, prescan.QRELS_LAYOUT), "q")
    assert qrels.rel.tolist() == [1, 0, 2]
    # a run map whose scan was started with the qrels layout: the reader scans again itself
    run = parse_run(_started(tmp_path, "r2.run", RUN, prescan.QRELS_LAYOUT), "r2.run")
    assert len(run) == 5000


def test_a_prescan_without_hashes_serves_only_a_reader_without_hashes(tmp_path: Path) -> None:
    want = parse_run(RUN, "r.run")
    mapped = _started(tmp_path, "r.run", RUN, prescan.RUN_LAYOUT, hashes=False)
    pending = mapped.pending
    assert pending is not None
    got = parse_run(mapped, "r.run", hashes=False)
    assert got.docno.hashes is None
    assert np.array_equal(got.docno.values, want.docno.values) and np.array_equal(got.line, want.line)
    assert pending.result is None and pending.data is None  # handed over
    # a reader that wants the hashes scans again itself: the pre-scan has none to give
    mapped = _started(tmp_path, "r2.run", RUN, prescan.RUN_LAYOUT, hashes=False)
    pending = mapped.pending
    assert pending is not None
    again = parse_run(mapped, "r2.run")
    assert again.docno.hashes is not None and np.array_equal(again.docno.hashes, want.docno.hashes)
    pending.join()
    assert pending.result is not None  # never taken


@pytest.mark.parametrize(("bad", "skip_comments", "message"), [
    (b"q1 Q0 x 1 abc tag\n", False, "r.run:101: field score: score must be a number, found 'abc'"),
    (b"# a comment\n", False, "r.run:101: comment lines ('#') are not valid in trec_eval 9.0.8 input"),
    (b"q1 Q0 x 1\n", True, "r.run:101: expected at least 6 whitespace-separated fields, found 4"),
])
def test_errors_are_the_readers(tmp_path: Path, bad: bytes, skip_comments: bool, message: str) -> None:
    lines = RUN.splitlines(keepends=True)
    lines[100] = bad
    data = b"".join(lines)
    messages = []
    for source in (_started(tmp_path, "r.run", data, prescan.RUN_LAYOUT, skip_comments), data):
        with pytest.raises(InputError) as caught:
            parse_run(source, "r.run", allow_comments=skip_comments)
        messages.append(caught.value.describe())
    assert messages[0] == messages[1]
    assert messages[0].startswith(message)


def test_nothing_starts_for_stdin_gzip_missing_or_empty_files(tmp_path: Path) -> None:
    packed = tmp_path / "r.gz"
    packed.write_bytes(gzip.compress(RUN))
    empty = tmp_path / "empty"
    empty.write_bytes(b"")
    for path in ("-", str(packed), str(tmp_path / "missing"), str(empty)):
        assert prescan.start(path, prescan.RUN_LAYOUT, False) is None


def test_prescan_imports_no_numpy() -> None:
    code = "import sys; from reviewdepth.formats import prescan; print('numpy' in sys.modules)"
    outside = Path(__file__).resolve().parents[2].parent  # not the checkout, whose reviewdepth/ -c would import
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=outside)
    assert done.stdout.strip() == "False"
