"""The wheel lists its packages by hand (setup.py): every package of the source tree must be in that list, or a
non-editable install leaves it out (tests in a fresh clone then fail on an import)."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _listed() -> set[str]:
    tree = ast.parse((REPO / "setup.py").read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == "packages":
            assert isinstance(node.value, ast.List)
            return {elt.value for elt in node.value.elts if isinstance(elt, ast.Constant)}
    raise AssertionError("setup.py has no packages=[...]")


def _in_tree() -> set[str]:
    found = set()
    for root, prefix in ((REPO / "reviewdepth", "reviewdepth"), (REPO / "cli", "reviewdepth.cli"),
                         (REPO / "migrations", "reviewdepth.migrations")):
        for init in root.rglob("__init__.py"):
            parts = init.parent.relative_to(root).parts
            found.add(".".join((prefix, *parts)) if parts else prefix)
    return found


def test_every_package_of_the_tree_is_in_the_wheel() -> None:
    assert _in_tree() - _listed() == set()
