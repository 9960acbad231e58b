"""``loop_back``: an upstream node runs again, and every node between it and the failing one.

Where it loops back to is the node's one on_failure edge, whose target must be upstream of it.
"""

from __future__ import annotations

from collections.abc import Callable

from graphs.domain.manifest_graph import loop_back_target, nodes_between
from graphs.domain.on_fail_actions.base import FailedAttempt, OnFailAction, reruns_add


def _failure_edge_errors(node_id: str, targets: list[str], upstream_of: Callable[[str], set[str]]) -> list[str]:
    if len(targets) != 1:
        named_targets = f" (to {', '.join(map(repr, targets))})" if targets else ""
        return [
            f"node {node_id!r}: on_fail.action is loop_back, which needs exactly one on_failure "
            f"edge from it; it has {len(targets)}{named_targets}"
        ]
    if targets[0] not in upstream_of(node_id):
        return [f"node {node_id!r}: loop_back target {targets[0]!r} is not an upstream dependency of {node_id!r}"]
    return []


def _respond(failure: FailedAttempt) -> None:
    target = loop_back_target(failure.manifest, failure.node_id)
    if target is None:
        failure.log("terminal", reason="no on_failure edge")
        return
    rerun = nodes_between(failure.manifest, target=target, failing=failure.node_id)
    reruns_add(failure, rerun, cause="loop_back")
    failure.log("looped_back", target=target, rerun=rerun)


def _prompt_rule(org_node: str, append: bool) -> str:
    target = "a node this one depends on, directly or transitively"
    if append:
        target += ", or one of the nodes already in this run"
    return (
        '{"action": "loop_back", "max_attempts": 2}: run an upstream node again, then every node between '
        "it and this one, with the reviewer's issues as feedback. Add exactly one edge "
        '{"from": "<this node_id>", "to": "<upstream node_id>", "edge_type": "on_failure"}; its target '
        f"must be {target}, because only such a node produced input this one used."
    )


ACTION = OnFailAction(name="loop_back", prompt_rule=_prompt_rule, respond=_respond,
                      failure_edge_errors=_failure_edge_errors)
