"""``mechanical``: a named, deterministic check of the output (graphs.domain.check_registry), run by the
engine itself."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from graphs.domain.check_registry import MECHANICAL_CHECKS, check_run
from graphs.domain.judgments.base import JudgeRequest, Judgment, JudgmentKind
from graphs.domain.manifest_fields import is_id

# The check that reads an agent's ``VERDICT:`` line.
_VERDICT_CHECK = "verdict_says_pass"


def _errors(spec: Mapping[str, Any], label: str) -> list[str]:
    if not is_id(spec.get("check_ref")):
        return [f"{label}: a mechanical judgment needs check_ref naming the check"]
    return []


def _external_errors(spec: Mapping[str, Any], label: str) -> list[str]:
    # A report writes its own text: a verdict it carries would pass the check it is judged by.
    if spec.get("check_ref") == _VERDICT_CHECK:
        return [f"{label}: an external node's report cannot carry the verdict it is judged by; a verdict gate"
                f" ({_VERDICT_CHECK}) reads an agent's verdict, so it is never external"]
    return []


def _judge(request: JudgeRequest) -> Judgment:
    check_ref = request.spec.get("check_ref", "")
    result = check_run(check_ref, request.content)
    return Judgment(ok=result.ok, kind="mechanical", issues=result.issues, detail={"check_ref": check_ref})


def _prompt_rule() -> str:
    checks = "; ".join(f"`{check.name}` ({check.description})" for check in MECHANICAL_CHECKS.values())
    return '{"kind": "mechanical", "check_ref": "<name>"}: a named check run by the engine, one of ' + checks + "."


KIND = JudgmentKind(name="mechanical", errors=_errors, judge=_judge, prompt_rule=_prompt_rule, external=True,
                    external_errors=_external_errors)
