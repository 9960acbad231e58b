"""Gap-driven planning (seed 002's planning contract): the planner plans in rounds, not one graph.

Each round the planner is shown the task and a snapshot of its run — every node with its status, its
output summarised and the gaps its failed attempts met — and answers
``{"tasks": [TaskSpec, …], "has_gap": bool, "gap_detail": str}``. Its tasks become generic nodes
(``node_id`` = ``metadata.task_id``); once they have run it is asked again, until it answers
``has_gap: false`` with no tasks (the gap is closed: not a failure). Rounds are bounded by
``WORKGRAPH_GAP_MAX_ROUNDS``; each is a planning call recorded like any other (``graphs.planning.planner``).

An answer is refused, with every problem named (and one repair request), when it is not such an
object, a task lacks its id or instruction, an id is taken or reused, ``has_gap`` is true with no task
to close it, or false while tasks are still listed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from graphs.domain import manifest as manifest_lib
from graphs.domain import manifest_graph
from graphs.domain.json_extraction import extract_json_payload
from graphs.domain.prompts import TaskBrief
from graphs.models import PLANNING_NODE_ID, Task, WorkGraphRun, WorkNodeExecution

# How much of each node's output the snapshot carries: enough to tell what was done, not the work.
OUTPUT_SUMMARY_CHARS = 1500
# Node fields a TaskSpec's metadata may carry on to its node, checked as any manifest node's are:
# who does it (an external executor reports it back), how its output is judged and what a failure does.
NODE_FIELDS_FROM_METADATA = ("executor", "deadline_seconds", "judgment", "on_fail")
# What a planner is told a TaskSpec holds, in the prompt and in the errors.
TASK_SPEC_SHAPE = (
    '{"metadata": {"task_id": "<node_id>", "title": "<title>", "instruction": "<what to do>",'
    ' "depends_on": ["<node_id>", ...]}, "context": {"background": "<background>"},'
    ' "goal": {"objective": "<objective>", "acceptances": [{"id": "<id>", "description": "<criterion>"}]}}'
)


@dataclass(frozen=True)
class GapAnswer:
    """A usable gap answer: the next tasks as manifest nodes, and whether a gap is left."""

    manifest: dict[str, Any]
    has_gap: bool
    gap_detail: str

    def as_dict(self, *, round_number: int) -> dict[str, Any]:
        return {"round": round_number, "has_gap": self.has_gap, "gap_detail": self.gap_detail,
                "task_ids": manifest_graph.manifest_node_ids(self.manifest)}


def acceptance_items(task: Task) -> list[dict[str, str]]:
    """The task's acceptance criteria with their ids (those its TaskRequest gave, else ac1, ac2, …)."""
    ids = list(task.acceptance_ids or [])
    return [{"id": ids[index] if index < len(ids) and ids[index] else f"ac{index + 1}", "acceptance": str(text)}
            for index, text in enumerate(task.acceptance_criteria or [])]


def gap_snapshot(run: WorkGraphRun, *, round_number: int) -> dict[str, Any]:
    """What the planner is shown of the run: each node's latest status, its output summarised and the
    gaps (judgment issues) its attempts met, and what every earlier round answered."""
    nodes: dict[str, dict[str, Any]] = {}
    rows = run.executions.exclude(node_id__startswith=PLANNING_NODE_ID).order_by("node_id", "attempt")
    for row in rows.only("node_id", "status", "attempt", "output_payload", "judgment_result", "error"):
        entry = nodes.setdefault(row.node_id, {"node_id": row.node_id, "gaps": []})
        issues = (row.judgment_result or {}).get("issues") or []
        if row.status == WorkNodeExecution.Status.FAILED:
            entry["gaps"].extend(str(issue) for issue in issues or [row.error] if str(issue).strip())
        entry.update(status=row.status, attempts=row.attempt,
                     output=str((row.output_payload or {}).get("text", ""))[:OUTPUT_SUMMARY_CHARS])
    rounds = [
        payload["gap"]
        for payload in run.executions.filter(node_id__startswith=PLANNING_NODE_ID,
                                             status=WorkNodeExecution.Status.SUCCEEDED)
        .order_by("created_at").values_list("output_payload", flat=True)
        if isinstance(payload, dict) and isinstance(payload.get("gap"), dict)
    ]
    return {"loop_round": round_number, "nodes": list(nodes.values()), "earlier_rounds": rounds}


def gap_planning_prompt(*, brief: TaskBrief, acceptances: Sequence[dict[str, str]], snapshot: dict[str, Any],
                        existing_node_ids: Sequence[str]) -> str:
    """The prompt of one gap-driven planning round (``[planning]``, as the task-loop skill expects)."""
    goal = {"objective": brief.goal_text, "acceptances": list(acceptances)}
    context = {"title": brief.title, "deliverables": list(brief.deliverables),
               "constraints": list(brief.constraints), "resources": list(brief.resources)}
    taken = ", ".join(f"`{node_id}`" for node_id in existing_node_ids) or "none yet"
    return "\n\n".join([
        "[planning]",
        "You are the `planner` agent, planning this task in rounds. Do not carry out the work yourself: "
        "compare the goal and its acceptance criteria with what the run has done so far, and answer with the "
        "next batch of tasks that closes the gap, or say that no gap is left.",
        "## Goal\n\n" + json.dumps(goal, ensure_ascii=False, indent=2),
        "## Context\n\n" + json.dumps(context, ensure_ascii=False, indent=2),
        f"## Snapshot of the run (round {snapshot['loop_round']})\n\n"
        + json.dumps(snapshot, ensure_ascii=False, indent=2),
        "## How to answer\n\n"
        'Answer with one JSON object: {"tasks": [TaskSpec, ...], "has_gap": true|false, "gap_detail": "..."}.\n'
        f"A TaskSpec is {TASK_SPEC_SHAPE}.\n"
        f"- `metadata.task_id` becomes the node's id: unique, and not one the run has ({taken}).\n"
        "- `metadata.instruction` is a full, self-contained instruction; `depends_on` (optional) names nodes "
        "whose output the task needs.\n"
        '- Optional in `metadata`: `"executor": "external"` (someone outside reports the result back, within '
        '`deadline_seconds`), `judgment` ({"kind": "mechanical", "check_ref": ...}) and `on_fail` '
        '({"action": "retry_self", "max_attempts": n}).\n'
        "- Plan only what is not done yet; the tasks of one answer run side by side.\n"
        '- When nothing is missing any more: {"tasks": [], "has_gap": false, "gap_detail": "done"}.\n'
        "- has_gap true needs at least one task; has_gap false comes with no tasks.",
    ])


