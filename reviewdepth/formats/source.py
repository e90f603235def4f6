"""Reading a whole input file: ``-`` is standard input; gzip is detected by its magic number."""

from __future__ import annotations

import gzip
import mmap
import sys
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
