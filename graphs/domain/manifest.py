"""Pure functions over ``graph_manifest`` dicts: find one in an agent's free text, normalize it,
validate it, and merge an append into a run's.

Below it sit the JSON search in free text (graphs.domain.json_extraction) and the graph a manifest describes
(graphs.domain.manifest_graph: dependencies, order, the questions the engine asks, ManifestError). What a
judgment kind or an on_fail action requires of a node is the kind's or action's own: validation reads
their registries (graphs.domain.judgments, graphs.domain.on_fail_actions).

No Django and no I/O. Nothing here recurses, so deep or hostile input never raises RecursionError.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from graphs.domain.catalogs import ARTIFACT_TYPES
from graphs.domain.json_extraction import first_json_object
from graphs.domain.judgments import DEFAULT_JUDGMENT_KIND, JUDGMENT_KINDS, judgment_kind
from graphs.domain.manifest_fields import choices, command_errors, is_id, timeout_errors
from graphs.domain.manifest_graph import (
    ON_FAILURE,
    ManifestError,
    cycle_message,
    longest_chains,
    reachable,
    topological,
)
from graphs.domain.on_fail_actions import ON_FAIL_ACTIONS, on_fail_action
from graphs.domain.storable import json_transform

EDGE_TYPES = ("zero_token", "needs_judgment", "on_failure")
RESERVED_PREFIX = "__"
# The longest value of each field the console stores in a column of its own (a node's id on every
# attempt and loop-back, its org node, a promoted artifact's type, a skill's slug): a longer one
# could not be stored, so it is a validation error like any other.
FIELD_MAX_LENGTHS = {"node_id": 200, "subagent_type": 100, "skill_ref": 100, "node_type": 100}
PROMOTED_ARTIFACT_TYPE_MAX_LENGTH = 100
# A command node runs no agent, so the fields that steer one would be silently ignored on it: they are
# refused instead, as a planning slip the repair request can name.
COMMAND_NODE_AGENT_FIELDS = ("artifact_type", "task_prompt", "skill_ref", "allowed_tools", "max_turns",
                             "max_tool_iterations")
# ``executor: external``: the node waits for a collaboration report instead of calling an agent. Its
# reported output is judged in the report's request, so only the judgment kinds that say they fit
# (``JudgmentKind.external``) may judge it; the fields that steer an agent would be silently ignored,
# so they are refused.
EXECUTORS = ("agent", "external")
EXTERNAL_NODE_AGENT_FIELDS = ("allowed_tools", "max_turns", "max_tool_iterations")

# A node's tool_profile says whether its agent may have side effects (write) or only reads (read).
TOOL_PROFILES = ("read", "write")
# What a node's retry_policy may retry: the agents' transient kinds (graphs.agents.base.TRANSIENT_KINDS,
# which this module, free of Django, does not import; a test keeps the two equal).
RETRYABLE_KINDS = ("timeout", "network", "rate_limit", "unavailable")
# Bounds of a retry_policy, so one node cannot wait or retry without end.
RETRY_POLICY_MAX_RETRIES = 10
RETRY_POLICY_MAX_DELAY_SECONDS = 3600

# An edge without an edge_type still describes a dependency; normalization writes this type, the
# one that makes the agent read its input rather than skip reasoning about it.
DEFAULT_EDGE_TYPE = "needs_judgment"


# --- Extraction ----------------------------------------------------------------------------------


def _manifest_in(candidate: dict[str, Any]) -> dict[str, Any] | None:
    if isinstance(candidate.get("nodes"), list):
        return candidate
    wrapped = candidate.get("graph_manifest")
    if isinstance(wrapped, dict) and isinstance(wrapped.get("nodes"), list):
        return wrapped
    return None


def extract_graph_manifest(text: str) -> dict[str, Any] | None:
    """The first object in ``text`` with a ``nodes`` list, or one wrapped under ``graph_manifest``.

    ``edges`` may be missing (normalization adds an empty list). The object is returned as found.
    """
    return first_json_object(text, _manifest_in)


# --- Normalization -------------------------------------------------------------------------------


def normalize_graph_manifest_with_notes(
    manifest: Mapping[str, Any], existing_node_ids: Iterable[str] = ()
) -> tuple[dict[str, Any], list[str]]:
    """A normalized copy of ``manifest`` and one human-readable note per change made.

    A node keyed ``id`` gets ``node_id``; a missing or null ``depends_on`` becomes ``[]``; missing
    ``edges`` become ``[]``; an edge without ``edge_type`` gets ``needs_judgment``; every edge other
    than ``on_failure`` between known nodes (this manifest's, or ``existing_node_ids`` in append mode)
    is added to its target's ``depends_on``. Malformed parts are left for validation to report.
    """
    if not isinstance(manifest, Mapping):
        raise ManifestError(["manifest must be a JSON object"])
    result: dict[str, Any] = _json_copy(dict(manifest))
    notes: list[str] = []
    nodes = result.get("nodes")
    if not isinstance(nodes, list):
        return result, notes
    for index, node in enumerate(nodes):
        if not isinstance(node, dict):
            continue
        if "node_id" not in node and "id" in node:
            node = nodes[index] = {"node_id": node["id"]} | {k: v for k, v in node.items() if k != "id"}
            notes.append(f"{_node_label(node, index)}: key 'id' renamed to 'node_id'")
        if node.get("depends_on") is None:
            node["depends_on"] = []
            notes.append(f"{_node_label(node, index)}: missing depends_on set to []")
    if result.get("edges") is None:
        result["edges"] = []
        notes.append("manifest: missing edges set to []")
    edges = result["edges"]
    if not isinstance(edges, list):
        return result, notes
    by_id: dict[str, dict[str, Any]] = {}
    for node in nodes:
        if isinstance(node, dict) and is_id(node.get("node_id")):
            by_id.setdefault(node["node_id"], node)
    known = set(by_id) | set(existing_node_ids)
    for index, edge in enumerate(edges):
        if not isinstance(edge, dict):
            continue
        if edge.get("edge_type") is None:
            edge["edge_type"] = DEFAULT_EDGE_TYPE
            notes.append(f"{_edge_label(edge, index)}: missing edge_type set to {DEFAULT_EDGE_TYPE!r}")
        source, target = edge.get("from"), edge.get("to")
        if edge["edge_type"] == ON_FAILURE or not (is_id(source) and is_id(target)):
            continue
        node = by_id.get(target)
        if node is None or source not in known or source == target:
            continue
        depends_on = node["depends_on"]
        if isinstance(depends_on, list) and source not in depends_on:
            depends_on.append(source)
            notes.append(f"node {target!r}: dependency on {source!r} back-filled from edge")
    return result, notes


def normalize_graph_manifest(
    manifest: Mapping[str, Any], existing_node_ids: Iterable[str] = ()
) -> dict[str, Any]:
    """A normalized copy of ``manifest``; see ``normalize_graph_manifest_with_notes``."""
    return normalize_graph_manifest_with_notes(manifest, existing_node_ids)[0]


def _json_copy(value: Any) -> Any:
    """A deep copy of JSON-shaped data; ``copy.deepcopy`` recurses once per nesting level."""
    return json_transform(value, leaf=lambda item: item)


# --- Validation ----------------------------------------------------------------------------------


def validate_graph_manifest(
    manifest: Mapping[str, Any],
    existing_graph: Mapping[str, Sequence[str]] | None = None,
    *,
    max_nodes: int = 500,
    max_depth: int = 50,
) -> None:
    """Raise ManifestError listing every rule ``manifest`` breaks.

    In append mode ``manifest`` holds only the new nodes and ``existing_graph`` the run's nodes, each
    with its data dependencies (``data_dependencies`` of the run's manifest). Those nodes are valid
    dependency targets, and a loop-back target when they are upstream of the new node in the merged
    graph; new ids must not reuse them, and new edges must not add inputs to them. ``max_nodes``
    bounds the nodes in ``manifest``; ``max_depth`` bounds the longest dependency chain, where an
    existing node counts as one level (the caller measures the merged graph with ``graph_depth`` when
    it needs the exact figure). Missing ``depends_on``,
    ``edges`` and ``edge_type`` are read as normalization would fill them in.
    """
    errors = _manifest_errors(manifest, existing_graph or {}, max_nodes=max_nodes, max_depth=max_depth)
    if errors:
        raise ManifestError(errors)


def _manifest_errors(
    manifest: Any, existing_graph: Mapping[str, Sequence[str]], *, max_nodes: int, max_depth: int
) -> list[str]:
    existing = frozenset(existing_graph)
    if not isinstance(manifest, Mapping):
        return ["manifest must be a JSON object"]
    nodes, edges = manifest.get("nodes"), manifest.get("edges")
    errors = []
    if not isinstance(nodes, list):
        errors.append("manifest: nodes must be a list")
    elif not nodes:
        errors.append("manifest: nodes is empty; a plan needs at least one node")
    elif len(nodes) > max_nodes:
        errors.append(f"manifest: {len(nodes)} nodes, over the limit of {max_nodes}")
    if edges is not None and not isinstance(edges, list):
        errors.append("manifest: edges must be a list")
    if errors:
        return errors
    edges = edges or []

    named: list[tuple[str, dict[str, Any]]] = []
    for index, node in enumerate(nodes):
        if not isinstance(node, dict):
            errors.append(f"nodes[{index}]: must be an object")
        elif not is_id(node.get("node_id")):
            errors.append(f"nodes[{index}]: node_id must be a non-empty string")
            errors.extend(_node_shape_errors(node, f"nodes[{index}]"))
        elif len(node["node_id"]) > FIELD_MAX_LENGTHS["node_id"]:
            errors.append(
                f"nodes[{index}]: node_id is {len(node['node_id'])} characters, over the limit of "
                f"{FIELD_MAX_LENGTHS['node_id']}"
            )
            errors.extend(_node_shape_errors(node, f"nodes[{index}]"))
        else:
            named.append((node["node_id"], node))
            errors.extend(_node_shape_errors(node, f"node {node['node_id']!r}"))
    ids = [node_id for node_id, _ in named]
    own = set(ids)
    errors.extend(_id_errors(ids, existing))

    dependencies: dict[str, dict[str, None]] = {node_id: {} for node_id in ids}
    for node_id, node in named:
        depends_on = node.get("depends_on")
        for dep in depends_on if isinstance(depends_on, list) else ():
            if not is_id(dep):
                continue  # already reported as a malformed depends_on
            if dep == node_id:
                errors.append(f"node {node_id!r}: depends on itself")
            elif dep not in own and dep not in existing:
                errors.append(f"node {node_id!r}: depends_on names unknown node {dep!r}")
            else:
                dependencies[node_id][dep] = None

    failure_edges: dict[str, list[str]] = {}
    for index, edge in enumerate(edges):
        if not isinstance(edge, dict):
            errors.append(f"edges[{index}]: must be an object")
            continue
        source, target, edge_type = edge.get("from"), edge.get("to"), edge.get("edge_type")
        label = _edge_label(edge, index)
        if not (is_id(source) and is_id(target)):
            errors.append(f"{label}: from and to must be non-empty node_id strings")
            continue
        if edge_type is not None and edge_type not in EDGE_TYPES:
            errors.append(f"{label}: edge_type {edge_type!r} is not one of {choices(EDGE_TYPES)}")
            continue
        unknown = [end for end in (source, target) if end not in own and end not in existing]
        if unknown:
            errors.append(f"{label}: names unknown node {' and '.join(map(repr, unknown))}")
            continue
        if source == target:
            errors.append(f"{label}: self-loop (a node cannot feed or loop back to itself)")
        elif edge_type == ON_FAILURE:
            if source not in own:
                errors.append(
                    f"{label}: on_failure edge from {source!r}, which is not a node of this manifest"
                )
            else:
                failure_edges.setdefault(source, []).append(target)
        elif target not in own:
            errors.append(
                f"{label}: data edge into existing node {target!r}; appended nodes cannot add "
                "inputs to nodes already in the run"
            )
        else:
            dependencies[target][source] = None

    graph = {node_id: list(deps) for node_id, deps in dependencies.items()}
    order, cycles = topological(ids, graph)
    errors.extend(map(cycle_message, cycles))
    errors.extend(_on_fail_errors(named, failure_edges, {**existing_graph, **graph}))
    if not cycles:
        errors.extend(_depth_errors(order, graph, max_depth))
    return errors


def _node_shape_errors(node: dict[str, Any], label: str) -> list[str]:
    errors = []
    depends_on = node.get("depends_on")
    if depends_on is not None and not (isinstance(depends_on, list) and all(is_id(d) for d in depends_on)):
        errors.append(f"{label}: depends_on must be a list of node_id strings")

    has_artifact, has_prompt = "artifact_type" in node, "task_prompt" in node
    if not is_command_node(node) and ("timeout_seconds" in node or "expect_exit" in node):
        errors.append(f"{label}: timeout_seconds and expect_exit belong to command nodes (nodes with a command)")
    errors.extend(_executor_errors(node, label))
    if is_command_node(node):
        errors.extend(_command_node_errors(node, label))
    elif has_artifact and has_prompt:
        errors.append(f"{label}: has both artifact_type and task_prompt; a node takes exactly one")
    elif not (has_artifact or has_prompt):
        errors.append(
            f"{label}: needs artifact_type (a catalog node), task_prompt (a generic node) or command (a command node)"
        )
    elif has_artifact and node["artifact_type"] not in ARTIFACT_TYPES:
        errors.append(
            f"{label}: artifact_type {node['artifact_type']!r} is not one of {choices(ARTIFACT_TYPES)}"
        )
    elif has_prompt and not (isinstance(node["task_prompt"], str) and node["task_prompt"].strip()):
        errors.append(f"{label}: task_prompt must be a non-empty string")

    judgment = node.get("judgment")
    if judgment is not None:
        if not isinstance(judgment, dict):
            errors.append(f"{label}: judgment must be an object")
        elif (kind := judgment_kind(judgment.get("kind"))) is None:
            errors.append(f"{label}: judgment.kind {judgment.get('kind')!r} is not one of {choices(JUDGMENT_KINDS)}")
        else:
            errors.extend(kind.errors(judgment, label))

    on_fail = node.get("on_fail")
    if on_fail is not None:
        if not isinstance(on_fail, dict):
            errors.append(f"{label}: on_fail must be an object")
        else:
            name, attempts = on_fail.get("action"), on_fail.get("max_attempts")
            action = on_fail_action(name)
            if action is None:
                errors.append(f"{label}: on_fail.action {name!r} is not one of {choices(ON_FAIL_ACTIONS)}")
            if attempts is not None and (
                isinstance(attempts, bool) or not isinstance(attempts, int) or attempts < 1
            ):
                errors.append(f"{label}: on_fail.max_attempts must be a positive integer, not {attempts!r}")
            if action is not None:
                errors.extend(action.node_errors(node, label))

    for paths in ("write_set", "forbidden_paths"):
        globs = node.get(paths)
        if globs is not None and not (
            isinstance(globs, list) and all(isinstance(glob, str) and glob.strip() for glob in globs)
        ):
            errors.append(f"{label}: {paths} must be a list of path globs")

    tool_profile = node.get("tool_profile")
    if tool_profile is not None and tool_profile not in TOOL_PROFILES:
        errors.append(f"{label}: tool_profile {tool_profile!r} is not one of {choices(TOOL_PROFILES)}")
    if "retry_policy" in node:
        errors.extend(_retry_policy_errors(node["retry_policy"], f"{label}: retry_policy"))

    max_turns = node.get("max_turns")
    if max_turns is not None and (isinstance(max_turns, bool) or not isinstance(max_turns, int) or max_turns < 1):
        errors.append(f"{label}: max_turns must be a positive integer, not {max_turns!r}")

    promotes = node.get("promotes_to_artifact")
    if promotes is not None and not (isinstance(promotes, dict) and is_id(promotes.get("artifact_type"))):
        errors.append(f"{label}: promotes_to_artifact must be an object with a non-empty artifact_type")
    elif promotes is not None and len(promotes["artifact_type"]) > PROMOTED_ARTIFACT_TYPE_MAX_LENGTH:
        errors.append(
            f"{label}: promotes_to_artifact.artifact_type is {len(promotes['artifact_type'])} characters, "
            f"over the limit of {PROMOTED_ARTIFACT_TYPE_MAX_LENGTH}"
        )
    for key in ("subagent_type", "skill_ref", "node_type"):
        if node.get(key) is not None and not is_id(node[key]):
            errors.append(f"{label}: {key} must be a non-empty string")
        elif node.get(key) is not None and len(node[key]) > FIELD_MAX_LENGTHS[key]:
            errors.append(
                f"{label}: {key} is {len(node[key])} characters, over the limit of {FIELD_MAX_LENGTHS[key]}"
            )
    return errors


def is_command_node(node: Mapping[str, Any]) -> bool:
    """Whether ``node`` is a command node: it runs its ``command`` instead of calling an agent."""
    return "command" in node


def is_external_node(node: Mapping[str, Any]) -> bool:
    """Whether ``node`` is done outside the engine (``executor: external``): it waits for a report."""
    return node.get("executor") == "external"


def _executor_errors(node: dict[str, Any], label: str) -> list[str]:
    executor = node.get("executor")
    if executor is not None and executor not in EXECUTORS:
        return [f"{label}: executor {executor!r} is not one of {choices(EXECUTORS)}"]
    if not is_external_node(node):
        return [f"{label}: deadline_seconds belongs to external nodes (executor: external)"] if (
            "deadline_seconds" in node) else []
    errors = [f"{label}: an external node runs no agent, so it takes no {field}"
              for field in EXTERNAL_NODE_AGENT_FIELDS if field in node]
    if is_command_node(node):
        errors.append(f"{label}: an external node runs no command; drop command or executor")
    judgment = node.get("judgment")
    name = judgment.get("kind", DEFAULT_JUDGMENT_KIND) if isinstance(judgment, dict) else None
    kind = judgment_kind(name)
    if name is not None and (kind is None or not kind.external):
        external = [known.name for known in JUDGMENT_KINDS.values() if known.external]
        errors.append(f"{label}: an external node's report is judged as it arrives, so its judgment.kind must be"
                      f" one of {choices(external)}, not {name!r}")
    elif kind is not None:
        errors.extend(kind.external_errors(judgment, label))
    errors.extend(timeout_errors(node.get("deadline_seconds"), f"{label}: deadline_seconds"))
    return errors


def node_commands(node: Mapping[str, Any]) -> list[tuple[str, list[str]]]:
    """The commands ``node`` runs, as (``"node"`` or ``"judgment"``, argv): its own, and its judgment's."""
    commands = []
    if is_command_node(node):
        commands.append(("node", list(node["command"])))
    judgment = node.get("judgment")
    kind = judgment_kind(judgment.get("kind")) if isinstance(judgment, Mapping) else None
    if kind is not None and kind.runs_command:
        commands.append(("judgment", list(judgment.get("command") or [])))
    return commands


def manifest_commands(manifest: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every command the manifest's nodes run, in manifest order: ``node_id``, ``runs_as`` (``node`` or
    ``judgment``), ``argv`` and ``timeout_seconds`` (None: the console's default)."""
    listed = []
    for node in manifest.get("nodes") or []:
        if not isinstance(node, Mapping):
            continue
        for runs_as, argv in node_commands(node):
            spec = node if runs_as == "node" else node["judgment"]
            listed.append({"node_id": node.get("node_id"), "runs_as": runs_as, "argv": argv,
                           "timeout_seconds": spec.get("timeout_seconds")})
    return listed


def _command_node_errors(node: dict[str, Any], label: str) -> list[str]:
    errors = [
        f"{label}: a command node runs no agent, so it takes no {field}"
        for field in COMMAND_NODE_AGENT_FIELDS
        if field in node
    ]
    errors.extend(command_errors(node["command"], f"{label}: command"))
    errors.extend(timeout_errors(node.get("timeout_seconds"), f"{label}: timeout_seconds"))
    expect_exit = node.get("expect_exit")
    if expect_exit is not None and (isinstance(expect_exit, bool) or not isinstance(expect_exit, int)):
        errors.append(f"{label}: expect_exit must be an integer exit code, not {expect_exit!r}")
    return errors


def _retry_policy_errors(policy: Any, label: str) -> list[str]:
    """A retry policy: ``max_retries`` (0 to the limit), optional ``delays_seconds`` (the wait before
    each retry, the last one repeating) and optional ``kinds`` (which transient errors it retries)."""
    if not isinstance(policy, dict):
        return [f"{label} must be an object with max_retries, and optionally delays_seconds and kinds"]
    fields = ("max_retries", "delays_seconds", "kinds")
    errors = [f"{label}: unknown field {key!r}" for key in policy if key not in fields]
    retries = policy.get("max_retries")
    if isinstance(retries, bool) or not isinstance(retries, int) or not 0 <= retries <= RETRY_POLICY_MAX_RETRIES:
        errors.append(f"{label}.max_retries must be an integer from 0 to {RETRY_POLICY_MAX_RETRIES}, not {retries!r}")
    delays = policy.get("delays_seconds")
    if delays is not None and not (
        isinstance(delays, list) and delays and len(delays) <= RETRY_POLICY_MAX_RETRIES
        and all(not isinstance(d, bool) and isinstance(d, int | float) and 0 <= d <= RETRY_POLICY_MAX_DELAY_SECONDS
                for d in delays)
    ):
        errors.append(
            f"{label}.delays_seconds must be a list of 1 to {RETRY_POLICY_MAX_RETRIES} numbers of seconds from 0 to "
            f"{RETRY_POLICY_MAX_DELAY_SECONDS}, not {delays!r}"
        )
    kinds = policy.get("kinds")
    if kinds is not None and not (isinstance(kinds, list) and kinds and all(kind in RETRYABLE_KINDS for kind in kinds)):
        errors.append(f"{label}.kinds must be a non-empty list of {choices(RETRYABLE_KINDS)}, not {kinds!r}")
    return errors


def _id_errors(ids: list[str], existing: frozenset[str]) -> list[str]:
    errors = []
    for node_id, count in Counter(ids).items():
        if node_id.startswith(RESERVED_PREFIX):
            errors.append(
                f"node {node_id!r}: node_ids starting with {RESERVED_PREFIX!r} are reserved for "
                "planning nodes"
            )
        if count > 1:
            errors.append(f"node {node_id!r}: node_id is used by {count} nodes")
        if node_id in existing:
            errors.append(f"node {node_id!r}: node_id already exists in the run")
    return errors


def _on_fail_errors(
    named: list[tuple[str, dict[str, Any]]],
    failure_edges: dict[str, list[str]],
    merged_graph: Mapping[str, Sequence[str]],
) -> list[str]:
    """Only an action that takes an on_failure edge (loop_back) may have one, and it says what its edges
    must be, given what each node depends on in the merged graph (the run's and the new nodes).

    An on_failure edge on a node whose action takes none would never be followed, which is almost always
    a planning slip (a forgotten action, or an edge on the wrong node), so it is an error too.
    """
    errors = []
    actions = {
        node_id: on_fail_action(node["on_fail"].get("action")) if isinstance(node.get("on_fail"), dict) else None
        for node_id, node in named
    }
    takers = " or ".join(name for name, action in ON_FAIL_ACTIONS.items() if action.failure_edge_errors)
    for node_id, targets in failure_edges.items():
        action = actions.get(node_id)
        if action is None or action.failure_edge_errors is None:
            errors.extend(
                f"edge {node_id!r} -> {target!r}: on_failure edge from node {node_id!r}, whose "
                f"on_fail.action is not {takers}"
                for target in targets
            )
    for node_id, action in actions.items():
        if action is not None and action.failure_edge_errors is not None:
            errors.extend(action.failure_edge_errors(node_id, failure_edges.get(node_id, []),
                                                     lambda start: reachable(start, merged_graph)))
    return errors


def _depth_errors(order: list[str], graph: dict[str, list[str]], max_depth: int) -> list[str]:
    chains = longest_chains(order, graph)
    too_deep = [(length, start, node_id) for node_id, (length, start) in chains.items() if length > max_depth]
    if not too_deep:
        return []
    length, start, end = max(too_deep, key=lambda chain: chain[0])
    return [
        f"dependency chain {start!r} -> ... -> {end!r} is {length} nodes deep, over the limit of {max_depth}"
    ]


def _node_label(node: dict[str, Any], index: int) -> str:
    node_id = node.get("node_id")
    return f"node {node_id!r}" if is_id(node_id) else f"nodes[{index}]"


def _edge_label(edge: dict[str, Any], index: int) -> str:
    source, target = edge.get("from"), edge.get("to")
    return f"edge {source!r} -> {target!r}" if is_id(source) and is_id(target) else f"edges[{index}]"


# --- Merging ---------------------------------------------------------------------------------------


def merge_manifests(existing: Mapping[str, Any], addition: Mapping[str, Any]) -> dict[str, Any]:
    """A new manifest: ``existing``'s nodes and edges followed by ``addition``'s.

    Nothing is checked here; validate the addition against the existing node_ids first.
    """
    merged: dict[str, Any] = _json_copy(dict(existing))
    merged["nodes"] = merged.get("nodes") or []
    merged["edges"] = merged.get("edges") or []
    merged["nodes"].extend(_json_copy(list(addition.get("nodes") or [])))
    merged["edges"].extend(_json_copy(list(addition.get("edges") or [])))
    return merged
