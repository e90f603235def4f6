"""The CLI's fixed choices are enums (``--help`` lists them; a bad value is Typer's usage error, exit 2). Those that
repeat a declaration of the core (the CLI does not import it: numpy or SQLAlchemy on every command) must equal it,
in its order, or this test fails."""

from __future__ import annotations

from enum import StrEnum
from typing import get_args

import pytest
from typer.testing import CliRunner

from reviewdepth.cli.app import create_cli
from reviewdepth.cli.common import Policy, ReportInterval
from reviewdepth.cli.compare_cmds import CompareTest, Correction
from reviewdepth.cli.report_cmds import TargetRuleChoice
from reviewdepth.cli.review_cmds import ConflictStatus
from reviewdepth.cli.sample_cmds import PlanFrame
from reviewdepth.cli.store_cmds import Role
from reviewdepth.estimation.assessment import REPORT_INTERVALS
from reviewdepth.measures.compare import CORRECTIONS, TESTS
from reviewdepth.measures.depth import TargetRule
from reviewdepth.services.answers import conflicts
from reviewdepth.services.answers.sample_plan import PLAN_FRAMES
from reviewdepth.store.labels import POLICIES
from reviewdepth.store.models import USER_ROLES


@pytest.mark.parametrize("choices, declared", [
    (Policy, POLICIES), (ReportInterval, REPORT_INTERVALS), (TargetRuleChoice, get_args(TargetRule)),
    (CompareTest, TESTS), (Correction, CORRECTIONS), (ConflictStatus, get_args(conflicts.ConflictStatus)),
    (PlanFrame, PLAN_FRAMES), (Role, USER_ROLES),
], ids=lambda x: getattr(x, "__name__", ""))
def test_each_choice_enum_is_the_cores_declaration(choices: type[StrEnum], declared: tuple[str, ...]) -> None:
    assert tuple(member.value for member in choices) == tuple(declared)


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(create_cli(), list(args))
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize("command, option, shown", [
    (("report", "T"), "--policy", "[latest|adjudicated|majority|any_relevant]"),
    (("report", "T"), "--interval", "[hypergeometric|clopper-pearson]"),
    (("report", "T"), "--target-rule", "[ceil|tar_eval|asreview]"),
    (("compare", "q", "r"), "--test", "[t|wilcoxon|randomization]"),
    (("compare", "q", "r"), "--correction", "[holm|bonferroni|none]"),
    (("conflicts", "T"), "--status", "[open|resolved|all]"),
    (("sample", "plan", "T"), "--frame", "[unreviewed|all]"),
    (("plan", "T"), "--format", "[table|json|html]"),
    (("judge", "T", "d", "1"), "--role", "[review|sample|qc|adjudication|audit]"),
    (("watch", "T"), "--policy", "[latest|adjudicated|majority|any_relevant]"),
    (("export", "labels", "T"), "--policy", "[latest|adjudicated|majority|any_relevant]"),
])
def test_help_lists_the_choices_and_a_bad_one_is_the_usage_error(tmp_path: object, command: tuple[str, ...],
                                                                  option: str, shown: str) -> None:
    path = command[:2] if command[0] in {"sample", "export"} else command[:1]  # the command's own words
    code, out, _ = invoke(*path, "--help")
    assert code == 0 and shown in " ".join(out.split()), out
    database = () if command[0] == "compare" else ("--db", f"sqlite:///{tmp_path}/never.db")
    code, out, err = invoke(*command, option, "Latest", *database)  # case counts, as the services always read it
    assert code == 2 and out == "" and f"Invalid value for '{option}'" in err and "Usage: reviewdepth" in err, err
