"""Reading an input file, whole or in pieces cut at line ends: ``-`` is standard input; gzip is detected by its magic
number."""

from __future__ import annotations

import gzip
import mmap
import sys
from collections.abc import Iterator
from pathlib import Path

from reviewdepth.formats.errors import InputError


def read_bytes(path: str | Path) -> bytes:
    """Whole file as bytes; ``-`` reads standard input; gzip is detected by its magic number."""
    name = str(path)
    try:
        if name == "-":
            data = sys.stdin.buffer.read()
        else:
            data = Path(name).read_bytes()
    except OSError as exc:
        raise InputError(name, None, None, f"cannot read file: {exc.strerror or exc}") from None
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as exc:
            raise InputError(name, None, None, f"corrupt gzip data: {exc}") from None
    return data


def map_file(path: str | Path) -> bytes | mmap.mmap:
    """A read-only map of a plain file, which the compiled scanner reads without a copy and releases as it goes;
    `read_bytes` for standard input, gzip, empty files and anything that cannot be mapped."""
    name = str(path)
    if name == "-":
        return read_bytes(name)
    try:
        with open(name, "rb") as fh:
            mapped = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):  # ValueError: an empty file cannot be mapped
        return read_bytes(name)
    if mapped[:2] == b"\x1f\x8b":
        mapped.close()
        return read_bytes(name)
    return mapped


def plain_file(path: str | Path) -> bool:
    """Whether ``path`` names a readable regular file that is not gzip: one `line_blocks` can read (twice, if need
    be). Standard input, gzip, and anything unreadable are read whole (`read_bytes`), whose errors name them."""
    name = str(path)
    if name == "-":
        return False
    try:
        with open(name, "rb") as fh:
            return Path(name).is_file() and fh.read(2) != b"\x1f\x8b"
    except OSError:
        return False


def line_blocks(path: str | Path, block_bytes: int) -> Iterator[tuple[bytes, int]]:
    """A plain file (`plain_file`) in pieces of about ``block_bytes`` cut after a newline (a line longer than that
    stays whole), with the number of lines before each piece: (piece, lines before). The pieces joined are the
    file's bytes; no piece but the last lacks its final newline."""
    name = str(path)
    before = 0
    carry = b""
    try:
        with open(name, "rb") as fh:
            while True:
                chunk = fh.read(block_bytes)
                if not chunk:
                    break
                cut = chunk.rfind(b"\n") + 1
                if cut == 0:  # no line ends in this chunk: keep it for the next one
                    carry += chunk
                    continue
                piece = carry + chunk[:cut] if carry else chunk[:cut] if cut < len(chunk) else chunk
                carry = chunk[cut:]
                del chunk
                yield piece, before
                before += piece.count(b"\n")
                del piece
    except OSError as exc:
        raise InputError(name, None, None, f"cannot read file: {exc.strerror or exc}") from None
    if carry:
        yield carry, before
