"""Team templates: the one fenced block a skill body may embed to guide planning.

A skill body may embed one fenced block tagged ``team-template`` (or the seed runtime's
``beaver-team-template``) holding ``{"version": 1, "nodes": [...]}``. Parsing never fails the skill:
a body without the block has no template; a broken block leaves no template and a warning the admin sees.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings

from graphs.domain.markdown import fenced_blocks_find
from graphs.runs.evidence import EVIDENCE_KINDS

# The seed runtime's own tag is read too, so its skills import unchanged.
TEMPLATE_TAGS = ("team-template", "beaver-team-template")
TEMPLATE_VERSION = 1
# A template is a few levels deep; far deeper JSON only makes storing, showing and planning recurse.
TEMPLATE_MAX_JSON_DEPTH = 32
_TOO_DEEP = f"the team template nests deeper than {TEMPLATE_MAX_JSON_DEPTH} levels"
# The fields a template node (and a template-guided plan's node) may have, as the skill editor explains them.
TEMPLATE_NODE_FIELD_HELP = {
    "node_id": "a short readable id, unique in the template (required)",
    "task": "the worker's whole instructions: it sees only this text, the task and its dependencies' "
            "outputs (required)",
    "depends_on": "the node_ids whose output this node needs",
    "input_contract": "what the node reads",
    "output_contract": "what the node must produce",
    "requested_tools": "tools the worker may use, by their names in the tool registry below; planning "
                       "removes unknown and high-risk ones",
    "required_evidence": f"what the output must show before the node counts as done: {', '.join(EVIDENCE_KINDS)}",
    "validation_rules": "rules the output must respect",
    "constraints": "limits the worker must keep to",
    "required_for_completion": "false for a node the task can do without (default true)",
    "max_tool_iterations": "an upper bound on the worker's tool calls",
}
TEMPLATE_NODE_FIELDS = frozenset(TEMPLATE_NODE_FIELD_HELP)
# What the skill editor shows as a starting point; it parses without a warning (tests hold it to that).
TEMPLATE_EXAMPLE = """```team-template
{
  "version": 1,
  "nodes": [
    {"node_id": "collect", "task": "Collect the official figures the question needs, with their sources.",
     "requested_tools": ["web_search", "web_fetch"], "required_evidence": ["url"],
     "output_contract": "a table of figures, each with its source URL"},
    {"node_id": "report", "task": "Write the answer from the collected figures only.",
     "depends_on": ["collect"], "validation_rules": ["every figure cites its source"]}
  ]
}
```"""
# The risk levels of the tools a template-guided plan keeps; any other tool is removed.
PLANNABLE_TOOL_RISKS = frozenset({"low", "medium"})
# Template nodes are generic workers: a fixed role or agent identity is exactly what they replace.
ROLE_FIELDS = frozenset({"role", "agent", "agent_type", "subagent_type"})
# The template fields that hold lists of strings besides depends_on.
_LIST_FIELDS = ("requested_tools", "required_evidence", "validation_rules", "constraints")


@dataclass(frozen=True)
class TemplateParse:
    """The team template found in a skill body (None when there is none usable) and what was wrong."""

    template: dict[str, Any] | None
    warnings: list[str] = field(default_factory=list)


def team_template_parse(body: str) -> TemplateParse:
    """Find and check the body's ``team-template`` block; never raises.

    No block gives no template and no warning. Several blocks, invalid JSON or a wrong shape give no
    template and a warning saying which. A usable template may still carry warnings about fields
    planning will ignore or evidence it cannot check.
    """
    blocks = fenced_blocks_find(body, tags=TEMPLATE_TAGS)
    if not blocks:
        return TemplateParse(template=None)
    if len(blocks) > 1:
        return TemplateParse(
            template=None,
            warnings=[f"the skill has {len(blocks)} team-template blocks; a skill may hold one, so none is used"],
        )
    try:
        value = json.loads(blocks[0])
    except json.JSONDecodeError as error:
        return TemplateParse(
            template=None,
            warnings=[f"the team template is not valid JSON: {error.msg} (line {error.lineno}, column {error.colno})"],
        )
    except RecursionError:  # nested deeper than the JSON parser itself goes
        return TemplateParse(template=None, warnings=[_TOO_DEEP])
    if _json_depth(value) > TEMPLATE_MAX_JSON_DEPTH:
        return TemplateParse(template=None, warnings=[_TOO_DEEP])
    # Every problem at once, each naming its node: an admin fixes them in one pass, not one per save.
    errors = _template_shape_errors(value)
    notes = _template_notes(value)
    if errors:
        return TemplateParse(template=None, warnings=errors + notes)
    return TemplateParse(template=value, warnings=notes)


def _json_depth(value: Any) -> int:
    """How deeply lists and objects nest in ``value`` (a scalar is 0), without recursing."""
    deepest, pending = 0, [(value, 1)]
    while pending:
        item, depth = pending.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is not None:
            deepest = max(deepest, depth)
            if depth <= TEMPLATE_MAX_JSON_DEPTH:
                pending.extend((child, depth + 1) for child in children)
    return deepest


def _template_shape_errors(value: Any) -> list[str]:
    """What makes the template unusable: its version, its nodes' fields and types, and their dependencies."""
    if not isinstance(value, dict):
        return [f"the team template must be a JSON object, not {_json_type(value)}"]
    errors = []
    version = value.get("version")
    if version != TEMPLATE_VERSION or isinstance(version, bool):
        errors.append(f"the team template needs \"version\": {TEMPLATE_VERSION} (found {json.dumps(version)})")
    nodes = value.get("nodes")
    if not isinstance(nodes, list) or not nodes:
        errors.append("the team template needs a non-empty \"nodes\" list")
        return errors
    ids: list[str] = []
    for index, node in enumerate(nodes):
        if not isinstance(node, dict):
            errors.append(f"template node {index + 1} must be a JSON object, not {_json_type(node)}")
            continue
        node_id = node.get("node_id")
        if _node_id_of(node) is not None:
            if node_id in ids:
                errors.append(f"{_label(node, index)} is declared more than once")
            ids.append(node_id)
        else:
            errors.append(f"{_label(node, index)} needs a node_id string")
        errors.extend(_node_field_errors(node, _label(node, index)))
    known = set(ids)
    for index, node in enumerate(nodes):
        if isinstance(node, dict) and isinstance(node.get("depends_on"), list):
            errors.extend(f"{_label(node, index)} depends on unknown node {dep!r}"
                          for dep in node["depends_on"] if isinstance(dep, str) and dep not in known)
    errors.extend(_cycle_errors(nodes))
    return errors


