"""Scanning the input files on background threads while the process is still starting.

`reviewdepth eval` spends its first ~0.1 s importing numpy and its own modules, on one core. The compiled scanner
needs neither (it returns plain buffers and releases the GIL), so the eval command starts it on both files first
(`start`) and the scans run on the other core meanwhile. The map of each file carries its pending scan; when the
reader gets to that map with the same layout, `reviewdepth.formats.scan` takes the finished result (or the
scanner's error, raised as it would have been) instead of scanning again. Anything unusual (standard input, gzip,
an unreadable file, no compiled scanner) simply starts nothing: the readers then work as always.

This module imports neither numpy nor anything that does.
"""

from __future__ import annotations

import mmap
import re
import threading
from typing import Any

# The layouts the TREC readers scan with (spec, min fields, max fields); `formats.trec` and `formats.runs` read
# them from here, so a pre-scan can only ever stand in for the scan the reader would make.
QRELS_LAYOUT = ("s.si", 4, 4)
RUN_LAYOUT = ("s.s.f", 6, -1)
# `reviewdepth eval`'s trec suite scans its files without the docnos' hashes: its join compares the docnos
# themselves (or hashes them itself, without the compiled join); the CLI's pre-scan and the reader agree on it here.
EVAL_SCAN_HASHES = False
# Inputs at least this large are scanned by two threads inside the C scanner.
PARALLEL_BYTES = 8 << 20
# Set to 1, the pure-Python scanner reads every file (`reviewdepth.formats.scan`).
PURE_PYTHON_ENV = "REVIEWDEPTH_PURE_PYTHON_SCAN"


_COMMENT_LINE = re.compile(rb"^[ \t\v\f\r]*#", re.MULTILINE)


# The '#' search reads a mapped file this many bytes at a time (a multiple of any page size), releasing each piece
# before the next.
SEARCH_STEP = 4 << 20


def first_comment_line(data: bytes | mmap.mmap) -> int | None:
    """1-based number of the first line whose first non-blank character is '#' (trec_eval 9.0.8 refuses such
    lines); only a file with a '#' somewhere is searched line by line (by the regex, in C).

    A map's pages are released behind the search for '#' (as the scanner releases them behind its passes): read
    whole, a 47 MB run was resident all at once beside the other file's columns and the imports."""
    if isinstance(data, mmap.mmap) and hasattr(mmap, "MADV_DONTNEED"):
        for start in range(0, len(data), SEARCH_STEP):
            at = data.find(b"#", start, start + SEARCH_STEP)
            data.madvise(mmap.MADV_DONTNEED, start, min(SEARCH_STEP, len(data) - start))
            if at >= 0:
                break
        else:
            return None
    elif data.find(b"#") < 0:
        return None
    found = _COMMENT_LINE.search(data)
    if found is None:
        return None
    return bytes(data[:found.start()]).count(b"\n") + 1


class PendingScan(threading.Thread):
    """One scan of a mapped file by the compiled scanner, on its own thread."""

    def __init__(self, scanner: Any, data: mmap.mmap, layout: tuple[str, int, int], skip_comments: bool,
                 hashes: bool = True) -> None:
        super().__init__(name="reviewdepth-prescan", daemon=True)
        self.scanner = scanner
        self.data: mmap.mmap | None = data
        self.layout = layout
        self.skip_comments = skip_comments
        self.hashes = hashes
        self.result: Any = None
        self.error: BaseException | None = None
        self.first_comment: int | None = None

    def matches(self, spec: str, min_fields: int, max_fields: int, skip_comments: bool, hashes: bool = True) -> bool:
        return ((spec, min_fields, max_fields) == self.layout and skip_comments == self.skip_comments
                and hashes == self.hashes)

    def run(self) -> None:
        spec, min_fields, max_fields = self.layout
        assert self.data is not None
        threads = 2 if len(self.data) >= PARALLEL_BYTES else 1
        try:
            if not self.skip_comments:  # before the scan, which releases the pages behind it
                self.first_comment = first_comment_line(self.data)
            self.result = self.scanner.scan(self.data, spec, min_fields, max_fields, self.skip_comments, threads,
                                            True, self.hashes)
        except BaseException as exc:  # handed to the reader, which raises it where the scan would have
            self.error = exc

    def comment_line(self) -> int | None:
        """`first_comment_line` of the file (None when comments are skipped), once the thread is done."""
        self.join()
        return self.first_comment

    def outcome(self) -> Any:
        """The scanner's result once the thread is done (handed over once: this object keeps no reference to the
        columns or the map afterwards); its exception is raised instead."""
        self.join()
        result, error = self.result, self.error
        self.result = self.error = self.data = None
        if error is not None:
            raise error
        return result


class PrescannedMap(mmap.mmap):
    """A read-only map of a file with the scan already started on it (`pending`)."""

    pending: PendingScan | None = None


def start(path: str, layout: tuple[str, int, int], skip_comments: bool, hashes: bool = True) -> PrescannedMap | None:
    """Map ``path`` and start scanning it with ``layout`` (``hashes``: with the string columns' hashes, as
    `reviewdepth.formats.scan.scan` takes it; the reader's scan must ask the same to use it); None (nothing
    started) for standard input, gzip, an empty or unreadable file, or when the compiled scanner is not built or is
    switched off."""
    from reviewdepth.measures.extension import optional_extension

    scanner = optional_extension("reviewdepth.formats._textscan", PURE_PYTHON_ENV) if path != "-" else None
    if scanner is None:
        return None
    try:
        with open(path, "rb") as fh:
            mapped = PrescannedMap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):  # the reader reports it, with the file's name
        return None
    if mapped[:2] == b"\x1f\x8b":
        mapped.close()
        return None
    mapped.pending = PendingScan(scanner, mapped, layout, skip_comments, hashes)
    mapped.pending.start()
    return mapped
