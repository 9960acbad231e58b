"""The on_fail actions a manifest may declare, one entry each: adding an action is its module and a line here."""

from __future__ import annotations

from typing import Any

from graphs.domain.on_fail_actions import dynamic_loop_back, hard_fail, loop_back, retry_self
from graphs.domain.on_fail_actions.base import OnFailAction

# In the order planning prompts describe them and error messages list them.
ON_FAIL_ACTIONS: dict[str, OnFailAction] = {
    action.name: action
    for action in (retry_self.ACTION, loop_back.ACTION, hard_fail.ACTION, dynamic_loop_back.ACTION)
}
# What a failing node without an ``on_fail``, or with one that names no action, leads to.
DEFAULT_ON_FAIL_ACTION = hard_fail.ACTION.name


def on_fail_action(name: Any) -> OnFailAction | None:
    """The action called ``name``, or None when no action is (``name`` may be any JSON value)."""
    return ON_FAIL_ACTIONS.get(name) if isinstance(name, str) else None
