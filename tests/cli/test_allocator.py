"""Process settings of the CLI: the eval command's allocator settings apply only to large inputs and only in the
process that asks; one BLAS thread unless the user chose otherwise."""

from __future__ import annotations

import os
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


# The probes run outside the checkout: from its root, ``python -c`` would import the source tree's reviewdepth/,
# which has no cli/ (it installs as reviewdepth.cli) and no built extensions.
OUTSIDE = Path(__file__).resolve().parents[2].parent


def _probe(*paths: Path | str) -> str:
    done = subprocess.run([sys.executable, "-c", PROBE, *map(str, paths)], capture_output=True, text=True,
                          check=True, cwd=OUTSIDE)
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


@pytest.mark.parametrize(("given", "expected"), [(None, "1"), ("4", "4")])
def test_blas_threads_default_to_one_but_a_choice_stays(given: str | None, expected: str) -> None:
    code = ("import os; from reviewdepth.cli.app import one_blas_thread; one_blas_thread(); "
            "print(os.environ['OPENBLAS_NUM_THREADS'])")
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    if given is not None:
        env["OPENBLAS_NUM_THREADS"] = given
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True,
                          cwd=OUTSIDE)
    assert done.stdout.strip() == expected
