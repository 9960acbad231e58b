"""Pure functions over ``graph_manifest`` dicts: find one in an agent's free text, normalize it,
validate it, and merge an append into a run's.

Below it sit the JSON search in free text (graphs.domain.json_extraction), the graph a manifest describes
(graphs.domain.manifest_graph: dependencies, order, the questions the engine asks, ManifestError) and the
rules one node keeps on its own (graphs.domain.manifest_nodes); validation here adds what involves several
nodes: ids, dependencies, edges, on_fail edges, cycles and depth.

No Django and no I/O. Nothing here recurses, so deep or hostile input never raises RecursionError.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from graphs.domain.json_extraction import first_json_object
from graphs.domain.manifest_fields import choices, is_id
from graphs.domain.manifest_graph import (
    ON_FAILURE,
    ManifestError,
    cycle_message,
    longest_chains,
    reachable,
    topological,
)
from graphs.domain.manifest_nodes import FIELD_MAX_LENGTHS, node_errors
from graphs.domain.on_fail_actions import ON_FAIL_ACTIONS, on_fail_action
from graphs.domain.storable import json_transform

EDGE_TYPES = ("zero_token", "needs_judgment", "on_failure")
RESERVED_PREFIX = "__"
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
            errors.extend(node_errors(node, f"nodes[{index}]"))
        elif len(node["node_id"]) > FIELD_MAX_LENGTHS["node_id"]:
            errors.append(
                f"nodes[{index}]: node_id is {len(node['node_id'])} characters, over the limit of "
                f"{FIELD_MAX_LENGTHS['node_id']}"
            )
            errors.extend(node_errors(node, f"nodes[{index}]"))
        else:
            named.append((node["node_id"], node))
            errors.extend(node_errors(node, f"node {node['node_id']!r}"))
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
