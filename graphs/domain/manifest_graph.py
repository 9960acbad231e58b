"""The graph a manifest describes: its nodes' data dependencies, their order, and the questions the
engine asks of it (what a loop-back reruns, what lies downstream of a node).

These read a manifest that passed validation (a run's stored, merged manifest); graphs.domain.manifest
validates with the same walks. Dependencies come from depends_on and from data edges alike;
on_failure edges are control flow, never dependencies. Pure, and nothing here recurses.
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

ON_FAILURE = "on_failure"


class ManifestError(ValueError):
    """A manifest broke one or more rules; ``errors`` holds one line per problem."""

    def __init__(self, errors: Iterable[str]) -> None:
        self.errors = list(errors)
        super().__init__("\n".join(self.errors))


def manifest_node_ids(manifest: Mapping[str, Any]) -> list[str]:
    """The node_ids in manifest order."""
    return [
        node["node_id"]
        for node in manifest.get("nodes") or []
        if isinstance(node, dict) and "node_id" in node
    ]


def data_dependencies(manifest: Mapping[str, Any]) -> dict[str, list[str]]:
    """Each node's direct dependencies, without duplicates.

    A dependency on a node outside the manifest (an existing node, when this is an append) is left
    out: it is not this manifest's to schedule.
    """
    ids = manifest_node_ids(manifest)
    dependencies: dict[str, dict[str, None]] = {node_id: {} for node_id in ids}
    for node in manifest.get("nodes") or []:
        if isinstance(node, dict) and node.get("node_id") in dependencies:
            for dep in node.get("depends_on") or []:
                if dep in dependencies:
                    dependencies[node["node_id"]][dep] = None
    for edge in manifest.get("edges") or []:
        source, target = edge.get("from"), edge.get("to")
        if edge.get("edge_type") != ON_FAILURE and source in dependencies and target in dependencies:
            dependencies[target][source] = None
    return {node_id: list(deps) for node_id, deps in dependencies.items()}


def topological_order(manifest: Mapping[str, Any]) -> list[str]:
    """Every node after its dependencies; among nodes ready together, manifest order decides.

    Raises ManifestError naming the cycle when the dependencies are not a DAG.
    """
    order, cycles = topological(manifest_node_ids(manifest), data_dependencies(manifest))
    if cycles:
        raise ManifestError(map(cycle_message, cycles))
    return order


def upstream_of(manifest: Mapping[str, Any], node_id: str) -> set[str]:
    """Every node ``node_id`` depends on, directly or not. KeyError for an unknown node."""
    return reachable(node_id, _checked(data_dependencies(manifest), node_id))


def downstream_of(manifest: Mapping[str, Any], node_id: str) -> set[str]:
    """Every node that depends on ``node_id``, directly or not. KeyError for an unknown node."""
    return reachable(node_id, _checked(_dependents(data_dependencies(manifest)), node_id))


def nodes_between(manifest: Mapping[str, Any], *, target: str, failing: str) -> list[str]:
    """What a loop-back from ``failing`` to ``target`` reruns, in topological order.

    That is ``target``, ``failing`` and every node on a data path from one to the other. Raises
    KeyError for an unknown node and ValueError when ``target`` is not upstream of ``failing``.
    """
    dependencies = data_dependencies(manifest)
    upstream = reachable(failing, _checked(dependencies, failing))
    _checked(dependencies, target)
    if target != failing and target not in upstream:
        raise ValueError(f"{target!r} is not upstream of {failing!r}")
    rerun = (reachable(target, _dependents(dependencies)) & upstream) | {target, failing}
    return [node_id for node_id in topological_order(manifest) if node_id in rerun]


def loop_back_target(manifest: Mapping[str, Any], node_id: str) -> str | None:
    """Where ``node_id``'s on_failure edge points, or None when it has none. KeyError for an unknown node."""
    if node_id not in manifest_node_ids(manifest):
        raise KeyError(node_id)
    for edge in manifest.get("edges") or []:
        if edge.get("edge_type") == ON_FAILURE and edge.get("from") == node_id:
            return edge.get("to")
    return None


