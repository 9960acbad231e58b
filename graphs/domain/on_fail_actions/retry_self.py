"""``retry_self``: the failing node runs again, told why its attempt was rejected."""

from __future__ import annotations

from graphs.domain.on_fail_actions.base import FailedAttempt, OnFailAction


def _respond(failure: FailedAttempt) -> None:
    failure.attempts_add([failure.node_id], cause="retry_self",
                         feedback=[f"Your previous attempt was rejected: {issue}" for issue in failure.findings])
    failure.log("retrying")


def _prompt_rule(org_node: str, append: bool) -> str:
    return '{"action": "retry_self", "max_attempts": 2}: run the node again.'


ACTION = OnFailAction(name="retry_self", prompt_rule=_prompt_rule, respond=_respond)