def gap_answer_parse(text: str, *, existing_graph: Mapping[str, Sequence[str]], max_tasks: int) -> tuple[
        dict[str, Any] | None, GapAnswer | None, list[str]]:
    """Find and check the gap answer in an agent's free text: (the JSON found, the answer, the problems).
    ``existing_graph`` is the run's nodes with their dependencies, as ``validate_graph_manifest`` takes
    them. The answer is None whenever a problem is listed."""
    found = extract_json_payload(text, required_keys=("tasks", "has_gap"))
    if found is None:
        return None, None, ['no {"tasks": [...], "has_gap": ..., "gap_detail": ...} JSON object was found']
    errors: list[str] = []
    tasks, has_gap, detail = found.get("tasks"), found.get("has_gap"), found.get("gap_detail", "")
    if not isinstance(has_gap, bool):
        errors.append(f"has_gap must be true or false, not {has_gap!r}")
    if not isinstance(detail, str):
        errors.append(f"gap_detail must be a string, not {detail!r}")
    if not isinstance(tasks, list):
        return found, None, [*errors, f"tasks must be a list of TaskSpec objects, not {tasks!r}"]
    if len(tasks) > max_tasks:
        errors.append(f"{len(tasks)} tasks, over the limit of {max_tasks}")
    nodes = []
    for index, spec in enumerate(tasks):
        node, problems = _task_node(spec, label=f"tasks[{index}]")
        errors.extend(problems)
        if node is not None:
            nodes.append(node)
    if has_gap is True and not tasks:
        errors.append("has_gap is true but no task is planned to close it; plan the tasks, or say why in"
                      " gap_detail with has_gap false only once nothing is missing")
    if has_gap is False and tasks:
        errors.append("has_gap is false but tasks are listed; a closed gap needs no more tasks")
    manifest = {"nodes": nodes, "edges": []}
    if nodes and not errors:
        try:
            normalized = manifest_lib.normalize_graph_manifest(manifest, existing_graph)
            manifest_lib.validate_graph_manifest(normalized, existing_graph, max_nodes=max_tasks)
            manifest = normalized
        except manifest_lib.ManifestError as error:
            errors.extend(error.errors)
    if errors:
        return found, None, errors
    return found, GapAnswer(manifest=manifest, has_gap=has_gap, gap_detail=detail.strip()), []


def _task_node(spec: Any, *, label: str) -> tuple[dict[str, Any] | None, list[str]]:
    """The generic node a TaskSpec becomes, or the problems that keep it from being one."""
    if not isinstance(spec, dict):
        return None, [f"{label} must be a TaskSpec object: {TASK_SPEC_SHAPE}"]
    metadata, goal, context = (spec.get(key) if isinstance(spec.get(key), dict) else {}
                               for key in ("metadata", "goal", "context"))
    task_id, instruction = metadata.get("task_id"), metadata.get("instruction")
    errors = []
    if not (isinstance(task_id, str) and task_id.strip()):
        errors.append(f"{label}: metadata.task_id must be a non-empty string (it becomes the node's id)")
    if not (isinstance(instruction, str) and instruction.strip()):
        errors.append(f"{label}: metadata.instruction must be a non-empty string")
    depends_on = metadata.get("depends_on", [])
    if not (isinstance(depends_on, list) and all(isinstance(dep, str) for dep in depends_on)):
        errors.append(f"{label}: metadata.depends_on must be a list of node ids")
    acceptances = goal.get("acceptances") or []
    if not isinstance(acceptances, list):
        errors.append(f"{label}: goal.acceptances must be a list of {{id, description}} objects")
        acceptances = []
    if errors:
        return None, errors
    criteria = [
        {"id": str(item.get("id") or f"ac{number}"),
         "description": str(item.get("description") or item.get("acceptance") or "")}
        for number, item in enumerate((item for item in acceptances if isinstance(item, dict)), start=1)
    ]
    title = str(metadata.get("title") or task_id)
    parts = [f"# {title}", instruction.strip()]
    if goal.get("objective"):
        parts.append(f"Objective: {goal['objective']}")
    if criteria:
        parts.append("Acceptance criteria:\n" + "\n".join(f"- [{item['id']}] {item['description']}"
                                                          for item in criteria))
    if context.get("background"):
        parts.append(f"Background: {context['background']}")
    node = {"node_id": task_id.strip(), "depends_on": list(depends_on), "task_prompt": "\n\n".join(parts),
            "title": title, "goal": {"objective": str(goal.get("objective") or ""), "acceptances": criteria},
            **{key: metadata[key] for key in NODE_FIELDS_FROM_METADATA if key in metadata}}
    return node, []
