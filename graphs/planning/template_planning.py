"""Template-guided planning: a skill's team template steers the planner, and its answer is adapted.

When planning activates a skill with a team template, the template goes into the planner's prompt
and the planner answers with template-shaped nodes (``node_id``, ``task``, ``depends_on``, contracts,
tools, evidence…). That answer is adapted into the run's manifest:

- every node becomes a generic worker node (``task_prompt``, ``node_type: generic_worker``); a node
  with a role or an agent identity is rejected, fields outside the template's are dropped;
- requested tools are checked against the tool registry (``WORKGRAPH_TOOL_REGISTRY``): unknown and
  high-risk tools are removed, with a warning each; the others become the node's ``allowed_tools``;
- the graph is validated like any manifest, with its depth bounded by ``WORKGRAPH_TEMPLATE_MAX_DEPTH``;
- an unusable answer gets one repair request; if the repaired answer is unusable too, the plan falls
  back to a single worker node doing the whole task, and the reason is kept.

The adaptation report (template used, warnings, removed tools, repair, fallback reason) is stored on
the planning execution so a reviewer sees what happened to the template.
"""

from __future__ import annotations

import json
import types
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings

from graphs.domain import manifest as manifest_lib
from graphs.domain.prompts import answer_with_one_repair
from graphs.models import Skill
from graphs.runs.evidence import EVIDENCE_KINDS
from graphs.skills.revisions import skill_template_for_runs
from graphs.skills.team_templates import PLANNABLE_TOOL_RISKS, ROLE_FIELDS, TEMPLATE_NODE_FIELDS

GENERIC_WORKER = "generic_worker"
FALLBACK_NODE_ID = "complete_task"
HIGH_RISK = "high"
# A fresh plan appends to no run: no existing nodes, no dependencies among them.
_NO_GRAPH: Mapping[str, Sequence[str]] = types.MappingProxyType({})
_LIST_FIELDS = ("depends_on", "requested_tools", "required_evidence", "validation_rules", "constraints")

_EVIDENCE_INSTRUCTIONS = {
    "output": "a non-empty answer",
    "url": "the full http(s) URL of every source you used",
    "tool_result": "what your tools returned, in a fenced block tagged tool_result",
}


@dataclass(frozen=True)
class TemplateGuide:
    """The template planning follows, and the skill (and revision) it came from."""

    skill_pk: int
    skill_id: str
    skill_revision: int | None
    template: dict[str, Any]

    def prompt_block(self) -> str:
        """The template and the answer rules, for ``planning_prompt(template_block=...)``."""
        registry = tool_registry()
        tools = ", ".join(name for name, risk in sorted(registry.items()) if risk in PLANNABLE_TOOL_RISKS) or "(none)"
        rules = [
            "node_id: a short readable id, unique in the graph.",
            "task: the full, self-contained instructions for the worker that executes the node; it sees only "
            "this text, the task and the outputs of its dependencies.",
            "depends_on: the node_ids whose output this node needs (an empty list for none).",
            "input_contract and output_contract: what the node reads and what it must produce.",
            f"requested_tools: tools the worker may use, from: {tools}. Any other tool is removed.",
            f"required_evidence: what the output must show before the node counts as done, any of "
            f"{', '.join(EVIDENCE_KINDS)}.",
            "validation_rules and constraints: lists of rules the output must respect.",
            "required_for_completion: false for a node the task can do without (default true).",
            "max_tool_iterations: an upper bound on the worker's tool calls.",
        ]
        return "\n\n".join(
            [
                "```json\n" + json.dumps(self.template, indent=2, ensure_ascii=False) + "\n```",
                "This plan is made of generic worker nodes. Keep the template's nodes the task needs, drop "
                "the others, and adapt each task text to this task. Every node may have only these fields:\n"
                + "\n".join(f"- {rule}" for rule in rules),
                "Do not give a node a role, an agent or an artifact_type: each node is a generic worker. "
                f"Keep every dependency chain at most {template_max_depth()} nodes long.",
                'Answer with ONE JSON object {"nodes": [...]} in a single fenced ```json block.',
            ]
        )

    def report(self) -> dict[str, Any]:
        """A fresh adaptation report for planning with this guide."""
        return {
            "template_used": True,
            "skill_id": self.skill_id,
            "skill_revision": self.skill_revision,
            "max_depth": template_max_depth(),
            "warnings": [],
            "removed_tools": [],
            "repaired": False,
            "fallback_reason": None,
        }


