"""The wheel's packages are found, not listed (setup.py's `installed_packages`): every folder of the source tree
that holds Python code must be a package (an ``__init__.py``), or the search skips it and a non-editable install
leaves it out (tests in a fresh clone then fail on an import)."""

from __future__ import annotations

import runpy
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _found() -> set[str]:
    setup = runpy.run_path(str(REPO / "setup.py"), run_name="setup_py")  # not __main__: defines, does not build
    return set(setup["installed_packages"]())


def _code_folders() -> set[str]:
    found = set()
    for root, prefix in ((REPO / "reviewdepth", "reviewdepth"), (REPO / "cli", "reviewdepth.cli"),
                         (REPO / "migrations", "reviewdepth.migrations")):
        for source in root.rglob("*.py"):
            parts = source.parent.relative_to(root).parts
            if "__pycache__" not in parts:
                found.add(".".join((prefix, *parts)) if parts else prefix)
    return found


def test_every_folder_of_code_is_a_package_of_the_wheel() -> None:
    assert _code_folders() - _found() == set()
    assert {"reviewdepth.cli", "reviewdepth.migrations.versions", "reviewdepth.services.evidence"} <= _found()
