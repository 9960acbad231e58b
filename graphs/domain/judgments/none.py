"""``none``: nothing is checked, and the output passes. A node without a judgment has this kind."""

from __future__ import annotations

from graphs.domain.judgments.base import JudgeRequest, Judgment, JudgmentKind, no_errors


def _judge(request: JudgeRequest) -> Judgment:
    return Judgment(ok=True, kind="none")


def _prompt_rule() -> str:
    return '{"kind": "none"}: nothing to check. This is the default when judgment is left out.'


KIND = JudgmentKind(name="none", errors=no_errors, judge=_judge, prompt_rule=_prompt_rule, external=True)
