"""Above the core the decision is read as codes, never as the words a door prints (issue 38, item 1).

The core's `AnswerStatus`, `Basis`, `NextStep` and `RuleKind` and the status model's `Validity` are string enums
whose values are also the words the doors print. A service, route or command that compares a status, basis, kind,
validity or step with a string literal reads words back: it breaks silently the day a word changes. This test
parses every module above the core and fails on any such comparison; the decision's own record carries the codes."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from reviewdepth.estimation.assessment import AnswerStatus, Basis, NextStep
from reviewdepth.estimation.stopping import RuleKind
from reviewdepth.estimation.target import Target
from reviewdepth.report.status_model import Validity

ROOT = Path(__file__).resolve().parents[1]
ABOVE_THE_CORE = [ROOT / "reviewdepth" / "services", ROOT / "reviewdepth" / "api", ROOT / "cli"]
# Basis.JUDGED's "judged" is also a sample frame (`frame == "judged"`): it is matched only against a basis or method
CODES = {str(code) for enum in (AnswerStatus, NextStep, RuleKind, Validity) for code in enum} | {
    str(code) for code in Basis}
CODE_NAMES = ("status", "basis", "method", "kind", "validity", "decided_by", "step")


def _mentions_code(node: ast.expr, literal: str) -> bool:
    text = ast.unparse(node).lower()
    names = ("basis", "method") if literal == Basis.JUDGED else CODE_NAMES
    return any(name in text for name in names) and "frame" not in text


def _literal_comparisons(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left, *node.comparators]
        literals = [s.value for s in sides if isinstance(s, ast.Constant) and isinstance(s.value, str)]
        for side in sides:
            if isinstance(side, (ast.Tuple, ast.List, ast.Set)):
                literals += [e.value for e in side.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
        others = [s for s in sides if not isinstance(s, (ast.Constant, ast.Tuple, ast.List, ast.Set))]
        if any(v in CODES and _mentions_code(o, v) for v in literals for o in others):
            found.append(f"{path.name}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_no_door_or_service_compares_a_decision_code_with_its_words() -> None:
    files = sorted(p for folder in ABOVE_THE_CORE for p in folder.rglob("*.py"))
    assert len(files) > 50  # the walk found the code it is about
    found = [hit for path in files for hit in _literal_comparisons(path)]
    assert found == [], "\n".join(found)


@pytest.mark.parametrize("source", ['status == "reached"', 'row.basis != "elusion"', 'e.kind in ("heuristic",)',
                                    'figure.validity == "anytime-valid"'])
def test_the_check_sees_a_comparison_with_words(tmp_path: Path, source: str) -> None:
    module = tmp_path / "module.py"
    module.write_text(f"def f(row, e, figure, status):\n    return {source}\n")
    assert len(_literal_comparisons(module)) == 1


def test_the_decision_record_carries_codes() -> None:
    from reviewdepth.report.decision import audit_figure, topic_status

    status = topic_status(Target.parse("0.95"), 0.95, 10, 3, sample=None, sample_status=None,
                          audit=audit_figure(1, 100, 0.97, 0.95, True))
    assert status.status is AnswerStatus.REACHED
    assert status.figures[0].validity is Validity.ANYTIME_VALID
