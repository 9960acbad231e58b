"""Prompt text for planning and node execution: pure functions over plain data.

Nothing here goes through ``str.format``: goals, node outputs and the catalog JSON are full of braces,
so every prompt is assembled by joining already-rendered parts. What planning prompts say of each
judgment kind and on_fail action is the kind's or action's own line (graphs.domain.judgments,
graphs.domain.on_fail_actions); the prompt an llm judge is asked is the llm kind's (graphs.domain.judgments.llm).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from graphs.domain.case_manifests import acceptance_criteria_with_ids
from graphs.domain.catalogs import (
    ORG_NODE_ROLES,
    PLANNER_ARTIFACT_CATALOG,
    ROOT_CAUSE_CATEGORIES,
    artifact_entry,
    node_catalog,
)
from graphs.domain.check_prompts import CheckBrief, check_block
from graphs.domain.judgments import JUDGMENT_KINDS
from graphs.domain.judgments.llm import CONTENT_PLACEHOLDER
from graphs.domain.on_fail_actions import ON_FAIL_ACTIONS
from graphs.domain.review_prompts import ReviewBrief, review_block

# A repair request quotes the rejected answer; its head and tail are what explain the failure, and an
# unbounded quote could push the prompt past the command-line limit of the claude runner.
_REPAIR_QUOTE_LIMIT = 12_000


@dataclass(frozen=True)
class TaskBrief:
    """The parts of a task an agent is told about."""

    title: str
    goal_text: str
    deliverables: tuple[str, ...] = ()
    acceptance_criteria: tuple[str, ...] = ()
    constraints: tuple[str, ...] = ()
    resources: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        # Callers hand over JSON lists straight from the model (resources may hold objects); storing
        # rendered tuples keeps the brief immutable and every item printable as one line.
        for name in ("deliverables", "acceptance_criteria", "constraints", "resources"):
            object.__setattr__(self, name, tuple(_item_text(item) for item in getattr(self, name) or ()))

    @classmethod
    def from_task(cls, task: Any) -> TaskBrief:
        """Build a brief from any object with the Task fields (the model, a factory, a test double)."""
        return cls(
            title=task.title,
            goal_text=task.goal_text,
            deliverables=task.deliverables,
            acceptance_criteria=task.acceptance_criteria,
            constraints=task.constraints,
            resources=task.resources,
        )


def agent_identity(org_node: str) -> str:
    """The system message an agent runner without its own agent definitions sends for ``org_node``."""
    role = ORG_NODE_ROLES.get(org_node, f"You carry out the part of a task assigned to `{org_node}`.")
    return (
        f"You are the `{org_node}` agent of a work-graph console. {role} Follow the user's instructions "
        "exactly; when they ask for JSON, reply with valid JSON."
    )


def planning_prompt(
    *,
    org_node: str,
    brief: TaskBrief,
    existing_node_ids: Sequence[str] = (),
    template_block: str | None = None,
    commands_allowed: bool = False,
) -> str:
    """The prompt asking ``org_node`` to plan a graph_manifest (append mode when nodes already exist).

    Command nodes and command judgments are described only when ``commands_allowed`` (the project's
    ``allow_commands``): elsewhere they would fail without running.
    """
    append = bool(existing_node_ids)
    sections = [_plan_intro(org_node, append=append), "## The task\n\n" + _brief_block(brief)]
    if append:
        sections.append(_existing_nodes_block(existing_node_ids))
    if template_block:
        # A template-guided plan has its own node shape and answer rules: the catalog, node fields and
        # answer sections below would contradict them, so they are left out.
        sections.append(
            "## Team template from your skill\n\n"
            "Use this template as your starting point and adapt it to the task:\n\n" + template_block
        )
        return "\n\n".join(sections)
    sections.append(_catalog_block(org_node, commands_allowed=commands_allowed))
    sections.append(_node_fields_block(org_node, commands_allowed=commands_allowed))
    sections.append(_judgment_block(commands_allowed=commands_allowed))
    sections.append(_on_fail_block(org_node, append=append))
    sections.append(_edges_block())
    sections.append(_answer_block(org_node))
    return "\n\n".join(sections)


@dataclass(frozen=True)
class RepairedAnswer:
    """The last answer of an ask-and-repair-once exchange, with what was wrong with each."""

    answer: str
    errors: list[str]  # the last answer's problems; empty when it was accepted
    repair_prompt: str | None = None  # the repair request, when one was made
    first_errors: list[str] = field(default_factory=list)  # the first answer's problems, when repaired


def answer_with_one_repair(
    *,
    ask: Callable[[str], str],
    prompt: str,
    problems: Callable[[str], list[str]],
    on_repair: Callable[[list[str]], None],
) -> RepairedAnswer:
    """Ask ``prompt``; if ``problems`` finds any in the answer, ask once more with a repair request
    naming them. A planner gets exactly one chance to mend its manifest."""
    answer = ask(prompt)
    errors = problems(answer)
    if not errors:
        return RepairedAnswer(answer=answer, errors=[])
    repair = repair_prompt(original_prompt=prompt, raw_response=answer, errors=errors)
    on_repair(errors)
    repaired = ask(repair)
    return RepairedAnswer(answer=repaired, errors=problems(repaired), repair_prompt=repair, first_errors=errors)


def repair_prompt(*, original_prompt: str, raw_response: str, errors: Sequence[str]) -> str:
    """Ask the agent to answer ``original_prompt`` again, fixing the listed manifest errors."""
    return "\n\n".join(
        [
            "Your previous answer to the request quoted below could not be used as a graph_manifest:\n"
            + _bullets(errors),
            "## The original request\n\n" + original_prompt,
            "## Your previous answer\n\n" + _clip(raw_response, _REPAIR_QUOTE_LIMIT),
            "## What to do\n\nAnswer the original request again and fix every problem listed at the top. "
            'Reply with ONE JSON object {"nodes": [...], "edges": [...]} in a single fenced ```json block.',
        ]
    )


def node_prompt(
    *,
    node: Mapping[str, Any],
    brief: TaskBrief,
    upstream_outputs: Mapping[str, str],
    feedback: Sequence[str] = (),
    review: ReviewBrief | None = None,
    check: CheckBrief | None = None,
) -> str:
    """The prompt that executes one manifest node, catalog-shaped or generic; ``review`` is the change
    review that asked this attempt to amend an earlier one's change (graphs.domain.review_prompts), ``check``
    the forge's check that failed on the pull request it is to fix (graphs.domain.check_prompts).

    Raises ValueError for a node with neither ``artifact_type`` nor ``task_prompt``.
    """
    if node.get("artifact_type"):
        sections = [_artifact_assignment(node), "## The task\n\n" + _brief_block(brief)]
    elif node.get("task_prompt"):
        sections = [
            "## Your assignment\n\n" + str(node["task_prompt"]),
            "## The task this assignment belongs to\n\n" + _brief_block(brief),
        ]
    else:
        raise ValueError(f"node {node.get('node_id')!r} has neither an artifact_type nor a task_prompt")
    if upstream_outputs:
        sections.append(_upstream_block(upstream_outputs))
    if feedback:
        sections.append(
            "## Review issues to fix\n\nAn earlier attempt was sent back by review. Address each issue:\n"
            + _bullets(feedback)
        )
    if review is not None:
        sections.append(review_block(review))
    if check is not None:
        sections.append(check_block(check))
    sections.append("## How to answer\n\n" + _node_answer_rule(node))
    return "\n\n".join(sections)


def _item_text(item: Any) -> str:
    return item if isinstance(item, str) else json.dumps(item, ensure_ascii=False, sort_keys=True)


def _bullets(items: Iterable[str]) -> str:
    return "\n".join(f"- {item}" for item in items)


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n[… {len(text) - limit} characters left out …]\n{text[-half:]}"


def _json_block(value: Any) -> str:
    return "```json\n" + json.dumps(value, indent=2, ensure_ascii=False) + "\n```"


def _brief_block(brief: TaskBrief) -> str:
    parts = [f"Title: {brief.title}", "Goal:\n" + brief.goal_text]
    for heading, items in (
        ("Deliverables", brief.deliverables),
        # With their ids, so a test case manifest can name the criteria its cases cover.
        ("Acceptance criteria", [f"{item.ac_id}: {item.text}"
                                 for item in acceptance_criteria_with_ids(brief.acceptance_criteria)]),
        ("Constraints", brief.constraints),
        ("Resources", brief.resources),
    ):
        if items:
            parts.append(f"{heading}:\n" + _bullets(items))
    return "\n\n".join(parts)


def _plan_intro(org_node: str, *, append: bool) -> str:
    scope = "additional nodes for the run below" if append else "a work graph for the task below"
    if org_node == "planner":
        work = "Each node writes one planning artifact"
    else:
        work = f"The nodes are the `{org_node}` stage of the work; each one carries its own prompt"
    return (
        f"You are the `{org_node}` agent. Plan {scope}; do not carry out the work yourself. "
        f"{work}. Other agents execute the nodes in dependency order, each output is judged, and a "
        "node whose output fails can send the run back to the node that produced its input. Your answer "
        "is a graph_manifest: a JSON object with a list of nodes and a list of edges."
    )


def _existing_nodes_block(existing_node_ids: Sequence[str]) -> str:
    return (
        "## Nodes already in this run\n\n"
        "Earlier stages planned these nodes:\n"
        + _bullets(f"`{node_id}`" for node_id in existing_node_ids)
        + "\n\nYour nodes may list them in depends_on to use their output, and a loop_back on_failure "
        "edge may target them. Do not declare any of them again: every node_id you write must be new."
    )


def _catalog_block(org_node: str, *, commands_allowed: bool) -> str:
    if org_node == "planner":
        return (
            "## Artifact catalog\n\n"
            "Use the artifact types this task needs, in the order that makes sense; leave out the ones "
            "it does not need. The suggested judgment and on_fail of an entry are starting points you "
            "may keep or change.\n\n" + _json_block(PLANNER_ARTIFACT_CATALOG)
        )
    catalog = node_catalog(org_node, commands_allowed=commands_allowed)
    if not catalog:
        return (
            "## Node types\n\nThere is no catalog for this stage: choose the nodes the task needs and "
            "give each a short node_type label describing its kind."
        )
    return (
        "## Suggested node types\n\n"
        "Use any subset of these, and invent your own nodes where none fits. The suggested judgment, "
        "on_fail and promotes_to_artifact of an entry are starting points you may keep or change.\n\n"
        + _json_block(catalog)
    )


def _node_fields_block(org_node: str, *, commands_allowed: bool) -> str:
    if org_node == "planner":
        fields = [
            "node_id: a short readable id, unique in the graph (for example `prd`).",
            "artifact_type: one of the catalog's artifact types.",
            "depends_on: the node_ids whose output this node genuinely needs (an empty list for none).",
            "judgment and on_fail: optional, described below.",
            'promotes_to_artifact: optional, {"artifact_type": "<type>"} keeps the output as one of the '
            "task's artifacts.",
        ]
    else:
        fields = [
            "node_id: a short readable id, unique in the graph.",
            "task_prompt: the full, self-contained prompt for the agent that executes the node. That agent "
            "sees only this prompt, the task and the outputs of the node's dependencies, never this "
            "planning conversation, so say everything it needs.",
            "depends_on: the node_ids whose output this node genuinely needs (an empty list for none).",
            "node_type: when a node matches a suggested node type, repeat that node_type exactly so the "
            "node can be recognised later; leave it out only for a node that matches none.",
            "judgment and on_fail: optional, described below.",
            'promotes_to_artifact: optional, {"artifact_type": "<type>"}, only for a node whose output is a '
            "final deliverable of the task (such as a test report); most nodes leave it out.",
        ]
        if commands_allowed:
            fields.append(
                'command: instead of task_prompt, a command node\'s program and arguments (["python3", '
                '"check.py"], no shell). No agent runs it: the engine runs the command in the working folder, '
                "the exit code decides (expect_exit, default 0), timeout_seconds bounds it (the console's "
                "default otherwise), and the end of what it printed is its output. It takes no skill_ref, "
                "allowed_tools or max_turns."
            )
    return "## Node fields\n\n" + _bullets(fields)


def _judgment_block(*, commands_allowed: bool) -> str:
    rules = [kind.prompt_rule() for kind in JUDGMENT_KINDS.values() if commands_allowed or not kind.runs_command]
    return "## judgment: how a node's output is checked\n\n" + _bullets(rules)


def _on_fail_block(org_node: str, *, append: bool) -> str:
    rules = [rule for action in ON_FAIL_ACTIONS.values() if (rule := action.prompt_rule(org_node, append))]
    return (
        "## on_fail: what happens when the judgment fails\n\n"
        "Only meaningful with a judgment other than none; max_attempts bounds the repetitions.\n\n"
        + _bullets(rules)
    )


def _edges_block() -> str:
    rules = [
        "zero_token: the source's output is handed over as it is, with no reasoning about it. A node whose "
        "incoming data edges are all zero_token gets no agent at all: its output is its inputs joined.",
        "needs_judgment: the target's agent has to reason about the source's content.",
        "on_failure: control flow only, from a loop_back node to where it loops back; never a data "
        "dependency.",
    ]
    return (
        '## Edges\n\nEach edge is {"from": "<node_id>", "to": "<node_id>", "edge_type": "<type>"}. A data '
        "edge states the same dependency as an entry in the target's depends_on; give it either way or "
        "both. The edge types:\n\n" + _bullets(rules) + "\n\nData dependencies must not form a cycle. Nodes "
        "without a dependency between them run concurrently, so add a dependency only where a node "
        "really reads another's output. A task small enough for one agent call gets a one-node graph."
    )


def _answer_block(org_node: str) -> str:
    if org_node == "planner":
        first: dict[str, Any] = {"node_id": "prd", "artifact_type": "prd", "depends_on": []}
        second: dict[str, Any] = {"node_id": "benchmark", "artifact_type": "benchmark", "depends_on": ["prd"]}
    else:
        first = {"node_id": "<id>", "node_type": "<type>", "task_prompt": "<full prompt>", "depends_on": []}
        second = {"node_id": "<id2>", "task_prompt": "<full prompt>", "depends_on": ["<id>"]}
    second["judgment"] = {"kind": "llm", "judge_prompt": f"<review instructions> {CONTENT_PLACEHOLDER}"}
    second["on_fail"] = {"action": "loop_back", "max_attempts": 2}
    first_id, second_id = first["node_id"], second["node_id"]
    example = {
        "nodes": [first, second],
        "edges": [
            {"from": first_id, "to": second_id, "edge_type": "needs_judgment"},
            {"from": second_id, "to": first_id, "edge_type": "on_failure"},
        ],
    }
    return (
        "## Your answer\n\n"
        "A few sentences of reasoning are welcome. End with ONE JSON object, the graph_manifest, in a "
        "single fenced ```json block: no wrapper key around it and no second JSON block. Its shape "
        "(the ids and texts are placeholders):\n\n" + _json_block(example)
    )


def _artifact_assignment(node: Mapping[str, Any]) -> str:
    artifact_type = str(node["artifact_type"])
    entry = artifact_entry(artifact_type)
    if entry is None:
        return f"## Your assignment\n\nWrite the `{artifact_type}` artifact for the task below."
    return (
        f"## Your assignment\n\nWrite the {entry['title']} for the task below.\n\n"
        f"What it is: {entry['description']}"
    )


def _upstream_block(upstream_outputs: Mapping[str, str]) -> str:
    parts = ["## Outputs of the nodes this one depends on"]
    for node_id, output in upstream_outputs.items():
        parts.append(f"### `{node_id}`\n\n{output or '(empty output)'}")
    return "\n\n".join(parts)


def _node_answer_rule(node: Mapping[str, Any]) -> str:
    kind = node.get("node_type") or node.get("artifact_type")
    if kind == "final_verdict":
        categories = ", ".join(ROOT_CAUSE_CATEGORIES)
        return (
            "Start with one line `VERDICT: pass`, `VERDICT: fail` or `VERDICT: inconclusive`. Unless it "
            f"is pass, the next line is `ROOT_CAUSE: <category>` with one of {categories}. Then give your "
            "reasoning."
        )
    if kind == "test_script":
        return (
            "Reply with the Python source of the script only, without Markdown fences or commentary: "
            "the reply is compiled and run as it is."
        )
    return "Reply with the content itself (the document, code or report), not a description of producing it."
