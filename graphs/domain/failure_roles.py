"""Which failed node of a run is a root cause, which failed downstream of another, and which were blocked.

Pure functions over plain values: no Django, no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

ROOT_CAUSE = "root_cause"
FAILED_DOWNSTREAM = "failed_downstream"
BLOCKED = "blocked"


@dataclass(frozen=True)
class FailureRole:
    """Where a failed or blocked node stands in its run's failure: a ``root_cause`` (no failed node
    upstream of it), ``failed_downstream`` of one, or ``blocked``; ``because_of`` names the root
    causes upstream of it (empty for a root cause, and for a node blocked by something else, such as
    a cancelled upstream or an internal error)."""

    role: str
    because_of: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {"role": self.role, "because_of": list(self.because_of)}

    def label(self) -> str:
        """How pages name the role (the DAG's ``failureRoleLabel`` says the same): ``root cause``,
        ``blocked by a, b +1``, ``failed after a``."""
        if self.role == ROOT_CAUSE:
            return "root cause"
        names = ", ".join(self.because_of[:2]) + (f" +{len(self.because_of) - 2}" if len(self.because_of) > 2 else "")
        if self.role == BLOCKED:
            return f"blocked by {names}" if names else "blocked"
        return f"failed after {names}" if names else "failed downstream"


def failure_roles(
    *, dependencies: Mapping[str, Iterable[str]], statuses: Mapping[str, str]
) -> dict[str, FailureRole]:
    """The role of every failed or blocked node of a run, by its node's latest status.

    ``dependencies`` maps each node to the nodes it depends on (data dependencies, never ``on_failure``
    edges); ``statuses`` each node to its latest attempt's status. A failed node is a root cause unless
    a node upstream of it failed too; the root causes a node is downstream of are the failed nodes
    upstream of it that are root causes themselves.
    """
    # Only failed and blocked nodes have a role, so only their upstream is walked: a large run that
    # is going well costs nothing here.
    ancestors = _ancestors(dependencies, of=[node_id for node_id, status in statuses.items()
                                            if status in ("failed", "blocked")])
    failed = {node_id for node_id, status in statuses.items() if status == "failed"}
    roots = {node_id for node_id in failed if not ancestors.get(node_id, set()) & failed}
    roles: dict[str, FailureRole] = {}
    for node_id, status in statuses.items():
        if status not in ("failed", "blocked"):
            continue
        upstream_roots = tuple(sorted(ancestors.get(node_id, set()) & roots))
        if node_id in roots:
            roles[node_id] = FailureRole(ROOT_CAUSE)
        elif status == "failed":
            roles[node_id] = FailureRole(FAILED_DOWNSTREAM, upstream_roots)
        else:
            roles[node_id] = FailureRole(BLOCKED, upstream_roots)
    return roles


def _ancestors(dependencies: Mapping[str, Iterable[str]], *, of: Iterable[str]) -> dict[str, set[str]]:
    """The transitive upstream of each node in ``of``; a dependency cycle (which validation refuses)
    cannot loop."""
    found: dict[str, set[str]] = {}
    for start in of:
        seen: set[str] = set()
        stack = list(dependencies.get(start, ()))
        while stack:
            current = stack.pop()
            if current in seen or current == start:
                continue
            seen.add(current)
            stack.extend(found.get(current, dependencies.get(current, ())))
        found[start] = seen
    return found
