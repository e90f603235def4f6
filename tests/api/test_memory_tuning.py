"""`reviewdepth serve` fixes glibc's mmap threshold (`reviewdepth.api.memory`), here and for its workers."""

from __future__ import annotations

import ctypes.util
import os
import platform

import pytest

from reviewdepth.api.memory import MMAP_THRESHOLD_BYTES, return_large_buffers


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc" or ctypes.util.find_library("c") is None,
                    reason="mallopt is glibc's")
def test_the_threshold_is_set_here_and_for_the_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MALLOC_MMAP_THRESHOLD_", raising=False)
    assert return_large_buffers() is True
    assert os.environ["MALLOC_MMAP_THRESHOLD_"] == str(MMAP_THRESHOLD_BYTES)
