"""``llm``: another agent reviews the output with the node's ``judge_prompt`` and answers ``{ok, issues}``.

The judge prompt's ``{content}`` placeholder is filled with ``str.replace``, never ``str.format``: node
outputs and planner-written prompts are full of braces.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from graphs.domain.json_extraction import extract_json_payload
from graphs.domain.judgments.base import JudgeRequest, Judgment, JudgmentKind

CONTENT_PLACEHOLDER = "{content}"


def _errors(spec: Mapping[str, Any], label: str) -> list[str]:
    if not (isinstance(spec.get("judge_prompt"), str) and CONTENT_PLACEHOLDER in spec["judge_prompt"]):
        return [f"{label}: an llm judgment needs a judge_prompt containing the {CONTENT_PLACEHOLDER} placeholder"]
    return []


def judge_prompt(*, judge_prompt_template: str, content: str) -> str:
    """Fill the judge template's ``{content}`` placeholder and ask for an ``{ok, issues}`` answer."""
    if CONTENT_PLACEHOLDER in judge_prompt_template:
        body = judge_prompt_template.replace(CONTENT_PLACEHOLDER, content)
    else:
        # A planner-authored judge prompt may forget the placeholder; the content still has to reach
        # the judge, so it goes after the instructions.
        body = judge_prompt_template + "\n\nThe content to judge:\n\n" + content
    return (
        body + "\n\nAnswer with ONE JSON object and nothing else: "
        '{"ok": true, "issues": []} when the content is acceptable, or '
        '{"ok": false, "issues": ["<one concrete problem per entry>"]} when it is not.'
    )


def _judge(request: JudgeRequest) -> Judgment:
    answer = request.ask(judge_prompt(judge_prompt_template=request.spec.get("judge_prompt", CONTENT_PLACEHOLDER),
                                      content=request.content))
    verdict = extract_json_payload(answer, required_keys=("ok",))
    if verdict is None or not isinstance(verdict.get("ok"), bool):
        return Judgment(ok=False, kind="llm", issues=["the judge's answer held no {ok, issues} JSON object"],
                        detail={"judge_answer": answer[:4000]})
    issues = [str(issue) for issue in verdict.get("issues") or [] if str(issue).strip()]
    return Judgment(ok=verdict["ok"], kind="llm", issues=issues)


def _prompt_rule() -> str:
    return (
        '{"kind": "llm", "judge_prompt": "<your review prompt>"}: another agent reviews the output. The '
        f"judge_prompt must contain the literal placeholder {CONTENT_PLACEHOLDER}, where the output is "
        'inserted; the reviewer answers {"ok": true|false, "issues": [...]}.'
    )


KIND = JudgmentKind(name="llm", errors=_errors, judge=_judge, prompt_rule=_prompt_rule, slow=True)
