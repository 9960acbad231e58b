"""Mechanical judgment checks: named, deterministic verdicts on a node's output.

A manifest node refers to a check by name (``judgment: {"kind": "mechanical", "check_ref": ...}``);
an unknown name is a failed judgment that says so, never an exception.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from dataclasses import dataclass, field

VERDICT_PASS_WORDS = frozenset({"pass", "passed", "ok", "approve", "approved", "accept", "accepted"})


@dataclass(frozen=True)
class CheckResult:
    ok: bool
    issues: list[str] = field(default_factory=list)


Check = Callable[[str], CheckResult]
_CHECKS: dict[str, Check] = {}


def check_register(name: str) -> Callable[[Check], Check]:
    def decorate(function: Check) -> Check:
        _CHECKS[name] = function
        return function

    return decorate


def check_names() -> list[str]:
    return sorted(_CHECKS)


def check_run(name: str, content: str) -> CheckResult:
    check = _CHECKS.get(name)
    if check is None:
        return CheckResult(ok=False, issues=[f"unknown mechanical check {name!r}; known: {', '.join(check_names())}"])
    return check(content)


@check_register("check_script_compiles")
def check_script_compiles(content: str) -> CheckResult:
    """The output's Python script parses: the first fenced code block if there is one, else the whole text."""
    source = first_code_block(content)
    if source is None:
        source = content
    if not source.strip():
        return CheckResult(ok=False, issues=["the output holds no script"])
    try:
        ast.parse(source)
    except SyntaxError as error:
        return CheckResult(ok=False, issues=[f"the script does not compile: {error.msg} (line {error.lineno})"])
    return CheckResult(ok=True)


@check_register("verdict_says_pass")
def verdict_says_pass(content: str) -> CheckResult:
    """The first ``VERDICT:`` line says pass, wherever it sits and however it is emphasised."""
    verdict = first_verdict(content)
    if verdict is None:
        return CheckResult(ok=False, issues=["the output has no 'VERDICT:' line"])
    word = verdict.split()[0].strip(".,;:!").lower() if verdict.split() else ""
    if word in VERDICT_PASS_WORDS:
        return CheckResult(ok=True)
    return CheckResult(ok=False, issues=[f"the verdict is {verdict!r}, not pass"])


@check_register("output_not_empty")
def output_not_empty(content: str) -> CheckResult:
    if content.strip():
        return CheckResult(ok=True)
    return CheckResult(ok=False, issues=["the output is empty"])


def first_verdict(content: str) -> str | None:
    """Return the text after the first ``VERDICT:`` label, with markdown emphasis removed, or None."""
    return _first_labelled_value(content, "VERDICT")


def first_root_cause(content: str) -> str | None:
    """Return the value of the first ``ROOT_CAUSE:`` line (lower-cased), or None when there is none."""
    value = _first_labelled_value(content, "ROOT_CAUSE")
    return value.split()[0].strip(".,;:").lower() if value and value.split() else None


def first_code_block(content: str) -> str | None:
    """Return the body of the first fenced code block (```lang ... ```), or None."""
    lines = content.splitlines()
    start = None
    for index, line in enumerate(lines):
        if line.strip().startswith("```"):
            if start is None:
                start = index
            else:
                return "\n".join(lines[start + 1 : index])
    return None


_EMPHASIS = re.compile(r"[*`>#]+|\b_+|_+\b")  # keep the underscore inside ROOT_CAUSE


def _first_labelled_value(content: str, label: str) -> str | None:
    wanted = label.lower() + ":"
    for raw_line in content.splitlines():
        line = _EMPHASIS.sub("", raw_line).strip()
        position = line.lower().find(wanted)
        if position != -1:
            return line[position + len(wanted) :].strip()
    return None
