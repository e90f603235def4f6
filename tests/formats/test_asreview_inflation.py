"""Issue 40, item 1: an ASReview project whose member inflates far beyond the archive (a zip bomb) is refused as
soon as the bytes actually inflated pass the limit, in one line naming the file and member, with memory bounded by
that limit, not by what the member would inflate to."""

from __future__ import annotations

import io
import json
import tracemalloc
import zipfile

import pytest

from reviewdepth.formats.asreview import INFLATION_FLOOR, inflation_limit, read_asreview
from reviewdepth.formats.errors import InputError


def _bomb(inflated: int) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        archive.writestr("project.json", json.dumps({"id": "p", "name": "p", "project_file_version": 3}))
        with archive.open("results.db", "w", force_zip64=True) as member:
            block = bytes(1024 * 1024)
            for _ in range(inflated // len(block)):
                member.write(block)
    return buffer.getvalue()


def test_the_limit_follows_the_archive_not_its_declared_sizes() -> None:
    assert inflation_limit(10_000) == INFLATION_FLOOR
    assert inflation_limit(10 * 1024 * 1024) == 100 * 10 * 1024 * 1024
    assert inflation_limit(1 << 40) == 1024 * 1024 * 1024


def test_a_zip_bomb_is_refused_with_bounded_memory() -> None:
    data = _bomb(256 * 1024 * 1024)
    assert len(data) < 1024 * 1024  # 256 MiB of zeros in well under 1 MiB
    tracemalloc.start()
    try:
        with pytest.raises(InputError) as refused:
            read_asreview(data, "bomb.asreview")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    message = str(refused.value)
    assert "bomb.asreview" in message and "results.db" in message and "inflates beyond 64 MiB" in message
    assert "\n" not in message
    # the limit (64 MiB) and the growing buffer's copy, not the 256 MiB the member inflates to
    assert peak < 200 * 1024 * 1024