def _node_field_errors(node: dict[str, Any], label: str) -> list[str]:
    task = node.get("task")
    errors = [] if isinstance(task, str) and task.strip() else [f"{label} needs a task string"]
    errors.extend(f"{label} has {name!r}; template nodes are generic workers, without roles or agents"
                  for name in sorted(ROLE_FIELDS & node.keys()))
    if not _strings(node.get("depends_on", [])):
        errors.append(f"{label}: depends_on must be a list of node_id strings")
    errors.extend(f"{label}: {name} must be a list of strings"
                  for name in _LIST_FIELDS if name in node and not _strings(node[name]))
    if "required_for_completion" in node and not isinstance(node["required_for_completion"], bool):
        errors.append(f"{label}: required_for_completion must be true or false")
    iterations = node.get("max_tool_iterations")
    if iterations is not None and (isinstance(iterations, bool) or not isinstance(iterations, int) or iterations < 0):
        errors.append(f"{label}: max_tool_iterations must be a non-negative integer")
    return errors


def _cycle_errors(nodes: list[Any]) -> list[str]:
    """One error per circle of dependencies, naming the nodes on it in order."""
    graph = {
        node["node_id"]: [dep for dep in node.get("depends_on", []) if isinstance(dep, str)]
        for node in nodes
        if isinstance(node, dict) and _node_id_of(node) is not None and _strings(node.get("depends_on", []))
    }
    errors, done, seen_cycles = [], set(), set()
    for start in graph:
        if start in done:
            continue
        path, on_path, pending = [start], {start}, [(start, iter(graph[start]))]
        while pending:
            current, deps = pending[-1]
            dep = next(deps, None)
            if dep is None:
                pending.pop()
                path.pop()
                on_path.discard(current)
                done.add(current)
            elif dep in on_path:
                circle = path[path.index(dep):]
                if frozenset(circle) not in seen_cycles:
                    seen_cycles.add(frozenset(circle))
                    names = " → ".join(repr(name) for name in [*circle, dep])
                    errors.append(f"template node {dep!r} depends on itself" if len(circle) == 1
                                  else f"template nodes {names} depend on each other in a circle")
            elif dep in graph and dep not in done:
                path.append(dep)
                on_path.add(dep)
                pending.append((dep, iter(graph[dep])))
    return errors


def _template_notes(value: Any) -> list[str]:
    """What planning will ignore or remove from a node; read from whatever nodes are well enough formed."""
    nodes = value.get("nodes") if isinstance(value, dict) else None
    if not isinstance(nodes, list):
        return []
    notes = []
    registry = settings.WORKGRAPH_TOOL_REGISTRY
    for index, node in enumerate(nodes):
        if not isinstance(node, dict):
            continue
        label = _label(node, index)
        notes.extend(f"{label}: field {name!r} is not a template field; planning ignores it"
                     for name in sorted(node.keys() - TEMPLATE_NODE_FIELDS - ROLE_FIELDS))
        tools = node.get("requested_tools") or []
        for tool in tools if isinstance(tools, list) else [tools]:
            if not isinstance(tool, str):
                continue  # a shape error already names it
            if tool not in registry:
                notes.append(f"{label}: tool {tool!r} is not in the tool registry; planning removes it")
            elif registry[tool] not in PLANNABLE_TOOL_RISKS:
                notes.append(f"{label}: tool {tool!r} is {registry[tool]} risk; planning removes it")
        required = node.get("required_evidence") or []
        notes.extend(f"{label}: evidence {kind!r} cannot be checked (use {', '.join(EVIDENCE_KINDS)})"
                     for kind in (required if isinstance(required, list) else [required])
                     if isinstance(kind, str) and kind not in EVIDENCE_KINDS)
    return notes


def _node_id_of(node: dict[str, Any]) -> str | None:
    node_id = node.get("node_id")
    return node_id if isinstance(node_id, str) and node_id.strip() else None


def _label(node: dict[str, Any], index: int) -> str:
    """Where a problem is: the node by its id, or by its place in the list when it has none."""
    node_id = _node_id_of(node)
    return f"template node {node_id!r}" if node_id is not None else f"template node {index + 1}"


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _json_type(value: Any) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null"}
    return names.get(type(value), "a number")
