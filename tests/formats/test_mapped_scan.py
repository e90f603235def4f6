"""Reading a plain file through a read-only map (`map_file`): the scanner releases the pages it has read, and the
columns, errors and comment-line refusals must be exactly those of the same bytes read into memory."""

from __future__ import annotations

import gzip
import mmap
from pathlib import Path

import numpy as np
import pytest

from reviewdepth.formats import scan as scan_module
from reviewdepth.formats.errors import InputError
from reviewdepth.formats.runs import parse_run
from reviewdepth.formats.source import map_file
from reviewdepth.formats.trec import parse_qrels

# big enough for two scanner threads (8 MiB) and several 4 MiB drop-behind steps
LINES = 400_000


def _run_text(lines: int) -> bytes:
    rows = [f"q{i // 1000} Q0 doc-{i:09d} {i % 1000 + 1} {1000.0 - (i % 1000) * 0.5:.4f} tag\n" for i in range(lines)]
    return "".join(rows).encode()


@pytest.fixture(scope="module")
def big_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("mapped") / "big.run"
    path.write_bytes(_run_text(LINES))
    return path


def test_plain_files_are_mapped_others_read(tmp_path: Path, big_run: Path) -> None:
    mapped = map_file(big_run)
    assert isinstance(mapped, mmap.mmap) and len(mapped) == big_run.stat().st_size
    packed = tmp_path / "run.gz"
    packed.write_bytes(gzip.compress(b"q Q0 d 1 1.0 t\n"))
    assert map_file(packed) == b"q Q0 d 1 1.0 t\n"
    empty = tmp_path / "empty"
    empty.write_bytes(b"")
    assert map_file(empty) == b""
    with pytest.raises(InputError, match="cannot read file"):
        map_file(tmp_path / "missing")


@pytest.mark.skipif(scan_module.compiled is None, reason="the C scanner is not built")
def test_mapped_scan_equals_in_memory_scan(big_run: Path) -> None:
    from_bytes = parse_run(big_run.read_bytes(), str(big_run))
    mapped = map_file(big_run)
    assert isinstance(mapped, mmap.mmap)
    from_map = parse_run(mapped, str(big_run))
    assert len(from_map) == LINES
    assert np.array_equal(from_map.qid, from_bytes.qid)
    assert np.array_equal(from_map.docno.values, from_bytes.docno.values)
    assert np.array_equal(from_map.docno.hashes, from_bytes.docno.hashes)
    assert np.array_equal(from_map.scores(), from_bytes.scores())
    assert np.array_equal(from_map.line, from_bytes.line)
    assert from_map.run_id == from_bytes.run_id == "tag"
    # the map is still readable after the scanner released its pages (they come back from the file)
    assert mapped[-4:] == b"tag\n" and mapped.find(b"doc-000399999") > 0


@pytest.mark.parametrize("where", ["bad score", "comment", "comment after bad score"])
def test_mapped_errors_name_the_same_line(tmp_path: Path, big_run: Path, where: str) -> None:
    """An error or a '#' line deep in the file (past the first drop-behind steps) is reported on the same
    line, with the same message, from the map as from the bytes."""
    lines = big_run.read_bytes().splitlines(keepends=True)
    if where in ("bad score", "comment after bad score"):
        lines[300_000] = b"q300 Q0 doc-x 1 abc tag\n"
    if where in ("comment", "comment after bad score"):
        lines[350_000] = b"# a comment line\n"
    path = tmp_path / "bad.run"
    path.write_bytes(b"".join(lines))
    messages = []
    for data in (path.read_bytes(), map_file(path)):
        with pytest.raises(InputError) as caught:
            parse_run(data, str(path))
        messages.append(caught.value.describe())
    assert messages[0] == messages[1]
    # every line's field count is checked before any value: the 4-field comment line wins over the bad score
    expected_line = 300_001 if where == "bad score" else 350_001
    assert f"bad.run:{expected_line}:" in messages[0]


def test_qrels_from_a_map(tmp_path: Path) -> None:
    path = tmp_path / "q.qrels"
    path.write_bytes(b"1 0 a 1\n\n1 0 b 0\n2 0 a 2\n")
    columns = parse_qrels(map_file(path), str(path))
    assert columns.rel.tolist() == [1, 0, 2] and columns.line.tolist() == [1, 3, 4]


def _resident_kib(path: Path) -> int:
    """Resident KiB of this process's mappings of ``path`` (/proc/self/smaps)."""
    total, inside = 0, False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        first = line.split(maxsplit=1)[0]
        if "-" in first and not first.endswith(":"):  # a mapping's header line
            inside = line.endswith(" " + str(path))
        elif inside and first == "Rss:":
            total += int(line.split()[1])
    return total


@pytest.mark.skipif(scan_module.compiled is None or not Path("/proc/self/smaps").exists(),
                    reason="needs the C scanner and Linux's /proc/self/smaps")
def test_a_mapped_file_is_not_left_resident(big_run: Path) -> None:
    """The search for '#' lines and both passes of the scanner release the map's pages behind them, to the last
    page of each thread's part: none of the 14 MB file stays resident beside its columns (it used to, whole,
    until the first pass was done, and its last 4 MiB per scanner thread until the map was closed)."""
    from reviewdepth.formats.prescan import first_comment_line

    size_kib = big_run.stat().st_size // 1024
    mapped = map_file(big_run)
    assert isinstance(mapped, mmap.mmap)
    assert first_comment_line(mapped) is None
    assert _resident_kib(big_run) <= 64
    parse_run(mapped, str(big_run))
    assert size_kib > 8 * 1024 and _resident_kib(big_run) <= 64
