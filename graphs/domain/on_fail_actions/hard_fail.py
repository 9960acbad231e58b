"""``hard_fail``: the node ends failed at once, and the nodes that depend on it never run."""

from __future__ import annotations

from graphs.domain.on_fail_actions.base import OnFailAction


def _prompt_rule(org_node: str, append: bool) -> str:
    return '{"action": "hard_fail"}: stop the run; the nodes that depend on this one do not run.'


ACTION = OnFailAction(name="hard_fail", prompt_rule=_prompt_rule)
