"""Capped streaming gunzip (`reviewdepth.formats.compressed`): the same bytes as ``gzip.decompress`` up to the
limit, the first byte past it refused, corrupt and truncated data refused with the name."""

from __future__ import annotations

import gzip
import io
import os
import zlib

import pytest

from reviewdepth.formats.compressed import (
    CHUNK,
    CappedGunzip,
    DecompressedTooLarge,
    DecompressingWriter,
    copy_decompressed,
)
from reviewdepth.formats.errors import InputError


def gunzip(data: bytes, limit: int, piece: int) -> bytes:
    out = io.BytesIO()
    writer = DecompressingWriter(out, "upload", limit)
    for start in range(0, len(data), piece):
        writer.write(data[start:start + piece])
    writer.close()
    return out.getvalue()


@pytest.mark.parametrize("piece", [1, 7, 4096, 1 << 20])
def test_same_bytes_as_gzip_decompress(piece: int) -> None:
    text = b"".join(b"301 Q0 doc%d %d 1.5 run\n" % (i, i) for i in range(3000)) + os.urandom(5000)
    members = gzip.compress(text[:20000]) + gzip.compress(text[20000:])  # two members, as gzip -c a b
    expected = gzip.decompress(members)
    assert expected == text
    assert gunzip(members, len(text), piece) == text
    assert gunzip(text, 10, piece) == text  # plain data passes through; its size is the body limit's business


def test_limit_is_exact_and_nothing_past_it_is_produced() -> None:
    size = 3 * CHUNK + 5  # several output chunks, so the check runs across pieces
    bomb = gzip.compress(bytes(size), compresslevel=9)
    assert gunzip(bomb, size, 1000) == bytes(size)
    gunzip_state = CappedGunzip("upload", size - 1)
    produced = 0
    with pytest.raises(DecompressedTooLarge, match="larger than the limit of") as refused:
        for out in gunzip_state.feed(bomb):
            produced += len(out)
    assert refused.value.limit == size - 1 and refused.value.name == "upload"
    assert produced <= size - 1 and gunzip_state.produced == size  # the refused byte is the first past the limit


def test_a_large_bomb_is_refused_early() -> None:
    deflate = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    bomb = b"".join(deflate.compress(bytes(1 << 20)) for _ in range(64)) + deflate.flush()  # 64 MiB of zeros
    assert len(bomb) < 100_000
    target = io.BytesIO()
    with pytest.raises(DecompressedTooLarge):
        copy_decompressed(io.BytesIO(bomb), target, "run", 1 << 20)
    assert len(target.getvalue()) <= 1 << 20


def named(data: bytes, name: str) -> bytes:
    out = io.BytesIO()
    copy_decompressed(io.BytesIO(data), out, name, 10**6)
    return out.getvalue()


def test_corrupt_and_truncated_data_name_the_upload() -> None:
    good = gzip.compress(b"301 0 d 1\n" * 100)
    assert named(good, "qrels") == b"301 0 d 1\n" * 100
    with pytest.raises(InputError, match=r"^qrels: corrupt gzip data"):
        named(good[:10] + b"\xff" * 20 + good[30:], "qrels")
    with pytest.raises(InputError, match=r"^qrels: corrupt gzip data.*ended before"):
        named(good[:-8], "qrels")
