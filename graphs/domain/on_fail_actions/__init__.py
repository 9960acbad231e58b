"""On_fail actions: what a node's failed judgment leads to. Each action is one module, listed once in
``registry``:

- ``base`` — what an action is made of (``OnFailAction``) and what it is given (``FailedAttempt``);
- ``registry`` — ``ON_FAIL_ACTIONS``, the actions a manifest may declare, and the default action;
- ``retry_self`` — the node runs again;
- ``loop_back`` — an upstream node runs again, and every node between;
- ``hard_fail`` — the node ends failed, and its dependants never run;
- ``dynamic_loop_back`` — a validator's verdict sends the run back to the stage it blames.

An action holds its manifest rules, what it does to the run and its planning-prompt line, and never
imports the engine: graphs.domain.manifest_nodes, graphs.domain.manifest and graphs.domain.prompts read the
registry, and the engine runs the actions (graphs.engine.on_fail).
"""

from graphs.domain.on_fail_actions.base import FailedAttempt, OnFailAction
from graphs.domain.on_fail_actions.registry import DEFAULT_ON_FAIL_ACTION, ON_FAIL_ACTIONS, on_fail_action

__all__ = ["DEFAULT_ON_FAIL_ACTION", "ON_FAIL_ACTIONS", "FailedAttempt", "OnFailAction", "on_fail_action"]
