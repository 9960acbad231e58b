"""``dynamic_loop_back``: a validator's failing final verdict names a root cause, and the run goes back
to the stage it blames: that stage's nodes and everything downstream of them run again.

It belongs on the validator's single ``final_verdict`` node and needs no edge.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from graphs.domain.catalogs import ROOT_CAUSE_CATEGORIES
from graphs.domain.manifest_graph import downstream_of, topological_order
from graphs.domain.mechanical_checks import first_root_cause
from graphs.domain.on_fail_actions.base import FailedAttempt, OnFailAction, reruns_add

# Which stage a final verdict's root cause sends the run back to.
DYNAMIC_ROOT_CAUSES = {"planning": "planner", "coder": "coder", "skill_defect": "coder"}


def _node_errors(node: Mapping[str, Any], label: str) -> list[str]:
    errors = []
    if node.get("node_type") != "final_verdict":
        errors.append(
            f"{label}: dynamic_loop_back is only allowed on a node with node_type 'final_verdict', "
            f"not {node.get('node_type')!r}"
        )
    subagent = node.get("subagent_type")
    if subagent is not None and subagent != "validator":
        errors.append(f"{label}: dynamic_loop_back belongs to the validator, not subagent_type {subagent!r}")
    return errors


def _respond(failure: FailedAttempt) -> None:
    root_cause = first_root_cause(failure.content) or "coder"
    stage = DYNAMIC_ROOT_CAUSES.get(root_cause, "coder")
    owners = failure.org_nodes()
    if root_cause == "skill_defect":
        skill_ids = {
            node.get("skill_ref")
            for node in failure.manifest.get("nodes", [])
            if node.get("skill_ref") and owners.get(node["node_id"]) == stage
        }
        failure.skills_flag(skill_ids, note="; ".join(failure.issues) or failure.content[:2000])
    rerun = _stage_and_downstream(failure, owners, stage=stage)
    reruns_add(failure, rerun, cause="dynamic_loop_back")
    failure.log("looped_back", root_cause=root_cause, stage=stage, rerun=rerun)


def _stage_and_downstream(failure: FailedAttempt, owners: dict[str, str], *, stage: str) -> list[str]:
    owned = {node_id for node_id, org in owners.items() if org == stage}
    chosen = set(owned) | {failure.node_id}
    for node_id in owned:
        chosen |= downstream_of(failure.manifest, node_id)
    return [node_id for node_id in topological_order(failure.manifest) if node_id in chosen]


def _prompt_rule(org_node: str, append: bool) -> str | None:
    if org_node != "validator":
        return None
    categories = ", ".join(ROOT_CAUSE_CATEGORIES)
    return (
        '{"action": "dynamic_loop_back", "max_attempts": 2}: only on the single node with node_type '
        '"final_verdict", and on no other node. It needs no edge: when the verdict fails, its '
        f"ROOT_CAUSE line ({categories}) decides which stage the run goes back to. The final_verdict "
        "node does not use promotes_to_artifact: a verdict is a judgment, not a deliverable."
    )


ACTION = OnFailAction(name="dynamic_loop_back", prompt_rule=_prompt_rule, respond=_respond, node_errors=_node_errors,
                      reads_verdict=True)