def template_guide_for(*, skill: Skill | None, pins: Mapping[str, Any] | None = None) -> TemplateGuide | None:
    """The guide for planning with ``skill`` — the template of the revision runs use, its ``production``
    revision else its newest, or the one its run pins (``pins``: a run's ``revision_pins``) — or None when
    that revision has no usable template or the skill is deprecated."""
    if skill is None or skill.status == Skill.Status.DEPRECATED:
        return None
    pinned = ((pins or {}).get("skills") or {}).get(skill.skill_id)
    number, template = skill_template_for_runs(skill, pinned=pinned)
    if template is None:
        return None
    return TemplateGuide(skill_pk=skill.pk, skill_id=skill.skill_id, skill_revision=number, template=template)


def tool_registry() -> dict[str, str]:
    """Tool name → risk level (low, medium, high) from settings."""
    return dict(settings.WORKGRAPH_TOOL_REGISTRY)


def template_max_depth() -> int:
    """The longest dependency chain a template-guided plan may have (never more than any plan may)."""
    return min(settings.WORKGRAPH_TEMPLATE_MAX_DEPTH, settings.WORKGRAPH_MAX_DEPTH)


@dataclass
class TemplateAdaptation:
    """One answer, adapted: the manifest (None when unusable) and what was found on the way."""

    extracted: dict[str, Any] | None = None
    manifest: dict[str, Any] | None = None
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    removed_tools: list[dict[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def template_answer_adapt(
    *, text: str, guide: TemplateGuide, existing_graph: Mapping[str, Sequence[str]] = _NO_GRAPH
) -> TemplateAdaptation:
    """Adapt the planner's answer into a manifest of generic worker nodes; never raises."""
    result = TemplateAdaptation(extracted=manifest_lib.extract_graph_manifest(text))
    if result.extracted is None:
        result.errors = ['no JSON object with a "nodes" list was found in the response']
        return result
    if result.extracted.get("edges"):
        result.warnings.append("edges in the answer are ignored: dependencies come from depends_on")
    registry = tool_registry()
    nodes, stand_ins = [], []
    for index, raw in enumerate(result.extracted["nodes"]):
        node = _worker_node(raw, index=index, guide=guide, registry=registry, result=result)
        if node is not None:
            nodes.append(node)
            stand_ins.append(node)
        elif (stand_in := _stand_in(raw)) is not None:
            stand_ins.append(stand_in)
    if result.errors:
        # The graph's own problems (unknown or circular dependencies, depth) go into the same repair
        # request as the nodes' problems, not into a second one after those are fixed.
        graph_errors = _graph_checked(stand_ins, existing_graph, result=TemplateAdaptation())
        result.errors.extend(error for error in graph_errors if error not in result.errors)
        return result
    errors = _graph_checked(nodes, existing_graph, result=result)
    if errors:
        result.errors = errors
    return result


def _graph_checked(
    nodes: list[dict[str, Any]], existing_graph: Mapping[str, Sequence[str]], *, result: TemplateAdaptation
) -> list[str]:
    """Normalize and validate ``nodes`` as a manifest, setting ``result.manifest``; the errors, if any."""
    try:
        manifest, result.notes = manifest_lib.normalize_graph_manifest_with_notes(
            {"nodes": nodes, "edges": []}, existing_graph
        )
        manifest_lib.validate_graph_manifest(
            manifest, existing_graph,
            max_nodes=settings.WORKGRAPH_MAX_NODES - len(existing_graph), max_depth=template_max_depth(),
        )
    except manifest_lib.ManifestError as error:
        return list(error.errors)
    result.manifest = manifest
    return []


def _stand_in(raw: Any) -> dict[str, Any] | None:
    """A rejected answer node reduced to its id and dependencies, so the graph can still be checked."""
    node_id = raw.get("node_id") if isinstance(raw, dict) else None
    if not (isinstance(node_id, str) and node_id.strip()):
        return None
    depends_on = raw.get("depends_on", [])
    depends_on = depends_on if isinstance(depends_on, list) and all(isinstance(d, str) for d in depends_on) else []
    return {"node_id": node_id, "node_type": GENERIC_WORKER, "task_prompt": "(rejected node)", "depends_on": depends_on,
            "allowed_tools": [], "required_evidence": [], "required_for_completion": True}


def template_fallback_manifest(
    *, guide: TemplateGuide, existing_graph: Mapping[str, Sequence[str]] = _NO_GRAPH
) -> dict[str, Any]:
    """A one-node plan: a single generic worker carries out the whole task."""
    node_id, taken, n = FALLBACK_NODE_ID, set(existing_graph), 1
    while node_id in taken:
        n += 1
        node_id = f"{FALLBACK_NODE_ID}_{n}"
    prompt = (
        "Carry out the whole task below in one piece of work: deliver every deliverable and meet every "
        "acceptance criterion. Reply with the work itself, not a plan for it."
    )
    node = {
        "node_id": node_id, "node_type": GENERIC_WORKER, "task_prompt": prompt, "depends_on": [],
        "skill_ref": guide.skill_id, "allowed_tools": [], "required_evidence": [], "required_for_completion": True,
    }
    return {"nodes": [node], "edges": []}


@dataclass(frozen=True)
class TemplatePlanOutcome:
    """What template-guided planning settled on, and what the planning node should show about it."""

    manifest: dict[str, Any]
    extracted: dict[str, Any] | None
    notes: list[str]
    repair_prompt: str | None
    report: dict[str, Any]


def template_plan_request(
    *,
    ask: Callable[[str], str],
    prompt: str,
    guide: TemplateGuide,
    existing_graph: Mapping[str, Sequence[str]] = _NO_GRAPH,
    on_repair: Callable[[list[str]], None] = lambda errors: None,
) -> TemplatePlanOutcome:
    """Ask for a plan with ``ask(prompt) -> answer``; repair once, then fall back to a single node.

    Agent errors raised by ``ask`` propagate: only an unusable answer leads to the fallback.
    """
    report = guide.report()
    adaptations: list[TemplateAdaptation] = []

    def problems(text: str) -> list[str]:
        adaptations.append(template_answer_adapt(text=text, guide=guide, existing_graph=existing_graph))
        adapted = adaptations[-1]
        return [] if adapted.manifest is not None else (adapted.errors or ["the answer is not a usable plan"])

    outcome = answer_with_one_repair(ask=ask, prompt=prompt, problems=problems, on_repair=on_repair)
    adapted, repair = adaptations[-1], outcome.repair_prompt
    if repair is not None:
        report["repaired"] = True
        if adapted.manifest is None:
            report["fallback_reason"] = (
                "the planner's answer was still unusable after one repair request: "
                + "; ".join(adapted.errors or outcome.first_errors)
            )
            # The warnings and removed tools of a discarded answer describe no node of the plan.
            fallback = template_fallback_manifest(guide=guide, existing_graph=existing_graph)
            return TemplatePlanOutcome(manifest=fallback, extracted=adapted.extracted, notes=[], repair_prompt=repair,
                                       report=report)
    report["warnings"] = adapted.warnings
    report["removed_tools"] = adapted.removed_tools
    return TemplatePlanOutcome(
        manifest=adapted.manifest, extracted=adapted.extracted, notes=adapted.notes, repair_prompt=repair,
        report=report,
    )


def _worker_node(
    raw: Any, *, index: int, guide: TemplateGuide, registry: dict[str, str], result: TemplateAdaptation
) -> dict[str, Any] | None:
    """One answer node as a generic worker node; problems go to ``result`` (None when it is unusable)."""
    if not isinstance(raw, dict):
        result.errors.append(f"nodes[{index}]: must be a JSON object")
        return None
    node_id = raw.get("node_id")
    label = f"node {node_id!r}" if isinstance(node_id, str) and node_id.strip() else f"nodes[{index}]"
    errors = [
        f"{label}: field {name!r} is not allowed; plan nodes are generic workers without roles or agents"
        for name in sorted(ROLE_FIELDS & raw.keys())
    ]
    if not (isinstance(node_id, str) and node_id.strip()):
        errors.append(f"{label}: needs a node_id string")
    if not (isinstance(raw.get("task"), str) and raw["task"].strip()):
        errors.append(f"{label}: needs a task string (the worker's instructions)")
    errors.extend(
        f"{label}: {name} must be a list of strings"
        for name in _LIST_FIELDS
        if name in raw and not (isinstance(raw[name], list) and all(isinstance(item, str) for item in raw[name]))
    )
    if "required_for_completion" in raw and not isinstance(raw["required_for_completion"], bool):
        errors.append(f"{label}: required_for_completion must be true or false")
    iterations = raw.get("max_tool_iterations")
    if iterations is not None and (isinstance(iterations, bool) or not isinstance(iterations, int) or iterations < 0):
        errors.append(f"{label}: max_tool_iterations must be a non-negative integer")
    result.errors.extend(errors)
    if errors:
        return None
    result.warnings.extend(
        f"{label}: field {name!r} is not a template field; ignored"
        for name in sorted(raw.keys() - TEMPLATE_NODE_FIELDS - ROLE_FIELDS)
    )
    result.warnings.extend(
        f"{label}: evidence {kind!r} cannot be checked; the node will end partial"
        for kind in raw.get("required_evidence", []) if kind not in EVIDENCE_KINDS
    )
    tools = _tools_allowed(raw.get("requested_tools", []), node_id=node_id, registry=registry, result=result)
    node: dict[str, Any] = {
        "node_id": node_id,
        "node_type": GENERIC_WORKER,
        "task_prompt": _task_prompt(raw, tools=tools),
        "depends_on": list(raw.get("depends_on", [])),
        "skill_ref": guide.skill_id,
        "allowed_tools": tools,
        "required_evidence": list(raw.get("required_evidence", [])),
        "required_for_completion": raw.get("required_for_completion", True),
    }
    for name in ("input_contract", "output_contract", "validation_rules", "constraints", "max_tool_iterations"):
        if raw.get(name) is not None:
            node[name] = raw[name]
    return node


def _tools_allowed(
    requested: list[str], *, node_id: str, registry: dict[str, str], result: TemplateAdaptation
) -> list[str]:
    allowed = []
    for tool in dict.fromkeys(requested):
        risk = registry.get(tool)
        if risk in PLANNABLE_TOOL_RISKS:
            allowed.append(tool)
            continue
        # A registry entry with a risk level it does not know is treated as high risk, not as safe.
        reason = "unknown" if risk is None else "high_risk"
        result.removed_tools.append({"node_id": node_id, "tool": tool, "reason": reason})
        wording = "unknown tool" if risk is None else "high-risk tool"
        result.warnings.append(f"node {node_id!r}: {wording} removed: {tool}")
    return allowed


def _task_prompt(raw: dict[str, Any], *, tools: list[str]) -> str:
    """The worker's full instructions: the task, then its contracts, rules, tools and evidence."""
    parts = [raw["task"].strip()]
    for name, heading in (("input_contract", "What you receive"), ("output_contract", "What you must produce")):
        if raw.get(name) not in (None, "", {}, []):
            value = raw[name]
            text = value if isinstance(value, str) else json.dumps(value, indent=2, ensure_ascii=False)
            parts.append(f"{heading}:\n{text}")
    for name, heading in (("constraints", "Constraints"), ("validation_rules", "Your output must satisfy")):
        if raw.get(name):
            parts.append(f"{heading}:\n" + "\n".join(f"- {item}" for item in raw[name]))
    if tools:
        bound = raw.get("max_tool_iterations")
        limit = f" (at most {bound} tool calls)" if isinstance(bound, int) else ""
        parts.append(f"Tools you may use{limit}: {', '.join(tools)}. Use no other tool.")
    else:
        parts.append("Use no tools: work from the task and the outputs you are given.")
    evidence = [kind for kind in raw.get("required_evidence", []) if kind in _EVIDENCE_INSTRUCTIONS]
    if evidence:
        parts.append(
            "The node counts as done only when your reply includes:\n"
            + "\n".join(f"- {_EVIDENCE_INSTRUCTIONS[kind]}" for kind in evidence)
        )
    return "\n\n".join(parts)
