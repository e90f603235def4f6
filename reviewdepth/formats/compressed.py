"""Gzip decompressed in a stream with a cap on the decompressed size, for bodies from untrusted senders.

A gzip member of a few hundred kilobytes can hold gigabytes (a "gzip bomb"); `CappedGunzip` hands out the
decompressed bytes in bounded chunks and refuses the first byte past ``limit`` (`DecompressedTooLarge`), so no
more than ``limit`` bytes are ever produced and at most one chunk is held at a time.
"""

from __future__ import annotations

import io
import zipfile
import zlib
from collections.abc import Iterator
from typing import BinaryIO

from reviewdepth.formats.errors import InputError

GZIP_MAGIC = b"\x1f\x8b"
ZIP_MAGIC = b"PK\x03\x04"
CHUNK = 1 << 20  # decompressed bytes handed out at a time


class DecompressedTooLarge(ValueError):
    """The decompressed data would be larger than ``limit`` bytes (nothing past the limit was produced)."""

    def __init__(self, name: str, limit: int) -> None:
        self.name = name
        self.limit = limit
        super().__init__(f"{name}: decompressed size larger than the limit of {limit:,} bytes")


class CappedGunzip:
    """Incremental gzip decompression of the pieces given to `feed`, at most ``limit`` bytes in all.

    Concatenated gzip members are decompressed one after the other, as ``gzip.decompress`` does; `finish` says
    whether the stream ended inside a member (truncated data). Corrupt data raises `InputError` naming ``name``.
    """

    def __init__(self, name: str, limit: int) -> None:
        self.name = name
        self.limit = limit
        self.produced = 0
        self._inflate = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
        self._in_member = False

    def feed(self, data: bytes) -> Iterator[bytes]:
        """The decompressed bytes of ``data`` (in chunks of at most `CHUNK`)."""
        while True:
            room = min(self.limit - self.produced + 1, CHUNK)  # one byte past the limit is enough to refuse
            try:
                out = self._inflate.decompress(data, room)
            except zlib.error as exc:
                raise InputError(self.name, None, None, f"corrupt gzip data: {exc}") from None
            if data:
                self._in_member = True
            self.produced += len(out)
            if self.produced > self.limit:
                raise DecompressedTooLarge(self.name, self.limit)
            if out:
                yield out
            if self._inflate.eof:
                self._in_member = False
                data = self._inflate.unused_data
                self._inflate = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
                if not data:
                    return
                continue
            data = self._inflate.unconsumed_tail
            if not data and len(out) < room:
                return

    def finish(self) -> None:
        """Refuse a stream that stopped inside a gzip member."""
        if self._in_member:
            raise InputError(self.name, None, None, "corrupt gzip data: compressed file ended before the "
                                                    "end-of-stream marker was reached")


class DecompressingWriter:
    """Writes the pieces of a stream to ``target``, decompressed (at most ``limit`` bytes) when the stream
    starts with the gzip magic number, as they are; call `close` at the end of the stream."""

    def __init__(self, target: BinaryIO, name: str, limit: int) -> None:
        self.target = target
        self._gunzip: CappedGunzip | None = None
        self._head: bytes | None = b""  # None once the first two bytes told plain from gzip
        self._name = name
        self._limit = limit

    @property
    def compressed(self) -> bool:
        return self._gunzip is not None

    def write(self, data: bytes) -> None:
        if self._head is not None:
            self._head += data
            if len(self._head) < len(GZIP_MAGIC):
                return
            data, self._head = self._head, None
            if data.startswith(GZIP_MAGIC):
                self._gunzip = CappedGunzip(self._name, self._limit)
        if self._gunzip is None:
            self.target.write(data)
            return
        for piece in self._gunzip.feed(data):
            self.target.write(piece)

    def close(self) -> None:
        if self._head:
            self.target.write(self._head)
        if self._gunzip is not None:
            self._gunzip.finish()


def copy_decompressed(source: BinaryIO, target: BinaryIO, name: str, limit: int, chunk: int = 1 << 16) -> int:
    """Copy ``source`` to ``target``, decompressed when it starts with the gzip magic number, refusing more
    than ``limit`` decompressed bytes; returns the bytes written. Plain data is copied as it is (its size is
    the sender's, bounded by the body limits)."""
    start = target.tell()
    writer = DecompressingWriter(target, name, limit)
    while piece := source.read(chunk):
        writer.write(piece)
    writer.close()
    return target.tell() - start


def check_zip_size(data: bytes, name: str, limit: int) -> None:
    """Refuse (`DecompressedTooLarge`) a zip archive (an ``.asreview`` project, an ``.xlsx`` workbook) whose
    members would decompress to more than ``limit`` bytes in all, before anything is decompressed: ``zipfile``
    reads no member past the size its directory declares, so the declared sizes bound what a reader gets. Data
    that is not a zip, or a damaged one, is left to its reader (which says what is wrong with it)."""
    if not data.startswith(ZIP_MAGIC):
        return
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            declared = sum(member.file_size for member in archive.infolist())
    except (zipfile.BadZipFile, OSError, EOFError, ValueError, NotImplementedError):
        return
    if declared > limit:
        raise DecompressedTooLarge(name, limit)
