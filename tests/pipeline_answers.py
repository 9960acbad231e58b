"""The one small pipeline the real-CLI tests and journeys have their API stand-ins play: the planner,
coder and validator each plan one node (prd, impl, validator_final_verdict), and every judge passes.
Each test answers the nodes' own calls with the tool calls its CLI makes."""

from __future__ import annotations

import json

JUDGE_ASK = 'Answer with ONE JSON object and nothing else: {"ok": true'
VERDICT_ASK = "Judge the greeting."


def manifest_answer(*nodes: dict) -> str:
    """A planner's answer holding a manifest of ``nodes``, each depending on its ``depends_on``."""
    edges = [{"from": dep, "to": node["node_id"], "edge_type": "needs_judgment"}
             for node in nodes for dep in node.get("depends_on", [])]
    return "Here is the plan.\n\n```json\n" + json.dumps({"nodes": list(nodes), "edges": edges}) + "\n```\n"


def stage_answer(asked: str, *, coder_task: str) -> str | None:
    """The answer to a judge's call or a stage's planning call whose prompt is ``asked``; None for any
    other call. The coder plans one node whose task is ``coder_task``."""
    if JUDGE_ASK in asked:
        return '{"ok": true, "issues": []}'
    if "You are the `planner` agent. Plan" in asked:
        return manifest_answer({"node_id": "prd", "artifact_type": "prd", "depends_on": [],
                                "judgment": {"kind": "llm", "judge_prompt": "Review this PRD: {content}"}})
    if "You are the `coder` agent. Plan" in asked:
        return manifest_answer({"node_id": "impl", "node_type": "implementation", "depends_on": ["prd"],
                                "task_prompt": coder_task})
    if "You are the `validator` agent. Plan" in asked:
        return manifest_answer({"node_id": "validator_final_verdict", "node_type": "final_verdict",
                                "depends_on": ["impl"], "task_prompt": VERDICT_ASK,
                                "judgment": {"kind": "mechanical", "check_ref": "verdict_says_pass"}})
    return None
