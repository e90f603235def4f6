"""Reading a whole input file: ``-`` is standard input; gzip is detected by its magic number."""

from __future__ import annotations

import gzip
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
