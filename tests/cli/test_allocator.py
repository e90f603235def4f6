"""The eval command's allocator settings apply only to large inputs, and only in the process that asks."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from reviewdepth.cli.allocator import LARGE_INPUT_BYTES

PROBE = """
import sys
from reviewdepth.cli.allocator import prefer_heap_for_large_inputs
print(prefer_heap_for_large_inputs(*sys.argv[1:]))
"""


def _probe(*paths: Path | str) -> str:
    done = subprocess.run([sys.executable, "-c", PROBE, *map(str, paths)], capture_output=True, text=True,
                          check=True)
    return done.stdout.strip()


def test_small_inputs_keep_the_defaults(tmp_path: Path) -> None:
    small = tmp_path / "small.run"
    small.write_bytes(b"q Q0 d 1 1.0 t\n")
    assert _probe(small, small, "-", tmp_path / "missing") == "False"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt is Linux only")
def test_large_inputs_switch_the_allocator(tmp_path: Path) -> None:
    big = tmp_path / "big.run"
    with big.open("wb") as fh:  # sparse: the size counts, no disk is written
        fh.truncate(LARGE_INPUT_BYTES // 2)
    assert _probe(big) == "False"
    assert _probe(big, big) == "True"  # the two inputs together reach the threshold
