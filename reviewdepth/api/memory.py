"""Large buffers go back to the operating system when a request frees them (glibc only).

A server's requests allocate arrays of tens or hundreds of MB (a 6,000,000-entry queue's labels, ranking index and
estimates) in worker threads. glibc raises its mmap threshold to the size of the largest block freed (up to 32 MiB
on 64-bit), so after the first such request later arrays of that size come from the threads' heaps, where freed
memory stays with the process: measured on `bench/bounded_bench.py`'s 6,000,000-line upload, the server's peak was
idle + 289 MB with glibc's defaults and idle + 251 MB with the threshold fixed. Fixing the threshold at 1 MiB keeps
every large array in its own mapping, returned whole when freed; smaller blocks are untouched.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os

MMAP_THRESHOLD_BYTES = 1 << 20
_M_MMAP_THRESHOLD = -3  # mallopt's parameter number in glibc's malloc.h


def return_large_buffers() -> bool:
    """Fix glibc's mmap threshold in this process and, through the environment glibc reads at start, in the worker
    processes it starts. False (nothing changed) on a C library without ``mallopt``."""
    name = ctypes.util.find_library("c")
    if name is None:
        return False
    try:
        libc = ctypes.CDLL(name)
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # musl, macOS: no mallopt
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    if mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES) != 1:
        return False
    os.environ.setdefault("MALLOC_MMAP_THRESHOLD_", str(MMAP_THRESHOLD_BYTES))
    return True
