"""The mechanical checks a manifest may name, one entry each: adding a check is its function (in
graphs.domain.mechanical_checks, or beside the artifact it checks) and a line here.

A manifest node refers to a check by name (``judgment: {"kind": "mechanical", "check_ref": ...}``);
an unknown name is a failed judgment that says so, never an exception.
"""

from __future__ import annotations

from dataclasses import dataclass

from graphs.domain import case_manifests, mechanical_checks
from graphs.domain.mechanical_checks import Check, CheckResult


@dataclass(frozen=True)
class MechanicalCheck:
    name: str
    run: Check
    # What planning prompts say the check passes, so a planner can choose it.
    description: str


# In the order planning prompts list them.
MECHANICAL_CHECKS: dict[str, MechanicalCheck] = {
    check.name: check for check in (
        MechanicalCheck("check_script_compiles", mechanical_checks.check_script_compiles,
                        "the node's content is a Python script that compiles"),
        MechanicalCheck("verdict_says_pass", mechanical_checks.verdict_says_pass,
                        "the first line that starts with `VERDICT:` says exactly `pass`"),
        MechanicalCheck("output_not_empty", mechanical_checks.output_not_empty, "the content is not empty"),
        MechanicalCheck("test_case_manifest_valid", case_manifests.test_case_manifest_valid,
                        "the content holds a valid Backend Test Case Manifest v1 (run on every node that produces"
                        " a test_case_manifest)"),
    )
}


def check_names() -> list[str]:
    return sorted(MECHANICAL_CHECKS)


def check_run(name: str, content: str) -> CheckResult:
    """The verdict of the check called ``name`` on ``content``; a failed one naming the known checks when no
    check is called ``name``."""
    check = MECHANICAL_CHECKS.get(name)
    if check is None:
        return CheckResult(ok=False, issues=[f"unknown mechanical check {name!r}; known: {', '.join(check_names())}"])
    return check.run(content)