def graph_depth(manifest: Mapping[str, Any]) -> int:
    """Nodes on the longest dependency chain; 0 for an empty manifest. ManifestError on a cycle."""
    chains = longest_chains(topological_order(manifest), data_dependencies(manifest))
    return max((length for length, _ in chains.values()), default=0)


def _checked(graph: dict[str, list[str]], node_id: str) -> dict[str, list[str]]:
    if node_id not in graph:
        raise KeyError(node_id)
    return graph


def _dependents(dependencies: dict[str, list[str]]) -> dict[str, list[str]]:
    dependents: dict[str, list[str]] = {node_id: [] for node_id in dependencies}
    for node_id, deps in dependencies.items():
        for dep in deps:
            if dep in dependents:
                dependents[dep].append(node_id)
    return dependents


def reachable(start: str, graph: Mapping[str, Sequence[str]]) -> set[str]:
    """Nodes reachable from ``start`` along ``graph``, not counting ``start`` unless on a cycle."""
    seen: set[str] = set()
    pending = deque(graph.get(start, ()))
    while pending:
        node_id = pending.popleft()
        if node_id not in seen:
            seen.add(node_id)
            pending.extend(graph.get(node_id, ()))
    return seen


def topological(ids: list[str], dependencies: Mapping[str, list[str]]) -> tuple[list[str], list[list[str]]]:
    """Kahn's algorithm, taking the earliest ready node in manifest order; returns (order, cycles).

    Dependencies on nodes outside ``ids`` count as met.
    """
    position = {node_id: index for index, node_id in reversed(list(enumerate(ids)))}
    waiting = {node_id: sum(dep in position for dep in dependencies.get(node_id, ())) for node_id in position}
    dependents = _dependents({node_id: list(dependencies.get(node_id, ())) for node_id in position})
    ready = [position[node_id] for node_id, count in waiting.items() if count == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        node_id = ids[heapq.heappop(ready)]
        order.append(node_id)
        for dependent in dependents[node_id]:
            waiting[dependent] -= 1
            if waiting[dependent] == 0:
                heapq.heappush(ready, position[dependent])
    if len(order) == len(position):
        return order, []
    return order, _cycles_among({node_id for node_id, count in waiting.items() if count}, ids, dependencies)


def _cycles_among(stuck: set[str], ids: list[str], dependencies: Mapping[str, list[str]]) -> list[list[str]]:
    """Distinct cycles among the nodes Kahn's algorithm could not place.

    Each of them waits on another one of them, so following such a dependency from any of them
    must come back to a node already on the walk: that stretch is a cycle. Nodes merely downstream
    of a cycle end their walk on an earlier walk instead and are not reported.
    """
    cycles = []
    visited: set[str] = set()
    for start in ids:
        if start not in stuck or start in visited:
            continue
        walk: dict[str, int] = {}
        node_id = start
        while node_id not in visited and node_id not in walk:
            walk[node_id] = len(walk)
            node_id = next(dep for dep in dependencies[node_id] if dep in stuck)
        if node_id in walk:
            loop = list(walk)[walk[node_id] :]
            cycles.append([*loop, node_id])
        visited.update(walk)
    return cycles


def cycle_message(cycle: list[str]) -> str:
    return "dependency cycle: " + " -> ".join(map(repr, cycle)) + " (each node depends on the next)"


def longest_chains(order: list[str], dependencies: Mapping[str, list[str]]) -> dict[str, tuple[int, str]]:
    """For each node in ``order``: (nodes on the longest chain ending at it, the chain's first node).

    A dependency outside ``order`` (an existing node in append mode) counts as a one-node chain.
    """
    chains: dict[str, tuple[int, str]] = {}
    for node_id in order:
        length, start = 1, node_id
        for dep in dependencies.get(node_id, ()):
            dep_length, dep_start = chains.get(dep, (1, dep))
            if dep_length + 1 > length:
                length, start = dep_length + 1, dep_start
        chains[node_id] = (length, start)
    return chains
